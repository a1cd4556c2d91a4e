/**
 * A reusable "seen" set over dense ids: marking is a stamp comparison, and starting a new set is a
 * counter increment, so a request never allocates or clears an array the size of the catalog.
 * The pipeline is synchronous, so one instance serves every request of the process.
 */
export class IdMarks {
  private stamps = new Int32Array(0);
  private generation = 0;

  /** Starts an empty set over ids 0..size-1. */
  begin(size: number): void {
    if (this.stamps.length < size) {
      const grown = new Int32Array(Math.max(size, this.stamps.length * 2));
      grown.set(this.stamps);
      this.stamps = grown;
    }
    this.generation++;
    if (this.generation === 0x7fffffff) {
      this.stamps.fill(0);
      this.generation = 1;
    }
  }

  /** Marks an id; false when it was marked already. */
  mark(id: number): boolean {
    if (this.stamps[id] === this.generation) return false;
    this.stamps[id] = this.generation;
    return true;
  }

  has(id: number): boolean {
    return this.stamps[id] === this.generation;
  }
}

/** Sparse score accumulation over dense ids without per-request allocation (same reasoning as IdMarks). */
export class ScoreAccumulator {
  private scores = new Float64Array(0);
  private readonly marks = new IdMarks();
  private touched: number[] = [];

  begin(size: number): void {
    if (this.scores.length < size) this.scores = new Float64Array(Math.max(size, this.scores.length * 2));
    this.marks.begin(size);
    this.touched = [];
  }

  add(id: number, score: number): void {
    if (this.marks.mark(id)) {
      this.scores[id] = score;
      this.touched.push(id);
    } else {
      this.scores[id] += score;
    }
  }

  /** Every id that received a score, with its total. */
  entries(): { ids: number[]; score: (id: number) => number } {
    return { ids: this.touched, score: (id) => this.scores[id] };
  }
}
