/**
 * Small dense linear algebra for implicit-feedback matrix factorisation, shared by the batch trainer and by
 * serving (which folds in users who arrived after a model was built). Matrices are row-major; sums run in
 * double precision even where factors are stored as Float32Array.
 */

/**
 * Solves A x = b for a symmetric positive definite k×k A, overwriting b with x. Only the lower triangle and
 * the diagonal of A are read; they are overwritten by the Cholesky factor L (A = L Lᵀ). Returns false, with
 * b partly overwritten, when A is not positive definite.
 */
export function choleskySolve(a: Float64Array, b: Float64Array, k: number): boolean {
  for (let j = 0; j < k; j++) {
    const rowJ = j * k;
    let diagonal = a[rowJ + j];
    for (let p = 0; p < j; p++) diagonal -= a[rowJ + p] * a[rowJ + p];
    // Also false for NaN, which a non-finite input would bring here.
    if (!(diagonal > 0)) return false;
    const pivot = Math.sqrt(diagonal);
    a[rowJ + j] = pivot;
    for (let i = j + 1; i < k; i++) {
      const rowI = i * k;
      let sum = a[rowI + j];
      for (let p = 0; p < j; p++) sum -= a[rowI + p] * a[rowJ + p];
      a[rowI + j] = sum / pivot;
    }
  }
  // L z = b.
  for (let i = 0; i < k; i++) {
    const rowI = i * k;
    let sum = b[i];
    for (let p = 0; p < i; p++) sum -= a[rowI + p] * b[p];
    b[i] = sum / a[rowI + i];
  }
  // Lᵀ x = z, one column of Lᵀ (a row of L) at a time, so that the inner loop reads memory in order.
  for (let i = k - 1; i >= 0; i--) {
    const rowI = i * k;
    const x = b[i] / a[rowI + i];
    b[i] = x;
    for (let p = 0; p < i; p++) b[p] -= a[rowI + p] * x;
  }
  return true;
}

/**
 * Adds the outer products of rows [start, end) of a k-column matrix to the upper triangle (column ≥ row)
 * of out; the lower triangle is left alone, for mirrorUpper to fill once all rows are in.
 */
export function addGramUpper(
  factors: Float32Array,
  start: number,
  end: number,
  k: number,
  out: Float64Array,
): void {
  for (let row = start; row < end; row++) {
    const base = row * k;
    for (let a = 0; a < k; a++) {
      const fa = factors[base + a];
      if (fa === 0) continue;
      const outRow = a * k;
      for (let b = a; b < k; b++) out[outRow + b] += fa * factors[base + b];
    }
  }
}

/** Copies the upper triangle of a k×k matrix onto its lower triangle. */
export function mirrorUpper(m: Float64Array, k: number): void {
  for (let a = 1; a < k; a++) {
    for (let b = 0; b < a; b++) m[a * k + b] = m[b * k + a];
  }
}

/** FᵀF (k×k) of a rows×k matrix F. */
export function gram(factors: Float32Array, rows: number, k: number): Float64Array {
  const out = new Float64Array(k * k);
  addGramUpper(factors, 0, rows, k, out);
  mirrorUpper(out, k);
  return out;
}

// The inner loops of the conjugate-gradient solve, four elements a step. Dot products keep four running sums:
// the additions into one sum wait on each other, those into four need not. Together a row solve at k = 64
// takes about a fifth less time than with plain loops.
function dot64(m: Float64Array, offset: number, x: Float64Array, k: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let j = 0;
  for (; j + 3 < k; j += 4) {
    s0 += m[offset + j] * x[j];
    s1 += m[offset + j + 1] * x[j + 1];
    s2 += m[offset + j + 2] * x[j + 2];
    s3 += m[offset + j + 3] * x[j + 3];
  }
  for (; j < k; j++) s0 += m[offset + j] * x[j];
  return s0 + s1 + s2 + s3;
}

/** y += a · m[offset, offset + k). */
function axpy32(y: Float64Array, a: number, m: Float32Array, offset: number, k: number): void {
  let j = 0;
  for (; j + 3 < k; j += 4) {
    y[j] += a * m[offset + j];
    y[j + 1] += a * m[offset + j + 1];
    y[j + 2] += a * m[offset + j + 2];
    y[j + 3] += a * m[offset + j + 3];
  }
  for (; j < k; j++) y[j] += a * m[offset + j];
}

function dot32(m: Float32Array, offset: number, x: Float64Array, k: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let j = 0;
  for (; j + 3 < k; j += 4) {
    s0 += m[offset + j] * x[j];
    s1 += m[offset + j + 1] * x[j + 1];
    s2 += m[offset + j + 2] * x[j + 2];
    s3 += m[offset + j + 3] * x[j + 3];
  }
  for (; j < k; j++) s0 += m[offset + j] * x[j];
  return s0 + s1 + s2 + s3;
}

/**
 * Solves one row of implicit-feedback ALS (Hu, Koren and Volinsky 2008): given the other side's factors Y,
 * their gram YᵀY and the row's entries (indexes into Y and raw strengths r, confidence c = 1 + alpha·r,
 * preference 1), the x that minimises Σ_i c_i (p_i − xᵀy_i)² + λ|x|² over all rows i of Y, where rows without
 * an entry have c = 1 and p = 0. The normal equations are
 *   (YᵀY + Σ_entries (c − 1) y yᵀ + λI) x = Σ_entries c y,
 * so only the row's entries are visited. One instance holds the scratch space for rows of k factors, so that
 * solving many rows allocates nothing.
 */
export class ImplicitRowSolver {
  private readonly a: Float64Array;
  private readonly x: Float64Array;
  private readonly y: Float64Array;
  private readonly r: Float64Array;
  private readonly p: Float64Array;
  private readonly ap: Float64Array;

  constructor(readonly k: number) {
    this.a = new Float64Array(k * k);
    this.x = new Float64Array(k);
    this.y = new Float64Array(k);
    this.r = new Float64Array(k);
    this.p = new Float64Array(k);
    this.ap = new Float64Array(k);
  }

  /**
   * The exact solution, by Cholesky, written to out[outOffset, outOffset + k). A row without entries gets
   * zeros (its exact solution). Returns false, and writes zeros, when the system is not positive definite
   * (possible only without regularization).
   */
  solveExact(
    other: Float32Array,
    otherGram: Float64Array,
    regularization: number,
    alpha: number,
    indexes: ArrayLike<number>,
    values: ArrayLike<number>,
    start: number,
    end: number,
    out: Float32Array,
    outOffset: number,
  ): boolean {
    const { k, a, x, y } = this;
    if (start >= end) {
      out.fill(0, outOffset, outOffset + k);
      return true;
    }
    // Only the lower triangle: it is all choleskySolve reads.
    for (let i = 0; i < k; i++) {
      const row = i * k;
      for (let j = 0; j <= i; j++) a[row + j] = otherGram[row + j];
      a[row + i] += regularization;
    }
    x.fill(0);
    for (let e = start; e < end; e++) {
      const extra = alpha * values[e];
      const confidence = 1 + extra;
      const base = indexes[e] * k;
      for (let i = 0; i < k; i++) y[i] = other[base + i];
      for (let i = 0; i < k; i++) {
        const yi = y[i];
        x[i] += confidence * yi;
        const weight = extra * yi;
        if (weight === 0) continue;
        const row = i * k;
        for (let j = 0; j <= i; j++) a[row + j] += weight * y[j];
      }
    }
    const solved = choleskySolve(a, x, k);
    for (let i = 0; i < k; i++) out[outOffset + i] = solved ? x[i] : 0;
    return solved;
  }

  /**
   * A few steps of conjugate gradient on the same system, starting from the value already in out (so that
   * across ALS iterations each row continues from where it was). A row without entries gets zeros.
   */
  solveConjugateGradient(
    other: Float32Array,
    otherGram: Float64Array,
    regularization: number,
    alpha: number,
    steps: number,
    indexes: ArrayLike<number>,
    values: ArrayLike<number>,
    start: number,
    end: number,
    out: Float32Array,
    outOffset: number,
  ): void {
    const { k, x, r, p, ap } = this;
    if (start >= end) {
      out.fill(0, outOffset, outOffset + k);
      return;
    }
    for (let i = 0; i < k; i++) x[i] = out[outOffset + i];
    // r = b − A x = −(YᵀY + λI) x + Σ_entries (c − (c − 1) yᵀx) y.
    for (let i = 0; i < k; i++) {
      const row = i * k;
      r[i] = -(regularization * x[i] + dot64(otherGram, row, x, k));
    }
    for (let e = start; e < end; e++) {
      const extra = alpha * values[e];
      const base = indexes[e] * k;
      const weight = 1 + extra - extra * dot32(other, base, x, k);
      axpy32(r, weight, other, base, k);
    }
    let rr = 0;
    for (let i = 0; i < k; i++) {
      p[i] = r[i];
      rr += r[i] * r[i];
    }
    for (let step = 0; step < steps && rr > 1e-20; step++) {
      // ap = A p.
      for (let i = 0; i < k; i++) {
        ap[i] = regularization * p[i] + dot64(otherGram, i * k, p, k);
      }
      for (let e = start; e < end; e++) {
        const extra = alpha * values[e];
        if (extra === 0) continue;
        const base = indexes[e] * k;
        const weight = extra * dot32(other, base, p, k);
        axpy32(ap, weight, other, base, k);
      }
      let pap = 0;
      for (let i = 0; i < k; i++) pap += p[i] * ap[i];
      if (!(pap > 0)) break;
      const length = rr / pap;
      let next = 0;
      for (let i = 0; i < k; i++) {
        x[i] += length * p[i];
        const ri = r[i] - length * ap[i];
        r[i] = ri;
        next += ri * ri;
      }
      const beta = next / rr;
      for (let i = 0; i < k; i++) p[i] = r[i] + beta * p[i];
      rr = next;
    }
    for (let i = 0; i < k; i++) out[outOffset + i] = x[i];
  }
}

// Serving folds users in one at a time: one solver's scratch space serves every call with the same k.
let foldInSolver: ImplicitRowSolver | undefined;

/**
 * The exact ALS solve of one user's factor vector from their items (row indexes into itemFactors) and raw
 * strengths (confidence c = 1 + alpha·r, preference 1), given the item factors' gram YᵀY:
 *   (YᵀY + Σ_i (c_i − 1) y_i y_iᵀ + λI) x = Σ_i c_i y_i.
 * Zeros when the user has no items, or when the system is not positive definite (only possible with
 * regularization 0).
 */
export function foldInUser(
  itemFactors: Float32Array,
  k: number,
  itemGram: Float64Array,
  items: ArrayLike<number>,
  values: ArrayLike<number>,
  count: number,
  regularization: number,
  alpha: number,
): Float32Array {
  if (foldInSolver?.k !== k) foldInSolver = new ImplicitRowSolver(k);
  const out = new Float32Array(k);
  foldInSolver.solveExact(itemFactors, itemGram, regularization, alpha, items, values, 0, count, out, 0);
  return out;
}
