import { describe, expect, test } from 'vitest';
import { compileFilter, type NextqlItem } from '../../../src/nextql/index.js';
import { ArrayColumns } from './helpers.js';

const NOW = new Date('2025-01-01T00:00:00Z');

const ITEM: NextqlItem = {
  externalId: 'sku-1',
  category: 'shoes',
  available: true,
  feedManaged: false,
  createdAt: '2024-03-01T12:00:00.000Z',
  expiresAt: '2030-01-01T00:00:00.000Z',
  attributes: {
    price: 80,
    stock: 5,
    zero: 0,
    negative: -3.5,
    big: 1.5e6,
    brand: 'acme',
    color: 'red',
    empty: '',
    name: 'It\'s "quoted"',
    path: 'C:\\dir',
    newline: 'a\nb',
    tab: 'a\tb',
    unicode: 'café',
    emoji: '😀',
    onSale: true,
    discontinued: false,
    nothing: null,
    genres: ['rock', 'jazz'],
    genresCopy: ['rock', 'jazz'],
    blocked: [],
    numbers: [1, 2, 3],
    mixed: [1, '1', true, null],
    dates: ['2024-05-01T00:00:00Z'],
    size: { eu: 42, us: '9', nested: { deep: 'yes' } },
    releaseDate: '2024-05-01',
    releasedAt: '2024-05-01T10:00:00Z',
    offsetTime: '2024-05-01T12:00:00+02:00',
    leap: '2024-02-29',
    notADate: '2024-13-45',
    'dotted.key': 'flat',
    "quote'key": 'q',
    'back\\slash': 'b',
    clé: 'v',
    category: 'attr-category',
    externalId: 'attr-id',
  },
};

/** [filter, expected result on ITEM] */
const CASES: ReadonlyArray<readonly [string, boolean]> = [
  // numbers
  [`'price' = 80`, true],
  [`'price' = 80.0`, true],
  [`'price' != 80`, false],
  [`'price' != 81`, true],
  [`'price' < 100`, true],
  [`'price' < 80`, false],
  [`'price' <= 80`, true],
  [`'price' > 79.99`, true],
  [`'price' >= 80`, true],
  [`'price' > 80`, false],
  [`'price' = 8e1`, true],
  [`'price' = 0.8E+2`, true],
  [`'price' = 8000e-2`, true],
  [`'price' < 1e2`, true],
  [`'big' = 1.5e6`, true],
  [`'big' = 15E5`, true],
  [`'big' > 1.4999e+6`, true],
  [`'negative' = -3.5`, true],
  [`'negative' < -3`, true],
  [`'negative' > -4e0`, true],
  [`'negative' < 0`, true],
  [`'negative' > -3.5e-1`, false],
  [`'zero' = -0`, true],
  [`'zero' = 0`, true],
  [`'zero' >= 0`, true],
  [`'stock' = 05`, true],
  [`'price' = "80"`, false],
  [`'price' != "80"`, false],
  [`'price' < "100"`, false],
  [`80 = 'price'`, true],
  [`100 > 'price'`, true],
  [`100 < 'price'`, false],
  [`-5 < 'negative'`, true],
  [`-3 <= 'negative'`, false],
  // strings
  [`'brand' = "acme"`, true],
  [`'brand' = "ACME"`, false],
  [`'brand' != "globex"`, true],
  [`'brand' != "acme"`, false],
  [`'brand' < "b"`, true],
  [`'brand' > "acme"`, false],
  [`'brand' >= "acme"`, true],
  [`'brand' <= "ab"`, false],
  [`'empty' = ""`, true],
  [`'empty' < "a"`, true],
  [`'brand' = 1`, false],
  [`'brand' != 1`, false],
  [`'name' = "It's \\"quoted\\""`, true],
  [`'path' = "C:\\\\dir"`, true],
  [`'newline' = "a\\nb"`, true],
  [`'tab' = "a\\tb"`, true],
  [`'unicode' = "caf\\u00e9"`, true],
  [`'unicode' = "caf\\u00E9"`, true],
  [`'unicode' = "café"`, true],
  [`'unicode' = "cafe"`, false],
  [`'emoji' = "\\ud83d\\ude00"`, true],
  [`"b" > "a"`, true],
  // booleans
  [`'onSale' = true`, true],
  [`'onSale' != false`, true],
  [`'onSale' != true`, false],
  [`'discontinued' = false`, true],
  [`'onSale' = "true"`, false],
  [`'onSale' = 1`, false],
  [`'onSale' < true`, false],
  [`'onSale' > false`, false],
  [`true = 'onSale'`, true],
  [`'available' = true`, true],
  [`'feedManaged' = false`, true],
  // null
  [`'nothing' = null`, true],
  [`'nothing' != null`, false],
  [`'nothing' = 0`, false],
  [`'nothing' != 0`, false],
  [`'nothing' < 1`, false],
  [`'price' = null`, false],
  [`'price' != null`, false],
  [`'missing' = null`, false],
  [`null = 'nothing'`, true],
  // missing keys fail closed, and `not` inverts what was computed
  [`'missing' = 1`, false],
  [`'missing' != 1`, false],
  [`'missing' < 1`, false],
  [`'missing' >= 1`, false],
  [`'missing' in {1}`, false],
  [`'missing' not_in {1}`, false],
  [`'missing' contains 1`, false],
  [`'missing' not_contains 1`, false],
  [`not ('missing' = 1)`, true],
  [`not 'missing' != 1`, true],
  [`'toString' != "x"`, false],
  [`'constructor' != "x"`, false],
  [`'__proto__' != "x"`, false],
  [`'hasOwnProperty' != "x"`, false],
  // key resolution
  [`'itemId' = "sku-1"`, true],
  [`'externalId' = "sku-1"`, true],
  [`'category' = "shoes"`, true],
  [`'attributes.category' = "attr-category"`, true],
  [`'attributes.externalId' = "attr-id"`, true],
  [`'attributes.price' = 80`, true],
  [`'size.eu' = 42`, true],
  [`'size.us' = "9"`, true],
  [`'attributes.size.eu' = 42`, true],
  [`'size.nested.deep' = "yes"`, true],
  [`'size.missing' = 1`, false],
  [`'size.eu.x' = 1`, false],
  [`'size' = 42`, false],
  [`'size' != 42`, false],
  [`'dotted.key' = "flat"`, false],
  [`'quote\\'key' = "q"`, true],
  [`'back\\\\slash' = "b"`, true],
  [`'clé' = "v"`, true],
  [`'genres.0' = "rock"`, false],
  [`'category.x' != 1`, false],
  // in / not_in
  [`'brand' in {"acme", "globex"}`, true],
  [`'brand' in {"globex"}`, false],
  [`'brand' in {}`, false],
  [`'brand' not_in {"globex"}`, true],
  [`'brand' not_in {"acme"}`, false],
  [`'brand' not_in {}`, true],
  [`'price' in {80, 90}`, true],
  [`'price' in {"80"}`, false],
  [`'price' not_in {"80"}`, false],
  [`'price' not_in {1, "80"}`, true],
  [`'nothing' in {null}`, true],
  [`'nothing' not_in {null}`, false],
  [`'nothing' not_in {1}`, false],
  [`'onSale' in {true}`, true],
  [`'onSale' not_in {false}`, true],
  [`'genres' in {"rock"}`, false],
  [`'genres' not_in {"pop"}`, false],
  [`'size' not_in {1}`, false],
  [`'category' in {"shoes", "boots"}`, true],
  [`'releaseDate' in {"2024-05-01T00:00:00Z"}`, true],
  [`'releaseDate' in {"2024-05-01T00:00:01Z"}`, false],
  [`'releaseDate' not_in {"2024-05-02"}`, true],
  [`'releaseDate' not_in {"2024-05-01T00:00:00+00:00", "x"}`, false],
  [`"acme" in {"acme"}`, true],
  [`1 not_in {2}`, true],
  // contains / not_contains
  [`'genres' contains "rock"`, true],
  [`'genres' contains "pop"`, false],
  [`'genres' not_contains "pop"`, true],
  [`'genres' not_contains "rock"`, false],
  [`'blocked' not_contains "DE"`, true],
  [`'blocked' contains "DE"`, false],
  [`'numbers' contains 2`, true],
  [`'numbers' contains "2"`, false],
  [`'numbers' not_contains "2"`, true],
  [`'mixed' contains null`, true],
  [`'mixed' contains true`, true],
  [`'mixed' contains "1"`, true],
  [`'brand' contains "a"`, false],
  [`'brand' not_contains "z"`, false],
  [`'price' not_contains 1`, false],
  [`'size' contains 42`, false],
  [`'dates' contains "2024-05-01"`, true],
  [`"x" not_contains "y"`, false],
  // dates
  [`'releaseDate' = "2024-05-01"`, true],
  [`'releaseDate' = "2024-05-01T00:00:00Z"`, true],
  [`'releaseDate' = "2024-05-01T00:00:00.000Z"`, true],
  [`'releaseDate' != "2024-05-01T00:00:00Z"`, false],
  [`'releaseDate' < "2024-05-01T00:00:01Z"`, true],
  [`'releaseDate' = "2024-04-30T22:00:00-02:00"`, true],
  [`'releaseDate' = "2024-05-01 00:00:00Z"`, true],
  [`'releaseDate' = 20240501`, false],
  [`'releasedAt' = "2024-05-01"`, false],
  [`'releasedAt' != "2024-05-01"`, true],
  [`'releasedAt' > "2024-05-01"`, true],
  [`'releasedAt' < "2024-05-02"`, true],
  [`'releasedAt' = "2024-05-01T12:00:00+02:00"`, true],
  [`'releasedAt' = "2024-05-01T10:00:00"`, true],
  [`'releasedAt' = "2024-05-01t10:00:00z"`, true],
  [`'releasedAt' = "2024-05-01T10:00Z"`, true],
  [`'releasedAt' != "2024-05-01T10:00:00.001Z"`, true],
  [`'releasedAt' >= "2024-05-01T10:00:00Z"`, true],
  [`'releasedAt' < "2024-05-01T10:00:00Zjunk"`, true],
  [`'offsetTime' = "2024-05-01T10:00:00Z"`, true],
  [`'offsetTime' = 'releasedAt'`, true],
  [`'offsetTime' > "2024-05-01T11:00:00Z"`, false],
  [`'leap' = "2024-02-29T00:00:00Z"`, true],
  [`'notADate' = "2024-13-45"`, true],
  [`'notADate' > "2024-05-01"`, true],
  [`'createdAt' = "2024-03-01T12:00:00Z"`, true],
  [`'createdAt' < "2024-03-02"`, true],
  [`'createdAt' > "2024-03-01"`, true],
  // now()
  [`'createdAt' < now()`, true],
  [`'expiresAt' > now()`, true],
  [`now() > 'createdAt'`, true],
  [`now() = now()`, true],
  [`now() != now()`, false],
  [`now() >= now()`, true],
  [`now() > "2024-12-31"`, true],
  [`now() < "2025-01-01T00:00:01Z"`, true],
  [`now() = "2025-01-01"`, true],
  [`"2025-01-01" = now()`, true],
  [`now() in {"2025-01-01"}`, true],
  [`now() not_contains "x"`, false],
  [`'releasedAt' >= now()`, false],
  [`'missing' < now()`, false],
  [`'price' < now()`, false],
  [`'notADate' < now()`, true],
  // key against key
  [`'price' > 'zero'`, true],
  [`'price' = 'price'`, true],
  [`'releaseDate' < 'releasedAt'`, true],
  [`'brand' = 'color'`, false],
  [`'brand' != 'color'`, true],
  [`'price' != 'brand'`, false],
  [`'genres' = 'genresCopy'`, true],
  [`'genres' != 'numbers'`, true],
  [`'missing' = 'missing'`, false],
  [`'nothing' = 'nothing'`, true],
  [`'onSale' != 'discontinued'`, true],
  [`'size' = 'size'`, false],
  // literals on both sides
  [`1 = 1`, true],
  [`1 < 2`, true],
  [`1 = "1"`, false],
  [`1 != "1"`, false],
  [`null = null`, true],
  [`null != null`, false],
  [`true != false`, true],
  // connectives and precedence: not > and > or
  [`true`, true],
  [`false`, false],
  [`not true`, false],
  [`not not true`, true],
  [`true and false`, false],
  [`true or false`, true],
  [`true or true and false`, true],
  [`(true or true) and false`, false],
  [`not false and false`, false],
  [`not (false and false)`, true],
  [`not true or true`, true],
  [`not (true or true)`, false],
  [`false and true or true`, true],
  [`false and (true or true)`, false],
  [`(((true)))`, true],
  [`'price' < 100 and 'brand' = "acme"`, true],
  [`'price' < 50 or 'brand' = "acme"`, true],
  [`'price' < 50 or 'brand' = "globex"`, false],
  [`not ('brand' = "acme") and 'stock' > 0`, false],
  [`not 'brand' = "globex" and 'stock' > 0`, true],
  [`'price' < 100 and ('brand' = "x" or 'color' = "red")`, true],
  [`'price' < 100 and 'brand' = "x" or 'color' = "red"`, true],
  [`'price' > 100 and ('brand' = "x" or 'color' = "red")`, false],
  [`'price' < 100 and 'category' in {"shoes", "boots"} and 'stock' > 0`, true],
  // layout
  [`'price'\n<\t100\r\nand 'stock'>0`, true],
  [`'price'<100and'stock'>0`, true],
  [`  'price' = 80  `, true],
];

function columnResult(filter: string, item: NextqlItem): { mask: boolean; ids: boolean } {
  const compiled = compileFilter(filter);
  const columns = new ArrayColumns([item]);
  return {
    mask: compiled.filterAll(columns, { now: NOW })[0] === 1,
    ids: compiled.filterIds(columns, Int32Array.of(0), { now: NOW }).length === 1,
  };
}

describe('filter evaluation table', () => {
  test('has at least 150 cases', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(150);
  });

  test.each(CASES)('%s → %s', (filter, expected) => {
    expect(compileFilter(filter).matches(ITEM, { now: NOW })).toBe(expected);
    expect(columnResult(filter, ITEM)).toEqual({ mask: expected, ids: expected });
    const negated = `not (${filter})`;
    expect(compileFilter(negated).matches(ITEM, { now: NOW })).toBe(!expected);
    expect(columnResult(negated, ITEM)).toEqual({ mask: !expected, ids: !expected });
  });
});

describe('top-level fields', () => {
  const bare: NextqlItem = { externalId: 'bare', attributes: { category: 'attr', createdAt: '2020-01-01' } };
  const withNulls: NextqlItem = { externalId: 'nulls', category: null, available: null, expiresAt: null };
  const withDates: NextqlItem = {
    externalId: 'dated',
    createdAt: new Date('2024-05-01T10:00:00Z'),
    expiresAt: new Date(Number.NaN),
  };

  test.each([
    [bare, `'category' = "attr"`, false],
    [bare, `'category' != "shoes"`, false],
    [bare, `'attributes.category' = "attr"`, true],
    [bare, `'createdAt' < "2021-01-01"`, false],
    [bare, `'attributes.createdAt' < "2021-01-01"`, true],
    [bare, `'available' = true`, false],
    [withNulls, `'category' = null`, false],
    [withNulls, `'available' != true`, false],
    [withNulls, `'expiresAt' = null`, false],
    [withNulls, `'missing' = null`, false],
    [withDates, `'createdAt' = "2024-05-01T10:00:00Z"`, true],
    [withDates, `'createdAt' = "2024-05-01T10:00:00.000Z"`, true],
    [withDates, `'createdAt' > "2024-05-01"`, true],
    [withDates, `'expiresAt' != "x"`, false],
  ] as const)('%j: %s → %s', (item, filter, expected) => {
    expect(compileFilter(filter).matches(item)).toBe(expected);
    expect(columnResult(filter, item)).toEqual({ mask: expected, ids: expected });
  });

  test('an item without attributes reads every attribute as missing', () => {
    const filter = compileFilter(`'price' != 1`);
    expect(filter.matches({ externalId: 'x' })).toBe(false);
    expect(filter.matches({ externalId: 'x', attributes: null })).toBe(false);
    expect(compileFilter(`not ('price' != 1)`).matches({ externalId: 'x' })).toBe(true);
  });
});

describe('now()', () => {
  test('defaults to the current time', () => {
    const filter = compileFilter(`'expiresAt' > now()`);
    const soon = new Date(Date.now() + 60_000).toISOString();
    const past = new Date(Date.now() - 60_000).toISOString();
    expect(filter.matches({ externalId: 'a', expiresAt: soon })).toBe(true);
    expect(filter.matches({ externalId: 'a', expiresAt: past })).toBe(false);
  });

  test('accepts a number of milliseconds, and each evaluation reads its own time', () => {
    const filter = compileFilter(`'expiresAt' > now()`);
    const item: NextqlItem = { externalId: 'a', expiresAt: '2024-06-01T00:00:00Z' };
    const columns = new ArrayColumns([item]);
    expect(filter.matches(item, { now: Date.parse('2024-05-01T00:00:00Z') })).toBe(true);
    expect(filter.matches(item, { now: Date.parse('2024-07-01T00:00:00Z') })).toBe(false);
    expect(filter.filterAll(columns, { now: Date.parse('2024-05-01T00:00:00Z') })[0]).toBe(1);
    expect(filter.filterAll(columns, { now: Date.parse('2024-07-01T00:00:00Z') })[0]).toBe(0);
  });

  test('an invalid time falls back to the current time instead of throwing', () => {
    const filter = compileFilter(`'expiresAt' > now()`);
    const item: NextqlItem = { externalId: 'a', expiresAt: '2999-01-01' };
    expect(filter.matches(item, { now: new Date(Number.NaN) })).toBe(true);
    expect(filter.matches(item, { now: Number.POSITIVE_INFINITY })).toBe(true);
  });
});
