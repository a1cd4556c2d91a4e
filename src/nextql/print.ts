import type {
  Condition,
  Expression,
  Literal,
  LiteralValue,
  Operand,
  SetExpression,
  ValueExpression,
} from './ast.js';

/**
 * Canonical text of an AST: single spaces, parentheses only where the structure needs them (plus after
 * `not`, for readability), strings and keys with minimal escapes. Parsing the result gives the same AST
 * apart from source positions.
 */
export function print(expression: Expression): string {
  if (expression.kind === 'booster') {
    return `boost by ${printLiteral(expression.factor)} where ${printCondition(expression.condition)}`;
  }
  return isCondition(expression) ? printCondition(expression) : printSetExpression(expression);
}

function isCondition(expression: Condition | SetExpression): expression is Condition {
  switch (expression.kind) {
    case 'comparison':
    case 'membership':
    case 'containment':
    case 'boolean':
    case 'not':
    case 'and':
    case 'or':
      return true;
    default:
      return false;
  }
}

function printCondition(condition: Condition): string {
  switch (condition.kind) {
    case 'or':
      return condition.operands.map((operand) => parenthesizeIf(operand, operand.kind === 'or')).join(' or ');
    case 'and':
      return condition.operands
        .map((operand) => parenthesizeIf(operand, operand.kind === 'or' || operand.kind === 'and'))
        .join(' and ');
    case 'not':
      return `not ${parenthesizeIf(condition.operand, condition.operand.kind !== 'not' && condition.operand.kind !== 'boolean')}`;
    case 'boolean':
      return String(condition.value);
    case 'comparison':
      return `${printOperand(condition.left)} ${condition.operator} ${printOperand(condition.right)}`;
    case 'membership':
      return `${printOperand(condition.operand)} ${condition.operator} ${printSet(condition.set.elements)}`;
    case 'containment':
      return `${printOperand(condition.operand)} ${condition.operator} ${printLiteral(condition.value)}`;
  }
}

function parenthesizeIf(condition: Condition, needed: boolean): string {
  const text = printCondition(condition);
  return needed ? `(${text})` : text;
}

function printOperand(operand: Operand): string {
  switch (operand.kind) {
    case 'key':
      return printKey(operand.name);
    case 'literal':
      return printLiteral(operand);
    case 'identifier':
      return operand.name;
    case 'call':
      return `${operand.name}(${operand.args.map(printOperand).join(', ')})`;
  }
}

function printSetExpression(expression: SetExpression): string {
  switch (expression.kind) {
    case 'union':
      // An `if` extends as far right as it can, and a nested union only exists if it was parenthesised.
      return expression.terms
        .map((term, index) => {
          const text = printSetExpression(term);
          const isLast = index === expression.terms.length - 1;
          return term.kind === 'union' || (term.kind === 'if' && !isLast) ? `(${text})` : text;
        })
        .join(' + ');
    case 'if':
      return `if ${printCondition(expression.condition)} then ${printSetExpression(expression.whenTrue)} else ${printSetExpression(expression.whenFalse)}`;
    case 'set':
      return printSet(expression.elements);
    case 'key':
      return printKey(expression.name);
    case 'map':
      return `map(lambda ${expression.parameter.name}: ${printValueExpression(expression.body)}, ${printSetExpression(expression.source)})`;
    default:
      return printValueExpression(expression);
  }
}

function printValueExpression(expression: ValueExpression): string {
  switch (expression.kind) {
    case 'format': {
      const subject =
        expression.subject.kind === 'key' ? printKey(expression.subject.name) : expression.subject.name;
      return `string(${subject}, ${printString(expression.format.value)})`;
    }
    case 'identifier':
      return expression.name;
    case 'literal':
      return printLiteral(expression);
  }
}

function printSet(elements: readonly Literal[]): string {
  return `{${elements.map(printLiteral).join(', ')}}`;
}

function printLiteral(literal: Literal): string {
  return printValue(literal.value);
}

function printValue(value: LiteralValue): string {
  if (typeof value === 'string') return printString(value);
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  return String(value);
}

function printKey(name: string): string {
  return `'${name.replace(/[\\']/g, (char) => `\\${char}`)}'`;
}

/** A nextQL string literal: quotes and backslashes escaped, control characters spelled out. */
export function printString(value: string): string {
  let text = '"';
  for (const char of value) {
    const code = char.charCodeAt(0);
    if (char === '"' || char === '\\') text += `\\${char}`;
    else if (char === '\n') text += '\\n';
    else if (char === '\t') text += '\\t';
    else if (code < 32 || code === 127) text += `\\u${code.toString(16).padStart(4, '0')}`;
    else text += char;
  }
  return `${text}"`;
}
