import type { ComparisonOperator, Condition, Key, LiteralValue, Operand } from './ast.js';
import { planKey, type KeyPlan } from './keys.js';
import {
  compareValues,
  comparisonTest,
  containmentTest,
  membershipTest,
  mirrorOperator,
  type ConstantTest,
} from './values.js';

/**
 * A condition reduced to the shapes evaluation handles, with every test against constants built once:
 * a key (or a run value: `now()`, `context_item('k')`, `context_user('k')`) against a literal or set
 * becomes a `test`; only key-against-key, key-against-run-value and run-value-against-run-value
 * comparisons are resolved per evaluation.
 */
export type ConditionPlan =
  | { readonly kind: 'constant'; readonly value: boolean }
  | { readonly kind: 'and' | 'or'; readonly operands: readonly ConditionPlan[] }
  | { readonly kind: 'not'; readonly operand: ConditionPlan }
  | { readonly kind: 'test'; readonly subject: Subject; readonly test: ConstantTest }
  | {
      readonly kind: 'versus-run';
      readonly key: KeyPlan;
      readonly value: RunSubject;
      readonly testFor: (value: unknown) => ConstantTest;
    }
  | {
      readonly kind: 'run-pair';
      readonly left: RunSubject;
      readonly right: RunSubject;
      readonly operator: ComparisonOperator;
    }
  | {
      readonly kind: 'key-pair';
      readonly left: KeyPlan;
      readonly right: KeyPlan;
      readonly operator: ComparisonOperator;
    };

/**
 * A value that is one per evaluation: its current time, or a key of the request's seed item or user
 * (docs/guide.md, "Context in nextQL").
 */
export type RunSubject =
  | { readonly kind: 'now' }
  | { readonly kind: 'context'; readonly scope: 'item' | 'user'; readonly key: KeyPlan };

/** What a test reads: a key of the item, or a value of the evaluation. */
export type Subject = { readonly kind: 'key'; readonly key: KeyPlan } | RunSubject;

type ResolvedOperand = Subject | { readonly kind: 'literal'; readonly value: LiteralValue };

/** Expects a type-checked condition: identifiers never occur there and the only calls are now() and the context functions. */
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
  if (left.kind === 'key') return planVersusRun(left.key, operator, right as RunSubject);
  if (right.kind === 'key') return planVersusRun(right.key, mirrorOperator(operator), left);
  // now() against now(): one evaluation has one current time.
  if (left.kind === 'now' && right.kind === 'now') {
    return { kind: 'constant', value: operator === '=' || operator === '<=' || operator === '>=' };
  }
  return { kind: 'run-pair', left, right, operator };
}

function planVersusRun(key: KeyPlan, operator: ComparisonOperator, value: RunSubject): ConditionPlan {
  return {
    kind: 'versus-run',
    key,
    value,
    testFor: lastValueMemo((run: unknown) => versusTest(operator, run)),
  };
}

/** `item value operator run value`; a missing run value makes it false (fail closed). */
function versusTest(operator: ComparisonOperator, value: unknown): ConstantTest {
  if (value === undefined) return { matches: () => false };
  if (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'number' ||
    typeof value === 'boolean'
  ) {
    return comparisonTest(operator, value);
  }
  return { matches: (itemValue) => compareValues(operator, itemValue, value) };
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
      if (operand.name === 'now') return { kind: 'now' };
      return {
        kind: 'context',
        scope: operand.name === 'context_item' ? 'item' : 'user',
        key: planKey((operand.args[0] as Key).name),
      };
    case 'identifier':
      throw new Error(`unreachable: identifier '${operand.name}' in a type-checked condition`);
  }
}

/** Evaluations in a row share the same run value, so the test built for it is kept until it changes. */
function lastValueMemo<T>(build: (input: unknown) => T): (input: unknown) => T {
  let lastInput: unknown;
  let lastOutput: T | undefined;
  return (input) => {
    if (input !== lastInput || lastOutput === undefined) {
      lastOutput = build(input);
      lastInput = input;
    }
    return lastOutput;
  };
}
