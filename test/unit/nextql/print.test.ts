import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  NextqlError,
  parse,
  print,
  type Expression,
  type ExpressionKind,
} from '../../../src/nextql/index.js';
import {
  parseBoosterSyntax,
  parseFilterSyntax,
  parseSegmentationSyntax,
} from '../../../src/nextql/parser.js';
import { syntaxArbitraries, withoutSpans } from './arbitraries.js';

const syntaxParsers: Record<ExpressionKind, (text: string) => Expression> = {
  filter: parseFilterSyntax,
  booster: parseBoosterSyntax,
  segmentation: parseSegmentationSyntax,
};
const KINDS: readonly ExpressionKind[] = ['filter', 'booster', 'segmentation'];

/** Parses, or returns the typed error; any other exception fails the property. */
function parseOrError(text: string, kind: ExpressionKind): Expression | NextqlError {
  try {
    return syntaxParsers[kind](text);
  } catch (error) {
    if (error instanceof NextqlError) return error;
    throw error;
  }
}

function expectRoundTrip(ast: Expression, kind: ExpressionKind): void {
  const text = print(ast);
  const reparsed = syntaxParsers[kind](text);
  expect(withoutSpans(reparsed)).toEqual(withoutSpans(ast));
  expect(print(reparsed)).toBe(text);
}

describe('print', () => {
  test.each([
    ['filter', `'a'=1 and 'b'=2`, `'a' = 1 and 'b' = 2`],
    [
      'filter',
      `('a' = 1 or 'b' = 2) and not 'c' in {1,"x" , null}`,
      `('a' = 1 or 'b' = 2) and not ('c' in {1, "x", null})`,
    ],
    ['filter', `'a' = 1 or ('b' = 2 and 'c' = 3)`, `'a' = 1 or 'b' = 2 and 'c' = 3`],
    ['filter', `'a' = 1 and ('b' = 2 and 'c' = 3)`, `'a' = 1 and ('b' = 2 and 'c' = 3)`],
    ['filter', `('a' = 1 or 'b' = 2) or 'c' = 3`, `('a' = 1 or 'b' = 2) or 'c' = 3`],
    ['filter', `not not true`, `not not true`],
    ['filter', `'it\\'s' = "say \\"hi\\"\\n\\u0001\\u00e9"`, `'it\\'s' = "say \\"hi\\"\\n\\u0001é"`],
    ['filter', `'x' = 1E3 and 'y' = -0 and 'z' = 0.50`, `'x' = 1000 and 'y' = -0 and 'z' = 0.5`],
    ['filter', `'x' > 1e21 and 'y' < 1e-7`, `'x' > 1e+21 and 'y' < 1e-7`],
    ['filter', `'d' < now( )`, `'d' < now()`],
    ['booster', `boost  by 1.50 where 'a' contains "x"`, `boost by 1.5 where 'a' contains "x"`],
    [
      'segmentation',
      `(if 'a' = 1 then {"a"} else {"b"}) + {"all"}`,
      `(if 'a' = 1 then {"a"} else {"b"}) + {"all"}`,
    ],
    [
      'segmentation',
      `{"x"} + (if 'a' = 1 then {"a"} else {"b"})`,
      `{"x"} + if 'a' = 1 then {"a"} else {"b"}`,
    ],
    ['segmentation', `({"a"} + {"b"}) + {"c"}`, `({"a"} + {"b"}) + {"c"}`],
    [
      'segmentation',
      `map( lambda g : string( g , "genre-%s" ) , 'genres' )+{"all"}`,
      `map(lambda g: string(g, "genre-%s"), 'genres') + {"all"}`,
    ],
  ] as const)('%s %s', (kind, text, printed) => {
    expect(print(parse(text, kind))).toBe(printed);
  });
});

const TOKENS = [
  "'price'",
  "'a.b'",
  "'it\\'s'",
  '"x"',
  '"a\\u00e9"',
  '"%s"',
  '1',
  '-2.5',
  '1e3',
  'and',
  'or',
  'not',
  'in',
  'not_in',
  'contains',
  'not_contains',
  'true',
  'false',
  'null',
  'boost',
  'by',
  'where',
  'if',
  'then',
  'else',
  'map',
  'lambda',
  'string',
  'now',
  'g',
  'AND',
  '=',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  '(',
  ')',
  '{',
  '}',
  ',',
  ':',
  '+',
  '-',
  '.',
  '!',
  "'",
  '"',
  '\\',
  '#',
];

const tokenText = fc
  .array(fc.tuple(fc.constantFrom(...TOKENS), fc.constantFrom(' ', '', '\n', '\t', '\r\n')), {
    maxLength: 14,
  })
  .map((parts) => parts.map(([token, space]) => token + space).join(''));

describe('parser robustness', () => {
  test.each([
    ['filter', '('.repeat(5000)],
    ['filter', `${'not '.repeat(5000)}true`],
    ['filter', `'a' = ${'f('.repeat(5000)}`],
    ['segmentation', '('.repeat(5000)],
    ['segmentation', `${'if true then {"a"} else '.repeat(5000)}{"b"}`],
    ['segmentation', `${'map(lambda g: g, '.repeat(5000)}'x'`],
  ] as const)('deep nesting gives the typed error, not a stack overflow (%s)', (kind, text) => {
    const result = parseOrError(text, kind);
    expect(result).toBeInstanceOf(NextqlError);
    expect((result as NextqlError).message).toMatch(
      /^the expression nests more than 100 levels deep at line 1/,
    );
  });

  test('100 levels of nesting are accepted', () => {
    const text = `${'('.repeat(99)}'a' = 1${')'.repeat(99)}`;
    expect(print(parse(text, 'filter'))).toBe(`'a' = 1`);
  });

  test('random token strings either parse or throw NextqlError, and what parses round-trips', () => {
    fc.assert(
      fc.property(tokenText, fc.constantFrom(...KINDS), (text, kind) => {
        const result = parseOrError(text, kind);
        if (result instanceof NextqlError) {
          expect(result.position).toBeGreaterThanOrEqual(0);
          expect(result.position).toBeLessThanOrEqual(text.length);
          expect(result.message).toMatch(/ at line \d+, column \d+$/);
        } else {
          expectRoundTrip(result, kind);
        }
      }),
      { numRuns: 3000 },
    );
  });

  test('arbitrary text either parses or throws NextqlError, through the type checker too', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), fc.constantFrom(...KINDS), (text, kind) => {
        try {
          parse(text, kind);
        } catch (error) {
          expect(error).toBeInstanceOf(NextqlError);
        }
      }),
      { numRuns: 2000 },
    );
  });

  test('random token strings that parse also type-check or throw NextqlError', () => {
    fc.assert(
      fc.property(tokenText, fc.constantFrom(...KINDS), (text, kind) => {
        try {
          parse(text, kind);
        } catch (error) {
          expect(error).toBeInstanceOf(NextqlError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('print round trip on generated trees', () => {
  const { condition, setExpression, literal } = syntaxArbitraries();
  const spacing = fc.array(fc.constantFrom('', ' ', '  ', '\n', '\t', '\r\n'), {
    minLength: 1,
    maxLength: 8,
  });

  /** Printed text with its spaces changed and a slice possibly cut out: near-valid input. */
  const perturbedText = fc
    .tuple(fc.oneof(condition, setExpression), spacing, fc.nat(), fc.nat({ max: 3 }))
    .map(([ast, spaces, cutAt, cutLength]) => {
      let index = 0;
      const text = print(ast).replace(/ /g, () => spaces[index++ % spaces.length]);
      const cut = cutAt % (text.length + 1);
      return text.slice(0, cut) + text.slice(cut + cutLength);
    });

  test('perturbed printed text either parses and round-trips, or throws NextqlError', () => {
    fc.assert(
      fc.property(perturbedText, fc.constantFrom(...KINDS), (text, kind) => {
        const result = parseOrError(text, kind);
        if (!(result instanceof NextqlError)) expectRoundTrip(result, kind);
      }),
      { numRuns: 2000 },
    );
  });

  test('filters', () => {
    fc.assert(
      fc.property(condition, (ast) => expectRoundTrip(ast, 'filter')),
      { numRuns: 1000 },
    );
  });

  test('boosters', () => {
    fc.assert(
      fc.property(literal, condition, (factor, ast) =>
        expectRoundTrip({ kind: 'booster', factor, condition: ast, span: { start: 0, end: 0 } }, 'booster'),
      ),
      { numRuns: 500 },
    );
  });

  test('segmentations', () => {
    fc.assert(
      fc.property(setExpression, (ast) => expectRoundTrip(ast, 'segmentation')),
      { numRuns: 1000 },
    );
  });
});
