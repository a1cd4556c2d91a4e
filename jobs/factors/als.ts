/**
 * Implicit-feedback alternating least squares (Hu, Koren and Volinsky 2008) on Float32Array factors.
 *
 * Each iteration solves every user's factors given the items', then every item's given the users'. Rows are
 * grouped into a fixed number of blocks per side; worker threads each take a contiguous run of blocks of
 * about equal work and write their rows straight into factor matrices held in SharedArrayBuffers. Every block
 * also leaves the gram of its freshly solved rows (and, on the item side, its share of the loss) in its own
 * slot, which this thread then sums in block order: the grams, and so the factors, come out the same for any
 * number of threads.
 */
import os from 'node:os';
import { addGramUpper, gram, ImplicitRowSolver, mirrorUpper } from '../../src/linalg/dense.js';
import { positiveInteger, ThreadGang } from '../threads/thread-gang.js';

export interface AlsOptions {
  /** k, the length of each factor vector. */
  factors: number;
  iterations: number;
  /** λ. */
  regularization: number;
  /** Confidence c = 1 + alpha · r for an observed strength r. */
  alpha: number;
  /** Seed of the initial factors. */
  seed: number;
  /** Exact per-row solves, or conjugate gradient warm-started from the row's previous value. */
  solver: 'cholesky' | 'cg';
  /** Conjugate gradient steps per row and half-step; 3 when not given. */
  cgSteps?: number;
  /** Worker threads; os.availableParallelism() when not given; 1 solves in this thread, without a worker. */
  threads?: number;
  /** The compiled worker module; als-worker.js next to this module when not given. */
  workerScript?: URL;
}

/**
 * Interactions in CSR form by user: user u's entries are [offsets[u], offsets[u + 1]). Each (user, item)
 * pair is expected at most once.
 */
export interface UserItemMatrix {
  users: number;
  items: number;
  offsets: Int32Array;
  /** The item index of each entry. */
  indexes: Int32Array;
  /** The raw strength r > 0 of each entry. */
  values: Float32Array;
}

export interface AlsModel {
  factors: number;
  users: number;
  items: number;
  /** users × k, row-major. */
  userFactors: Float32Array;
  /** items × k, row-major. */
  itemFactors: Float32Array;
  /** The full objective after each iteration. */
  losses: number[];
}

export type AlsLossOptions = Pick<AlsOptions, 'regularization' | 'alpha'>;

const DEFAULT_CG_STEPS = 3;
const INITIAL_SCALE = 0.01;

/**
 * Rows per side are grouped into at most this many blocks: the unit of work given to a thread, and of the
 * partial grams summed afterwards. Enough for a fair split among a few dozen threads; each block's slot costs
 * 8·k² bytes (32 KiB at k = 64).
 */
const MAX_BLOCKS = 128;

/** One side of the factorisation: its factors, and its interactions in CSR form by its rows. */
export interface AlsSide {
  rows: number;
  blockRows: number;
  blocks: number;
  offsets: Int32Array;
  indexes: Int32Array;
  values: Float32Array;
  factors: Float32Array;
}

/** 0: solve the users given the items; 1: solve the items given the users. */
export type Half = 0 | 1;

/** A message to an ALS thread: solve blocks [first, end) of one side. */
export type AlsTask = [half: Half, first: number, end: number];

/** What the solving threads share (every array is in a SharedArrayBuffer when there are workers). */
export interface AlsShared {
  k: number;
  regularization: number;
  alpha: number;
  exact: boolean;
  cgSteps: number;
  sides: [users: AlsSide, items: AlsSide];
  /** The gram of each side's factors: users' at 0, items' at k². */
  grams: Float64Array;
  /**
   * One slot of k² + 1 per block: the upper triangle of the gram of the block's rows, then (item side only)
   * Σ over the block's entries of c (1 − s)² − s², s the entry's predicted score.
   */
  partials: Float64Array;
}

/**
 * Solves the rows of blocks [first, end) of one side, given the other side's factors and gram, and fills
 * the blocks' slots in shared.partials. Runs in the worker threads, or in this thread without workers.
 */
export function solveBlocks(
  shared: AlsShared,
  half: Half,
  first: number,
  end: number,
  solver: ImplicitRowSolver,
): void {
  const { k, regularization, alpha, exact, cgSteps, partials } = shared;
  const side = shared.sides[half];
  const other = shared.sides[1 - half];
  const otherGram = shared.grams.subarray((1 - half) * k * k, (2 - half) * k * k);
  const { offsets, indexes, values, factors } = side;
  const otherFactors = other.factors;
  const stride = k * k + 1;
  for (let block = first; block < end; block++) {
    const slot = block * stride;
    const partial = partials.subarray(slot, slot + k * k);
    partial.fill(0);
    const startRow = block * side.blockRows;
    const endRow = Math.min(side.rows, startRow + side.blockRows);
    let observed = 0;
    for (let row = startRow; row < endRow; row++) {
      const start = offsets[row];
      const stop = offsets[row + 1];
      const base = row * k;
      if (exact) {
        solver.solveExact(
          otherFactors,
          otherGram,
          regularization,
          alpha,
          indexes,
          values,
          start,
          stop,
          factors,
          base,
        );
      } else {
        solver.solveConjugateGradient(
          otherFactors,
          otherGram,
          regularization,
          alpha,
          cgSteps,
          indexes,
          values,
          start,
          stop,
          factors,
          base,
        );
      }
      addGramUpper(factors, row, row + 1, k, partial);
      // The item half-step ends the iteration: its rows and the users' are final, so the observed part of
      // the loss can be summed here, while the row is at hand.
      if (half === 1)
        observed += observedLoss(factors, base, otherFactors, k, alpha, indexes, values, start, stop);
    }
    partials[slot + k * k] = observed;
  }
}

/** Σ over entries [start, stop) of one row of c (1 − s)² − s², s = the row's factors · the entry's. */
function observedLoss(
  factors: Float32Array,
  base: number,
  otherFactors: Float32Array,
  k: number,
  alpha: number,
  indexes: Int32Array,
  values: Float32Array,
  start: number,
  stop: number,
): number {
  let sum = 0;
  for (let e = start; e < stop; e++) {
    const otherBase = indexes[e] * k;
    let score = 0;
    for (let j = 0; j < k; j++) score += factors[base + j] * otherFactors[otherBase + j];
    const miss = 1 - score;
    sum += (1 + alpha * values[e]) * miss * miss - score * score;
  }
  return sum;
}

/**
 * The objective from both grams and the observed entries alone:
 *   Σ_{u,i} (x_uᵀy_i)² = ⟨XᵀX, YᵀY⟩ and Σ_u |x_u|² = trace(XᵀX),
 * and each observed pair replaces its (x_uᵀy_i)² with c (1 − x_uᵀy_i)².
 */
function lossOf(
  userGram: Float64Array,
  itemGram: Float64Array,
  k: number,
  regularization: number,
  observed: number,
) {
  let cross = 0;
  for (let i = 0; i < k * k; i++) cross += userGram[i] * itemGram[i];
  let traces = 0;
  for (let i = 0; i < k; i++) traces += userGram[i * k + i] + itemGram[i * k + i];
  return cross + regularization * traces + observed;
}

/** The objective of a model: Σ_{u,i} c_ui (p_ui − x_uᵀy_i)² + λ (Σ_u |x_u|² + Σ_i |y_i|²). */
export function alsLoss(matrix: UserItemMatrix, model: AlsModel, options: AlsLossOptions): number {
  const k = model.factors;
  let observed = 0;
  for (let user = 0; user < matrix.users; user++) {
    observed += observedLoss(
      model.userFactors,
      user * k,
      model.itemFactors,
      k,
      options.alpha,
      matrix.indexes,
      matrix.values,
      matrix.offsets[user],
      matrix.offsets[user + 1],
    );
  }
  const userGram = gram(model.userFactors, model.users, k);
  const itemGram = gram(model.itemFactors, model.items, k);
  return lossOf(userGram, itemGram, k, options.regularization, observed);
}

/** A small seeded PRNG (mulberry32): uniform in [0, 1). */
function uniformFrom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fills the arrays in order with N(0, INITIAL_SCALE²) draws (Box–Muller). */
function initialise(seed: number, ...arrays: Float32Array[]): void {
  const uniform = uniformFrom(seed);
  let spare = NaN;
  for (const array of arrays) {
    for (let i = 0; i < array.length; i++) {
      if (!Number.isNaN(spare)) {
        array[i] = spare;
        spare = NaN;
        continue;
      }
      const radius = INITIAL_SCALE * Math.sqrt(-2 * Math.log(1 - uniform()));
      const angle = 2 * Math.PI * uniform();
      array[i] = radius * Math.cos(angle);
      spare = radius * Math.sin(angle);
    }
  }
}

function float32s(length: number, shared: boolean): Float32Array {
  return shared ? new Float32Array(new SharedArrayBuffer(length * 4)) : new Float32Array(length);
}

function int32s(length: number, shared: boolean): Int32Array {
  return shared ? new Int32Array(new SharedArrayBuffer(length * 4)) : new Int32Array(length);
}

function float64s(length: number, shared: boolean): Float64Array {
  return shared ? new Float64Array(new SharedArrayBuffer(length * 8)) : new Float64Array(length);
}

function sharedCopy<T extends Int32Array | Float32Array>(
  array: T,
  make: (length: number) => T,
  shared: boolean,
): T {
  if (!shared || array.buffer instanceof SharedArrayBuffer) return array;
  const copy = make(array.length);
  copy.set(array);
  return copy;
}

function sideOf(
  rows: number,
  offsets: Int32Array,
  indexes: Int32Array,
  values: Float32Array,
  factors: Float32Array,
): AlsSide {
  const blocks = Math.min(rows, MAX_BLOCKS);
  const blockRows = blocks === 0 ? 0 : Math.ceil(rows / blocks);
  return {
    rows,
    blockRows,
    blocks: blockRows === 0 ? 0 : Math.ceil(rows / blockRows),
    offsets,
    indexes,
    values,
    factors,
  };
}

/** The item-side CSR: each item's users in increasing order, with their strengths. */
function transpose(matrix: UserItemMatrix, shared: boolean) {
  const { users, items, offsets, indexes, values } = matrix;
  const entries = offsets[users];
  const itemOffsets = int32s(items + 1, shared);
  for (let e = 0; e < entries; e++) itemOffsets[indexes[e] + 1]++;
  for (let item = 0; item < items; item++) itemOffsets[item + 1] += itemOffsets[item];
  const itemIndexes = int32s(entries, shared);
  const itemValues = float32s(entries, shared);
  const next = itemOffsets.slice(0, items);
  for (let user = 0; user < users; user++) {
    for (let e = offsets[user]; e < offsets[user + 1]; e++) {
      const at = next[indexes[e]]++;
      itemIndexes[at] = user;
      itemValues[at] = values[e];
    }
  }
  return { offsets: itemOffsets, indexes: itemIndexes, values: itemValues };
}

/**
 * Bounds of `parts` contiguous runs of blocks of about equal work. A row costs about as much as k/2 entries
 * whatever its length (its dense k×k products), and each entry costs the same, so rows are weighed that way
 * rather than counted.
 */
function splitBlocks(side: AlsSide, k: number, parts: number): Int32Array {
  const weights = new Float64Array(side.blocks);
  let total = 0;
  for (let block = 0; block < side.blocks; block++) {
    const startRow = block * side.blockRows;
    const endRow = Math.min(side.rows, startRow + side.blockRows);
    weights[block] = side.offsets[endRow] - side.offsets[startRow] + ((endRow - startRow) * k) / 2;
    total += weights[block];
  }
  const bounds = new Int32Array(parts + 1);
  let block = 0;
  let done = 0;
  for (let part = 1; part < parts; part++) {
    const target = (total * part) / parts;
    // End the run where the cumulative work is closest to the target.
    while (block < side.blocks && done + weights[block] / 2 < target) done += weights[block++];
    bounds[part] = block;
  }
  bounds[parts] = side.blocks;
  return bounds;
}

/** Sums the blocks' slots: the side's gram into shared.grams, and returns the sum of the observed losses. */
function gatherPartials(shared: AlsShared, half: Half): number {
  const { k, partials } = shared;
  const side = shared.sides[half];
  const target = shared.grams.subarray(half * k * k, (half + 1) * k * k);
  target.fill(0);
  const stride = k * k + 1;
  let observed = 0;
  for (let block = 0; block < side.blocks; block++) {
    const slot = block * stride;
    for (let a = 0; a < k; a++) {
      for (let b = a; b < k; b++) target[a * k + b] += partials[slot + a * k + b];
    }
    observed += partials[slot + k * k];
  }
  mirrorUpper(target, k);
  return observed;
}

function validate(matrix: UserItemMatrix, options: AlsOptions): void {
  positiveInteger(options.factors, 'factors');
  if (!Number.isInteger(options.iterations) || options.iterations < 0) {
    throw new RangeError(`iterations must be a non-negative integer, not ${options.iterations}`);
  }
  if (!(options.regularization >= 0) || !Number.isFinite(options.regularization)) {
    throw new RangeError(`regularization must be finite and non-negative, not ${options.regularization}`);
  }
  if (!(options.alpha >= 0) || !Number.isFinite(options.alpha)) {
    throw new RangeError(`alpha must be finite and non-negative, not ${options.alpha}`);
  }
  if (options.cgSteps !== undefined) positiveInteger(options.cgSteps, 'cgSteps');
  if (options.threads !== undefined) positiveInteger(options.threads, 'threads');
  const { users, items, offsets, indexes, values } = matrix;
  if (offsets.length !== users + 1 || offsets[0] !== 0) {
    throw new RangeError(`offsets must hold users + 1 = ${users + 1} bounds, from 0`);
  }
  for (let user = 0; user < users; user++) {
    if (offsets[user + 1] < offsets[user]) throw new RangeError(`offsets decrease at user ${user}`);
  }
  const entries = offsets[users];
  if (indexes.length < entries || values.length < entries) {
    throw new RangeError(`offsets count ${entries} entries; indexes and values must hold as many`);
  }
  for (let e = 0; e < entries; e++) {
    if (!(indexes[e] >= 0 && indexes[e] < items)) throw new RangeError(`entry ${e}: no item ${indexes[e]}`);
    // A negative strength could make a row's system indefinite.
    if (!(values[e] >= 0) || values[e] === Infinity)
      throw new RangeError(`entry ${e}: strength ${values[e]}`);
  }
}

/**
 * Trains implicit-feedback ALS. onIteration is told each iteration's number (from 1) and loss once it is
 * done. Worker threads, if any, are ended before the promise settles.
 */
export async function trainAls(
  matrix: UserItemMatrix,
  options: AlsOptions,
  onIteration?: (iteration: number, loss: number) => void,
): Promise<AlsModel> {
  validate(matrix, options);
  const k = options.factors;
  const { users, items } = matrix;
  const threads = options.threads ?? os.availableParallelism();
  const shared = threads > 1;

  const itemSide = transpose(matrix, shared);
  const userFactors = float32s(users * k, shared);
  const itemFactors = float32s(items * k, shared);
  // The items first: the first half-step solves the users from them.
  initialise(options.seed, itemFactors, userFactors);
  const state: AlsShared = {
    k,
    regularization: options.regularization,
    alpha: options.alpha,
    exact: options.solver === 'cholesky',
    cgSteps: options.cgSteps ?? DEFAULT_CG_STEPS,
    sides: [
      sideOf(
        users,
        sharedCopy(matrix.offsets, (n) => int32s(n, true), shared),
        sharedCopy(matrix.indexes, (n) => int32s(n, true), shared),
        sharedCopy(matrix.values, (n) => float32s(n, true), shared),
        userFactors,
      ),
      sideOf(items, itemSide.offsets, itemSide.indexes, itemSide.values, itemFactors),
    ],
    grams: float64s(2 * k * k, shared),
    partials: float64s(Math.max(1, Math.min(Math.max(users, items), MAX_BLOCKS)) * (k * k + 1), shared),
  };
  state.grams.set(gram(itemFactors, items, k), k * k);

  const losses: number[] = [];
  const maxBlocks = Math.max(state.sides[0].blocks, state.sides[1].blocks);
  const pool = shared
    ? new ThreadGang<AlsTask>(
        options.workerScript ?? new URL('./als-worker.js', import.meta.url),
        state,
        Math.max(1, Math.min(threads, maxBlocks)),
        'an ALS thread',
      )
    : undefined;
  // Each thread solves its run of a side's blocks.
  const bounds = pool && [0, 1].map((half) => splitBlocks(state.sides[half], k, pool.size));
  const solver = pool ? undefined : new ImplicitRowSolver(k);
  try {
    for (let iteration = 1; iteration <= options.iterations; iteration++) {
      let observed = 0;
      for (const half of [0, 1] as const) {
        if (pool) await pool.run((i): AlsTask => [half, bounds![half][i], bounds![half][i + 1]]);
        else solveBlocks(state, half, 0, state.sides[half].blocks, solver!);
        observed += gatherPartials(state, half);
      }
      const loss = lossOf(
        state.grams.subarray(0, k * k),
        state.grams.subarray(k * k),
        k,
        options.regularization,
        observed,
      );
      losses.push(loss);
      onIteration?.(iteration, loss);
    }
  } finally {
    await pool?.close();
  }
  return {
    factors: k,
    users,
    items,
    // Copies out of shared memory, which some consumers of typed arrays refuse.
    userFactors: shared ? userFactors.slice() : userFactors,
    itemFactors: shared ? itemFactors.slice() : itemFactors,
    losses,
  };
}
