import type { ComparisonOperator, Condition, LiteralValue, Operand } from './ast.js';
import { planKey, type KeyPlan } from './keys.js';
import {
  comparisonTest,
  containmentTest,
  membershipTest,
  mirrorOperator,
  type ConstantTest,
} from './values.js';

/**
 * A condition reduced to the shapes evaluation handles, with every test against constants built once:
 * a key (or `now()`) against a literal or set becomes a `test`; only key-against-key and key-against-now()
 * comparisons are resolved per evaluation.
 */
export type ConditionPlan =
  | { readonly kind: 'constant'; readonly value: boolean }
  | { readonly kind: 'and' | 'or'; readonly operands: readonly ConditionPlan[] }
  | { readonly kind: 'not'; readonly operand: ConditionPlan }
  | { readonly kind: 'test'; readonly subject: Subject; readonly test: ConstantTest }
  | { readonly kind: 'versus-now'; readonly key: KeyPlan; readonly testFor: (now: string) => ConstantTest }
  | {
      readonly kind: 'key-pair';
      readonly left: KeyPlan;
      readonly right: KeyPlan;
      readonly operator: ComparisonOperator;
    };

/** What a test reads: a key of the item, or the evaluation's current time. */
export type Subject = { readonly kind: 'key'; readonly key: KeyPlan } | { readonly kind: 'now' };

type ResolvedOperand = Subject | { readonly kind: 'literal'; readonly value: LiteralValue };

/** Expects a type-checked condition: identifiers never occur there and the only call is now(). */
export function planCondition(condition: Condition): ConditionPlan {
  switch (condition.kind) {
    case 'boolean':
      return { kind: 'constant', value: condition.value };
    case 'not':
      return { kind: 'not', operand: planCondition(condition.operand) };
    case 'and':
    case 'or':
      return { kind: condition.kind, operands: condition.operands.map(planCondition) };
    case 'membership':
      return planTest(
        resolve(condition.operand),
        membershipTest(
          condition.operator,
          condition.set.elements.map((element) => element.value),
        ),
      );
    case 'containment':
      return planTest(resolve(condition.operand), containmentTest(condition.operator, condition.value.value));
    case 'comparison':
      return planComparison(resolve(condition.left), condition.operator, resolve(condition.right));
  }
}

function planComparison(
  left: ResolvedOperand,
  operator: ComparisonOperator,
  right: ResolvedOperand,
): ConditionPlan {
  if (right.kind === 'literal') return planTest(left, comparisonTest(operator, right.value));
  if (left.kind === 'literal') return planTest(right, comparisonTest(mirrorOperator(operator), left.value));
  if (left.kind === 'key' && right.kind === 'key') {
    return { kind: 'key-pair', left: left.key, right: right.key, operator };
  }
  if (left.kind === 'key') return planVersusNow(left.key, operator);
  if (right.kind === 'key') return planVersusNow(right.key, mirrorOperator(operator));
  // now() against now(): one evaluation has one current time.
  return { kind: 'constant', value: operator === '=' || operator === '<=' || operator === '>=' };
}

function planVersusNow(key: KeyPlan, operator: ComparisonOperator): ConditionPlan {
  return { kind: 'versus-now', key, testFor: lastValueMemo((now: string) => comparisonTest(operator, now)) };
}

function planTest(subject: ResolvedOperand, test: ConstantTest): ConditionPlan {
  if (subject.kind === 'literal') return { kind: 'constant', value: test.matches(subject.value) };
  return { kind: 'test', subject, test };
}

function resolve(operand: Operand): ResolvedOperand {
  switch (operand.kind) {
    case 'key':
      return { kind: 'key', key: planKey(operand.name) };
    case 'literal':
      return { kind: 'literal', value: operand.value };
    case 'call':
      return { kind: 'now' };
    case 'identifier':
      throw new Error(`unreachable: identifier '${operand.name}' in a type-checked condition`);
  }
}

/** Evaluations in a row share the same `now`, so the test built for it is kept until it changes. */
function lastValueMemo<T>(build: (input: string) => T): (input: string) => T {
  let lastInput: string | undefined;
  let lastOutput: T | undefined;
  return (input) => {
    if (input !== lastInput || lastOutput === undefined) {
      lastOutput = build(input);
      lastInput = input;
    }
    return lastOutput;
  };
}
