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

/**
 * Sums of scores by dense id for the few hundred to few thousand ids one request touches, in a small
 * open-addressing table: arrays the size of the catalog would be touched at random and miss the CPU
 * caches on every access. An id can also be excluded, after which adding to it has no effect.
 * Stamped like IdMarks, so starting over clears nothing.
 */
export class ScoreAccumulator {
  private keys = new Int32Array(1024);
  private sums = new Float64Array(1024);
  private stamps = new Int32Array(1024);
  private generation = 0;
  private shift = 22;
  /** Slots in the order their ids were first seen. */
  private slots = new Int32Array(512);
  private used = 0;

  /** Starts empty, with room for about `expected` distinct ids. */
  begin(expected: number): void {
    let capacity = this.keys.length;
    while (capacity < expected * 2) capacity *= 2;
    if (capacity > this.keys.length) {
      this.keys = new Int32Array(capacity);
      this.sums = new Float64Array(capacity);
      this.stamps = new Int32Array(capacity);
      this.slots = new Int32Array(capacity / 2);
    }
    this.shift = 32 - Math.log2(capacity);
    this.used = 0;
    this.generation++;
    if (this.generation === 0x7fffffff) {
      this.stamps.fill(0);
      this.generation = 1;
    }
  }

  add(id: number, score: number): void {
    if (this.used === this.slots.length) this.grow();
    const slot = this.slotOf(id);
    if (this.stamps[slot] === this.generation) {
      this.sums[slot] += score;
      return;
    }
    this.claim(slot, id, score);
  }

  exclude(id: number): void {
    if (this.used === this.slots.length) this.grow();
    const slot = this.slotOf(id);
    if (this.stamps[slot] === this.generation) this.sums[slot] = -Infinity;
    else this.claim(slot, id, -Infinity);
  }

  /** How many ids were seen (excluded ones included). */
  get size(): number {
    return this.used;
  }

  /** The k-th id seen, and its sum (-Infinity when excluded). */
  idAt(k: number): number {
    return this.keys[this.slots[k]];
  }

  sumAt(k: number): number {
    return this.sums[this.slots[k]];
  }

  /** The slot holding `id` this generation, or the free slot where it goes. */
  private slotOf(id: number): number {
    const mask = this.keys.length - 1;
    let slot = Math.imul(id, 0x9e3779b1) >>> this.shift;
    while (this.stamps[slot] === this.generation && this.keys[slot] !== id) slot = (slot + 1) & mask;
    return slot;
  }

  private claim(slot: number, id: number, score: number): void {
    this.stamps[slot] = this.generation;
    this.keys[slot] = id;
    this.sums[slot] = score;
    this.slots[this.used++] = slot;
  }

  /** More ids than `begin` expected: rehash into a table twice the size, keeping the order seen. */
  private grow(): void {
    const ids = Array.from({ length: this.used }, (_, k) => this.idAt(k));
    const sums = Array.from({ length: this.used }, (_, k) => this.sumAt(k));
    this.begin(this.keys.length);
    ids.forEach((id, k) => this.claim(this.slotOf(id), id, sums[k]));
  }
}
