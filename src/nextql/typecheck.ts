import type { Booster, Condition, Operand, SetExpression, Span, ValueExpression } from './ast.js';
import { NextqlError } from './errors.js';

/**
 * Static checks that the grammar cannot express. Each throws the first error in source order, so that
 * the reported position is the leftmost problem.
 */
export function checkFilter(text: string, condition: Condition): void {
  checkCondition(new Checker(text), condition, new Set());
}

export function checkBooster(text: string, booster: Booster): void {
  const checker = new Checker(text);
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
  checkSetExpression(new Checker(text), expression, new Set());
}

class Checker {
  constructor(private readonly text: string) {}

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
    if (operand.name !== 'now') {
      checker.fail(operand.span, `unknown function '${operand.name}' (the only function is now())`);
    }
    if (operand.args.length > 0) checker.fail(operand.args[0].span, 'now() takes no arguments');
  }
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
