import fc from 'fast-check';
import type {
  ComparisonOperator,
  Condition,
  Identifier,
  Key,
  Literal,
  LiteralValue,
  Operand,
  SetExpression,
  SetLiteral,
  ValueExpression,
} from '../../../src/nextql/index.js';
import type { NextqlItem } from '../../../src/nextql/index.js';
import { KEYWORDS } from '../../../src/nextql/lexer.js';

const NO_SPAN = { start: 0, end: 0 };

/** Removes source positions, so that trees parsed from different texts can be compared. */
export function withoutSpans(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSpans);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([name]) => name !== 'span')
      .map(([name, child]) => [name, withoutSpans(child)]),
  );
}

export const COMPARISON_OPERATORS: readonly ComparisonOperator[] = ['=', '!=', '<', '<=', '>', '>='];

/** Trees for printing and re-parsing: any strings, any finite numbers. */
export function syntaxArbitraries() {
  const literalValue: fc.Arbitrary<LiteralValue> = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 8 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer({ min: -1000, max: 1000 }),
    fc.boolean(),
    fc.constant(null),
  );
  return treeArbitraries(literalValue, fc.string({ unit: 'binary', maxLength: 8 }), true);
}

/** Trees for evaluation: few keys and values, so that predicates are often true. */
export function evaluationArbitraries() {
  return treeArbitraries(fc.constantFrom(...VALUE_POOL), fc.constantFrom(...KEY_POOL), false);
}

function treeArbitraries(
  literalValue: fc.Arbitrary<LiteralValue>,
  keyName: fc.Arbitrary<string>,
  withNames: boolean,
) {
  const literal: fc.Arbitrary<Literal> = literalValue.map((value) => ({
    kind: 'literal',
    value,
    span: NO_SPAN,
  }));
  const key: fc.Arbitrary<Key> = keyName.map((name) => ({ kind: 'key', name, span: NO_SPAN }));
  const identifier: fc.Arbitrary<Identifier> = fc
    .stringMatching(/^[a-zA-Z][a-zA-Z0-9_]{0,5}$/)
    .filter((name) => !KEYWORDS.has(name))
    .map((name) => ({ kind: 'identifier', name, span: NO_SPAN }));
  const now: fc.Arbitrary<Operand> = fc.constant({ kind: 'call', name: 'now', args: [], span: NO_SPAN });
  const operand: fc.Arbitrary<Operand> = withNames
    ? fc.oneof(key, literal, now, identifier)
    : fc.oneof(
        { weight: 4, arbitrary: key },
        { weight: 2, arbitrary: literal },
        { weight: 1, arbitrary: now },
      );
  const setLiteral: fc.Arbitrary<SetLiteral> = fc
    .array(literal, { maxLength: 4 })
    .map((elements) => ({ kind: 'set', elements, span: NO_SPAN }));

  const predicate: fc.Arbitrary<Condition> = fc.oneof(
    fc.record({
      kind: fc.constant('comparison' as const),
      operator: fc.constantFrom(...COMPARISON_OPERATORS),
      left: operand,
      right: operand,
      span: fc.constant(NO_SPAN),
    }),
    fc.record({
      kind: fc.constant('membership' as const),
      operator: fc.constantFrom('in' as const, 'not_in' as const),
      operand,
      set: setLiteral,
      span: fc.constant(NO_SPAN),
    }),
    fc.record({
      kind: fc.constant('containment' as const),
      operator: fc.constantFrom('contains' as const, 'not_contains' as const),
      operand,
      value: literal,
      span: fc.constant(NO_SPAN),
    }),
    fc.boolean().map((value): Condition => ({ kind: 'boolean', value, span: NO_SPAN })),
  );

  const condition = fc.memo((depth): fc.Arbitrary<Condition> => {
    if (depth <= 1) return predicate;
    const inner = condition(depth - 1);
    return fc.oneof(
      { weight: 3, arbitrary: predicate },
      { weight: 1, arbitrary: inner.map((operand): Condition => ({ kind: 'not', operand, span: NO_SPAN })) },
      {
        weight: 2,
        arbitrary: fc
          .tuple(
            fc.constantFrom('and' as const, 'or' as const),
            fc.array(inner, { minLength: 2, maxLength: 3 }),
          )
          .map(([kind, operands]): Condition => ({ kind, operands, span: NO_SPAN })),
      },
    );
  });

  const format = (subject: fc.Arbitrary<Key | Identifier>): fc.Arbitrary<ValueExpression> =>
    fc
      .tuple(
        subject,
        fc.string({ unit: 'binary', maxLength: 4 }),
        fc.string({ unit: 'binary', maxLength: 4 }),
      )
      .map(([formatSubject, prefix, suffix]) => ({
        kind: 'format',
        subject: formatSubject,
        format: { kind: 'literal', value: `${prefix}%s${suffix}`, span: NO_SPAN },
        span: NO_SPAN,
      }));

  const setExpression = fc.memo((depth): fc.Arbitrary<SetExpression> => {
    const leaf: fc.Arbitrary<SetExpression> = fc.oneof(setLiteral, key, literal, format(key));
    if (depth <= 1) return leaf;
    const inner = setExpression(depth - 1);
    const mapped = identifier.chain((parameter) =>
      fc.record({
        kind: fc.constant('map' as const),
        parameter: fc.constant(parameter),
        body: fc.oneof(
          literal,
          fc.constant<ValueExpression>({ ...parameter }),
          format(fc.oneof(key, fc.constant<Identifier>({ ...parameter }))),
        ),
        source: inner,
        span: fc.constant(NO_SPAN),
      }),
    );
    return fc.oneof(
      { weight: 3, arbitrary: leaf },
      {
        weight: 1,
        arbitrary: fc
          .array(inner, { minLength: 2, maxLength: 3 })
          .map((terms): SetExpression => ({ kind: 'union', terms, span: NO_SPAN })),
      },
      {
        weight: 1,
        arbitrary: fc
          .tuple(condition(2), inner, inner)
          .map(([ifCondition, whenTrue, whenFalse]): SetExpression => ({
            kind: 'if',
            condition: ifCondition,
            whenTrue,
            whenFalse,
            span: NO_SPAN,
          })),
      },
      { weight: 1, arbitrary: mapped },
    );
  });

  return { condition: condition(4), setExpression: setExpression(3), literal };
}

const DATE_POOL = [
  '2024-05-01',
  '2024-05-01T00:00:00Z',
  '2024-05-01T10:00:00Z',
  '2024-05-01T12:00:00+02:00',
  '2024-06-01T00:00:00.000Z',
  '2030-01-01T00:00:00.000Z',
];

export const VALUE_POOL: readonly LiteralValue[] = [
  0,
  -0,
  1,
  2.5,
  -3,
  100,
  'a',
  'b',
  'A',
  '',
  'rock',
  'shoes',
  true,
  false,
  null,
  ...DATE_POOL,
];

export const KEY_POOL = [
  'n',
  's',
  'b',
  'd',
  'tags',
  'obj.x',
  'attributes.n',
  'obj',
  'missing',
  'category',
  'itemId',
  'available',
  'createdAt',
  'expiresAt',
];

const attributeValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...VALUE_POOL) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom(...VALUE_POOL), { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.record({ x: fc.constantFrom(...VALUE_POOL) }) },
);

export const item: fc.Arbitrary<NextqlItem> = fc.record(
  {
    externalId: fc.constantFrom('a', 'b', 'shoes'),
    category: fc.constantFrom('shoes', 'a', null),
    available: fc.constantFrom(true, false, null),
    createdAt: fc.constantFrom(...DATE_POOL, null),
    expiresAt: fc.constantFrom(...DATE_POOL.map((date) => new Date(date)), null),
    attributes: fc.dictionary(
      fc.constantFrom('n', 's', 'b', 'd', 'tags', 'obj', 'category'),
      attributeValue,
      {
        maxKeys: 6,
      },
    ),
  },
  { requiredKeys: ['externalId'] },
);
