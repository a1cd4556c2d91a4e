import { mergeClasses, nthSmallest, sortEntries } from './score-sort.js';

/** Ranking this many entries more than asked costs less than selecting the ones asked for. */
const SMALL_REST = 32;
/** Scores sampled to estimate the threshold of the best entries. */
const SAMPLE_SIZE = 64;
const sample = new Float64Array(SAMPLE_SIZE);

/**
 * A score that about `need` (and, most likely, at least `need`) of the `rest` scores from `start` reach,
 * read off an evenly spaced sample of them: the sample's share above it is the share asked for, plus one
 * standard deviation of that share in a sample of this size. A wider margin ranks more entries than the
 * occasional fallback to selection costs.
 */
function sampledThreshold(scores: Float64Array, start: number, rest: number, need: number): number {
  const expected = (need / rest) * SAMPLE_SIZE;
  const above = Math.ceil(expected + Math.sqrt(expected)) + 1;
  if (above >= SAMPLE_SIZE) return -Infinity;
  for (let i = 0; i < SAMPLE_SIZE; i++) sample[i] = scores[start + Math.floor((i * rest) / SAMPLE_SIZE)];
  return nthSmallest(sample, SAMPLE_SIZE - 1 - above);
}

/**
 * Candidates of one request as parallel typed arrays: dense item ids, scores, and whether a candidate
 * came from the popularity fill rather than from the algorithm itself.
 */
export class CandidatePool {
  ids: Int32Array;
  scores: Float64Array;
  fill: Uint8Array;
  length = 0;
  /** How many leading entries `rankPrefix` has put in final order. */
  private ranked = 0;

  constructor(capacity = 128) {
    this.ids = new Int32Array(capacity);
    this.scores = new Float64Array(capacity);
    this.fill = new Uint8Array(capacity);
  }

  push(id: number, score: number, fill = false): void {
    if (this.length === this.ids.length) this.grow(this.length * 2 || 16);
    this.ids[this.length] = id;
    this.scores[this.length] = score;
    this.fill[this.length] = fill ? 1 : 0;
    this.length++;
    this.ranked = 0;
  }

  append(other: CandidatePool): void {
    for (let i = 0; i < other.length; i++) this.push(other.ids[i], other.scores[i], other.fill[i] === 1);
  }

  /** Keeps the entries for which `keep(index)` is true, in order. */
  retain(keep: (index: number) => boolean): this {
    let kept = 0;
    for (let i = 0; i < this.length; i++) {
      if (!keep(i)) continue;
      this.ids[kept] = this.ids[i];
      this.scores[kept] = this.scores[i];
      this.fill[kept] = this.fill[i];
      kept++;
    }
    this.length = kept;
    this.ranked = 0;
    return this;
  }

  /** Stable: equal scores keep their order, so earlier candidates (the algorithm's) stay ahead. */
  sortByScore(): this {
    if (!this.isSorted()) sortEntries(this.ids, this.scores, this.fill, 0, this.length, false);
    this.ranked = 0;
    return this;
  }

  /** Whether no score is higher than the one before it. */
  isSorted(): boolean {
    for (let i = 1; i < this.length; i++) if (this.scores[i] > this.scores[i - 1]) return false;
    return true;
  }

  /**
   * `sortByScore` for a pool whose entries are in order within each class (`classes[i]` < `classCount`):
   * a sorted pool stays so within the classes of entries that the same boosters multiplied.
   */
  sortByScoreWithin(classes: Uint8Array, classCount: number): this {
    mergeClasses(this.ids, this.scores, this.fill, this.length, classes, classCount);
    this.ranked = 0;
    return this;
  }

  /**
   * Makes the first `k` entries (at least) the best by score (ties: lower id first), in order, leaving the
   * rest unordered: an algorithm can produce thousands of candidates of which a request reads a few
   * hundred. Entries before `ranked` are already final; calling again with a larger `k` extends the prefix.
   */
  rankPrefix(k: number): void {
    const end = Math.min(k, this.length);
    if (end <= this.ranked) return;
    const need = end - this.ranked;
    const rest = this.length - this.ranked;
    const best = rest <= need + SMALL_REST ? rest : this.gatherBest(need, rest);
    sortEntries(this.ids, this.scores, this.fill, this.ranked, this.ranked + best, true);
    this.ranked += best;
  }

  /**
   * Moves at least the best `need` of the `rest` unranked entries to the front of them and says how many
   * it moved, all of them better than every entry left behind. A threshold estimated from a sample takes
   * one pass over the entries; selection by partitioning is the fallback when the estimate misses. A few
   * more than asked are moved, and ranked: a filter that rejects some asks again, and finds them ready.
   */
  private gatherBest(need: number, rest: number): number {
    const { scores } = this;
    const threshold = sampledThreshold(scores, this.ranked, rest, need);
    let moved = this.ranked;
    for (let i = this.ranked; i < this.length; i++) {
      if (!(scores[i] >= threshold)) continue;
      if (i !== moved) this.swap(i, moved);
      moved++;
    }
    const count = moved - this.ranked;
    if (count >= need && count <= 2 * need + SMALL_REST) return count;
    // Too few (selection goes over all the rest) or too many, as when many entries share one score.
    this.select(this.ranked + need, count >= need ? moved - 1 : this.length - 1);
    return need;
  }

  /** Quickselect over [ranked, high]: afterwards the entries before `end` are the best of that range. */
  private select(end: number, high: number): void {
    let low = this.ranked;
    while (low < high) {
      const pivot = this.partition(low, high, (low + high) >> 1);
      if (pivot === end - 1) return;
      if (pivot < end - 1) low = pivot + 1;
      else high = pivot - 1;
    }
  }

  /** Lomuto partition of [low, high] around the entry at pivotIndex; returns the pivot's final place. */
  private partition(low: number, high: number, pivotIndex: number): number {
    const { ids, scores } = this;
    this.swap(pivotIndex, high);
    const pivotScore = scores[high];
    const pivotId = ids[high];
    let store = low;
    for (let i = low; i < high; i++) {
      const score = scores[i];
      if (!(score > pivotScore || (score === pivotScore && ids[i] < pivotId))) continue;
      if (i !== store) this.swap(i, store);
      store++;
    }
    this.swap(store, high);
    return store;
  }

  private swap(a: number, b: number): void {
    const id = this.ids[a];
    this.ids[a] = this.ids[b];
    this.ids[b] = id;
    const score = this.scores[a];
    this.scores[a] = this.scores[b];
    this.scores[b] = score;
    const fill = this.fill[a];
    this.fill[a] = this.fill[b];
    this.fill[b] = fill;
  }

  /** Rearranges the entries into `order` (a list of current indexes; entries not listed are dropped). */
  reorder(order: readonly number[]): this {
    const ids = new Int32Array(Math.max(order.length, 16));
    const scores = new Float64Array(ids.length);
    const fill = new Uint8Array(ids.length);
    order.forEach((from, to) => {
      ids[to] = this.ids[from];
      scores[to] = this.scores[from];
      fill[to] = this.fill[from];
    });
    this.ids = ids;
    this.scores = scores;
    this.fill = fill;
    this.length = order.length;
    this.ranked = 0;
    return this;
  }

  truncate(length: number): this {
    this.length = Math.min(this.length, length);
    this.ranked = Math.min(this.ranked, this.length);
    return this;
  }

  /** A copy in a pool of the request's arena. */
  copy(): CandidatePool {
    const copy = requestPools.take(this.length);
    copy.append(this);
    return copy;
  }

  /** Empties the pool, making room for `capacity` entries without keeping the old ones. */
  clear(capacity: number): this {
    this.length = 0;
    this.ranked = 0;
    if (this.ids.length < capacity) {
      const grown = Math.max(capacity, this.ids.length * 2);
      this.ids = new Int32Array(grown);
      this.scores = new Float64Array(grown);
      this.fill = new Uint8Array(grown);
    }
    return this;
  }

  /** The live ids, as a view (valid until the pool changes). */
  idView(): Int32Array {
    return this.ids.subarray(0, this.length);
  }

  private grow(capacity: number): void {
    const ids = new Int32Array(capacity);
    ids.set(this.ids);
    const scores = new Float64Array(capacity);
    scores.set(this.scores);
    const fill = new Uint8Array(capacity);
    fill.set(this.fill);
    this.ids = ids;
    this.scores = scores;
    this.fill = fill;
  }
}

/**
 * The candidate pools of the request being ranked, recycled by the next request: the pipeline is
 * synchronous, and a few typed arrays allocated per stage and request cost more than the stages' work.
 * A pool taken here is valid until `recycle`, which only `recommendList` calls, as a request begins.
 */
export class PoolArena {
  private readonly pools: CandidatePool[] = [];
  private used = 0;

  take(capacity: number): CandidatePool {
    if (this.used === this.pools.length) this.pools.push(new CandidatePool(Math.max(capacity, 256)));
    return this.pools[this.used++].clear(capacity);
  }

  recycle(): void {
    this.used = 0;
  }
}

export const requestPools = new PoolArena();
