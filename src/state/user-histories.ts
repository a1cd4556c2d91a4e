import { sharedArray } from '../linalg/growable.js';
import type { InteractionType } from '../store/rows.js';

export const DAY_MS = 86_400_000;
export const HISTORY_WINDOW_MS = 30 * DAY_MS;
export const PURCHASE_WINDOW_MS = 90 * DAY_MS;

export const TYPE_CODES: Record<InteractionType, number> = {
  view: 0,
  cart: 1,
  purchase: 2,
  rating: 3,
  bookmark: 4,
};
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

/**
 * Slots a new history gets; a full one grows by half (after dropping what left its windows). Doubling
 * moved histories less often (copies took a third of the time histories took under bench/ingest), but
 * held 76 MB of slots for bench/memory's 2 million interactions against 45 MB.
 */
const FIRST_SLOTS = 4;
/** Once abandoned slots are this share of the slots handed out, the histories are packed anew. */
const GARBAGE_SHARE = 0.25;
/** Below this many slots handed out, abandoned ones are not worth packing. */
const PACK_MIN_SLOTS = 4_096;

/**
 * Every history's place, by the index the owner gave it: its start, its length and its version, three
 * words a history, shared with the ranking thread like the columns.
 */
const META_WORDS = 3;
const START = 0;
const LENGTH = 1;
const VERSION = 2;

/** The columns and places of a tenant's histories, as the thread that keeps them shares them. */
export interface SharedHistories {
  columns: HistoryColumns;
  meta: Int32Array;
}

function columnsOf(slots: number): HistoryColumns {
  return {
    items: sharedArray(Int32Array, slots),
    types: sharedArray(Uint8Array, slots),
    ts: sharedArray(Float64Array, slots),
    weights: sharedArray(Float32Array, slots),
  };
}

function metaOf(words: number): Int32Array {
  return sharedArray(Int32Array, words);
}

/**
 * Runs up to this many slots are copied slot by slot: most runs are a few events (most histories that
 * move to a larger run of slots are short), and four typed-array calls cost more than that (bench/ingest).
 */
const SHORT_RUN = 32;

/**
 * Copies slots `from` to `to` (exclusive) of `source` to `target`, starting at slot `at`. Within the same
 * columns the two runs never overlap: a history moves to slots past every run (makeRoom).
 */
function copySlots(
  source: HistoryColumns,
  target: HistoryColumns,
  from: number,
  to: number,
  at: number,
): void {
  const count = to - from;
  if (count <= SHORT_RUN) {
    for (let i = 0; i < count; i++) {
      target.items[at + i] = source.items[from + i];
      target.types[at + i] = source.types[from + i];
      target.ts[at + i] = source.ts[from + i];
      target.weights[at + i] = source.weights[from + i];
    }
    return;
  }
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
export abstract class HistoryView {
  abstract readonly start: number;
  abstract readonly length: number;
  /** Bumps on every added event, so cached recommendations of this identity can tell they are stale. */
  abstract readonly version: number;
  /** The tenant's history columns, as they are now. */
  abstract readonly columns: HistoryColumns;

  get end(): number {
    return this.start + this.length;
  }

  /** Distinct items purchased in the last 90 days. */
  purchasedItems(now: number): Set<number> {
    const { items, types, ts } = this.columns;
    const purchased = new Set<number>();
    const since = now - PURCHASE_WINDOW_MS;
    for (let i = this.start; i < this.end; i++) {
      if (types[i] === PURCHASE && ts[i] >= since) purchased.add(items[i]);
    }
    return purchased;
  }

  /** Index (into the columns) of the first event inside the 30-day history window. */
  windowStart(now: number): number {
    const { ts } = this.columns;
    const since = now - HISTORY_WINDOW_MS;
    let i = this.start;
    while (i < this.end && ts[i] < since) i++;
    return i;
  }

  /** The events held, oldest first (for tests and inspection). */
  events(): HistoryEvent[] {
    const { items, types, ts, weights } = this.columns;
    const events: HistoryEvent[] = [];
    for (let i = this.start; i < this.end; i++) {
      events.push({ item: items[i], type: types[i], ts: ts[i], weight: weights[i] });
    }
    return events;
  }
}

/** A history as the thread that keeps it sees it: its place lives in the shared meta words. */
export class UserHistory extends HistoryView {
  /** Slots owned from `start`. */
  capacity = 0;

  constructor(
    private readonly owner: UserHistories,
    /** Where its place is in the meta words (docs/memory.md). */
    readonly index: number,
  ) {
    super();
  }

  get columns(): HistoryColumns {
    return this.owner.columns;
  }

  get start(): number {
    return this.owner.meta[this.index * META_WORDS + START];
  }

  set start(start: number) {
    this.owner.meta[this.index * META_WORDS + START] = start;
  }

  get length(): number {
    return this.owner.meta[this.index * META_WORDS + LENGTH];
  }

  /** Stored atomically: a reader that sees the new length sees the events written before it. */
  set length(length: number) {
    Atomics.store(this.owner.meta, this.index * META_WORDS + LENGTH, length);
  }

  get version(): number {
    return this.owner.meta[this.index * META_WORDS + VERSION];
  }

  set version(version: number) {
    this.owner.meta[this.index * META_WORDS + VERSION] = version;
  }
}

/** One history as a reader found it: its place read once, so one request reads one consistent run. */
class HistorySnapshot extends HistoryView {
  constructor(
    readonly columns: HistoryColumns,
    readonly start: number,
    readonly length: number,
    readonly version: number,
  ) {
    super();
  }
}

/** What ranking reads of a tenant's histories, in the thread that keeps them or in one that reads them. */
export interface HistoriesView {
  get(identity: string): HistoryView | undefined;
  delete(identity: string): void;
  /** The identities with a history, in the order they got one. */
  identities(): IterableIterator<string>;
  /** Identities with a history. */
  readonly size: number;
  /** Events held over all histories (0 where another thread keeps them). */
  readonly events: number;
  /** Bytes this thread holds alone (0 for a reader: the columns are another's). */
  readonly bytes: number;
}

/**
 * The histories another thread keeps (a UserHistories), read through the memory it shares: the reader
 * only learns which index each identity has (sent with every event) and which arrays are current.
 */
export class SharedHistoriesReader implements HistoriesView {
  private readonly indexes = new Map<string, number>();
  private current: SharedHistories = { columns: columnsOf(0), meta: metaOf(0) };

  /** Reads from these arrays from now on (the keeping thread replaced them). */
  replace(histories: SharedHistories): void {
    this.current = histories;
  }

  /** The identity's history has this index (the keeping thread gave it). */
  bind(identity: string, index: number): void {
    this.indexes.set(identity, index);
  }

  get(identity: string): HistoryView | undefined {
    const index = this.indexes.get(identity);
    if (index === undefined) return undefined;
    const { columns, meta } = this.current;
    const at = index * META_WORDS;
    if (at + META_WORDS > meta.length) return undefined;
    // The length first: the events below it were written before it was stored.
    const length = Atomics.load(meta, at + LENGTH);
    return new HistorySnapshot(columns, meta[at + START], length, meta[at + VERSION]);
  }

  delete(identity: string): void {
    this.indexes.delete(identity);
  }

  identities(): IterableIterator<string> {
    return this.indexes.keys();
  }

  get size(): number {
    return this.indexes.size;
  }

  get events(): number {
    return 0;
  }

  get bytes(): number {
    return 0;
  }
}

/**
 * Every identity's history (key: userId, else sessionId) for one tenant, in one set of typed columns
 * rather than arrays of their own: a history costs its events' slots, three meta words and one small
 * object, where five typed arrays per identity cost some 700 bytes before their first event. Columns
 * and meta words are shared memory: the ranking thread reads them (SharedHistoriesReader) while only
 * this thread writes. Whenever they must move (they grow, or are packed), both are copied and the
 * reader is handed the new pair, so what it reads until then stays whole.
 */
export class UserHistories implements HistoriesView {
  private readonly byIdentity = new Map<string, UserHistory>();
  columns: HistoryColumns = columnsOf(1024);
  meta: Int32Array = metaOf(1024 * META_WORDS);
  private nextIndex = 0;
  private shared?: (histories: SharedHistories) => void;
  /** Slots handed out, from 0: every history's run lies below. */
  private used = 0;
  /** Slots below `used` that no history owns any more (moved or deleted histories left them). */
  private abandoned = 0;
  private eventCount = 0;
  /** The identity `add` added to last, and its history (see `add`). */
  private lastIdentity: string | undefined;
  private lastHistory: UserHistory | undefined;

  /** @param packMinSlots below this many slots handed out, abandoned ones are left as they are */
  constructor(private readonly packMinSlots = PACK_MIN_SLOTS) {}

  /** Hands the columns and meta words to `listener` now and whenever they are replaced. */
  share(listener: (histories: SharedHistories) => void): void {
    this.shared = listener;
    listener({ columns: this.columns, meta: this.meta });
  }

  get(identity: string): UserHistory | undefined {
    return this.byIdentity.get(identity);
  }

  identities(): IterableIterator<string> {
    return this.byIdentity.keys();
  }

  /**
   * Adds an event (its fields, not an object of them: one per ingested event) to the identity's history;
   * returns the history's index (a reader binds to it).
   */
  add(identity: string, item: number, type: number, time: number, weight: number, now: number): number {
    // Events mostly come in runs of one identity's: the last history is at hand without a lookup.
    let history = identity === this.lastIdentity ? this.lastHistory : this.byIdentity.get(identity);
    if (!history) {
      const index = this.nextIndex++;
      if ((index + 1) * META_WORDS > this.meta.length) this.replace(this.columns, this.meta.length * 2);
      history = new UserHistory(this, index);
      this.byIdentity.set(identity, history);
    }
    this.lastIdentity = identity;
    this.lastHistory = history;
    if (history.length === history.capacity) this.makeRoom(history, now);
    const { items, types, ts, weights } = this.columns;
    // The history's place, read once (what UserHistory's accessors read).
    const { meta } = this;
    const place = history.index * META_WORDS;
    const first = meta[place + START];
    const length = meta[place + LENGTH];
    // Events mostly arrive in order; an older one is moved into place from the end, the events after it
    // moving up one slot as they are passed.
    let at = first + length;
    while (at > first && ts[at - 1] > time) {
      items[at] = items[at - 1];
      types[at] = types[at - 1];
      ts[at] = ts[at - 1];
      weights[at] = weights[at - 1];
      at--;
    }
    items[at] = item;
    types[at] = type;
    ts[at] = time;
    weights[at] = weight;
    meta[place + VERSION]++;
    // Stored atomically, last: a reader that sees the new length sees the events written before it.
    Atomics.store(meta, place + LENGTH, length + 1);
    this.eventCount++;
    return history.index;
  }

  /**
   * Makes `columns` current with a copy of the meta words (`metaWords` long), and hands both to the
   * reader: the arrays it reads until it gets them are no longer written.
   */
  private replace(columns: HistoryColumns, metaWords = this.meta.length): void {
    const meta = metaOf(metaWords);
    meta.set(this.meta.subarray(0, Math.min(this.meta.length, metaWords)));
    this.meta = meta;
    this.columns = columns;
    this.shared?.({ columns, meta });
  }

  delete(identity: string): void {
    const history = this.byIdentity.get(identity);
    if (!history) return;
    this.byIdentity.delete(identity);
    if (identity === this.lastIdentity) {
      this.lastIdentity = undefined;
      this.lastHistory = undefined;
    }
    this.abandoned += history.capacity;
    this.eventCount -= history.length;
  }

  /** Identities with a history. */
  get size(): number {
    return this.byIdentity.size;
  }

  /** Indexes given to histories so far: a history added later gets this one or a higher one. */
  get indexesGiven(): number {
    return this.nextIndex;
  }

  /** Events held over all histories. */
  get events(): number {
    return this.eventCount;
  }

  /** Slots handed out to histories, and of those, slots no history owns any more. */
  get slots(): { used: number; abandoned: number } {
    return { used: this.used, abandoned: this.abandoned };
  }

  /** Bytes of the columns and meta words (allocated, so including room not yet handed out). */
  get bytes(): number {
    const { items, types, ts, weights } = this.columns;
    return items.byteLength + types.byteLength + ts.byteLength + weights.byteLength + this.meta.byteLength;
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
    this.replace(grown);
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
    const from = this.columns;
    // New meta words first: the places change, and the reader's must keep matching its columns.
    this.replace(packed);
    let at = 0;
    for (const history of histories) {
      copySlots(from, packed, history.start, history.end, at);
      history.start = at;
      history.capacity = roomOf(history);
      at += history.capacity;
    }
    this.used = at;
    this.abandoned = 0;
  }
}

/** Whether an event at `ts` of this type is still inside the window that keeps it. */
export function insideWindow(type: number, ts: number, now: number): boolean {
  return now - ts <= (type === PURCHASE ? PURCHASE_WINDOW_MS : HISTORY_WINDOW_MS);
}
