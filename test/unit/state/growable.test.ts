import { describe, expect, it } from 'vitest';
import { ensureCapacity } from '../../../src/linalg/growable.js';

describe('ensureCapacity', () => {
  it('doubles, stops at the ceiling while the need is within it, and doubles again past it', () => {
    const start = Int32Array.of(1, 2, 3);
    expect(ensureCapacity(start, 3, Int32Array)).toBe(start);
    const grown = ensureCapacity(start, 4, Int32Array);
    expect(grown.length).toBe(16);
    expect(Array.from(grown.subarray(0, 3))).toEqual([1, 2, 3]);
    expect(ensureCapacity(new Int32Array(16), 17, Int32Array, 20).length).toBe(20);
    // Past the ceiling, one element at a time would copy the whole array each time.
    expect(ensureCapacity(new Int32Array(20), 21, Int32Array, 20).length).toBe(40);
    expect(ensureCapacity(new Int32Array(16), 30, Int32Array, 20).length).toBe(32);
  });
});
