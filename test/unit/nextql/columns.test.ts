import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  compileBooster,
  compileFilter,
  print,
  type ItemColumns,
  type NextqlItem,
} from '../../../src/nextql/index.js';
import { evaluationArbitraries, item } from './arbitraries.js';
import { allIds, ArrayColumns } from './helpers.js';

const NOW = { now: new Date('2024-05-15T00:00:00Z') };
const { condition } = evaluationArbitraries();

/** Ids in any order, with duplicates and ids outside 0..size-1. */
function idList(size: number): fc.Arbitrary<Int32Array> {
  return fc
    .array(fc.integer({ min: -2, max: size + 1 }), { maxLength: size * 2 })
    .map((ids) => Int32Array.from(ids));
}

describe('column evaluation agrees with per-document evaluation', () => {
  test('filters over all ids and over id subsets', () => {
    fc.assert(
      fc.property(
        fc
          .array(item, { minLength: 1, maxLength: 25 })
          .chain((items) => fc.tuple(fc.constant(items), condition, idList(items.length))),
        ([items, ast, ids]) => {
          const filter = compileFilter(print(ast));
          const columns = new ArrayColumns(items);
          const expected = items.map((one) => filter.matches(one, NOW));
          expect(Array.from(filter.filterAll(columns, NOW), (bit) => bit === 1)).toEqual(expected);
          const keptIds = Array.from(ids).filter((id) => id >= 0 && id < items.length && expected[id]);
          expect(Array.from(filter.filterIds(columns, ids, NOW))).toEqual(keptIds);
        },
      ),
      { numRuns: 1500 },
    );
  });

  test('boosters', () => {
    fc.assert(
      fc.property(
        fc
          .array(item, { minLength: 1, maxLength: 20 })
          .chain((items) => fc.tuple(fc.constant(items), condition, idList(items.length))),
        ([items, ast, ids]) => {
          const booster = compileBooster(`boost by 1.5 where ${print(ast)}`);
          const columns = new ArrayColumns(items);
          const scores = Float64Array.from(ids, (_, index) => index + 1);
          booster.applyToScores(columns, ids, scores, NOW);
          const expected = Array.from(ids, (id, index) => {
            const valid = id >= 0 && id < items.length;
            return (index + 1) * (valid ? booster.factorFor(items[id], NOW) : 1);
          });
          expect(Array.from(scores)).toEqual(expected);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('column evaluation', () => {
  const items: NextqlItem[] = [
    { externalId: 'a', category: 'shoes', attributes: { price: 50, tags: ['x'], size: { eu: 40 } } },
    { externalId: 'b', category: 'boots', attributes: { price: 150, tags: [] } },
    { externalId: 'c', attributes: { price: 20, released: '2024-05-01' } },
    { externalId: 'd', category: 'shoes', attributes: { price: '20', size: { eu: 44 } } },
  ];

  test('filterIds keeps the input order and duplicates and drops ids outside the columns', () => {
    const filter = compileFilter(`'price' < 100`);
    const columns = new ArrayColumns(items);
    expect(Array.from(filter.filterIds(columns, Int32Array.of(2, -1, 0, 7, 2, 1, 3)))).toEqual([2, 0, 2]);
    expect(Array.from(filter.filterIds(columns, new Int32Array(0)))).toEqual([]);
  });

  test('filterIds does not modify its input', () => {
    const ids = Int32Array.of(3, 2, 1, 0);
    compileFilter(`'price' < 100`).filterIds(new ArrayColumns(items), ids);
    expect(Array.from(ids)).toEqual([3, 2, 1, 0]);
  });

  test('filterAll returns one byte per dense id', () => {
    const columns = new ArrayColumns(items);
    expect(Array.from(compileFilter(`'category' = "shoes" or 'price' < 30`).filterAll(columns))).toEqual([
      1, 0, 1, 1,
    ]);
    expect(Array.from(compileFilter(`not ('tags' contains "x")`).filterAll(columns))).toEqual([0, 1, 1, 1]);
    expect(Array.from(compileFilter(`'size.eu' > 42`).filterAll(columns))).toEqual([0, 0, 0, 1]);
    expect(Array.from(compileFilter(`'unknownKey' != 1`).filterAll(columns))).toEqual([0, 0, 0, 0]);
    expect(Array.from(compileFilter(`not ('unknownKey' != 1)`).filterAll(columns))).toEqual([1, 1, 1, 1]);
    expect(Array.from(compileFilter(`true`).filterAll(columns))).toEqual([1, 1, 1, 1]);
    expect(
      Array.from(compileFilter(`false or 'released' = "2024-05-01T00:00:00Z"`).filterAll(columns)),
    ).toEqual([0, 0, 1, 0]);
  });

  test('results follow column changes announced by the version', () => {
    const columns = new ArrayColumns(items);
    const nested = compileFilter(`'size.eu' = 40 and 'released' > "2024-01-01"`);
    const plain = compileFilter(`'price' >= 100`);
    expect(Array.from(nested.filterAll(columns))).toEqual([0, 0, 0, 0]);
    expect(Array.from(plain.filterAll(columns))).toEqual([0, 1, 0, 0]);
    columns.setAttribute(0, 'released', '2024-02-01T00:00:00Z');
    columns.setAttribute(0, 'price', 500);
    columns.setAttribute(1, 'price', 5);
    expect(Array.from(nested.filterAll(columns))).toEqual([1, 0, 0, 0]);
    expect(Array.from(plain.filterAll(columns))).toEqual([1, 0, 0, 0]);
    columns.setAttribute(0, 'size', { eu: 41 });
    expect(Array.from(nested.filterAll(columns))).toEqual([0, 0, 0, 0]);
  });

  test('repeated runs over the same columns follow the evaluation time', () => {
    const dated: NextqlItem[] = [
      { externalId: 'old', expiresAt: '2024-01-01T00:00:00Z' },
      { externalId: 'new', expiresAt: '2026-01-01T00:00:00Z' },
    ];
    const columns = new ArrayColumns(dated);
    const filter = compileFilter(`not ('expiresAt' < now()) or ('expiresAt' > now() and false)`);
    const ids = Int32Array.of(0, 1);
    const at = (now: string): number[] => Array.from(filter.filterIds(columns, ids, { now: new Date(now) }));
    expect(at('2023-01-01')).toEqual([0, 1]);
    expect(at('2025-01-01')).toEqual([1]);
    expect(at('2027-01-01')).toEqual([]);
    expect(at('2023-01-01')).toEqual([0, 1]);
    const either = compileFilter(`'expiresAt' < now() or 'expiresAt' = "2020-01-01"`);
    expect(Array.from(either.filterAll(columns, { now: new Date('2025-01-01') }))).toEqual([1, 0]);
    expect(Array.from(either.filterAll(columns, { now: new Date('2023-01-01') }))).toEqual([0, 0]);
  });

  test('a compiled filter serves several column sets', () => {
    const filter = compileFilter(`'price' < 100`);
    const first = new ArrayColumns(items);
    const second = new ArrayColumns([{ externalId: 'z', attributes: { price: 1 } }]);
    expect(Array.from(filter.filterAll(first))).toEqual([1, 0, 1, 0]);
    expect(Array.from(filter.filterAll(second))).toEqual([1]);
    expect(Array.from(filter.filterAll(first))).toEqual([1, 0, 1, 0]);
  });

  test('nested or/not over a subset', () => {
    const columns = new ArrayColumns(items);
    const filter = compileFilter(
      `not ('category' = "boots" or ('price' < 30 and not ('externalId' = "d"))) and ('price' != 0 or 'price' = "20")`,
    );
    const ids = Int32Array.of(3, 1, 0, 2, 3);
    const expected = Array.from(ids).filter((id) => filter.matches(items[id]));
    expect(expected).toEqual([3, 0, 3]);
    expect(Array.from(filter.filterIds(columns, ids))).toEqual(expected);
  });

  test('boosters multiply the scores of matching ids in place and stack', () => {
    const columns = new ArrayColumns(items);
    const ids = Int32Array.of(1, 0, 3, 9);
    const scores = Float32Array.of(1, 2, 3, 4);
    compileBooster(`boost by 2 where 'category' = "shoes"`).applyToScores(columns, ids, scores);
    compileBooster(`boost by 0.5 where 'price' < 100`).applyToScores(columns, ids, scores);
    expect(Array.from(scores)).toEqual([1, 2, 6, 4]);
  });

  test('per-document booster helpers', () => {
    const booster = compileBooster(`boost by 1.5 where 'category' = "shoes"`);
    expect(booster.factor).toBe(1.5);
    expect(booster.matches(items[0])).toBe(true);
    expect(booster.factorFor(items[0])).toBe(1.5);
    expect(booster.factorFor(items[1])).toBe(1);
  });

  test('dense ids beyond the stored arrays read as missing', () => {
    const columns: ItemColumns = {
      size: 3,
      version: 1,
      field: () => [],
      attribute: (key) => (key === 'price' ? [1] : undefined),
    };
    expect(Array.from(compileFilter(`'price' < 5`).filterAll(columns))).toEqual([1, 0, 0]);
    expect(Array.from(compileFilter(`'category' != "x"`).filterIds(columns, allIds(3)))).toEqual([]);
  });
});
