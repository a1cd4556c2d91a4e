import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nthSmallest } from '../../../src/engine/score-sort.js';

/** Doubles without -0, which sorts before 0 but equals it. */
const doubles = fc.double({ noNaN: true }).map((value) => value + 0);

describe('nthSmallest', () => {
  it('is the value at index n of the values sorted ascending, duplicates and infinities included', () => {
    const values = fc.array(fc.oneof(fc.integer({ min: -5, max: 5 }), doubles, fc.constant(Infinity)), {
      minLength: 1,
      maxLength: 200,
    });
    fc.assert(
      fc.property(values, fc.nat(), (list, pick) => {
        const n = pick % list.length;
        const sorted = Float64Array.from(list).sort();
        expect(nthSmallest(Float64Array.from(list), n)).toBe(sorted[n]);
      }),
      { numRuns: 500 },
    );
  });
});
