import { ensureCapacity, growTo, sharedArray } from '../linalg/growable.js';

/**
 * The counts a thread reads, in memory shared between threads: the event-loop thread counts, the
 * ranking thread reads the same arrays (docs/memory.md). An array that must grow is replaced, and the
 * reader is handed the new set.
 */
export interface SharedCounts {
  /** [0]: the version, [1]: events in the window over all countries. */
  header: Int32Array;
  /** Per item, all countries together (whole numbers: 4 bytes an item rather than 8). */
  global: Int32Array;
  /** Per country code, per item. */
  perCountry: Map<number, Int32Array>;
  /** Per country code, events in the window. */
  countryTotals: Int32Array;
}

/** What ranking reads of windowed counts. */
export interface CountsReader {
  readonly windowMs: number;
  readonly version: number;
  readonly globalTotal: number;
  /** Events inside the window (0 where they are counted elsewhere). */
  readonly events: number;
  /** Bytes held for this reader alone: the shared counts are another's. */
  readonly bytes: number;
  /** Drops the events that left the window by `now`, where they are counted here. */
  advance(now: number): void;
  count(item: number): number;
  countryCount(country: number, item: number): number;
  countryTotal(country: number): number;
}

const VERSION = 0;
const GLOBAL_TOTAL = 1;

function sharedInt32(length: number): Int32Array {
  return sharedArray(Int32Array, length);
}

function ensureShared(array: Int32Array, needed: number): Int32Array {
  return growTo(array, needed, sharedInt32);
}

/** The reads of counts over a set of shared arrays, for the thread that counts and for one that reads. */
abstract class CountsOver {
  constructor(
    readonly windowMs: number,
    protected counts: SharedCounts,
  ) {}

  /** Bumps on every change, for caches of rankings derived from the counts. */
  get version(): number {
    return this.counts.header[VERSION];
  }

  get globalTotal(): number {
    return this.counts.header[GLOBAL_TOTAL];
  }

  count(item: number): number {
    const { global } = this.counts;
    return item < global.length ? global[item] : 0;
  }

  countryCount(country: number, item: number): number {
    const perItem = this.counts.perCountry.get(country);
    return perItem && item < perItem.length ? perItem[item] : 0;
  }

  countryTotal(country: number): number {
    const totals = this.counts.countryTotals;
    return country < totals.length ? totals[country] : 0;
  }
}

/** Reads counts shared by another thread's WindowedCounts, which alone adds and expires events. */
export class SharedCountsReader extends CountsOver implements CountsReader {
  constructor(windowMs: number) {
    super(windowMs, {
      header: new Int32Array(2),
      global: new Int32Array(0),
      perCountry: new Map(),
      countryTotals: new Int32Array(0),
    });
  }

  /** Reads from `shared` from now on (the counting thread replaced an array). */
  replace(shared: SharedCounts): void {
    this.counts = shared;
  }

  get events(): number {
    return 0;
  }

  get bytes(): number {
    return 0;
  }

  advance(_now: number): void {
    // The counting thread expires events (WorkerRanker advances its counts before each request).
  }
}

/**
 * Interaction counts per item over a sliding time window, globally and (optionally) per country.
 * Events wait in a min-heap by time; those that leave the window are subtracted as time advances, so
 * reads are always current without rescanning histories, and events arriving in any time order cost
 * O(log n) each. The heap stays with this thread; the counts are in shared memory (`SharedCounts`), and
 * `shared` is told each time one of their arrays is replaced.
 */
export class WindowedCounts extends CountsOver implements CountsReader {
  private heapTs = new Float64Array(1024);
  private heapItems = new Int32Array(1024);
  /** Only when counting by country. */
  private heapCountries = new Uint16Array(0);
  private heapSize = 0;
  /** Told the counts whenever one of their arrays is replaced (and once at `share`). */
  private shared?: (counts: SharedCounts) => void;

  constructor(
    windowMs: number,
    private readonly byCountry: boolean,
  ) {
    super(windowMs, {
      header: sharedInt32(2),
      global: sharedInt32(64),
      perCountry: new Map(),
      countryTotals: sharedInt32(0),
    });
    if (byCountry) this.heapCountries = new Uint16Array(1024);
  }

  /** Hands the counts to `listener` now and whenever an array of them is replaced. */
  share(listener: (counts: SharedCounts) => void): void {
    this.shared = listener;
    listener(this.snapshot());
  }

  /** The arrays as they are now: later replacements change a snapshot's reader nothing. */
  private snapshot(): SharedCounts {
    return Object.assign({}, this.counts, { perCountry: new Map(this.counts.perCountry) });
  }

  add(item: number, country: number, ts: number, now: number): void {
    this.advance(now);
    if (now - ts > this.windowMs) return;
    this.push(item, country, ts);
    const { counts } = this;
    let replaced = false;
    if (item >= counts.global.length) {
      counts.global = ensureShared(counts.global, item + 1);
      replaced = true;
    }
    counts.global[item]++;
    counts.header[GLOBAL_TOTAL]++;
    if (this.byCountry && country !== 0) {
      let perItem = counts.perCountry.get(country) ?? sharedInt32(0);
      if (item >= perItem.length) {
        counts.perCountry.set(country, (perItem = ensureShared(perItem, item + 1)));
        replaced = true;
      }
      perItem[item]++;
      if (country >= counts.countryTotals.length) {
        counts.countryTotals = ensureShared(counts.countryTotals, country + 1);
        replaced = true;
      }
      counts.countryTotals[country]++;
    }
    counts.header[VERSION]++;
    if (replaced) this.shared?.(this.snapshot());
  }

  /** Drops the events that left the window by `now`. */
  advance(now: number): void {
    const since = now - this.windowMs;
    const { counts } = this;
    let changed = false;
    while (this.heapSize > 0 && this.heapTs[0] < since) {
      const item = this.heapItems[0];
      const country = this.byCountry ? this.heapCountries[0] : 0;
      counts.global[item]--;
      counts.header[GLOBAL_TOTAL]--;
      if (country !== 0) {
        counts.perCountry.get(country)![item]--;
        counts.countryTotals[country]--;
      }
      this.popOldest();
      changed = true;
    }
    if (changed) counts.header[VERSION]++;
  }

  /** Events inside the window. */
  get events(): number {
    return this.heapSize;
  }

  /** Bytes of its typed arrays, the shared counts included. */
  get bytes(): number {
    const { counts } = this;
    let bytes =
      this.heapTs.byteLength +
      this.heapItems.byteLength +
      this.heapCountries.byteLength +
      counts.header.byteLength +
      counts.global.byteLength +
      counts.countryTotals.byteLength;
    for (const perItem of counts.perCountry.values()) bytes += perItem.byteLength;
    return bytes;
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
