/**
 * Candidates of one request as parallel typed arrays: dense item ids, scores, and whether a candidate
 * came from the popularity fill rather than from the algorithm itself.
 */
export class CandidatePool {
  ids: Int32Array;
  scores: Float64Array;
  fill: Uint8Array;
  length = 0;

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
    return this;
  }

  /** Stable: equal scores keep their order, so earlier candidates (the algorithm's) stay ahead. */
  sortByScore(): this {
    const order = Array.from({ length: this.length }, (_, i) => i);
    const scores = this.scores;
    order.sort((a, b) => scores[b] - scores[a] || a - b);
    return this.reorder(order);
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
    return this;
  }

  truncate(length: number): this {
    this.length = Math.min(this.length, length);
    return this;
  }

  copy(): CandidatePool {
    const copy = new CandidatePool(Math.max(this.length, 16));
    copy.append(this);
    return copy;
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
