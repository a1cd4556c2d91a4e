import type { Booster, Call, Condition, Operand, SetExpression, Span, ValueExpression } from './ast.js';
import { NextqlError } from './errors.js';

/**
 * Static checks that the grammar cannot express. Each throws the first error in source order, so that
 * the reported position is the leftmost problem.
 */
export function checkFilter(text: string, condition: Condition): void {
  checkCondition(new Checker(text, true), condition, new Set());
}

export function checkBooster(text: string, booster: Booster): void {
  const checker = new Checker(text, true);
  const factor = booster.factor.value;
  if (typeof factor !== 'number' || !(factor > 0)) {
    checker.fail(
      booster.factor.span,
      `the booster factor must be a number greater than 0, got ${describeLiteral(factor)}`,
    );
  }
  checkCondition(checker, booster.condition, new Set());
}

export function checkSegmentation(text: string, expression: SetExpression): void {
  checkSetExpression(new Checker(text, false), expression, new Set());
}

class Checker {
  /** @param allowsContext whether context_item() and context_user() may appear (filters and boosters) */
  constructor(
    private readonly text: string,
    readonly allowsContext: boolean,
  ) {}

  fail(span: Span, reason: string): never {
    throw new NextqlError(this.text, span.start, reason);
  }
}

type Scope = ReadonlySet<string>;

function checkCondition(checker: Checker, condition: Condition, scope: Scope): void {
  switch (condition.kind) {
    case 'and':
    case 'or':
      for (const operand of condition.operands) checkCondition(checker, operand, scope);
      return;
    case 'not':
      checkCondition(checker, condition.operand, scope);
      return;
    case 'comparison':
      checkOperand(checker, condition.left, scope);
      checkOperand(checker, condition.right, scope);
      return;
    case 'membership':
    case 'containment':
      checkOperand(checker, condition.operand, scope);
      return;
    case 'boolean':
      return;
  }
}

function checkOperand(checker: Checker, operand: Operand, scope: Scope): void {
  if (operand.kind === 'identifier') {
    checkIdentifier(checker, operand.name, operand.span, scope);
  } else if (operand.kind === 'call') {
    checkCall(checker, operand);
  }
}

/** The functions that read the request's seed item and user (docs/guide.md, "Context in nextQL"). */
const CONTEXT_FUNCTIONS: ReadonlySet<string> = new Set(['context_item', 'context_user']);

function checkCall(checker: Checker, call: Call): void {
  if (call.name === 'now') {
    if (call.args.length > 0) checker.fail(call.args[0].span, 'now() takes no arguments');
    return;
  }
  if (!CONTEXT_FUNCTIONS.has(call.name)) {
    const known = checker.allowsContext ? 'now(), context_item() and context_user()' : 'now()';
    checker.fail(call.span, `unknown function '${call.name}' (the functions are ${known})`);
  }
  if (!checker.allowsContext) {
    checker.fail(call.span, `${call.name}() is allowed in filters and boosters, not in segmentations`);
  }
  const [key, extra] = call.args;
  if (key === undefined || key.kind !== 'key') {
    checker.fail(key?.span ?? call.span, `${call.name}() takes one attribute key in single quotes`);
  }
  if (extra !== undefined) checker.fail(extra.span, `${call.name}() takes one argument`);
}

function checkIdentifier(checker: Checker, name: string, span: Span, scope: Scope): void {
  if (scope.has(name)) return;
  if (name === 'now') checker.fail(span, "unknown name 'now' (call the function as now())");
  checker.fail(
    span,
    `unknown name '${name}' (write an attribute key in single quotes, '${name}'; a bare name is a lambda variable, valid only inside its lambda)`,
  );
}

function checkSetExpression(checker: Checker, expression: SetExpression, scope: Scope): void {
  switch (expression.kind) {
    case 'union':
      for (const term of expression.terms) checkSetExpression(checker, term, scope);
      return;
    case 'if':
      checkCondition(checker, expression.condition, scope);
      checkSetExpression(checker, expression.whenTrue, scope);
      checkSetExpression(checker, expression.whenFalse, scope);
      return;
    case 'map':
      checkValueExpression(checker, expression.body, new Set([...scope, expression.parameter.name]));
      checkSetExpression(checker, expression.source, scope);
      return;
    case 'set':
    case 'key':
      return;
    default:
      checkValueExpression(checker, expression, scope);
  }
}

function checkValueExpression(checker: Checker, expression: ValueExpression, scope: Scope): void {
  if (expression.kind === 'identifier') {
    checkIdentifier(checker, expression.name, expression.span, scope);
  } else if (expression.kind === 'format') {
    if (expression.subject.kind === 'identifier') {
      checkIdentifier(checker, expression.subject.name, expression.subject.span, scope);
    }
    if (!expression.format.value.includes('%s')) {
      checker.fail(expression.format.span, 'the format string of string() must contain %s');
    }
  }
}

function describeLiteral(value: unknown): string {
  return typeof value === 'string' ? `the string ${JSON.stringify(value)}` : String(value);
}
