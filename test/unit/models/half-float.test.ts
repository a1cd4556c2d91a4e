import { describe, expect, it } from 'vitest';
import { HALF_VALUES, toHalf, toHalves } from '../../../src/state/half-float.js';

describe('half precision', () => {
  it('decodes every bit pattern and encodes each value back to its own bits', () => {
    expect(HALF_VALUES[0x3c00]).toBe(1);
    expect(HALF_VALUES[0xc000]).toBe(-2);
    expect(HALF_VALUES[0x7bff]).toBe(65504);
    expect(HALF_VALUES[0x0001]).toBe(2 ** -24);
    expect(HALF_VALUES[0x7c00]).toBe(Infinity);
    for (let bits = 0; bits < 0x10000; bits++) {
      const value = HALF_VALUES[bits];
      if (Number.isNaN(value)) expect(Number.isNaN(HALF_VALUES[toHalf(value)])).toBe(true);
      else expect(toHalf(value)).toBe(bits);
    }
  });

  it('rounds to the nearest half, ties to even, and saturates beyond the range', () => {
    // A sweep over the range weights take, with values between halves.
    for (let i = 0; i < 20_000; i++) {
      const value = Math.fround((i % 2 ? -1 : 1) * Math.exp((i / 20_000) * 24 - 18));
      const bits = toHalf(value);
      const error = Math.abs(HALF_VALUES[bits] - value);
      // No neighbouring half is nearer.
      for (const other of [bits - 1, bits + 1]) {
        if ((other & 0x7fff) <= 0x7bff && (other & 0x8000) === (bits & 0x8000))
          expect(error).toBeLessThanOrEqual(Math.abs(HALF_VALUES[other] - value));
      }
      if (Math.abs(value) >= 2 ** -14) expect(error / Math.abs(value)).toBeLessThanOrEqual(2 ** -11);
    }
    // 1 + 2^-11 lies halfway between 1 and the next half: ties go to the even one.
    expect(toHalf(1 + 2 ** -11)).toBe(0x3c00);
    expect(toHalf(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(toHalf(1e6)).toBe(0x7c00);
    expect(toHalf(-1e6)).toBe(0xfc00);
    expect(toHalf(1e-9)).toBe(0);
    expect(Array.from(toHalves([0.5, 0.25]), (bits) => HALF_VALUES[bits])).toEqual([0.5, 0.25]);
  });
});
