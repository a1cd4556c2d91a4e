import { describe, expect, it } from 'vitest';
import { compareMeans, type Sample } from '../../../src/analytics/significance.js';
import { regularizedBeta, studentTCdf, studentTQuantile } from '../../../src/analytics/student-t.js';

function sampleOf(values: number[]): Sample {
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  const variance = values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (values.length - 1);
  return { count: values.length, mean, variance };
}

describe("Student's t distribution", () => {
  it('gives the values of the tables', () => {
    // Closed forms: I_x(1, 1) = x; with 1 degree of freedom (Cauchy) P(T ≤ 1) = 3/4; with 2,
    // P(T ≤ t) = 1/2 + t / (2 √(2 + t²)).
    expect(regularizedBeta(0.3, 1, 1)).toBeCloseTo(0.3, 12);
    expect(studentTCdf(1, 1)).toBeCloseTo(0.75, 10);
    expect(studentTCdf(-1, 1)).toBeCloseTo(0.25, 10);
    expect(studentTCdf(2, 2)).toBeCloseTo(0.5 + 2 / (2 * Math.sqrt(6)), 10);
    expect(studentTCdf(0, 7.3)).toBeCloseTo(0.5, 12);
    // Two-sided 5% critical values of the t table: 12.706 (1), 2.228 (10), 2.042 (30), and 1.960 (normal).
    expect(studentTQuantile(0.975, 1)).toBeCloseTo(12.7062, 3);
    expect(studentTQuantile(0.975, 10)).toBeCloseTo(2.2281, 4);
    expect(studentTQuantile(0.975, 30)).toBeCloseTo(2.0423, 4);
    expect(studentTQuantile(0.975, 1e7)).toBeCloseTo(1.96, 3);
  });
});

describe("Welch's t-test", () => {
  it('matches the textbook example: two samples of 15 with unequal variances', () => {
    // Welch's t-test, example 1 of the standard presentation: means 20.82 and 22.99, variances 7.87
    // and 3.81, t = 2.46, ν = 24.99, two-sided p = 0.021, 95% interval of the difference [0.349, 3.984].
    const control = sampleOf([
      27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4,
    ]);
    const variant = sampleOf([
      27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4,
    ]);
    expect(compareMeans(control, variant)).toEqual({
      lift: 0.1041,
      pValue: 0.0214,
      difference95: [0.3492, 3.9841],
    });
  });

  it('is symmetric: swapping the samples keeps the p-value and mirrors the interval', () => {
    const a = sampleOf([0, 0, 0, 10, 0, 25, 0, 0, 40, 0]);
    const b = sampleOf([0, 30, 0, 0, 12, 0, 0, 0]);
    const forward = compareMeans(a, b);
    const backward = compareMeans(b, a);
    expect(forward.pValue).toBe(backward.pValue);
    expect(forward.difference95).toEqual(backward.difference95!.map((bound) => -bound).reverse());
  });

  it('calls equal samples not significant, and has no answer with fewer than two in a sample', () => {
    expect(compareMeans(sampleOf([1, 2, 3]), sampleOf([1, 2, 3]))).toEqual({
      lift: 0,
      pValue: 1,
      difference95: [-2.267, 2.267],
    });
    expect(compareMeans(sampleOf([5, 5]), sampleOf([5, 5]))).toEqual({
      lift: 0,
      pValue: 1,
      difference95: [0, 0],
    });
    expect(compareMeans({ count: 1, mean: 3, variance: 0 }, sampleOf([1, 2]))).toEqual({
      lift: -0.5,
      pValue: null,
      difference95: null,
    });
    expect(compareMeans(sampleOf([0, 0]), sampleOf([1, 2])).lift).toBeNull();
  });
});
