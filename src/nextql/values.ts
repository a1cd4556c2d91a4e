import type { ComparisonOperator, LiteralValue } from './ast.js';
import { instantOf } from './dates.js';

/**
 * The comparison rules of nextQL. `undefined` stands for a missing key. Every rule fails closed: a
 * missing value or a type mismatch makes the predicate false, `!=` included.
 */

export type ValueTest = (value: unknown) => boolean;

/**
 * A test against constants. `dates`, when present, splits the test for column evaluation, which reads
 * pre-parsed instants instead of parsing dates per item: a date string gives `onInstant(its instant)`,
 * any other value `onOther(value)`, and both together equal `matches`.
 */
export interface ConstantTest {
  readonly matches: ValueTest;
  readonly dates?: {
    readonly onInstant: (instant: number) => boolean;
    readonly onOther: ValueTest;
  };
}

/** `value operator literal`. */
export function comparisonTest(operator: ComparisonOperator, literal: LiteralValue): ConstantTest {
  if (typeof literal === 'number') return { matches: numberTest(operator, literal) };
  if (typeof literal === 'string') {
    const literalInstant = instantOf(literal);
    const onOther = stringTest(operator, literal);
    if (Number.isNaN(literalInstant)) return { matches: onOther };
    return splitOnDates(numberTest(operator, literalInstant), onOther);
  }
  if (operator === '=') return { matches: (value) => value === literal };
  if (operator === '!=' && typeof literal === 'boolean') {
    return { matches: (value) => typeof value === 'boolean' && value !== literal };
  }
  // null != null is false, and neither booleans nor null are ordered.
  return { matches: () => false };
}

/** `value in {...}` and `value not_in {...}`: not_in also needs a value of a type the set holds. */
export function membershipTest(operator: 'in' | 'not_in', elements: readonly LiteralValue[]): ConstantTest {
  const numbers = new Set<number>();
  const booleans = new Set<boolean>();
  const plainStrings = new Set<string>();
  const instants = new Set<number>();
  let hasNull = false;
  for (const element of elements) {
    if (typeof element === 'number') numbers.add(element);
    else if (typeof element === 'boolean') booleans.add(element);
    else if (element === null) hasNull = true;
    else {
      const instant = instantOf(element);
      if (Number.isNaN(instant)) plainStrings.add(element);
      else instants.add(instant);
    }
  }
  const isMember = (value: unknown): boolean => {
    if (typeof value === 'number') return numbers.has(value);
    if (typeof value === 'string') return plainStrings.has(value);
    if (typeof value === 'boolean') return booleans.has(value);
    return value === null && hasNull;
  };
  if (operator === 'in') {
    if (instants.size === 0) return { matches: isMember };
    return splitOnDates((instant) => instants.has(instant), isMember);
  }
  const anyType = elements.length === 0;
  const hasStrings = anyType || plainStrings.size > 0 || instants.size > 0;
  const isComparable = (value: unknown): boolean => {
    if (typeof value === 'number') return anyType || numbers.size > 0;
    if (typeof value === 'string') return hasStrings;
    if (typeof value === 'boolean') return anyType || booleans.size > 0;
    return value === null && (anyType || hasNull);
  };
  const isNonMember = (value: unknown): boolean => isComparable(value) && !isMember(value);
  if (instants.size === 0) return { matches: isNonMember };
  return splitOnDates((instant) => !instants.has(instant), isNonMember);
}

/** `value contains literal`: the value must be an array. */
export function containmentTest(operator: 'contains' | 'not_contains', literal: LiteralValue): ConstantTest {
  const equalsLiteral = comparisonTest('=', literal).matches;
  const containsLiteral = (value: unknown): boolean => {
    if (!Array.isArray(value)) return false;
    for (const element of value) if (equalsLiteral(element)) return true;
    return false;
  };
  if (operator === 'contains') return { matches: containsLiteral };
  return { matches: (value) => Array.isArray(value) && !containsLiteral(value) };
}

/** `left operator right` for two values known only at evaluation time. */
export function compareValues(operator: ComparisonOperator, left: unknown, right: unknown): boolean {
  if (typeof left === 'string' && typeof right === 'string') {
    const leftInstant = instantOf(left);
    const rightInstant = Number.isNaN(leftInstant) ? NaN : instantOf(right);
    if (!Number.isNaN(rightInstant)) return orderHolds(operator, leftInstant - rightInstant);
    return orderHolds(operator, left < right ? -1 : left > right ? 1 : 0);
  }
  if (typeof left === 'number' && typeof right === 'number') {
    if (operator === '!=') return left !== right;
    return orderHolds(operator, left < right ? -1 : left > right ? 1 : left === right ? 0 : NaN);
  }
  const comparable =
    (typeof left === 'boolean' && typeof right === 'boolean') ||
    (left === null && right === null) ||
    (Array.isArray(left) && Array.isArray(right));
  if (!comparable) return false;
  const equal = Array.isArray(left) ? arraysEqual(left, right as unknown[]) : left === right;
  if (operator === '=') return equal;
  return operator === '!=' && !equal;
}

/** Flips `literal < value` into `value > literal`. */
export function mirrorOperator(operator: ComparisonOperator): ComparisonOperator {
  switch (operator) {
    case '<':
      return '>';
    case '<=':
      return '>=';
    case '>':
      return '<';
    case '>=':
      return '<=';
    default:
      return operator;
  }
}

function arraysEqual(left: readonly unknown[], right: readonly unknown[]): boolean {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index++) {
    if (!compareValues('=', left[index], right[index])) return false;
  }
  return true;
}

/** `difference` is left - right (any sign-correct number), NaN when the two are unordered. */
function orderHolds(operator: ComparisonOperator, difference: number): boolean {
  switch (operator) {
    case '=':
      return difference === 0;
    case '!=':
      return difference !== 0 && !Number.isNaN(difference);
    case '<':
      return difference < 0;
    case '<=':
      return difference <= 0;
    case '>':
      return difference > 0;
    case '>=':
      return difference >= 0;
  }
}

function splitOnDates(onInstant: (instant: number) => boolean, onOther: ValueTest): ConstantTest {
  return {
    matches: (value) => {
      if (typeof value !== 'string') return onOther(value);
      const instant = instantOf(value);
      return Number.isNaN(instant) ? onOther(value) : onInstant(instant);
    },
    dates: { onInstant, onOther },
  };
}

function numberTest(operator: ComparisonOperator, literal: number): ValueTest {
  switch (operator) {
    case '=':
      return (value) => value === literal;
    case '!=':
      return (value) => typeof value === 'number' && value !== literal;
    case '<':
      return (value) => typeof value === 'number' && value < literal;
    case '<=':
      return (value) => typeof value === 'number' && value <= literal;
    case '>':
      return (value) => typeof value === 'number' && value > literal;
    case '>=':
      return (value) => typeof value === 'number' && value >= literal;
  }
}

function stringTest(operator: ComparisonOperator, literal: string): ValueTest {
  switch (operator) {
    case '=':
      return (value) => value === literal;
    case '!=':
      return (value) => typeof value === 'string' && value !== literal;
    case '<':
      return (value) => typeof value === 'string' && value < literal;
    case '<=':
      return (value) => typeof value === 'string' && value <= literal;
    case '>':
      return (value) => typeof value === 'string' && value > literal;
    case '>=':
      return (value) => typeof value === 'string' && value >= literal;
  }
}
