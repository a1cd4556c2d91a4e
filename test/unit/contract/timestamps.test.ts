import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseIsoTimestamp } from '../../../src/contract/common.js';

const pad = (value: number, width: number) => String(value).padStart(width, '0');

/** `YYYY-MM-DDTHH:MM:SS(.f{1,3})?Z`, with fields also out of their ranges. */
const canonical = fc
  .record({
    year: fc.integer({ min: 0, max: 9999 }),
    month: fc.integer({ min: 0, max: 13 }),
    day: fc.integer({ min: 0, max: 32 }),
    hour: fc.integer({ min: 0, max: 25 }),
    minute: fc.integer({ min: 0, max: 60 }),
    second: fc.integer({ min: 0, max: 61 }),
    fraction: fc.option(fc.stringMatching(/^\d{1,3}$/)),
  })
  .map(
    (f) =>
      `${pad(f.year, 4)}-${pad(f.month, 2)}-${pad(f.day, 2)}T${pad(f.hour, 2)}:${pad(f.minute, 2)}:` +
      `${pad(f.second, 2)}${f.fraction === null ? '' : `.${f.fraction}`}Z`,
  );

/** The general reading, which the canonical form's own reading must always agree with. */
function generalReading(value: string): number {
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?Z$/.test(value)) return Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i.test(value))
    return NaN;
  const hasOffset = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(value.slice(10));
  return Date.parse(value.length > 10 && !hasOffset ? `${value}Z` : value);
}

describe('parseIsoTimestamp', () => {
  it('reads the canonical UTC form as Date.parse does, fields out of range included', () => {
    fc.assert(
      fc.property(canonical, (value) => {
        expect(parseIsoTimestamp(value)).toBe(Date.parse(value));
      }),
      { numRuns: 5_000 },
    );
    expect(parseIsoTimestamp('2026-11-28T17:05:09.5Z')).toBe(Date.UTC(2026, 10, 28, 17, 5, 9, 500));
    expect(parseIsoTimestamp('2026-02-30T00:00:00Z')).toBe(Date.UTC(2026, 2, 2));
    expect(parseIsoTimestamp('2026-01-01T24:00:00Z')).toBe(Date.UTC(2026, 0, 2));
    expect(parseIsoTimestamp('0050-01-01T00:00:00Z')).toBe(Date.parse('0050-01-01T00:00:00Z'));
    expect(parseIsoTimestamp('2026-13-01T00:00:00Z')).toBeNaN();
  });

  it('reads a near miss of the canonical form as the general reading does', () => {
    const near = fc
      .tuple(canonical, fc.nat(), fc.constantFrom(...'0123456789-:T.Z+ x'.split(''), ''))
      .map(([value, at, char]) => {
        const i = at % (value.length + 1);
        return value.slice(0, i) + char + value.slice(i + 1);
      });
    fc.assert(
      fc.property(near, (value) => {
        expect(parseIsoTimestamp(value)).toBe(generalReading(value));
      }),
      { numRuns: 5_000 },
    );
  });
});
