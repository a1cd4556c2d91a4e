import { describe, expect, it } from 'vitest';
import { quantile } from '../../../bench/support/quantile.js';

describe('quantile (the benchmarks’ p50, p99, p99.9)', () => {
  const hundred = Float64Array.from({ length: 100 }, (_, i) => i + 1);

  it('is the nearest rank: the smallest value at least a share q of the values do not exceed', () => {
    expect(quantile(hundred, 0.5)).toBe(50);
    expect(quantile(hundred, 0.99)).toBe(99);
    expect(quantile(hundred, 0.999)).toBe(100);
    expect(quantile(hundred, 1)).toBe(100);
    expect(quantile(hundred, 0.001)).toBe(1);
  });

  it('of one value is that value', () => {
    expect(quantile([7], 0.5)).toBe(7);
    expect(quantile([7], 0.99)).toBe(7);
  });
});
