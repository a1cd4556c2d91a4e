import { INTEGER, LIST, VARCHAR, type DuckDBAppender, type DuckDBConnection } from '@duckdb/node-api';
import type { EventLog } from './event-log.js';
import type { RecordLog } from './record-log.js';
import { identityHash, identityOf } from './identity-hash.js';
import { closeAppender } from './appenders.js';
import { commitWrites, type PendingWrite, type Write } from './group-commit.js';
import { statementsOf } from './duckdb/statements.js';
import type { SettledLogs } from './duckdb/reads.js';
import { ItemKeys, appendItemKey } from './item-keys.js';
import {
  RowBuffer,
  type StoredImpression,
  type StoredInteraction,
  type StoredItem,
  type StoredUser,
} from './rows.js';

export type { Write };

/** The last sequence number stored in each event table. */
export interface EventSequences {
  interactions: number;
  impressions: number;
}

/** How a write may be scheduled (see `WriteQueue.submit`). */
export interface SubmitOptions {
  /**
   * True for a write whose rows are interactions and nothing else (interaction ingestion): such writes are
   * batched apart from the others, so that a batch of them goes whole to the interactions log, and one of
   * item or user upserts beside them whole to the records log, rather than both to a commit of the store.
   */
  interactionsOnly?: boolean;
}

interface Pending extends PendingWrite {
  interactionsOnly: boolean;
}

/**
 * A bounded write refused because taking it would put the queue over its limit of records: nothing of it
 * was queued, so it can be sent again (docs/guide.md, "Ingestion", backpressure).
 */
export class WriteQueueFullError extends Error {
  constructor(
    readonly queued: number,
    readonly limit: number,
  ) {
    super(`the write queue holds ${queued} records (limit ${limit})`);
    this.name = 'WriteQueueFullError';
  }
}

/** Told about the queue's work, for metrics. */
export interface WriteQueueObserver {
  /** A transaction was committed after `seconds` (from BEGIN to COMMIT), holding `writes` writes. */
  committed(seconds: number, writes: number): void;
  /** A bounded write was refused. */
  refused(): void;
  /** A move of a log into the store failed; its rows stay in the log for the next one. */
  moveFailed(error: unknown): void;
}

/** Told whether what the queue writes to the data dir succeeds (see disk-full.ts). */
export interface StorageObserver {
  /** A commit, an append to a log or a move of one succeeded. */
  wrote(): void;
  /** One of those, or an exclusive task, failed with `error`. */
  failed(error: unknown): void;
}

/** A task that runs alone, between two flushes (see `exclusive`). */
interface Exclusive {
  task: (connection: DuckDBConnection) => Promise<unknown>;
  key: string | undefined;
  /** Whether the logs are moved into the store before the task runs. */
  afterLog: boolean;
  /** Every caller that shares this run. */
  waiters: { resolve: (value: unknown) => void; reject: (error: unknown) => void }[];
}

type Queued = Pending | Exclusive;

/** Rows of an interactions log segment at which it is moved at once rather than on the timer. */
const SEGMENT_ROWS = 200_000;
/**
 * How long rows wait in a log, at most, before a move takes them (unless a reader asks sooner): the
 * interactions log's, and the records log's. A move costs DuckDB a fixed 20 ms (interactions) to 70 ms
 * (upserts) beside live traffic, however few rows it holds (docs/guide.md, "Ingestion"): at one a second
 * they took a tenth of a core. What reads the store's items and users (the lake's catalog exports,
 * analytics, identity) moves the records log first, so its rows may wait longer.
 */
const MOVE_AFTER_MS = 5_000;
const RECORDS_MOVE_AFTER_MS = 30_000;
/** Rows the logs may hold unmoved before bounded writes are refused (503 OVERLOADED), per record of the limit. */
const LOG_BEHIND = 20;

function isExclusive(entry: Queued): entry is Exclusive {
  return 'task' in entry;
}

/**
 * Group commit: every write queued while a transaction is being written joins the next one, so concurrent
 * requests share one DuckDB commit (one WAL sync) and each still answers only after its rows are durable.
 */
export class WriteQueue {
  /** Writes and exclusive tasks, in the order they were queued. */
  private pending: Queued[] = [];
  private flushing: Promise<void> | null = null;
  /** The last sequence number given to an event of each table (a rolled-back one leaves a gap). */
  private readonly sequence: EventSequences;
  private committedListener: (tenantIds: Set<string>) => void = () => undefined;
  /** Records of bounded writes queued or being committed, and the most it takes (see `submit`). */
  private records = 0;
  private limit = Infinity;
  /** Writes submitted and not yet answered. */
  private writes = 0;
  private observer: WriteQueueObserver | undefined;
  private storage: StorageObserver = { wrote: () => undefined, failed: () => undefined };
  /**
   * Appenders by table, kept from one commit to the next (creating one costs about as much as appending a
   * few hundred rows); closed before an exclusive task, after a failed commit and when the store closes.
   * Each holds about 180 KB of DuckDB's memory that only a full garbage collection of its JS object gives
   * back: an appender per flush made resident memory swing by 200 MB under steady writes (docs/memory.md).
   */
  private readonly appenders = new Map<string, DuckDBAppender>();
  /**
   * Whatever uses the connection takes it in turn: the flush loop's commits and exclusive tasks, and the
   * moves of the logs, which run beside the flush loop's appends to them.
   */
  private connectionTurn: Promise<unknown> = Promise.resolve();
  /** The move of the logs that is due, if one is. */
  private moveTimer: NodeJS.Timeout | undefined;
  /** When the oldest row the records log holds unmoved was appended (epoch ms). */
  private recordsSince: number | undefined;
  /** The logs' files are closed (`closeLog`): no timer moves them any more. */
  private closedLogs = false;

  constructor(
    private connection: DuckDBConnection,
    /** Where batches of interactions only are made durable first (see event-log.ts). */
    private readonly log: EventLog,
    /** Where batches of item and user upserts only are made durable first (see record-log.ts). */
    private readonly recordLog: RecordLog,
    sequences: EventSequences = { interactions: 0, impressions: 0 },
    /** The items' keys the store holds (see item-keys.ts). */
    private readonly itemKeys = new ItemKeys(),
  ) {
    this.sequence = { ...sequences };
  }

  /**
   * Queues `write`. A write of `records` records (ingestion) is bounded: when the queue already holds
   * records and this write would take it over its limit, it is refused at once with WriteQueueFullError
   * and nothing of it is queued. Once queued, a write is committed (or fails) like any other.
   */
  submit<T>(write: Write<T>, records?: number, options: SubmitOptions = {}): Promise<T> {
    const counted = records ?? 0;
    if (counted > 0 && this.records > 0 && this.records + counted > this.limit) {
      this.observer?.refused();
      return Promise.reject(new WriteQueueFullError(this.records, this.limit));
    }
    const unmoved = this.log.unmoved + this.recordLog.unmoved;
    if (counted > 0 && unmoved > LOG_BEHIND * this.limit) {
      // The store cannot take the log's rows as fast as they come (or not at all): hold ingestion back.
      this.observer?.refused();
      return Promise.reject(new WriteQueueFullError(unmoved, LOG_BEHIND * this.limit));
    }
    this.records += counted;
    this.writes++;
    return new Promise<T>((resolve, reject) => {
      const done = () => {
        this.records -= counted;
        this.writes--;
      };
      this.pending.push({
        write,
        interactionsOnly: options.interactionsOnly ?? false,
        resolve: (value) => {
          done();
          resolve(value as T);
        },
        reject: (error) => {
          done();
          reject(error);
        },
      });
      this.startFlushing();
    });
  }

  /**
   * The most records bounded writes may hold in the queue (at least one write is always taken); the logs
   * may hold LOG_BEHIND times as many rows not yet moved into the store.
   */
  setLimit(records: number): void {
    this.limit = records;
  }

  /**
   * Records of bounded writes, and writes of any kind, queued or being committed; and rows durable in the
   * logs, not yet moved into the store.
   */
  depth(): { records: number; writes: number; limit: number; logRows: number } {
    const logRows = this.log.unmoved + this.recordLog.unmoved;
    return { records: this.records, writes: this.writes, limit: this.limit, logRows };
  }

  /** Rows the logs hold, durable and not yet moved into the store. */
  get unmoved(): { interactions: number; records: number } {
    return { interactions: this.log.unmoved, records: this.recordLog.unmoved };
  }

  /** Item ids it keeps a key of, over all tenants (see item-keys.ts). */
  get itemKeyCount(): number {
    return this.itemKeys.size;
  }

  /** Forgets the keys of deleted items (see ItemKeys.forget); only from an exclusive task. */
  forgetItemKeys(tenantId: string, itemIds: Iterable<string>): void {
    this.itemKeys.forget(tenantId, itemIds);
  }

  observe(observer: WriteQueueObserver): void {
    this.observer = observer;
  }

  /** Tells `observer` whether writes to the data dir succeed (the store's DiskState). */
  watchStorage(observer: StorageObserver): void {
    this.storage = observer;
  }

  /**
   * Runs `task` alone: after the writes queued before this call are committed (or failed) and before any
   * queued after it is built. A task with a `key` that is still waiting to run is shared by later calls
   * with the same key; it then moves behind everything queued so far, so that it still runs after each
   * caller's earlier writes. Once it runs, a call with its key queues a new run. The task is given the write
   * connection, to use only until it settles (no transaction is open on it). Unless `afterLog` is false,
   * the logs are moved into the store first (a task that opens the store again cannot wait for a move on
   * the store it replaces).
   */
  exclusive<T>(
    task: (connection: DuckDBConnection) => Promise<T>,
    key?: string,
    afterLog = true,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const waiter = { resolve: resolve as (value: unknown) => void, reject };
      const index = key === undefined ? -1 : this.pending.findIndex((e) => isExclusive(e) && e.key === key);
      if (index >= 0) {
        const [shared] = this.pending.splice(index, 1) as Exclusive[];
        shared.waiters.push(waiter);
        this.pending.push(shared);
      } else {
        this.pending.push({ task, key, afterLog, waiters: [waiter] });
      }
      this.startFlushing();
    });
  }

  /** Writes go through `connection` from now on; call it only from an exclusive task. */
  replaceConnection(connection: DuckDBConnection): void {
    this.closeAppenders();
    this.connection = connection;
  }

  /** Closes the appenders kept between commits; call it once nothing is queued (the store closes). */
  releaseAppenders(): void {
    this.closeAppenders();
  }

  /** Told, after each commit, which tenants' rows it held (the lake export follows it). */
  onCommitted(listener: (tenantIds: Set<string>) => void): void {
    this.committedListener = listener;
  }

  /** Resolves once everything queued so far is committed or has failed. */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private startFlushing(): void {
    if (!this.flushing) this.flushing = this.flushLoop();
  }

  /**
   * Moves what the logs hold into the store, unless they hold nothing; the store then holds every write
   * acknowledged so far. Readers of the store call it first (see Store.read). A reader of the event tables
   * alone asks for `events`: the records log (item and user upserts) then waits for its timer, and its
   * move, tens of milliseconds of DuckDB for a few rows, is not paid at every read.
   */
  settled(logs: SettledLogs = 'all'): Promise<void> {
    const records = logs === 'all' && this.recordLog.unmoved > 0;
    if (logs === 'none' || (this.log.unmoved === 0 && !records)) return Promise.resolve();
    return this.onConnection(() => this.moveLogs(records));
  }

  /**
   * Stops moving the logs on a timer and closes their files (rows they still hold are moved at the next
   * start); call it once the queue is drained and settled.
   */
  async closeLog(): Promise<void> {
    this.closedLogs = true;
    clearTimeout(this.moveTimer);
    this.moveTimer = undefined;
    await this.log.seal();
    await this.recordLog.seal();
  }

  /** Runs `task` once whatever uses the connection before it is done. */
  private onConnection<T>(task: () => Promise<T>): Promise<T> {
    const turn = this.connectionTurn.then(task);
    this.connectionTurn = turn.catch(() => undefined);
    return turn;
  }

  /** Moves both logs into the store, or the interactions log alone; only on the connection's turn. */
  private async moveLogs(records = true): Promise<void> {
    if (records) await this.move(this.recordLog);
    await this.move(this.log);
  }

  /** Moves one log into the store; only on the connection's turn. */
  private async move(log: EventLog | RecordLog): Promise<void> {
    if (log.unmoved === 0) return;
    let tenants: Set<string>;
    try {
      tenants = await log.moveAll(this.connection);
    } catch (error) {
      this.storage.failed(error);
      this.observer?.moveFailed(error);
      throw error;
    }
    this.storage.wrote();
    if (log === this.recordLog && log.unmoved === 0) this.recordsSince = undefined;
    if (tenants.size > 0) this.committedListener(tenants);
  }

  /**
   * After an append to a log: a full segment is moved now, else the interactions log within
   * MOVE_AFTER_MS and the records log within RECORDS_MOVE_AFTER_MS.
   */
  private moveSoon(): void {
    const move = () => {
      clearTimeout(this.moveTimer);
      this.moveTimer = undefined;
      const records =
        this.recordsSince !== undefined &&
        Date.now() - this.recordsSince >= RECORDS_MOVE_AFTER_MS - MOVE_AFTER_MS;
      // A move that fails leaves its segment in the log; the next one (or the next reader) tries again.
      this.onConnection(() => this.moveLogs(records))
        .catch(() => undefined)
        // Upserts left waiting are due later, appends or not.
        .finally(() => {
          if (this.recordsSince !== undefined && this.moveTimer === undefined && !this.closedLogs)
            this.moveTimer = setTimeout(move, MOVE_AFTER_MS).unref();
        });
    };
    if (this.log.activeRows >= SEGMENT_ROWS) move();
    else if (!this.moveTimer) this.moveTimer = setTimeout(move, MOVE_AFTER_MS).unref();
  }

  private async flushLoop(): Promise<void> {
    // Let the requests that arrived in this turn of the event loop join the first batch too.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.pending.length > 0) {
      const first = this.pending[0];
      if (isExclusive(first)) {
        this.pending.shift();
        await this.onConnection(() =>
          runExclusive(first, async () => {
            if (first.afterLog) await this.moveLogs();
            this.closeAppenders();
            return first.task(this.connection).catch((error: unknown) => {
              this.storage.failed(error);
              throw error;
            });
          }),
        );
        continue;
      }
      // The writes up to the next exclusive task, in two batches: interactions only (to the interactions
      // log), and the others (item and user upserts to the records log, anything else to the store).
      const stop = this.pending.findIndex(isExclusive);
      const before = (stop < 0 ? this.pending : this.pending.slice(0, stop)) as Pending[];
      this.pending = stop < 0 ? [] : this.pending.slice(stop);
      const others = before.filter((entry) => !entry.interactionsOnly);
      const interactions = before.filter((entry) => entry.interactionsOnly);
      if (others.length > 0) await this.commitBatch(others);
      if (interactions.length > 0) await this.commitBatch(interactions);
    }
    this.flushing = null;
  }

  /** Builds and commits `batch`, and answers its writes. */
  private commitBatch(batch: Pending[]): Promise<void> {
    return commitWrites(batch, (rows, writes) => this.store(rows, writes));
  }

  private async store(rows: RowBuffer, writes: number): Promise<void> {
    try {
      if (interactionsOnly(rows)) await this.appendToLog(rows, writes);
      else if (recordsOnly(rows)) await this.appendRecords(rows, writes);
      else await this.onConnection(() => this.commitToStore(rows, writes));
    } catch (error) {
      this.storage.failed(error);
      throw error;
    }
    this.storage.wrote();
  }

  /** Makes a batch of interactions only durable in the log (see event-log.ts). */
  private async appendToLog(rows: RowBuffer, writes: number): Promise<void> {
    const started = performance.now();
    const { interactions } = rows;
    const itemKeys = new Int32Array(interactions.length);
    for (let i = 0; i < interactions.length; i++) {
      const [tenantId, event] = interactions[i];
      itemKeys[i] = this.itemKeys.keyOf(tenantId, event.itemId);
    }
    const firstSeq = this.sequence.interactions + 1;
    this.sequence.interactions += interactions.length;
    try {
      // The keys these rows were first to use: the log keeps them for the move (event-log.ts).
      await this.log.append({ rows: interactions, firstSeq, itemKeys, freshKeys: this.itemKeys.uncommitted });
    } catch (error) {
      this.itemKeys.rolledBack();
      throw error;
    }
    // The keys these rows were first to use are durable with them; the move stores them (event-log.ts).
    this.itemKeys.committed();
    this.observer?.committed((performance.now() - started) / 1000, writes);
    this.moveSoon();
  }

  /** Makes a batch of item and user upserts only durable in the records log (see record-log.ts). */
  private async appendRecords(rows: RowBuffer, writes: number): Promise<void> {
    const started = performance.now();
    await this.recordLog.append({ items: rows.items.values(), users: rows.users.values() });
    this.recordsSince ??= Date.now();
    this.observer?.committed((performance.now() - started) / 1000, writes);
    this.moveSoon();
  }

  /**
   * Commits a batch to the store: one that may touch items or users after what the records log holds,
   * and one with events after what the interactions log holds (the store holds a prefix of each log,
   * record-log.ts and event-log.ts). Only on the connection's turn; nothing gives item keys meanwhile, so
   * the fresh ones are this batch's events' (none without events).
   */
  private async commitToStore(rows: RowBuffer, writes: number): Promise<void> {
    if (rows.items.size > 0 || rows.users.size > 0 || rows.ops.length > 0) await this.move(this.recordLog);
    if (!eventsFree(rows)) await this.move(this.log);
    const started = performance.now();
    await this.connection.run('BEGIN TRANSACTION');
    try {
      await this.writeRows(rows);
      await this.connection.run('COMMIT');
    } catch (error) {
      // Rows an appender still holds belong to the failed transaction: dropped, never flushed on their own.
      this.closeAppenders(true);
      await this.connection.run('ROLLBACK').catch(() => undefined);
      this.itemKeys.rolledBack();
      throw error;
    }
    this.itemKeys.committed();
    this.observer?.committed((performance.now() - started) / 1000, writes);
    this.committedListener(tenantsOf(rows));
  }

  private async writeRows(rows: RowBuffer): Promise<void> {
    if (rows.items.size) {
      await this.append('items_stage', rows.items.values(), appendItem, 'temp');
      await this.connection.run('INSERT OR REPLACE INTO items SELECT * FROM temp.items_stage');
      await this.connection.run('DELETE FROM temp.items_stage');
    }
    if (rows.users.size) {
      await this.append('users_stage', rows.users.values(), appendUser, 'temp');
      await this.connection.run('INSERT OR REPLACE INTO users SELECT * FROM temp.users_stage');
      await this.connection.run('DELETE FROM temp.users_stage');
    }
    if (rows.interactions.length)
      await this.append('interactions', rows.interactions, (a, tenantId, event) => {
        appendInteraction(a, tenantId, event);
        a.appendBigInt(BigInt(++this.sequence.interactions));
        a.appendBoolean(event.merged === true);
        appendNullable(a, event.recommId ?? null);
        a.appendInteger(this.itemKeys.keyOf(tenantId, event.itemId));
        a.appendBigInt(identityHash(identityOf(event)));
        appendNullableDouble(a, event.amount);
        appendNullableDouble(a, event.price);
        appendNullableDouble(a, event.profit);
      });
    if (rows.impressions.length)
      await this.append('impressions', rows.impressions, (a, tenantId, event) => {
        appendImpression(a, tenantId, event);
        a.appendBigInt(BigInt(++this.sequence.impressions));
        const keys = event.itemIds.map((itemId) => this.itemKeys.keyOf(tenantId, itemId));
        a.appendList(keys, INTEGER_LIST);
      });
    // The keys these events were the first to name, durable with them.
    const fresh = this.itemKeys.uncommitted.map((key) => [key[0], key] as const);
    if (fresh.length) await this.append('item_keys', fresh, (a, _tenantId, key) => appendItemKey(a, key));
    for (const op of rows.ops)
      for (const statement of statementsOf(op)) await this.connection.run(statement.sql, statement.params);
  }

  private async append<R>(
    table: string,
    rows: Iterable<readonly [string, R]>,
    appendRow: (appender: DuckDBAppender, tenantId: string, row: R) => void,
    catalog?: string,
  ): Promise<void> {
    const key = `${catalog ?? ''}.${table}`;
    let appender = this.appenders.get(key);
    if (!appender) {
      appender = await this.connection.createAppender(table, 'main', catalog);
      this.appenders.set(key, appender);
    }
    for (const [tenantId, row] of rows) {
      appendRow(appender, tenantId, row);
      appender.endRow();
    }
    appender.flushSync();
  }

  /** Closes the appenders kept; `discard`: first drop the rows they hold (their transaction failed). */
  private closeAppenders(discard = false): void {
    for (const appender of this.appenders.values()) closeAppender(appender, discard);
    this.appenders.clear();
  }
}

/**
 * Runs `run` (an exclusive task, after what must come before it) and answers everyone who shares the
 * task; a failure fails only them.
 */
async function runExclusive(entry: Exclusive, run: () => Promise<unknown>): Promise<void> {
  try {
    const value = await run();
    for (const waiter of entry.waiters) waiter.resolve(value);
  } catch (error) {
    for (const waiter of entry.waiters) waiter.reject(error);
  }
}

function tenantsOf(rows: RowBuffer): Set<string> {
  const tenants = new Set<string>();
  for (const [tenantId] of rows.items.values()) tenants.add(tenantId);
  for (const [tenantId] of rows.users.values()) tenants.add(tenantId);
  for (const [tenantId] of rows.interactions) tenants.add(tenantId);
  for (const [tenantId] of rows.impressions) tenants.add(tenantId);
  return tenants;
}

/** Rows the interactions log takes: interactions, and nothing else to write (none at all is fine too). */
function interactionsOnly(rows: RowBuffer): boolean {
  return (
    rows.items.size === 0 && rows.users.size === 0 && rows.impressions.length === 0 && rows.ops.length === 0
  );
}

/** Rows of no event table and no statement: they need no move of the interactions log first, nor give item keys. */
function eventsFree(rows: RowBuffer): boolean {
  return rows.interactions.length === 0 && rows.impressions.length === 0 && rows.ops.length === 0;
}

/** Rows the records log takes: item or user upserts, and nothing else. */
function recordsOnly(rows: RowBuffer): boolean {
  return (rows.items.size > 0 || rows.users.size > 0) && eventsFree(rows);
}

function appendNullable(appender: DuckDBAppender, value: string | null): void {
  if (value === null) appender.appendNull();
  else appender.appendVarchar(value);
}

function appendNullableDouble(appender: DuckDBAppender, value: number | null | undefined): void {
  if (value === null || value === undefined) appender.appendNull();
  else appender.appendDouble(value);
}

function appendItem(a: DuckDBAppender, tenantId: string, item: StoredItem): void {
  a.appendVarchar(tenantId);
  a.appendVarchar(item.externalId);
  appendNullable(a, item.category);
  a.appendVarchar(JSON.stringify(item.attributes));
  appendNullable(a, item.expiresAt);
  a.appendBoolean(item.available);
  a.appendBoolean(item.feedManaged);
  a.appendBigInt(BigInt(item.createdAt));
  a.appendBigInt(BigInt(item.updatedAt));
}

function appendUser(a: DuckDBAppender, tenantId: string, user: StoredUser): void {
  a.appendVarchar(tenantId);
  a.appendVarchar(user.externalId);
  a.appendVarchar(JSON.stringify(user.attributes));
  a.appendBigInt(BigInt(user.createdAt));
  a.appendBigInt(BigInt(user.updatedAt));
}

function appendInteraction(a: DuckDBAppender, tenantId: string, e: StoredInteraction): void {
  a.appendVarchar(tenantId);
  appendNullable(a, e.eventId);
  appendNullable(a, e.userId);
  appendNullable(a, e.sessionId);
  a.appendVarchar(e.itemId);
  a.appendVarchar(e.type);
  a.appendDouble(e.weight);
  appendNullable(a, e.scenarioSlug);
  appendNullable(a, e.country);
  a.appendBigInt(BigInt(e.ts));
  a.appendBigInt(BigInt(e.receivedAt));
}

const VARCHAR_LIST = LIST(VARCHAR);
const INTEGER_LIST = LIST(INTEGER);

function appendImpression(a: DuckDBAppender, tenantId: string, e: StoredImpression): void {
  a.appendVarchar(tenantId);
  appendNullable(a, e.eventId);
  appendNullable(a, e.userId);
  a.appendList(e.itemIds, VARCHAR_LIST);
  appendNullable(a, e.scenarioSlug);
  appendNullable(a, e.country);
  appendNullable(a, e.recommId);
  a.appendBigInt(BigInt(e.ts));
  a.appendBigInt(BigInt(e.receivedAt));
}
