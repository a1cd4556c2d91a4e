import type { InteractionType } from '../store/rows.js';
import { ensureCapacity } from './growable.js';

export const DAY_MS = 86_400_000;
export const HISTORY_WINDOW_MS = 30 * DAY_MS;
export const PURCHASE_WINDOW_MS = 90 * DAY_MS;

export const TYPE_CODES: Record<InteractionType, number> = { view: 0, cart: 1, purchase: 2, rating: 3 };
export const PURCHASE = TYPE_CODES.purchase;

export interface HistoryEvent {
  item: number;
  type: number;
  ts: number;
  weight: number;
  /** Index into the tenant's country table; 0 is global. */
  country: number;
}

/**
 * One identity's events in time order, as parallel typed arrays. Only what the windows need is kept:
 * 30 days of every type and 90 days of purchases; the rest is compacted away as the arrays fill.
 */
export class UserHistory {
  length = 0;
  /** Bumps on every added event, so cached recommendations of this identity can tell they are stale. */
  version = 0;
  items = new Int32Array(8);
  types = new Uint8Array(8);
  ts = new Float64Array(8);
  weights = new Float32Array(8);
  countries = new Uint16Array(8);

  add(event: HistoryEvent, now: number): void {
    if (this.length === this.items.length) this.compact(now);
    const needed = this.length + 1;
    this.items = ensureCapacity(this.items, needed, Int32Array);
    this.types = ensureCapacity(this.types, needed, Uint8Array);
    this.ts = ensureCapacity(this.ts, needed, Float64Array);
    this.weights = ensureCapacity(this.weights, needed, Float32Array);
    this.countries = ensureCapacity(this.countries, needed, Uint16Array);
    // Events mostly arrive in order; an older one is moved into place from the end.
    let at = this.length;
    while (at > 0 && this.ts[at - 1] > event.ts) at--;
    if (at < this.length) {
      this.items.copyWithin(at + 1, at, this.length);
      this.types.copyWithin(at + 1, at, this.length);
      this.ts.copyWithin(at + 1, at, this.length);
      this.weights.copyWithin(at + 1, at, this.length);
      this.countries.copyWithin(at + 1, at, this.length);
    }
    this.items[at] = event.item;
    this.types[at] = event.type;
    this.ts[at] = event.ts;
    this.weights[at] = event.weight;
    this.countries[at] = event.country;
    this.length = needed;
    this.version++;
  }

  /** Drops events that left their window. */
  compact(now: number): void {
    let kept = 0;
    for (let i = 0; i < this.length; i++) {
      const age = now - this.ts[i];
      const window = this.types[i] === PURCHASE ? PURCHASE_WINDOW_MS : HISTORY_WINDOW_MS;
      if (age > window) continue;
      if (kept !== i) {
        this.items[kept] = this.items[i];
        this.types[kept] = this.types[i];
        this.ts[kept] = this.ts[i];
        this.weights[kept] = this.weights[i];
        this.countries[kept] = this.countries[i];
      }
      kept++;
    }
    this.length = kept;
  }

  /** Distinct items purchased in the last 90 days. */
  purchasedItems(now: number): Set<number> {
    const purchased = new Set<number>();
    const since = now - PURCHASE_WINDOW_MS;
    for (let i = 0; i < this.length; i++) {
      if (this.types[i] === PURCHASE && this.ts[i] >= since) purchased.add(this.items[i]);
    }
    return purchased;
  }

  /** Index of the first event inside the 30-day history window. */
  windowStart(now: number): number {
    const since = now - HISTORY_WINDOW_MS;
    let i = 0;
    while (i < this.length && this.ts[i] < since) i++;
    return i;
  }
}

/** Every identity's history (key: userId, else sessionId) for one tenant. */
export class UserHistories {
  private readonly byIdentity = new Map<string, UserHistory>();

  get(identity: string): UserHistory | undefined {
    return this.byIdentity.get(identity);
  }

  add(identity: string, event: HistoryEvent, now: number): void {
    let history = this.byIdentity.get(identity);
    if (!history) {
      history = new UserHistory();
      this.byIdentity.set(identity, history);
    }
    history.add(event, now);
  }

  delete(identity: string): void {
    this.byIdentity.delete(identity);
  }

  get size(): number {
    return this.byIdentity.size;
  }
}

/** Whether an event at `ts` of this type is still inside the window that keeps it. */
export function insideWindow(type: number, ts: number, now: number): boolean {
  return now - ts <= (type === PURCHASE ? PURCHASE_WINDOW_MS : HISTORY_WINDOW_MS);
}
