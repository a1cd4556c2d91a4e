/**
 * EASE (Steck 2019, "Embarrassingly Shallow Autoencoders for Sparse Data") as item-to-item neighbour lists.
 *
 * With G = XᵀX + λI and P = G⁻¹, the item-item weights are B[i][j] = −P[i][j] / P[j][j] (i ≠ j), B[j][j] = 0,
 * and a user's score for j is Σ over their items i of B[i][j]. Row i of B, cut to its largest positive
 * entries, is item i's neighbour list, so the model is served like any other item-to-item list.
 *
 * The inverse is the whole cost. It is computed in place in the one n×n matrix by blocked Gauss-Jordan
 * elimination in its symmetric form (the sweep operator; Goodnight 1979): sweeping pivot block K of a
 * symmetric M sets
 *   M_KK ← −M_KK⁻¹,  M_RK ← M_RK M_KK⁻¹,  M_RR ← M_RR − M_RK M_KK⁻¹ M_KR  (R: every other index),
 * and sweeping every index of an SPD matrix leaves −M⁻¹. Each M_KK is a Schur complement of the original
 * matrix, positive definite exactly when the matrix is, so its Cholesky factorisation is both the inverse
 * of the block and the SPD check. Symmetry lets every step update the upper triangle only (n³/2
 * multiply-adds in all, as many as Cholesky followed by an inverse from the factor), and the lower triangle
 * is filled at the end. The update of M_RR is a product of two n × |K| panels, each element a dot product
 * of two contiguous panel rows, computed four rows by four columns at a time; worker threads share the
 * matrix through a SharedArrayBuffer and split each step's rows between them.
 */
import os from 'node:os';
import { positiveInteger, ThreadGang } from '../threads/thread-gang.js';

export interface EaseOptions {
  /** L2 regularisation added to the Gram matrix's diagonal, e.g. 200 for MovieLens-100k-sized data. */
  lambda: number;
  /** Neighbours kept per item (the largest positive weights), e.g. 100. */
  neighbours: number;
  /**
   * Keep the largest weights of either sign (by magnitude) rather than the largest positive ones: EASE's
   * negative weights hold back items a history speaks against (on ml-latest-small, dropping them cost
   * NDCG@10 0.275 → 0.253).
   */
  negative?: boolean;
  /**
   * List, for each item j, the items i whose weights B[i][j] toward j are the largest: the lists come back
   * by target (list j holds sources i with B[i][j]), so an item is scored from the history items that
   * weigh most on it, as item-kNN scores.
   */
  byTarget?: boolean;
  /** Worker threads; os.availableParallelism() when not given; 1 computes in this thread, without a worker. */
  threads?: number;
  /** The compiled worker module; ease-worker.js next to this module when not given. */
  workerScript?: URL;
}

/**
 * The item Gram matrix G = XᵀX of a user × item matrix X over `items` items: its diagonal (for a binary X,
 * each item's number of users) and its non-zero off-diagonal entries as pairs (a, b, G[a][b]), a ≠ b.
 *
 * A pair may be given in either order or in both, as a SQL self-join on the user produces them: each given
 * pair sets both G[a][b] and G[b][a], it is never added to them, so (a, b, c) alone, (b, a, c) alone, and
 * (a, b, c) with (b, a, c) all give the same matrix. The same pair given twice with different counts is an
 * error.
 */
export interface ItemGram {
  items: number;
  /** G[i][i]. */
  diagonal: Float64Array;
  pairA: Int32Array;
  pairB: Int32Array;
  /** G[a][b] = G[b][a]. */
  pairCount: Float32Array;
}

/**
 * Neighbour lists in CSR form: item i's neighbours are [offsets[i], offsets[i + 1]) of neighbours and
 * weights, best first (ties by increasing item index).
 */
export interface NeighbourLists {
  offsets: Int32Array;
  neighbours: Int32Array;
  weights: Float32Array;
}

/**
 * Pivot columns swept per step. Wider blocks mean fewer steps (each has a serial part and, with workers, a
 * round trip to them) but more work outside the main update: |K|² per row and step, against about n / 2.
 */
const BLOCK = 64;

/** Columns of the update done for all of a thread's rows before moving on, so the panel rows stay cached. */
const TILE = 512;

/** Side of the square tiles in which the final pass negates the upper triangle and copies it to the lower. */
const MIRROR_TILE = 32;

/** Runs of rows per thread and task, claimed one at a time. */
const RUNS_PER_THREAD = 8;

/**
 * What the threads of an inversion share; every array is in a SharedArrayBuffer when there are workers.
 * The panels have BLOCK columns per row, of which the current block's size are used.
 */
export interface SweepShared {
  n: number;
  /** n×n, row-major; only its upper triangle (column ≥ row) is kept up to date until the final pass. */
  matrix: Float64Array;
  /** Row j: M[j][K] as the step began (j outside K). */
  panel: Float64Array;
  /** Row j: M_KK⁻¹ M[K][j], the swept M[j][K]. */
  scaled: Float64Array;
  /** M_KK⁻¹ of the current step. */
  pivotInverse: Float64Array;
  /** Neighbours kept per row by the selection pass. */
  keep: number;
  /** 1: the selection keeps the largest |B[i][j]| of either sign; 0: the largest positive B[i][j]. */
  signed: number;
  /** 1: row i's list holds the sources j of the largest B[j][i] (by target); 0: the targets of B[i][j]. */
  byTarget: number;
  /** Row i's selected neighbours at i · keep, their weights, and how many there are. */
  listNeighbours: Int32Array;
  listWeights: Float32Array;
  listLengths: Int32Array;
  /**
   * Runs of rows of about equal work, for the steps and the final pass, and for the selection; each task's
   * runs are claimed one at a time by whichever thread is free, so a thread slowed by other processes on its
   * core does less of the work.
   */
  sweepRuns: Int32Array;
  selectRuns: Int32Array;
  /** The next run to claim. */
  next: Int32Array;
}

/**
 * A message to an EASE thread: 0, sweep the block at [k, k + size); 1, the final pass; 2, select the
 * neighbour lists.
 */
export type SweepTask = [kind: 0 | 1 | 2, k: number, size: number];

/**
 * Works on a task's runs of rows until none is left unclaimed: what an EASE worker does for each message,
 * and this thread alone without workers. shared.next must be 0 when the task starts.
 */
export function runTask(shared: SweepShared, [kind, k, size]: SweepTask): void {
  const runs = kind === 2 ? shared.selectRuns : shared.sweepRuns;
  const count = runs.length - 1;
  for (let run = Atomics.add(shared.next, 0, 1); run < count; run = Atomics.add(shared.next, 0, 1)) {
    const first = runs[run];
    const end = runs[run + 1];
    if (kind === 0) sweepRows(shared, first, end, k, size);
    else if (kind === 1) mirrorRows(shared, first, end);
    else selectRows(shared, first, end);
  }
}

/**
 * One step's update of rows [first, end) outside the pivot block K = [k, k + size): their swept M[i][K]
 * (written to M for i < k, where it lies in the upper triangle; M[K][i] for i ≥ k + size lies in K's rows,
 * written by finishPivot), then M[i][j] −= M[i][K] M_KK⁻¹ M[K][j] for j ≥ i outside K.
 *
 * Every element is one dot product summed in increasing order, however the rows fall into blocks of four,
 * so any split of the rows between threads gives the same bits.
 */
function sweepRows(shared: SweepShared, first: number, end: number, k: number, size: number): void {
  const { n, matrix, scaled } = shared;
  const stop = k + size;
  // The thread's rows outside K: at most one run before it and one after.
  const runs = [first, Math.min(end, k), Math.max(first, stop), end];
  for (let r = 0; r < 4; r += 2) {
    scaleRows(shared, runs[r], runs[r + 1], size);
    for (let i = runs[r]; i < Math.min(runs[r + 1], k); i++) {
      const base = i * n + k;
      for (let t = 0; t < size; t++) matrix[base + t] = scaled[i * BLOCK + t];
    }
  }
  for (let j0 = first; j0 < n; j0 += TILE) {
    const j1 = Math.min(n, j0 + TILE);
    // The tile's columns before K end at a1; those after it start at b0 (given c0, as below).
    const a1 = Math.min(j1, k);
    for (let r = 0; r < 4; r += 2) {
      const s1 = runs[r + 1];
      for (let i0 = runs[r]; i0 < s1 && i0 < j1; i0 += 4) {
        if (i0 + 4 <= s1) {
          // From the block's first row's diagonal: the few elements this puts below the diagonal of the
          // next rows are never read, and the final pass overwrites them.
          const c0 = Math.max(j0, i0);
          const b0 = Math.max(c0, stop);
          if (c0 < a1) updateFourRows(shared, i0, c0, a1, size);
          if (b0 < j1) updateFourRows(shared, i0, b0, j1, size);
        } else {
          for (let i = i0; i < s1; i++) {
            const c0 = Math.max(j0, i);
            const b0 = Math.max(c0, stop);
            if (c0 < a1) updateRow(shared, i, c0, a1, size);
            if (b0 < j1) updateRow(shared, i, b0, j1, size);
          }
        }
      }
    }
  }
}

/**
 * scaled[i] = M_KK⁻¹ panel[i] for rows [first, end), four rows by four entries at a time where it can, each
 * entry summed in increasing order either way.
 */
function scaleRows(shared: SweepShared, first: number, end: number, size: number): void {
  const { panel: v, scaled: u, pivotInverse: w } = shared;
  let i = first;
  for (; i + 4 <= end; i += 4) {
    const v0 = i * BLOCK;
    const v1 = v0 + BLOCK;
    const v2 = v1 + BLOCK;
    const v3 = v2 + BLOCK;
    let t = 0;
    for (; t + 4 <= size; t += 4) {
      const w0 = t * BLOCK;
      const w1 = w0 + BLOCK;
      const w2 = w1 + BLOCK;
      const w3 = w2 + BLOCK;
      // prettier-ignore
      let a00 = 0, a01 = 0, a02 = 0, a03 = 0, a10 = 0, a11 = 0, a12 = 0, a13 = 0,
        a20 = 0, a21 = 0, a22 = 0, a23 = 0, a30 = 0, a31 = 0, a32 = 0, a33 = 0;
      for (let p = 0; p < size; p++) {
        const x0 = v[v0 + p];
        const x1 = v[v1 + p];
        const x2 = v[v2 + p];
        const x3 = v[v3 + p];
        const y0 = w[w0 + p];
        const y1 = w[w1 + p];
        const y2 = w[w2 + p];
        const y3 = w[w3 + p];
        a00 += x0 * y0;
        a01 += x0 * y1;
        a02 += x0 * y2;
        a03 += x0 * y3;
        a10 += x1 * y0;
        a11 += x1 * y1;
        a12 += x1 * y2;
        a13 += x1 * y3;
        a20 += x2 * y0;
        a21 += x2 * y1;
        a22 += x2 * y2;
        a23 += x2 * y3;
        a30 += x3 * y0;
        a31 += x3 * y1;
        a32 += x3 * y2;
        a33 += x3 * y3;
      }
      u[v0 + t] = a00;
      u[v0 + t + 1] = a01;
      u[v0 + t + 2] = a02;
      u[v0 + t + 3] = a03;
      u[v1 + t] = a10;
      u[v1 + t + 1] = a11;
      u[v1 + t + 2] = a12;
      u[v1 + t + 3] = a13;
      u[v2 + t] = a20;
      u[v2 + t + 1] = a21;
      u[v2 + t + 2] = a22;
      u[v2 + t + 3] = a23;
      u[v3 + t] = a30;
      u[v3 + t + 1] = a31;
      u[v3 + t + 2] = a32;
      u[v3 + t + 3] = a33;
    }
    for (; t < size; t++) {
      for (let r = 0; r < 4; r++) u[v0 + r * BLOCK + t] = dot(v, v0 + r * BLOCK, w, t * BLOCK, size);
    }
  }
  for (; i < end; i++) {
    for (let t = 0; t < size; t++) u[i * BLOCK + t] = dot(v, i * BLOCK, w, t * BLOCK, size);
  }
}

function dot(x: Float64Array, xFrom: number, y: Float64Array, yFrom: number, length: number): number {
  let sum = 0;
  for (let p = 0; p < length; p++) sum += x[xFrom + p] * y[yFrom + p];
  return sum;
}

/** M[i + r][j] −= scaled[i + r] · panel[j] for r < 4 and j in [c0, c1). */
function updateFourRows(shared: SweepShared, i: number, c0: number, c1: number, size: number): void {
  const { n, matrix: m, panel: v, scaled: u } = shared;
  const u0 = i * BLOCK;
  const u1 = u0 + BLOCK;
  const u2 = u1 + BLOCK;
  const u3 = u2 + BLOCK;
  const m0 = i * n;
  const m1 = m0 + n;
  const m2 = m1 + n;
  const m3 = m2 + n;
  let j = c0;
  for (; j + 4 <= c1; j += 4) {
    const v0 = j * BLOCK;
    const v1 = v0 + BLOCK;
    const v2 = v1 + BLOCK;
    const v3 = v2 + BLOCK;
    // prettier-ignore
    let a00 = 0, a01 = 0, a02 = 0, a03 = 0, a10 = 0, a11 = 0, a12 = 0, a13 = 0,
      a20 = 0, a21 = 0, a22 = 0, a23 = 0, a30 = 0, a31 = 0, a32 = 0, a33 = 0;
    for (let t = 0; t < size; t++) {
      const x0 = u[u0 + t];
      const x1 = u[u1 + t];
      const x2 = u[u2 + t];
      const x3 = u[u3 + t];
      const y0 = v[v0 + t];
      const y1 = v[v1 + t];
      const y2 = v[v2 + t];
      const y3 = v[v3 + t];
      a00 += x0 * y0;
      a01 += x0 * y1;
      a02 += x0 * y2;
      a03 += x0 * y3;
      a10 += x1 * y0;
      a11 += x1 * y1;
      a12 += x1 * y2;
      a13 += x1 * y3;
      a20 += x2 * y0;
      a21 += x2 * y1;
      a22 += x2 * y2;
      a23 += x2 * y3;
      a30 += x3 * y0;
      a31 += x3 * y1;
      a32 += x3 * y2;
      a33 += x3 * y3;
    }
    m[m0 + j] -= a00;
    m[m0 + j + 1] -= a01;
    m[m0 + j + 2] -= a02;
    m[m0 + j + 3] -= a03;
    m[m1 + j] -= a10;
    m[m1 + j + 1] -= a11;
    m[m1 + j + 2] -= a12;
    m[m1 + j + 3] -= a13;
    m[m2 + j] -= a20;
    m[m2 + j + 1] -= a21;
    m[m2 + j + 2] -= a22;
    m[m2 + j + 3] -= a23;
    m[m3 + j] -= a30;
    m[m3 + j + 1] -= a31;
    m[m3 + j + 2] -= a32;
    m[m3 + j + 3] -= a33;
  }
  for (; j < c1; j++) {
    const v0 = j * BLOCK;
    // prettier-ignore
    let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (let t = 0; t < size; t++) {
      const y = v[v0 + t];
      a0 += u[u0 + t] * y;
      a1 += u[u1 + t] * y;
      a2 += u[u2 + t] * y;
      a3 += u[u3 + t] * y;
    }
    m[m0 + j] -= a0;
    m[m1 + j] -= a1;
    m[m2 + j] -= a2;
    m[m3 + j] -= a3;
  }
}

/** M[i][j] −= scaled[i] · panel[j] for j in [c0, c1). */
function updateRow(shared: SweepShared, i: number, c0: number, c1: number, size: number): void {
  const { n, matrix: m, panel: v, scaled: u } = shared;
  const u0 = i * BLOCK;
  const m0 = i * n;
  let j = c0;
  for (; j + 4 <= c1; j += 4) {
    const v0 = j * BLOCK;
    const v1 = v0 + BLOCK;
    const v2 = v1 + BLOCK;
    const v3 = v2 + BLOCK;
    // prettier-ignore
    let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (let t = 0; t < size; t++) {
      const x = u[u0 + t];
      a0 += x * v[v0 + t];
      a1 += x * v[v1 + t];
      a2 += x * v[v2 + t];
      a3 += x * v[v3 + t];
    }
    m[m0 + j] -= a0;
    m[m0 + j + 1] -= a1;
    m[m0 + j + 2] -= a2;
    m[m0 + j + 3] -= a3;
  }
  for (; j < c1; j++) {
    const v0 = j * BLOCK;
    let a = 0;
    for (let t = 0; t < size; t++) a += u[u0 + t] * v[v0 + t];
    m[m0 + j] -= a;
  }
}

/**
 * The final pass over rows [first, end): negates the upper triangle (sweeping leaves −M⁻¹) and copies it
 * to the lower, tile by tile so that the column-wise writes stay in cache. Each lower element is written by
 * the thread of the row it mirrors, so threads never write the same element.
 */
function mirrorRows(shared: SweepShared, first: number, end: number): void {
  const { n, matrix } = shared;
  for (let i0 = first; i0 < end; i0 += MIRROR_TILE) {
    const i1 = Math.min(end, i0 + MIRROR_TILE);
    for (let j0 = i0; j0 < n; j0 += MIRROR_TILE) {
      const j1 = Math.min(n, j0 + MIRROR_TILE);
      for (let i = i0; i < i1; i++) {
        for (let j = Math.max(j0, i); j < j1; j++) {
          const value = -matrix[i * n + j];
          matrix[i * n + j] = value;
          matrix[j * n + i] = value;
        }
      }
    }
  }
}

/**
 * Selects, for rows [first, end) of P = M⁻¹, the `keep` largest positive B[i][j] = −P[i][j] / P[j][j]
 * (`byTarget`: B[j][i]; `signed`: the largest in magnitude), j ≠ i, best first, with a min-heap of the
 * best so far. Columns are read in increasing order and a newcomer must beat the heap's worst strictly,
 * so ties go to the lower index.
 */
function selectRows(shared: SweepShared, first: number, end: number): void {
  const { n, matrix, keep, signed, byTarget, listNeighbours, listWeights, listLengths } = shared;
  const scale = new Float64Array(n);
  for (let j = 0; j < n; j++) scale[j] = -1 / matrix[j * n + j];
  const heapWeights = new Float64Array(keep);
  const heapItems = new Int32Array(keep);
  for (let i = first; i < end; i++) {
    const row = i * n;
    // P is symmetric: B[j][i] = −P[i][j] / P[i][i] reads row i too, scaled by its own diagonal.
    const scaleOf = (j: number) => (byTarget ? scale[i] : scale[j]);
    let length = 0;
    for (let j = 0; j < n; j++) {
      const weight = signed ? Math.abs(matrix[row + j] * scaleOf(j)) : matrix[row + j] * scaleOf(j);
      if (!(weight > 0) || j === i) continue;
      if (length < keep) {
        // Sift up: the worst is the smallest weight, the higher index among equals.
        let at = length++;
        while (at > 0) {
          const parent = (at - 1) >> 1;
          if (!worse(weight, j, heapWeights[parent], heapItems[parent])) break;
          heapWeights[at] = heapWeights[parent];
          heapItems[at] = heapItems[parent];
          at = parent;
        }
        heapWeights[at] = weight;
        heapItems[at] = j;
      } else if (weight > heapWeights[0]) {
        siftDown(heapWeights, heapItems, length, weight, j);
      }
    }
    // Pop the worst into the back: the list comes out best first.
    const base = i * keep;
    for (let size = length; size > 0; size--) {
      // The heap orders by magnitude when signed: the stored weight keeps its sign.
      listWeights[base + size - 1] = signed
        ? matrix[row + heapItems[0]] * scaleOf(heapItems[0])
        : heapWeights[0];
      listNeighbours[base + size - 1] = heapItems[0];
      if (size > 1) siftDown(heapWeights, heapItems, size - 1, heapWeights[size - 1], heapItems[size - 1]);
    }
    listLengths[i] = length;
  }
}

/** Whether heap entry (wa, a) is worse than (wb, b): a smaller weight, or the same and a higher index. */
function worse(wa: number, a: number, wb: number, b: number): boolean {
  return wa < wb || (wa === wb && a > b);
}

/** Replaces the root of a min-heap of `length` entries with (weight, item) and restores the heap. */
function siftDown(
  weights: Float64Array,
  items: Int32Array,
  length: number,
  weight: number,
  item: number,
): void {
  let at = 0;
  for (;;) {
    let child = 2 * at + 1;
    if (child >= length) break;
    if (child + 1 < length && worse(weights[child + 1], items[child + 1], weights[child], items[child]))
      child++;
    if (!worse(weights[child], items[child], weight, item)) break;
    weights[at] = weights[child];
    items[at] = items[child];
    at = child;
  }
  weights[at] = weight;
  items[at] = item;
}

/** The inversion's state held by the coordinating thread alone. */
interface PivotScratch {
  /** Each original diagonal entry, against which pivots are judged. */
  diagonal: Float64Array;
  /** The pivot block, then its Cholesky factor L, then L⁻¹ (BLOCK × BLOCK). */
  block: Float64Array;
  /** A pivot at or below this fraction of its original diagonal entry counts as zero. */
  tolerance: number;
}

function scratchFor(shared: SweepShared): PivotScratch {
  const { n, matrix } = shared;
  const diagonal = new Float64Array(n);
  for (let i = 0; i < n; i++) diagonal[i] = matrix[i * n + i];
  return { diagonal, block: new Float64Array(BLOCK * BLOCK), tolerance: n * Number.EPSILON };
}

/**
 * Before the step at K = [k, k + size): inverts M_KK through its Cholesky factor into pivotInverse, and
 * copies M[j][K] into the panel for every j outside K. False when M_KK is not (numerically) positive
 * definite, and so neither is the matrix.
 */
function preparePivot(shared: SweepShared, scratch: PivotScratch, k: number, size: number): boolean {
  const { n, matrix, panel, pivotInverse } = shared;
  const { block: l, diagonal, tolerance } = scratch;
  // Cholesky, reading M_KK's upper triangle as L's lower one.
  for (let j = 0; j < size; j++) {
    const rowJ = j * BLOCK;
    let pivot = matrix[(k + j) * n + k + j];
    for (let p = 0; p < j; p++) pivot -= l[rowJ + p] * l[rowJ + p];
    // Also false for NaN.
    if (!(pivot > 0 && pivot > tolerance * diagonal[k + j])) return false;
    const root = Math.sqrt(pivot);
    l[rowJ + j] = root;
    for (let i = j + 1; i < size; i++) {
      const rowI = i * BLOCK;
      let sum = matrix[(k + j) * n + k + i];
      for (let p = 0; p < j; p++) sum -= l[rowI + p] * l[rowJ + p];
      l[rowI + j] = sum / root;
    }
  }
  // L⁻¹ in place, column by column from the last: column j of L⁻¹ is −(L⁻¹)[j][j] times the already
  // inverted lower-right block times column j of L, whose entries are overwritten from the bottom up after
  // their last use.
  for (let j = size - 1; j >= 0; j--) {
    const inverseDiagonal = 1 / l[j * BLOCK + j];
    for (let i = size - 1; i > j; i--) {
      let sum = 0;
      for (let p = j + 1; p <= i; p++) sum += l[i * BLOCK + p] * l[p * BLOCK + j];
      l[i * BLOCK + j] = -inverseDiagonal * sum;
    }
    l[j * BLOCK + j] = inverseDiagonal;
  }
  // M_KK⁻¹ = L⁻ᵀ L⁻¹.
  for (let a = 0; a < size; a++) {
    for (let b = a; b < size; b++) {
      let sum = 0;
      for (let p = b; p < size; p++) sum += l[p * BLOCK + a] * l[p * BLOCK + b];
      pivotInverse[a * BLOCK + b] = sum;
      pivotInverse[b * BLOCK + a] = sum;
    }
  }
  // The panel, from the upper triangle: M[j][K] in row j for j before K, in column j of K's rows after it.
  for (let j = 0; j < k; j++) {
    const from = j * n + k;
    const to = j * BLOCK;
    for (let t = 0; t < size; t++) panel[to + t] = matrix[from + t];
  }
  for (let t = 0; t < size; t++) {
    const from = (k + t) * n;
    for (let j = k + size; j < n; j++) panel[j * BLOCK + t] = matrix[from + j];
  }
  return true;
}

/** After the step at K: the swept K rows, M[K][j] for j after K and M_KK ← −M_KK⁻¹. */
function finishPivot(shared: SweepShared, k: number, size: number): void {
  const { n, matrix, scaled, pivotInverse } = shared;
  for (let t = 0; t < size; t++) {
    const to = (k + t) * n;
    for (let j = k + size; j < n; j++) matrix[to + j] = scaled[j * BLOCK + t];
    for (let s = 0; s < size; s++) matrix[to + k + s] = -pivotInverse[t * BLOCK + s];
  }
}

function sweepShared(
  matrix: Float64Array,
  n: number,
  keep: number,
  signed: boolean,
  byTarget: boolean,
  threads: number,
): SweepShared {
  const shared = threads > 1;
  const float64s = (length: number) =>
    shared ? new Float64Array(new SharedArrayBuffer(length * 8)) : new Float64Array(length);
  const int32s = (length: number) =>
    shared ? new Int32Array(new SharedArrayBuffer(length * 4)) : new Int32Array(length);
  // A few runs per thread, so that the threads finish a task close together whatever their speeds.
  const runs = shared ? RUNS_PER_THREAD * threads : 1;
  return {
    n,
    matrix,
    panel: float64s(n * BLOCK),
    scaled: float64s(n * BLOCK),
    pivotInverse: float64s(BLOCK * BLOCK),
    keep,
    signed: signed ? 1 : 0,
    byTarget: byTarget ? 1 : 0,
    listNeighbours: int32s(n * keep),
    listWeights: shared ? new Float32Array(new SharedArrayBuffer(n * keep * 4)) : new Float32Array(n * keep),
    listLengths: int32s(n),
    // A step costs row i about n − i for its columns plus BLOCK for its panel row, and the final pass about
    // n − i; the selection costs every row the same.
    sweepRuns: splitRows(n, runs, (i) => n - i + BLOCK, int32s),
    selectRuns: splitRows(n, runs, () => 1, int32s),
    next: int32s(1),
  };
}

/**
 * Inverts, in place, the symmetric positive definite n×n row-major matrix, in this thread. Only the upper
 * triangle (column ≥ row) is read. Returns false, leaving the matrix in an unspecified state, when the
 * matrix is not numerically positive definite: some pivot of its Cholesky factorisation is not positive,
 * or at most n·ε of the corresponding diagonal entry.
 */
export function invertSpd(matrix: Float64Array, n: number): boolean {
  checkSquare(matrix, n);
  const shared = sweepShared(matrix, n, 0, false, false, 1);
  const scratch = scratchFor(shared);
  for (let k = 0; k < n; k += BLOCK) {
    const size = Math.min(BLOCK, n - k);
    if (!preparePivot(shared, scratch, k, size)) return false;
    sweepRows(shared, 0, n, k, size);
    finishPivot(shared, k, size);
  }
  mirrorRows(shared, 0, n);
  return true;
}

function checkSquare(matrix: Float64Array, n: number): void {
  if (!Number.isInteger(n) || n < 0 || matrix.length !== n * n)
    throw new RangeError(`expected an n×n matrix with n = ${n}, got ${matrix.length} elements`);
}

/**
 * Bounds of `parts` contiguous runs of rows of about equal weight, row i weighing weightOf(i). A run may be
 * empty when there are few rows.
 */
function splitRows(
  n: number,
  parts: number,
  weightOf: (row: number) => number,
  int32s: (length: number) => Int32Array,
): Int32Array {
  let total = 0;
  for (let i = 0; i < n; i++) total += weightOf(i);
  const bounds = int32s(parts + 1);
  let row = 0;
  let done = 0;
  for (let part = 1; part < parts; part++) {
    const target = (total * part) / parts;
    while (row < n && done + weightOf(row) / 2 < target) done += weightOf(row++);
    bounds[part] = row;
  }
  bounds[parts] = n;
  return bounds;
}

function validate(gram: ItemGram, options: EaseOptions): void {
  if (!(options.lambda >= 0) || !Number.isFinite(options.lambda))
    throw new RangeError(`lambda must be finite and non-negative, not ${options.lambda}`);
  positiveInteger(options.neighbours, 'neighbours');
  if (options.threads !== undefined) positiveInteger(options.threads, 'threads');
  const { items, diagonal, pairA, pairB, pairCount } = gram;
  if (!Number.isInteger(items) || items < 0) throw new RangeError(`items must be a count, not ${items}`);
  if (diagonal.length !== items)
    throw new RangeError(`diagonal holds ${diagonal.length} entries, not items = ${items}`);
  for (let i = 0; i < items; i++) {
    if (!Number.isFinite(diagonal[i])) throw new RangeError(`diagonal[${i}] is ${diagonal[i]}`);
  }
  if (pairB.length !== pairA.length || pairCount.length !== pairA.length)
    throw new RangeError('pairA, pairB and pairCount must be as long as one another');
  for (let e = 0; e < pairA.length; e++) {
    const a = pairA[e];
    const b = pairB[e];
    if (!(a >= 0 && a < items && b >= 0 && b < items))
      throw new RangeError(`pair ${e}: no item ${a} or ${b}`);
    if (a === b) throw new RangeError(`pair ${e}: (${a}, ${b}) is on the diagonal, given apart`);
    if (!Number.isFinite(pairCount[e])) throw new RangeError(`pair ${e}: count ${pairCount[e]}`);
  }
}

/** G + λI, n×n row-major, in a SharedArrayBuffer when workers are to read it. */
function regularisedGram(gram: ItemGram, lambda: number, shared: boolean): Float64Array {
  const n = gram.items;
  const matrix = shared ? new Float64Array(new SharedArrayBuffer(n * n * 8)) : new Float64Array(n * n);
  for (let i = 0; i < n; i++) matrix[i * n + i] = gram.diagonal[i] + lambda;
  const { pairA, pairB, pairCount } = gram;
  for (let e = 0; e < pairA.length; e++) {
    const a = pairA[e];
    const b = pairB[e];
    const count = pairCount[e];
    const previous = matrix[a * n + b];
    // Off the diagonal, 0 means not given yet (or given as 0, which any count may replace).
    if (previous !== 0 && previous !== count)
      throw new RangeError(`pair (${a}, ${b}) is given with counts ${previous} and ${count}`);
    matrix[a * n + b] = count;
    matrix[b * n + a] = count;
  }
  return matrix;
}

/** The selected lists, packed in CSR form. */
function packLists(shared: SweepShared): NeighbourLists {
  const { n, keep, listNeighbours, listWeights, listLengths } = shared;
  const offsets = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i] + listLengths[i];
  const neighbours = new Int32Array(offsets[n]);
  const weights = new Float32Array(offsets[n]);
  for (let i = 0; i < n; i++) {
    const from = i * keep;
    const length = listLengths[i];
    neighbours.set(listNeighbours.subarray(from, from + length), offsets[i]);
    weights.set(listWeights.subarray(from, from + length), offsets[i]);
  }
  return { offsets, neighbours, weights };
}

/**
 * Builds EASE's item-item weights from the item Gram matrix and keeps each item's `neighbours` largest
 * positive ones. Memory: one items × items Float64Array, plus O(items · (neighbours + 64)). Worker threads,
 * if any, are ended before the promise settles. Rejects when G + λI is not positive definite (an item
 * without users and λ = 0, for one).
 */
export async function buildEase(gram: ItemGram, options: EaseOptions): Promise<NeighbourLists> {
  validate(gram, options);
  const n = gram.items;
  const keep = Math.max(0, Math.min(options.neighbours, n - 1));
  // More threads than blocks of four rows would idle.
  const threads = Math.max(1, Math.min(options.threads ?? os.availableParallelism(), Math.ceil(n / 4)));
  const shared = sweepShared(
    regularisedGram(gram, options.lambda, threads > 1),
    n,
    keep,
    options.negative ?? false,
    options.byTarget ?? false,
    threads,
  );
  const scratch = scratchFor(shared);
  const pool =
    threads > 1
      ? new ThreadGang<SweepTask>(
          options.workerScript ?? new URL('./ease-worker.js', import.meta.url),
          shared,
          threads,
          'an EASE thread',
        )
      : undefined;
  const perform = (task: SweepTask) => {
    shared.next[0] = 0;
    if (pool) return pool.run(() => task);
    runTask(shared, task);
  };
  try {
    for (let k = 0; k < n; k += BLOCK) {
      const size = Math.min(BLOCK, n - k);
      if (!preparePivot(shared, scratch, k, size))
        throw new RangeError('the item Gram matrix plus lambda is not positive definite: raise lambda');
      await perform([0, k, size]);
      finishPivot(shared, k, size);
    }
    await perform([1, 0, 0]);
    await perform([2, 0, 0]);
  } finally {
    await pool?.close();
  }
  return packLists(shared);
}
