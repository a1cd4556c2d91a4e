import { describe, expect, test } from 'vitest';
import { joinFilterClauses, NextqlError, splitFilterClauses } from '../../../src/nextql/index.js';

describe('splitFilterClauses', () => {
  test.each([
    [`'a' = 1 and 'b' = 2`, [`'a' = 1`, `'b' = 2`]],
    [`'a' = 1`, [`'a' = 1`]],
    [`  'a' = 1  `, [`'a' = 1`]],
    [`'a' = 1 or 'b' = 2 and 'c' = 3`, [`'a' = 1 or 'b' = 2 and 'c' = 3`]],
    [`'a' = 1 and ('b' = 2 or 'c' = 3) and not 'd' = 4`, [`'a' = 1`, `('b' = 2 or 'c' = 3)`, `not 'd' = 4`]],
    [`'a' = 1 and  (  'b' = 2 or 'c' = 3 )  `, [`'a' = 1`, `(  'b' = 2 or 'c' = 3 )`]],
    [`('a' = 1 and 'b' = 2)`, [`'a' = 1`, `'b' = 2`]],
    [`'a' = 1 and ('b' = 2 and 'c' = 3)`, [`'a' = 1`, `('b' = 2 and 'c' = 3)`]],
    [`'a' = 1\n  and 'b' in {1,\n 2}\n`, [`'a' = 1`, `'b' in {1,\n 2}`]],
    [`not ('a' = 1 and 'b' = 2)`, [`not ('a' = 1 and 'b' = 2)`]],
    [
      `'price' < 100 and 'category' in {"shoes", "boots"} and 'stock' > 0`,
      [`'price' < 100`, `'category' in {"shoes", "boots"}`, `'stock' > 0`],
    ],
  ])('%j', (filter, clauses) => {
    expect(splitFilterClauses(filter)).toEqual(clauses);
  });

  test('an invalid filter throws the typed error', () => {
    expect(() => splitFilterClauses(`'a' = 1 and`)).toThrow(NextqlError);
  });
});

describe('joinFilterClauses', () => {
  test.each([
    [[], ''],
    [[`'a' = 1`], `'a' = 1`],
    [[`'a' = 1`, `'b' = 2`], `'a' = 1 and 'b' = 2`],
    [[`'a' = 1`, `'b' = 2 or 'c' = 3`], `'a' = 1 and ('b' = 2 or 'c' = 3)`],
    [[`'b' = 2 or 'c' = 3`], `('b' = 2 or 'c' = 3)`],
    [[`('b' = 2 or 'c' = 3)`, `'a' = 1`], `('b' = 2 or 'c' = 3) and 'a' = 1`],
    [[`not ('a' = 1 or 'b' = 2)`], `not ('a' = 1 or 'b' = 2)`],
    [[`'a' = 1 and 'b' = 2 or 'c' = 3`], `('a' = 1 and 'b' = 2 or 'c' = 3)`],
    [[`('a' = 1) or ('b' = 2)`], `(('a' = 1) or ('b' = 2))`],
    [[`'x' in {"or"}`, `'or' = 1`], `'x' in {"or"} and 'or' = 1`],
    [[`'a' = 1 and ('b' = 2 or 'c' = 3)`], `'a' = 1 and ('b' = 2 or 'c' = 3)`],
  ] as const)('%j', (clauses, filter) => {
    expect(joinFilterClauses(clauses)).toBe(filter);
  });

  test('text that does not tokenise is wrapped so it keeps its own boundaries', () => {
    expect(joinFilterClauses([`'a' = 1`, `'b`])).toBe(`'a' = 1 and ('b)`);
  });

  test('rule filters first and the scenario filter last, relaxed from the right', () => {
    const ruleFilter = `'stock' > 0 or 'preorder' = true`;
    const scenarioFilter = `'price' < 100 and 'brand' != "acme"`;
    const clauses = [...splitFilterClauses(ruleFilter), ...splitFilterClauses(scenarioFilter)];
    expect(joinFilterClauses(clauses)).toBe(
      `('stock' > 0 or 'preorder' = true) and 'price' < 100 and 'brand' != "acme"`,
    );
    expect(joinFilterClauses(clauses.slice(0, 2))).toBe(
      `('stock' > 0 or 'preorder' = true) and 'price' < 100`,
    );
  });
});
