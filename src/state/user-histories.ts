import type { InteractionType } from '../store/rows.js';

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
}

/**
 * The events of every history of a tenant, column by column: a history owns one run of slots, its
 * events in time order at its start and room to grow after them. 17 bytes a slot.
 */
export interface HistoryColumns {
  readonly items: Int32Array;
  readonly types: Uint8Array;
  readonly ts: Float64Array;
  readonly weights: Float32Array;
}

/** Slots a new history gets; a full one grows by half (after dropping what left its windows). */
const FIRST_SLOTS = 4;
/** Once abandoned slots are this share of the slots handed out, the histories are packed anew. */
const GARBAGE_SHARE = 0.25;
/** Below this many slots handed out, abandoned ones are not worth packing. */
const PACK_MIN_SLOTS = 4_096;

function columnsOf(slots: number): HistoryColumns {
  return {
    items: new Int32Array(slots),
    types: new Uint8Array(slots),
    ts: new Float64Array(slots),
    weights: new Float32Array(slots),
  };
}

/**
 * Copies slots `from` to `to` (exclusive) of `source` to `target`, starting at slot `at`: in place when
 * they are the same columns (the runs may overlap).
 */
function copySlots(
  source: HistoryColumns,
  target: HistoryColumns,
  from: number,
  to: number,
  at: number,
): void {
  if (source === target) {
    source.items.copyWithin(at, from, to);
    source.types.copyWithin(at, from, to);
    source.ts.copyWithin(at, from, to);
    source.weights.copyWithin(at, from, to);
    return;
  }
  target.items.set(source.items.subarray(from, to), at);
  target.types.set(source.types.subarray(from, to), at);
  target.ts.set(source.ts.subarray(from, to), at);
  target.weights.set(source.weights.subarray(from, to), at);
}

/**
 * One identity's events in time order: slots `start` to `end` (exclusive) of its tenant's history
 * columns. Only what the windows need is kept: 30 days of every type and 90 days of purchases; the rest
 * is dropped when its slots fill. Indexes into the columns are absolute, and valid until the next event
 * of any history (which may move the columns): read them, never keep them.
 */
export class UserHistory {
  start = 0;
  length = 0;
  /** Slots owned from `start`. */
  capacity = 0;
  /** Bumps on every added event, so cached recommendations of this identity can tell they are stale. */
  version = 0;

  constructor(private readonly owner: UserHistories) {}

  /** The tenant's history columns, as they are now. */
  get columns(): HistoryColumns {
    return this.owner.columns;
  }

  get end(): number {
    return this.start + this.length;
  }

  /** Distinct items purchased in the last 90 days. */
  purchasedItems(now: number): Set<number> {
    const { items, types, ts } = this.owner.columns;
    const purchased = new Set<number>();
    const since = now - PURCHASE_WINDOW_MS;
    for (let i = this.start; i < this.end; i++) {
      if (types[i] === PURCHASE && ts[i] >= since) purchased.add(items[i]);
    }
    return purchased;
  }

  /** Index (into the columns) of the first event inside the 30-day history window. */
  windowStart(now: number): number {
    const { ts } = this.owner.columns;
    const since = now - HISTORY_WINDOW_MS;
    let i = this.start;
    while (i < this.end && ts[i] < since) i++;
    return i;
  }

  /** The events held, oldest first (for tests and inspection). */
  events(): HistoryEvent[] {
    const { items, types, ts, weights } = this.owner.columns;
    const events: HistoryEvent[] = [];
    for (let i = this.start; i < this.end; i++) {
      events.push({ item: items[i], type: types[i], ts: ts[i], weight: weights[i] });
    }
    return events;
  }
}

/**
 * Every identity's history (key: userId, else sessionId) for one tenant, in one set of typed columns
 * rather than arrays of their own: a history costs its events' slots and one small object, where five
 * typed arrays per identity cost some 700 bytes before their first event.
 */
export class UserHistories {
  private readonly byIdentity = new Map<string, UserHistory>();
  columns: HistoryColumns = columnsOf(1024);
  /** Slots handed out, from 0: every history's run lies below. */
  private used = 0;
  /** Slots below `used` that no history owns any more (moved or deleted histories left them). */
  private abandoned = 0;
  private eventCount = 0;

  /** @param packMinSlots below this many slots handed out, abandoned ones are left as they are */
  constructor(private readonly packMinSlots = PACK_MIN_SLOTS) {}

  get(identity: string): UserHistory | undefined {
    return this.byIdentity.get(identity);
  }

  add(identity: string, event: HistoryEvent, now: number): void {
    let history = this.byIdentity.get(identity);
    if (!history) {
      history = new UserHistory(this);
      this.byIdentity.set(identity, history);
    }
    if (history.length === history.capacity) this.makeRoom(history, now);
    const { items, types, ts, weights } = this.columns;
    // Events mostly arrive in order; an older one is moved into place from the end.
    const first = history.start;
    const end = history.end;
    let at = end;
    while (at > first && ts[at - 1] > event.ts) at--;
    if (at < end) copySlots(this.columns, this.columns, at, end, at + 1);
    items[at] = event.item;
    types[at] = event.type;
    ts[at] = event.ts;
    weights[at] = event.weight;
    history.length++;
    history.version++;
    this.eventCount++;
  }

  delete(identity: string): void {
    const history = this.byIdentity.get(identity);
    if (!history) return;
    this.byIdentity.delete(identity);
    this.abandoned += history.capacity;
    this.eventCount -= history.length;
  }

  /** Identities with a history. */
  get size(): number {
    return this.byIdentity.size;
  }

  /** Events held over all histories. */
  get events(): number {
    return this.eventCount;
  }

  /** Slots handed out to histories, and of those, slots no history owns any more. */
  get slots(): { used: number; abandoned: number } {
    return { used: this.used, abandoned: this.abandoned };
  }

  /** Bytes of the columns (allocated, so including room not yet handed out). */
  get bytes(): number {
    const { items, types, ts, weights } = this.columns;
    return items.byteLength + types.byteLength + ts.byteLength + weights.byteLength;
  }

  /** Drops the history's events that left their window; when none did, gives it more slots. */
  private makeRoom(history: UserHistory, now: number): void {
    if (history.length > 0) this.dropExpired(history, now);
    if (history.length < history.capacity) return;
    const wanted = history.capacity === 0 ? FIRST_SLOTS : history.capacity + (history.capacity >> 1);
    if (history.capacity > 0 && history.start + history.capacity === this.used) {
      // The last run grows where it is.
      this.reserve(history.start + wanted);
      this.used = history.start + wanted;
      history.capacity = wanted;
      return;
    }
    if (this.abandoned + history.capacity > GARBAGE_SHARE * this.used && this.used >= this.packMinSlots) {
      this.pack(history, wanted);
      return;
    }
    const start = this.used;
    this.reserve(start + wanted);
    copySlots(this.columns, this.columns, history.start, history.end, start);
    this.abandoned += history.capacity;
    history.start = start;
    history.capacity = wanted;
    this.used = start + wanted;
  }

  /** Drops events that left their window (30 days, 90 for purchases), keeping the order. */
  private dropExpired(history: UserHistory, now: number): void {
    const { items, types, ts, weights } = this.columns;
    let kept = history.start;
    for (let i = history.start; i < history.end; i++) {
      const age = now - ts[i];
      const window = types[i] === PURCHASE ? PURCHASE_WINDOW_MS : HISTORY_WINDOW_MS;
      if (age > window) continue;
      if (kept !== i) {
        items[kept] = items[i];
        types[kept] = types[i];
        ts[kept] = ts[i];
        weights[kept] = weights[i];
      }
      kept++;
    }
    this.eventCount -= history.end - kept;
    history.length = kept - history.start;
  }

  /** Makes the columns hold at least `slots` slots, growing them by half when they must grow. */
  private reserve(slots: number): void {
    if (slots <= this.columns.items.length) return;
    const grown = columnsOf(Math.max(slots, Math.ceil(this.columns.items.length * 1.5)));
    copySlots(this.columns, grown, 0, this.used, 0);
    this.columns = grown;
  }

  /**
   * Copies every history into new columns, each run right after the one before, with a quarter of its
   * events as room (`growing` gets `slots`): the slots abandoned by moved and deleted histories are gone.
   */
  private pack(growing: UserHistory, slots: number): void {
    const histories = [...this.byIdentity.values()];
    const roomOf = (history: UserHistory) =>
      history === growing ? slots : Math.max(history.length + (history.length >> 2), FIRST_SLOTS);
    let total = 0;
    for (const history of histories) total += roomOf(history);
    const packed = columnsOf(Math.max(1024, total + (total >> 3)));
    let at = 0;
    for (const history of histories) {
      copySlots(this.columns, packed, history.start, history.end, at);
      history.start = at;
      history.capacity = roomOf(history);
      at += history.capacity;
    }
    this.columns = packed;
    this.used = at;
    this.abandoned = 0;
  }
}

/** Whether an event at `ts` of this type is still inside the window that keeps it. */
export function insideWindow(type: number, ts: number, now: number): boolean {
  return now - ts <= (type === PURCHASE ? PURCHASE_WINDOW_MS : HISTORY_WINDOW_MS);
}
