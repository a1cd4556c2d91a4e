import { ensureCapacity } from '../state/growable.js';

/**
 * Interaction counts per item over a sliding time window, globally and (optionally) per country.
 * Events sit in a time-ordered queue; those that leave the window are subtracted as time advances,
 * so reads are always current without rescanning histories.
 */
export class WindowedCounts {
  private queueTs = new Float64Array(1024);
  private queueItems = new Int32Array(1024);
  private queueCountries = new Uint16Array(1024);
  private head = 0;
  private tail = 0;
  /** Per item, all countries together. */
  global = new Float64Array(64);
  globalTotal = 0;
  private readonly perCountry = new Map<number, Float64Array>();
  private readonly countryTotals = new Map<number, number>();
  /** Bumps on every change, for caches of rankings derived from the counts. */
  version = 0;

  constructor(
    readonly windowMs: number,
    private readonly byCountry: boolean,
  ) {}

  add(item: number, country: number, ts: number, now: number): void {
    this.advance(now);
    if (now - ts > this.windowMs) return;
    this.insert(item, country, ts);
    this.global = ensureCapacity(this.global, item + 1, Float64Array);
    this.global[item]++;
    this.globalTotal++;
    if (this.byCountry && country !== 0) {
      const counts = ensureCapacity(
        this.perCountry.get(country) ?? new Float64Array(64),
        item + 1,
        Float64Array,
      );
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
    while (this.head < this.tail && this.queueTs[this.head] < since) {
      const item = this.queueItems[this.head];
      const country = this.queueCountries[this.head];
      this.global[item]--;
      this.globalTotal--;
      if (this.byCountry && country !== 0) {
        this.perCountry.get(country)![item]--;
        this.countryTotals.set(country, this.countryTotals.get(country)! - 1);
      }
      this.head++;
      changed = true;
    }
    if (changed) this.version++;
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

  countryCounts(country: number): Float64Array | undefined {
    return this.perCountry.get(country);
  }

  /** Keeps the queue in time order; a late event is moved into place from the end. */
  private insert(item: number, country: number, ts: number): void {
    if (this.tail === this.queueTs.length) this.makeRoom();
    let at = this.tail;
    while (at > this.head && this.queueTs[at - 1] > ts) at--;
    if (at < this.tail) {
      this.queueTs.copyWithin(at + 1, at, this.tail);
      this.queueItems.copyWithin(at + 1, at, this.tail);
      this.queueCountries.copyWithin(at + 1, at, this.tail);
    }
    this.queueTs[at] = ts;
    this.queueItems[at] = item;
    this.queueCountries[at] = country;
    this.tail++;
  }

  private makeRoom(): void {
    const live = this.tail - this.head;
    if (this.head > 0 && live <= this.queueTs.length / 2) {
      this.queueTs.copyWithin(0, this.head, this.tail);
      this.queueItems.copyWithin(0, this.head, this.tail);
      this.queueCountries.copyWithin(0, this.head, this.tail);
    } else {
      const size = this.queueTs.length * 2;
      const ts = new Float64Array(size);
      const items = new Int32Array(size);
      const countries = new Uint16Array(size);
      ts.set(this.queueTs.subarray(this.head, this.tail));
      items.set(this.queueItems.subarray(this.head, this.tail));
      countries.set(this.queueCountries.subarray(this.head, this.tail));
      this.queueTs = ts;
      this.queueItems = items;
      this.queueCountries = countries;
    }
    this.head = 0;
    this.tail = live;
  }
}
