import { ensureCapacity } from '../state/growable.js';

/**
 * Interaction counts per item over a sliding time window, globally and (optionally) per country.
 * Events wait in a min-heap by time; those that leave the window are subtracted as time advances, so
 * reads are always current without rescanning histories, and events arriving in any time order cost
 * O(log n) each.
 */
export class WindowedCounts {
  private heapTs = new Float64Array(1024);
  private heapItems = new Int32Array(1024);
  /** Only when counting by country. */
  private heapCountries = new Uint16Array(0);
  private heapSize = 0;
  /** Per item, all countries together (whole numbers: 4 bytes an item rather than 8). */
  global = new Int32Array(64);
  globalTotal = 0;
  private readonly perCountry = new Map<number, Int32Array>();
  private readonly countryTotals = new Map<number, number>();
  /** Bumps on every change, for caches of rankings derived from the counts. */
  version = 0;

  constructor(
    readonly windowMs: number,
    private readonly byCountry: boolean,
  ) {
    if (byCountry) this.heapCountries = new Uint16Array(1024);
  }

  add(item: number, country: number, ts: number, now: number): void {
    this.advance(now);
    if (now - ts > this.windowMs) return;
    this.push(item, country, ts);
    this.global = ensureCapacity(this.global, item + 1, Int32Array);
    this.global[item]++;
    this.globalTotal++;
    if (this.byCountry && country !== 0) {
      const counts = ensureCapacity(this.perCountry.get(country) ?? new Int32Array(64), item + 1, Int32Array);
      this.perCountry.set(country, counts);
      counts[item]++;
      this.countryTotals.set(country, (this.countryTotals.get(country) ?? 0) + 1);
    }
    this.version++;
  }

  /** Drops the events that left the window by `now`. */
  advance(now: number): void {
    const since = now - this.windowMs;
    let changed = false;
    while (this.heapSize > 0 && this.heapTs[0] < since) {
      const item = this.heapItems[0];
      const country = this.byCountry ? this.heapCountries[0] : 0;
      this.global[item]--;
      this.globalTotal--;
      if (country !== 0) {
        this.perCountry.get(country)![item]--;
        this.countryTotals.set(country, this.countryTotals.get(country)! - 1);
      }
      this.popOldest();
      changed = true;
    }
    if (changed) this.version++;
  }

  /** Events inside the window. */
  get events(): number {
    return this.heapSize;
  }

  /** Bytes of its typed arrays. */
  get bytes(): number {
    let bytes =
      this.heapTs.byteLength +
      this.heapItems.byteLength +
      this.heapCountries.byteLength +
      this.global.byteLength;
    for (const counts of this.perCountry.values()) bytes += counts.byteLength;
    return bytes;
  }

  count(item: number): number {
    return item < this.global.length ? this.global[item] : 0;
  }

  countryCount(country: number, item: number): number {
    const counts = this.perCountry.get(country);
    return counts && item < counts.length ? counts[item] : 0;
  }

  countryTotal(country: number): number {
    return this.countryTotals.get(country) ?? 0;
  }

  private push(item: number, country: number, ts: number): void {
    const needed = this.heapSize + 1;
    this.heapTs = ensureCapacity(this.heapTs, needed, Float64Array);
    this.heapItems = ensureCapacity(this.heapItems, needed, Int32Array);
    if (this.byCountry) this.heapCountries = ensureCapacity(this.heapCountries, needed, Uint16Array);
    let at = this.heapSize++;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (this.heapTs[parent] <= ts) break;
      this.move(parent, at);
      at = parent;
    }
    this.heapTs[at] = ts;
    this.heapItems[at] = item;
    if (this.byCountry) this.heapCountries[at] = country;
  }

  private popOldest(): void {
    const last = --this.heapSize;
    if (last === 0) return;
    const ts = this.heapTs[last];
    const item = this.heapItems[last];
    const country = this.byCountry ? this.heapCountries[last] : 0;
    let at = 0;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= last) break;
      if (child + 1 < last && this.heapTs[child + 1] < this.heapTs[child]) child++;
      if (this.heapTs[child] >= ts) break;
      this.move(child, at);
      at = child;
    }
    this.heapTs[at] = ts;
    this.heapItems[at] = item;
    if (this.byCountry) this.heapCountries[at] = country;
  }

  private move(from: number, to: number): void {
    this.heapTs[to] = this.heapTs[from];
    this.heapItems[to] = this.heapItems[from];
    if (this.byCountry) this.heapCountries[to] = this.heapCountries[from];
  }
}
