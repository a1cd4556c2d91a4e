import { describe, expect, test } from 'vitest';
import {
  compileBooster,
  compileFilter,
  compileSegmentation,
  NextqlError,
  parse,
  validateExpression,
  type ExpressionKind,
} from '../../../src/nextql/index.js';

const UNKNOWN_NAME = (name: string): string =>
  `unknown name '${name}' (write an attribute key in single quotes, '${name}'; a bare name is a lambda variable, valid only inside its lambda)`;
const OPERATORS = '=, !=, <, <=, >, >=, in, not_in, contains or not_contains';
const SET_EXPRESSION = 'a set expression ({...}, a key, if, map, string() or a literal)';

/** [kind, text, message without location, position, line, column] */
const ERRORS: ReadonlyArray<readonly [ExpressionKind, string, string, number, number, number]> = [
  // syntax: filters
  ['filter', `'price' <  `, "expected a value after '<', found end of input", 11, 1, 12],
  ['filter', `'price' < )`, "expected a value after '<', found ')'", 10, 1, 11],
  [
    'filter',
    `'price' < 100 and\n  'stock' >\n  and 'x' = 1`,
    "expected a value after '>', found 'and'",
    32,
    3,
    3,
  ],
  ['filter', `'a' = 1 and`, "expected a condition after 'and', found end of input", 11, 1, 12],
  ['filter', `'a' = 1 or`, "expected a condition after 'or', found end of input", 10, 1, 11],
  ['filter', `'a' = 1 and not`, "expected a condition after 'not', found end of input", 15, 1, 16],
  ['filter', `not`, "expected a condition after 'not', found end of input", 3, 1, 4],
  ['filter', ``, 'expected a condition, found end of input', 0, 1, 1],
  ['filter', `   `, 'expected a condition, found end of input', 3, 1, 4],
  ['filter', `'a' = 1 'b' = 2`, "expected 'and', 'or' or the end of the filter, found key 'b'", 8, 1, 9],
  [
    'filter',
    `'a' = 1 AND 'b' = 2`,
    "expected 'and', 'or' or the end of the filter, found 'AND' (keywords are lowercase: 'and')",
    8,
    1,
    9,
  ],
  [
    'filter',
    `('a' = 1`,
    "expected 'and', 'or' or ')' to close the '(' at line 1, column 1, found end of input",
    8,
    1,
    9,
  ],
  [
    'filter',
    `'a' = 1 and ('b' = 2 or ('c' = 3)`,
    "expected 'and', 'or' or ')' to close the '(' at line 1, column 13, found end of input",
    33,
    1,
    34,
  ],
  ['filter', `'a' = 1)`, "expected 'and', 'or' or the end of the filter, found ')'", 7, 1, 8],
  ['filter', `'a' in "x"`, `expected a set literal like {"a", "b"} after 'in', found string "x"`, 7, 1, 8],
  [
    'filter',
    `'a' not_in 'b'`,
    `expected a set literal like {"a", "b"} after 'not_in', found key 'b'`,
    11,
    1,
    12,
  ],
  ['filter', `'a' in {1, }`, "expected a literal after ',', found '}'", 11, 1, 12],
  ['filter', `'a' in {1 2}`, "expected ',' or '}' after '1', found number 2", 10, 1, 11],
  ['filter', `'a' contains {1}`, "expected a literal value after 'contains', found '{'", 13, 1, 14],
  ['filter', `'a' contains 'b'`, "expected a literal value after 'contains', found key 'b'", 13, 1, 14],
  ['filter', `'a'`, `expected an operator (${OPERATORS}) after 'a', found end of input`, 3, 1, 4],
  [
    'filter',
    `'a' not in {1}`,
    `expected an operator (${OPERATORS}) after 'a', found 'not' (use 'not_in' or 'not_contains', or put 'not' before the condition)`,
    4,
    1,
    5,
  ],
  ['filter', `\t'a' =\t= 1`, "expected a value after '=', found '='", 7, 1, 8],
  ['filter', `'multi\nline' = 1 and\n  )`, "expected a condition after 'and', found ')'", 23, 3, 3],
  ['filter', `boost by 2 where 'a' = 1`, "expected a condition, found 'boost'", 0, 1, 1],
  // lexical
  ['filter', `'a' == 1`, "'==' is not an operator (use '=')", 4, 1, 5],
  ['filter', `'a' = "abc`, 'unterminated string (missing closing ")', 6, 1, 7],
  ['filter', `'a' = "abc\\`, 'unterminated string (missing closing ")', 6, 1, 7],
  ['filter', `'abc = 1`, "unterminated key (missing closing ')", 0, 1, 1],
  [
    'filter',
    `'a' = "x\\q"`,
    `invalid escape '\\q' in a string (use \\", \\\\, \\n, \\t or \\uXXXX)`,
    8,
    1,
    9,
  ],
  ['filter', `'a\\n' = 1`, "invalid escape '\\n' in a key (only \\' and \\\\ are allowed in a key)", 2, 1, 3],
  ['filter', `'a' = "\\u12"`, "expected 4 hexadecimal digits after '\\u'", 7, 1, 8],
  ['filter', `'a' = "\\u12G4"`, "expected 4 hexadecimal digits after '\\u'", 7, 1, 8],
  ['filter', `'a' = - 1`, "expected a digit after '-' (write negative numbers as -5)", 6, 1, 7],
  ['filter', `'a' = 1.`, "expected a digit after '.' in a number", 7, 1, 8],
  ['filter', `'a' = 1e`, 'expected digits in the exponent of a number', 7, 1, 8],
  ['filter', `'a' = 1e+`, 'expected digits in the exponent of a number', 7, 1, 8],
  ['filter', `'a' = 1e999`, 'number out of range', 6, 1, 7],
  ['filter', `'a' = .5`, "unexpected character '.'", 6, 1, 7],
  ['filter', `'a' = 1 && 'b' = 2`, "unexpected character '&' (use 'and')", 8, 1, 9],
  ['filter', `'a' = 1 || 'b' = 2`, "unexpected character '|' (use 'or')", 8, 1, 9],
  ['filter', `'a' ! 1`, "unexpected character '!' (use 'not', or '!=' for not equal)", 4, 1, 5],
  ['filter', `#`, "unexpected character '#'", 0, 1, 1],
  ['filter', `'a' = 😀`, "unexpected character '😀'", 6, 1, 7],
  ['filter', `'a' = \u0001`, "unexpected character '\\u0001'", 6, 1, 7],
  ['filter', `'a' = 1\n\n   @`, "unexpected character '@'", 12, 3, 4],
  ['filter', `'a' = 1\r\nand 'b' = 2 &`, "unexpected character '&' (use 'and')", 21, 2, 13],
  ['filter', `'a' = 1\rand 'b' = 2 &`, "unexpected character '&' (use 'and')", 20, 2, 13],
  // types: filters
  [
    'filter',
    `foo() = 1`,
    "unknown function 'foo' (the functions are now(), context_item() and context_user())",
    0,
    1,
    1,
  ],
  [
    'filter',
    `'x' = foo(1, 'y')`,
    "unknown function 'foo' (the functions are now(), context_item() and context_user())",
    6,
    1,
    7,
  ],
  [
    'filter',
    `'a' = 1 and\n  bar() = 2`,
    "unknown function 'bar' (the functions are now(), context_item() and context_user())",
    14,
    2,
    3,
  ],
  ['filter', `'d' < now(1)`, 'now() takes no arguments', 10, 1, 11],
  ['filter', `x = 1`, UNKNOWN_NAME('x'), 0, 1, 1],
  ['filter', `'a' = b`, UNKNOWN_NAME('b'), 6, 1, 7],
  ['filter', `'x' = now`, "unknown name 'now' (call the function as now())", 6, 1, 7],
  ['filter', `'a' = 1 or\n  (b = 2 and foo() = 1)`, UNKNOWN_NAME('b'), 14, 2, 4],
  // boosters
  ['booster', `boost by 0 where true`, 'the booster factor must be a number greater than 0, got 0', 9, 1, 10],
  [
    'booster',
    `boost by -2 where true`,
    'the booster factor must be a number greater than 0, got -2',
    9,
    1,
    10,
  ],
  [
    'booster',
    `boost by "2" where true`,
    'the booster factor must be a number greater than 0, got the string "2"',
    9,
    1,
    10,
  ],
  [
    'booster',
    `boost by null where true`,
    'the booster factor must be a number greater than 0, got null',
    9,
    1,
    10,
  ],
  ['booster', `boost by 1.5 'a' = 1`, "expected 'where' after '1.5', found key 'a'", 13, 1, 14],
  ['booster', `boost 1.5 where true`, "expected 'by' after 'boost', found number 1.5", 6, 1, 7],
  [
    'booster',
    `boosts by 1`,
    "expected 'boost' (a booster reads: boost by <factor> where <condition>), found 'boosts'",
    0,
    1,
    1,
  ],
  [
    'booster',
    `'a' = 1`,
    "expected 'boost' (a booster reads: boost by <factor> where <condition>), found key 'a'",
    0,
    1,
    1,
  ],
  ['booster', `boost by where true`, "expected a number after 'by', found 'where'", 9, 1, 10],
  ['booster', `boost by 2 where`, "expected a condition after 'where', found end of input", 16, 1, 17],
  [
    'booster',
    `boost by 2 where true true`,
    "expected 'and', 'or' or the end of the booster, found 'true'",
    22,
    1,
    23,
  ],
  ['booster', `boost by 2\nwhere 'x' = y`, UNKNOWN_NAME('y'), 23, 2, 13],
  // segmentations
  ['segmentation', `string('genre', "genre")`, 'the format string of string() must contain %s', 16, 1, 17],
  [
    'segmentation',
    `map(lambda g: string(g, "%d"), 'x')`,
    'the format string of string() must contain %s',
    24,
    1,
    25,
  ],
  ['segmentation', `map(lambda g: string(h, "x-%s"), 'genres')`, UNKNOWN_NAME('h'), 21, 1, 22],
  ['segmentation', `map(lambda g: g, g)`, UNKNOWN_NAME('g'), 17, 1, 18],
  ['segmentation', `g`, UNKNOWN_NAME('g'), 0, 1, 1],
  ['segmentation', `if g = 1 then {"a"} else {"b"}`, UNKNOWN_NAME('g'), 3, 1, 4],
  ['segmentation', `if now(2) = 1 then {"a"} else {"b"}`, 'now() takes no arguments', 7, 1, 8],
  [
    'segmentation',
    `if 'a' = 1 then {"x"}`,
    "expected 'else' (or '+') after '}', found end of input",
    21,
    1,
    22,
  ],
  [
    'segmentation',
    `if 'a' = 1 {"x"} else {"y"}`,
    "expected 'then' (or 'and', 'or') after '1', found '{'",
    11,
    1,
    12,
  ],
  ['segmentation', `{"a"} +`, `expected ${SET_EXPRESSION} after '+', found end of input`, 7, 1, 8],
  [
    'segmentation',
    `{"a"} {"b"}`,
    "expected '+' or the end of the segmentation expression, found '{'",
    6,
    1,
    7,
  ],
  ['segmentation', `now()`, "expected '+' or the end of the segmentation expression, found '('", 3, 1, 4],
  ['segmentation', `map(g: g, 'x')`, "expected 'lambda' after '(', found 'g'", 4, 1, 5],
  [
    'segmentation',
    `map(lambda if: if, 'x')`,
    "expected a variable name after 'lambda', found 'if'",
    11,
    1,
    12,
  ],
  ['segmentation', `map(lambda g g, 'x')`, "expected ':' after 'g', found 'g'", 13, 1, 14],
  ['segmentation', `map(lambda g: g 'x')`, "expected ',' after 'g', found key 'x'", 16, 1, 17],
  ['segmentation', `map(lambda g: g, 'x'`, "expected '+' or ')' after 'x', found end of input", 20, 1, 21],
  [
    'segmentation',
    `string('a', 'b')`,
    `expected a format string like "prefix-%s" after ',', found key 'b'`,
    12,
    1,
    13,
  ],
  [
    'segmentation',
    `string("a", "b-%s")`,
    `expected a key or a lambda variable after '(', found string "a"`,
    7,
    1,
    8,
  ],
  [
    'segmentation',
    `({"a"} + {"b"}`,
    "expected '+' or ')' to close the '(' at line 1, column 1, found end of input",
    14,
    1,
    15,
  ],
  [
    'segmentation',
    `'a' in {1} + {2}`,
    "expected '+' or the end of the segmentation expression, found 'in'",
    4,
    1,
    5,
  ],
  [
    'segmentation',
    `if 'a' = 1\r\nthen {"x"}\r\nelse {"y"} +`,
    `expected ${SET_EXPRESSION} after '+', found end of input`,
    36,
    3,
    13,
  ],
];

function thrown(run: () => unknown): NextqlError {
  try {
    run();
  } catch (error) {
    if (error instanceof NextqlError) return error;
    throw error;
  }
  throw new Error('expected a NextqlError');
}

const compilers: Record<ExpressionKind, (text: string) => unknown> = {
  filter: compileFilter,
  booster: compileBooster,
  segmentation: compileSegmentation,
};

describe('errors', () => {
  test.each(ERRORS)('%s %j', (kind, text, reason, position, line, column) => {
    const message = `${reason} at line ${line}, column ${column}`;
    expect(validateExpression(text, kind)).toEqual({
      valid: false,
      error: { message, position, line, column },
    });
    const error = thrown(() => compilers[kind](text));
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('NextqlError');
    expect(error.toDetail()).toEqual({ message, position, line, column });
    expect(thrown(() => parse(text, kind)).toDetail()).toEqual({ message, position, line, column });
  });
});

describe('validateExpression', () => {
  test.each([
    ['filter', `'price' < 100 and 'category' in {"shoes", "boots"}`],
    ['filter', `not ('brand' = "acme") and 'stock' > 0`],
    ['filter', `'blockedCountries' not_contains "DE"`],
    ['filter', `'expiresAt' > now()`],
    ['booster', `boost by 1.5 where 'brand' = "acme"`],
    ['booster', `boost by 2e-1 where true`],
    ['segmentation', `if 'price' > 100 then {"premium"} else {"budget"}`],
    ['segmentation', `map(lambda g: string(g, "genre-%s"), 'genres') + {"all"}`],
    [
      'segmentation',
      `(if 'a' = 1 then {"a"} else {"b"}) + {"all"} + 'tags' + string('brand', "brand-%s") + 1`,
    ],
  ] as const)('%s %s is valid', (kind, text) => {
    expect(validateExpression(text, kind)).toEqual({ valid: true });
  });

  test('a valid filter is not a valid booster or segmentation', () => {
    expect(validateExpression(`'a' = 1`, 'filter').valid).toBe(true);
    expect(validateExpression(`'a' = 1`, 'booster').valid).toBe(false);
    expect(validateExpression(`'a' = 1`, 'segmentation').valid).toBe(false);
  });

  test('errors report the leftmost problem', () => {
    const result = validateExpression(`foo() = 1 and bar() = 2 and x = 1`, 'filter');
    expect(result.valid === false && result.error.position).toBe(0);
  });

  test('compile errors are not cached as successes', () => {
    expect(() => compileFilter(`'a' =`)).toThrow(NextqlError);
    expect(() => compileFilter(`'a' =`)).toThrow(NextqlError);
  });
});
