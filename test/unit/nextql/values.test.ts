import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { BoundedCache } from '../../../src/nextql/cache.js';
import { instantOf } from '../../../src/nextql/dates.js';
import { compileFilter } from '../../../src/nextql/index.js';
import {
  comparisonTest,
  compareValues,
  containmentTest,
  membershipTest,
} from '../../../src/nextql/values.js';
import { COMPARISON_OPERATORS, VALUE_POOL } from './arbitraries.js';

const value = fc.oneof(
  fc.constantFrom<unknown>(...VALUE_POOL, undefined, 'zzz', '2024-05-01T00:00:00.000Z'),
  fc.array(fc.constantFrom(...VALUE_POOL), { maxLength: 3 }),
  fc.record({ x: fc.constantFrom(...VALUE_POOL) }),
);
const literal = fc.constantFrom(...VALUE_POOL);

describe('constant tests agree with the general comparison', () => {
  test('comparison', () => {
    fc.assert(
      fc.property(fc.constantFrom(...COMPARISON_OPERATORS), value, literal, (operator, left, right) => {
        const test = comparisonTest(operator, right);
        expect(test.matches(left)).toBe(compareValues(operator, left, right));
        if (test.dates !== undefined) {
          const instant = typeof left === 'string' ? instantOf(left) : NaN;
          const split = Number.isNaN(instant) ? test.dates.onOther(left) : test.dates.onInstant(instant);
          expect(split).toBe(test.matches(left));
        }
      }),
      { numRuns: 3000 },
    );
  });

  test('membership: in is "equals some element"; not_in also needs a value of a type the set holds', () => {
    const typeOf = (item: unknown): string => (item === null ? 'null' : typeof item);
    fc.assert(
      fc.property(value, fc.array(literal, { maxLength: 4 }), (left, elements) => {
        const isIn = elements.some((element) => compareValues('=', left, element));
        expect(membershipTest('in', elements).matches(left)).toBe(isIn);
        const scalar = left === null || ['string', 'number', 'boolean'].includes(typeof left);
        const comparable =
          scalar && (elements.length === 0 || elements.some((element) => typeOf(element) === typeOf(left)));
        expect(membershipTest('not_in', elements).matches(left)).toBe(comparable && !isIn);
      }),
      { numRuns: 3000 },
    );
  });

  test('containment needs an array', () => {
    fc.assert(
      fc.property(value, literal, (left, element) => {
        const contains = Array.isArray(left) && left.some((item) => compareValues('=', item, element));
        expect(containmentTest('contains', element).matches(left)).toBe(contains);
        expect(containmentTest('not_contains', element).matches(left)).toBe(Array.isArray(left) && !contains);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('RFC 3339 dates', () => {
  test.each([
    ['2024-05-01', '2024-05-01T00:00:00Z'],
    ['2024-05-01T10:00:00Z', '2024-05-01T10:00:00Z'],
    ['2024-05-01T10:00:00', '2024-05-01T10:00:00Z'],
    ['2024-05-01t10:00:00z', '2024-05-01T10:00:00Z'],
    ['2024-05-01 10:00:00Z', '2024-05-01T10:00:00Z'],
    ['2024-05-01T10:00Z', '2024-05-01T10:00:00Z'],
    ['2024-05-01T10:00:00.5Z', '2024-05-01T10:00:00.500Z'],
    ['2024-05-01T12:30:00+02:30', '2024-05-01T10:00:00Z'],
    ['2024-05-01T00:00:00-05:00', '2024-05-01T05:00:00Z'],
    ['2024-02-29', '2024-02-29T00:00:00Z'],
    ['2000-02-29', '2000-02-29T00:00:00Z'],
    ['1969-12-31T23:59:59Z', '1969-12-31T23:59:59Z'],
    ['0001-01-01', '0001-01-01T00:00:00Z'],
    ['0050-06-01', '0050-06-01T00:00:00Z'],
  ])('%s', (text, iso) => {
    expect(instantOf(text)).toBe(new Date(iso).getTime());
  });

  test.each([
    '2024-13-01',
    '2024-00-10',
    '2024-04-31',
    '2023-02-29',
    '1900-02-29',
    '2024-05-01T24:00:00Z',
    '2024-05-01T10:60:00Z',
    '2024-05-01T10:00:00+24:00',
    '2024-5-01',
    '2024-05-01T10',
    '2024-05-01T10:00:00ZZ',
    '2024-05-01junk',
    ' 2024-05-01',
    '20240501',
    'shoes',
    '',
  ])('%j is not a date', (text) => {
    expect(instantOf(text)).toBeNaN();
  });

  test('agrees with Date.parse on ISO date-times', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1000-01-01'), max: new Date('9999-12-31'), noInvalidDate: true }),
        (date) => {
          const iso = date.toISOString();
          expect(instantOf(iso)).toBe(date.getTime());
          expect(instantOf(iso.slice(0, 10))).toBe(Date.parse(iso.slice(0, 10)));
        },
      ),
    );
  });
});

describe('compile cache', () => {
  test('compiling the same text twice gives the same compiled filter', () => {
    expect(compileFilter(`'a' = 1`)).toBe(compileFilter(`'a' = 1`));
    expect(compileFilter(`'a' = 1`)).not.toBe(compileFilter(`'a' = 2`));
  });

  test('the cache keeps at most its capacity, dropping the least recently used entry', () => {
    const cache = new BoundedCache<number>(2);
    let created = 0;
    const get = (key: string): number => cache.getOrCreate(key, () => ++created);
    expect(get('a')).toBe(1);
    expect(get('b')).toBe(2);
    expect(get('a')).toBe(1);
    expect(get('c')).toBe(3);
    expect(cache.size).toBe(2);
    expect(get('a')).toBe(1);
    expect(get('b')).toBe(4);
  });
});
