import { describe, expect, it } from 'vitest';
import { choleskySolve, foldInUser, gram, ImplicitRowSolver } from '../../../src/linalg/dense.js';

/** Gaussian elimination with partial pivoting on a copy: a reference that shares nothing with Cholesky. */
function solveDense(matrix: number[][], rhs: number[]): number[] {
  const n = rhs.length;
  const m = matrix.map((row, i) => [...row, rhs[i]]);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let row = col + 1; row < n; row++) if (Math.abs(m[row][col]) > Math.abs(m[pivot][col])) pivot = row;
    [m[col], m[pivot]] = [m[pivot], m[col]];
    for (let row = col + 1; row < n; row++) {
      const factor = m[row][col] / m[col][col];
      for (let j = col; j <= n; j++) m[row][j] -= factor * m[col][j];
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let row = n - 1; row >= 0; row--) {
    let sum = m[row][n];
    for (let j = row + 1; j < n; j++) sum -= m[row][j] * x[j];
    x[row] = sum / m[row][row];
  }
  return x;
}

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648 - 0.5;
  };
}

describe('choleskySolve', () => {
  it('solves a 3×3 system worked by hand', () => {
    // A x = b for x = (1, −1, 2); A's leading minors are 4, 16 and 60.
    const a = Float64Array.of(4, 2, 0, 2, 5, 3, 0, 3, 6);
    const b = Float64Array.of(2, 3, 9);
    expect(choleskySolve(a, b, 3)).toBe(true);
    expect(b[0]).toBeCloseTo(1, 12);
    expect(b[1]).toBeCloseTo(-1, 12);
    expect(b[2]).toBeCloseTo(2, 12);
    // The factor L, with L Lᵀ = A, is left in the lower triangle.
    expect(a[0]).toBeCloseTo(2, 12);
    expect(a[3]).toBeCloseTo(1, 12);
    expect(a[4]).toBeCloseTo(2, 12);
    expect(a[7]).toBeCloseTo(1.5, 12);
    expect(a[8]).toBeCloseTo(Math.sqrt(3.75), 12);
  });

  it('reads only the lower triangle and the diagonal', () => {
    const a = Float64Array.of(4, 99, -7, 2, 5, 1e9, 0, 3, 6);
    const b = Float64Array.of(2, 3, 9);
    expect(choleskySolve(a, b, 3)).toBe(true);
    expect([...b].map((value) => Number(value.toFixed(10)))).toEqual([1, -1, 2]);
  });

  it('returns false for matrices that are not positive definite', () => {
    // Eigenvalues 3 and −1.
    expect(choleskySolve(Float64Array.of(1, 2, 2, 1), new Float64Array(2), 2)).toBe(false);
    // Positive semidefinite but singular.
    expect(choleskySolve(Float64Array.of(1, 1, 1, 1), Float64Array.of(1, 1), 2)).toBe(false);
    expect(choleskySolve(Float64Array.of(-1, 0, 0, 1), Float64Array.of(1, 1), 2)).toBe(false);
    expect(choleskySolve(Float64Array.of(NaN), Float64Array.of(1), 1)).toBe(false);
  });
});

describe('gram', () => {
  it('is FᵀF', () => {
    // F = [[1, 2], [3, 4], [5, 6]]: 1 + 9 + 25 = 35, 2 + 12 + 30 = 44, 4 + 16 + 36 = 56.
    expect([...gram(Float32Array.of(1, 2, 3, 4, 5, 6), 3, 2)]).toEqual([35, 44, 44, 56]);
  });

  it('counts only the rows it is given', () => {
    expect([...gram(Float32Array.of(1, 2, 3, 4, 5, 6), 1, 2)]).toEqual([1, 2, 2, 4]);
  });
});

describe('foldInUser', () => {
  const k = 4;
  const items = 30;
  const random = seeded(7);
  const itemFactors = Float32Array.from({ length: items * k }, () => random());
  const itemGram = gram(itemFactors, items, k);
  const regularization = 0.3;
  const alpha = 5;

  /** The user's normal equations over every item, unobserved ones with c = 1 and p = 0. */
  function bruteForce(observed: Map<number, number>): number[] {
    const a = Array.from({ length: k }, (_, i) =>
      Array.from({ length: k }, (_, j) => (i === j ? regularization : 0)),
    );
    const b = new Array<number>(k).fill(0);
    for (let item = 0; item < items; item++) {
      const strength = observed.get(item);
      const confidence = strength === undefined ? 1 : 1 + alpha * strength;
      const preference = strength === undefined ? 0 : 1;
      const y = itemFactors.subarray(item * k, item * k + k);
      for (let i = 0; i < k; i++) {
        b[i] += confidence * preference * y[i];
        for (let j = 0; j < k; j++) a[i][j] += confidence * y[i] * y[j];
      }
    }
    return solveDense(a, b);
  }

  it('solves the full confidence-weighted least squares over all items', () => {
    const observed = new Map([
      [3, 1],
      [17, 4],
      [20, 0.5],
      [29, 2],
    ]);
    const x = foldInUser(
      itemFactors,
      k,
      itemGram,
      [...observed.keys()],
      [...observed.values()],
      4,
      regularization,
      alpha,
    );
    const expected = bruteForce(observed);
    expect(x).toHaveLength(k);
    for (let i = 0; i < k; i++) expect(x[i]).toBeCloseTo(expected[i], 5);
    expect(Math.max(...x.map(Math.abs))).toBeGreaterThan(0.01);
  });

  it('reads only the first count entries', () => {
    const x = foldInUser(itemFactors, k, itemGram, [3, 17, 5], [1, 4, 100], 2, regularization, alpha);
    const expected = bruteForce(
      new Map([
        [3, 1],
        [17, 4],
      ]),
    );
    for (let i = 0; i < k; i++) expect(x[i]).toBeCloseTo(expected[i], 5);
  });

  it('gives zeros to a user without items', () => {
    expect([...foldInUser(itemFactors, k, itemGram, [], [], 0, regularization, alpha)]).toEqual([0, 0, 0, 0]);
  });
});

describe('ImplicitRowSolver', () => {
  it('reaches the exact solution by conjugate gradient given enough steps', () => {
    const k = 6;
    const random = seeded(11);
    const other = Float32Array.from({ length: 40 * k }, () => random());
    const otherGram = gram(other, 40, k);
    const indexes = Int32Array.of(2, 9, 13, 31, 38);
    const values = Float32Array.of(1, 3, 2, 1, 5);
    const solver = new ImplicitRowSolver(k);
    const exact = new Float32Array(k);
    expect(solver.solveExact(other, otherGram, 0.2, 3, indexes, values, 0, 5, exact, 0)).toBe(true);
    const iterated = new Float32Array(k);
    solver.solveConjugateGradient(other, otherGram, 0.2, 3, 4 * k, indexes, values, 0, 5, iterated, 0);
    for (let i = 0; i < k; i++) expect(iterated[i]).toBeCloseTo(exact[i], 4);
    // A few steps from zero are not there yet: the test above is not trivially met.
    const early = new Float32Array(k);
    solver.solveConjugateGradient(other, otherGram, 0.2, 3, 1, indexes, values, 0, 5, early, 0);
    expect(Math.max(...early.map((value, i) => Math.abs(value - exact[i])))).toBeGreaterThan(1e-3);
  });
});
