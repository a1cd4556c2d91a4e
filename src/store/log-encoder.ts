import { identityHash, identityOf } from './identity-hash.js';
import type { FreshKey } from './item-keys.js';
import type { StoredInteraction } from './rows.js';
import { REVENUE_COLUMNS } from './row-mapping.js';

/**
 * Rows of the interactions log, column by column: each interaction with its tenant, and what the store
 * keeps beside it. Its identity hash (identity-hash.ts) is not given: the encoder computes it.
 */
export interface LogBatch {
  /** Each row's tenant and interaction, in sequence order. */
  readonly rows: readonly (readonly [tenantId: string, event: StoredInteraction])[];
  /** The first row's sequence number; each row after it has the next one. */
  readonly firstSeq: number;
  /** Each row's item key (item-keys.ts). */
  readonly itemKeys: Int32Array;
  /** The item keys these rows were the first to use (tenant, item, key): the store keeps them with them. */
  readonly freshKeys: readonly FreshKey[];
}

/** The columns of `interactions` a log line holds, in its order, with their types (see `LineEncoder.line`). */
export const LOG_COLUMNS: readonly (readonly [string, string])[] = [
  ['tenant_id', 'VARCHAR'],
  ['event_id', 'VARCHAR'],
  ['user_id', 'VARCHAR'],
  ['session_id', 'VARCHAR'],
  ['item_id', 'VARCHAR'],
  ['type', 'VARCHAR'],
  ['weight', 'DOUBLE'],
  ['scenario_slug', 'VARCHAR'],
  ['country', 'VARCHAR'],
  ['ts', 'BIGINT'],
  ['received_at', 'BIGINT'],
  ['seq', 'BIGINT'],
  ['merged', 'BOOLEAN'],
  ['recomm_id', 'VARCHAR'],
  ['item_key', 'INTEGER'],
  ['identity_hash', 'BIGINT'],
  ...REVENUE_COLUMNS.map((name) => [name, 'DOUBLE'] as const),
];

/** The buffer's size to start with, and the most it keeps from one batch to the next. */
const INITIAL_BYTES = 1 << 20;
const KEPT_BYTES = 16 << 20;

/** Bytes a line takes besides its texts, at most: separators, numbers, the boolean. */
const LINE_OVERHEAD = 256;

const QUOTE = 0x22;
const COMMA = 0x2c;
const NEWLINE = 0x0a;
const RETURN = 0x0d;
const ZERO = 0x30;
const MINUS = 0x2d;
/** Safe integers are below 2^53, so below EIGHT_DIGITS squared: two int-sized halves. */
const EIGHT_DIGITS = 100_000_000;

/** A field that must be quoted: empty (unquoted empty is NULL), or holding a quote, comma or line break. */
const NEEDS_QUOTES = /^$|[",\n\r]/;

/**
 * Writes rows of the log as CSV lines (the columns of LOG_COLUMNS, in order) into one buffer,
 * reused from batch to batch. ASCII texts and integers are written byte by byte: lines made as strings
 * and then encoded took 17–20% of the event loop's time under bench/ingest (and more of the collector's),
 * this about 11%. Anything else takes Buffer#write. A null text is an empty
 * field, an empty text `""`, as DuckDB's CSV reader reads them with `allow_quoted_nulls = false`.
 */
export class LineEncoder {
  private bytes = Buffer.allocUnsafe(INITIAL_BYTES);
  private at = 0;
  /** Digits of an integer, last first. */
  private readonly digits = new Uint8Array(24);
  /**
   * The last `received_at` written and its digits: every row of a request has the same, and a flush
   * holds a few requests.
   */
  private receivedAt = -1;
  private receivedAtDigits: Uint8Array = new Uint8Array(0);
  /**
   * The identity of the last row and its hash's digits: most rows follow one of the same identity (four
   * in five under bench/ingest, whose sessions are runs of events).
   */
  private identity: string | undefined;
  private identityDigits: Uint8Array = new Uint8Array(0);

  /**
   * The lines of a batch, valid until the next call. It checks what the table's own types and NOT NULL
   * constraints would refuse, so that a row the store cannot take fails its write here rather than its
   * segment's move later.
   */
  encode({ rows, firstSeq, itemKeys }: LogBatch): Buffer {
    if (this.bytes.length > KEPT_BYTES) this.bytes = Buffer.allocUnsafe(INITIAL_BYTES);
    this.at = 0;
    for (let i = 0; i < rows.length; i++) this.line(rows[i][0], rows[i][1], firstSeq + i, itemKeys[i]);
    return this.bytes.subarray(0, this.at);
  }

  private line(tenantId: string, e: StoredInteraction, seq: number, itemKey: number): void {
    checkText(tenantId, 'tenant_id');
    checkText(e.itemId, 'item_id');
    checkText(e.type, 'type');
    if (!Number.isFinite(e.weight)) throw new TypeError('interactions.weight must be a finite number');
    checkNullableNumber(e.amount, 'amount');
    checkNullableNumber(e.price, 'price');
    checkNullableNumber(e.profit, 'profit');
    checkInteger(e.ts, 'ts');
    checkInteger(e.receivedAt, 'received_at');
    const length =
      tenantId.length +
      lengthOf(e.eventId) +
      lengthOf(e.userId) +
      lengthOf(e.sessionId) +
      e.itemId.length +
      e.type.length +
      lengthOf(e.scenarioSlug) +
      lengthOf(e.country) +
      lengthOf(e.recommId);
    // At most two quotes around a text and every character doubled (a quote), three bytes each.
    this.room(LINE_OVERHEAD + length * 6);
    // Each field is followed by a comma; the last one's becomes the line's end.
    this.text(tenantId);
    this.text(e.eventId);
    this.text(e.userId);
    this.text(e.sessionId);
    this.text(e.itemId);
    this.text(e.type);
    this.number(e.weight);
    this.text(e.scenarioSlug);
    this.text(e.country);
    this.integer(e.ts);
    this.receivedAtField(e.receivedAt);
    this.integer(seq);
    this.ascii(e.merged === true ? 'true' : 'false');
    this.text(e.recommId);
    this.integer(itemKey);
    this.identityHash(e);
    this.nullableNumber(e.amount);
    this.nullableNumber(e.price);
    this.nullableNumber(e.profit);
    this.bytes[this.at - 1] = NEWLINE;
  }

  private room(bytes: number): void {
    if (this.at + bytes <= this.bytes.length) return;
    this.bytes = Buffer.concat([this.bytes.subarray(0, this.at)], 2 * (this.at + bytes));
  }

  /** A text field and its comma. */
  private text(value: string | null | undefined): void {
    const { bytes } = this;
    if (value === null || value === undefined) {
      bytes[this.at++] = COMMA;
      return;
    }
    const start = this.at;
    let at = start;
    for (let i = 0; i < value.length; i++) {
      const code = value.charCodeAt(i);
      if (code >= 0x80 || code === QUOTE || code === COMMA || code === NEWLINE || code === RETURN) {
        const field = NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
        at = start + bytes.write(field, start);
        bytes[at++] = COMMA;
        this.at = at;
        return;
      }
      bytes[at++] = code;
    }
    if (at === start) {
      bytes[at++] = QUOTE;
      bytes[at++] = QUOTE;
    }
    bytes[at++] = COMMA;
    this.at = at;
  }

  /** A text known to be ASCII without separators (a number's or a boolean's), and its comma. */
  private ascii(value: string): void {
    const { bytes } = this;
    let at = this.at;
    for (let i = 0; i < value.length; i++) bytes[at++] = value.charCodeAt(i);
    bytes[at++] = COMMA;
    this.at = at;
  }

  /**
   * A safe integer, and its comma: its high and low eight digits in int arithmetic (a double's `%` is far
   * slower).
   */
  private integer(value: number): void {
    let rest = value;
    if (rest < 0) {
      this.bytes[this.at++] = MINUS;
      rest = -rest;
    }
    if (rest < EIGHT_DIGITS) this.digitsOf(rest, 1);
    else {
      const high = Math.floor(rest / EIGHT_DIGITS);
      this.digitsOf(high, 1);
      this.digitsOf(rest - high * EIGHT_DIGITS, 8);
    }
    this.bytes[this.at++] = COMMA;
  }

  /** The decimal digits of `value` (below 2^31), zero-padded to at least `width`. */
  private digitsOf(value: number, width: number): void {
    const { bytes, digits } = this;
    let rest = value | 0;
    let count = 0;
    do {
      const next = (rest / 10) | 0;
      digits[count++] = rest - next * 10;
      rest = next;
    } while (rest > 0);
    while (count < width) digits[count++] = 0;
    let at = this.at;
    while (count > 0) bytes[at++] = ZERO + digits[--count];
    this.at = at;
  }

  /** `received_at` and its comma, its digits copied when it is the one written last. */
  private receivedAtField(value: number): void {
    if (value === this.receivedAt) {
      this.copy(this.receivedAtDigits);
      return;
    }
    const start = this.at;
    this.integer(value);
    this.receivedAt = value;
    this.receivedAtDigits = this.written(start);
  }

  /** The row's identity hash and its comma, its digits copied when the last row had the same identity. */
  private identityHash(event: StoredInteraction): void {
    const identity = identityOf(event);
    if (identity === this.identity) {
      this.copy(this.identityDigits);
      return;
    }
    const start = this.at;
    this.ascii(String(identityHash(identity)));
    this.identity = identity;
    this.identityDigits = this.written(start);
  }

  /** A copy of what was written from `start` on: the buffer is written over by the next batch. */
  private written(start: number): Uint8Array {
    return new Uint8Array(this.bytes.subarray(start, this.at));
  }

  /** Writes bytes kept from an earlier row (they are few: a loop costs less than a copy's call). */
  private copy(kept: Uint8Array): void {
    const { bytes } = this;
    let at = this.at;
    for (let i = 0; i < kept.length; i++) bytes[at++] = kept[i];
    this.at = at;
  }

  /** A finite number or nothing (an empty field, NULL), and its comma. */
  private nullableNumber(value: number | null | undefined): void {
    if (value === null || value === undefined) this.bytes[this.at++] = COMMA;
    else this.number(value);
  }

  /** A finite number, and its comma. */
  private number(value: number): void {
    if (Number.isSafeInteger(value)) this.integer(value);
    else this.ascii(String(value));
  }
}

function lengthOf(value: string | null | undefined): number {
  return value === null || value === undefined ? 0 : value.length;
}

function checkText(value: unknown, column: string): void {
  if (typeof value !== 'string') throw new TypeError(`interactions.${column} must be a string`);
}

function checkNullableNumber(value: number | null | undefined, column: string): void {
  if (value !== null && value !== undefined && !Number.isFinite(value))
    throw new TypeError(`interactions.${column} must be a finite number`);
}

function checkInteger(value: number, column: string): void {
  if (!Number.isSafeInteger(value)) throw new TypeError(`interactions.${column} must be an integer`);
}
