import pg from 'pg';
import { RowBuffer } from '../rows.js';
import type { StoreWrites } from '../store.js';
import {
  WriteQueueFullError,
  type StorageObserver,
  type SubmitOptions,
  type Write,
  type WriteQueueObserver,
} from '../write-queue.js';
import { writeFlush } from './flush.js';
import { commitWrites, type PendingWrite } from '../group-commit.js';

type Pending = PendingWrite;

/** A task that runs alone, between two flushes, in its place in the queue (see `exclusive`). */
interface Exclusive {
  task: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

function isExclusive(entry: Pending | Exclusive): entry is Exclusive {
  return 'task' in entry;
}

/**
 * The PostgreSQL store's write queue, with the DuckDB queue's group commit (src/store/write-queue.ts):
 * writes are queued and run at flush time, in order, into one RowBuffer and one scratch space; a flush is
 * one transaction (flush.ts), and every write queued while it commits joins the next one. Each write's
 * apply step runs, in order, only once the transaction committed: with `synchronous_commit` on (see
 * PgStore.open), a write answered 2xx is durable on the server, whichever daemon takes the next one
 * (docs/guide.md, "Ingestion": a 2xx is never lost). A flush that fails is tried again write by write,
 * so that one bad write does not fail its neighbours.
 *
 * There are no local logs: DuckDB's queue makes batches durable in logs on the data dir before moving them
 * into the store, but here the store of record is the only place a write is durable (migrations.ts), so
 * `SubmitOptions.interactionsOnly` changes nothing and `settled` has nothing to wait for.
 */
export class PgWriteQueue implements StoreWrites {
  private pending: (Pending | Exclusive)[] = [];
  private flushing: Promise<void> | null = null;
  private committedListener: (tenantIds: Set<string>) => void = () => undefined;
  /** Records of bounded writes queued or being committed, and the most it takes (see `submit`). */
  private records = 0;
  private limit = Infinity;
  /** Writes submitted and not yet answered. */
  private writes = 0;
  private observer: WriteQueueObserver | undefined;
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    /** Told whether the server takes the flushes (the store's disk state). */
    private readonly storage: StorageObserver,
    /** The store's id in the change log: its followers pass over its own changes (change-log.ts). */
    private readonly origin = '',
  ) {}

  /**
   * Queues `write`. A write of `records` records (ingestion) is bounded: when the queue already holds
   * records and this write would take it over its limit, it is refused at once with WriteQueueFullError
   * and nothing of it is queued (docs/guide.md, "Ingestion", backpressure).
   */
  submit<T>(write: Write<T>, records?: number, _options?: SubmitOptions): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    const counted = records ?? 0;
    if (counted > 0 && this.records > 0 && this.records + counted > this.limit) {
      this.observer?.refused();
      return Promise.reject(new WriteQueueFullError(this.records, this.limit));
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
        resolve: (value) => {
          done();
          resolve(value as T);
        },
        reject: (error) => {
          done();
          reject(error);
        },
      });
      if (!this.flushing) this.flushing = this.flushLoop();
    });
  }

  /**
   * Runs `task` alone, after the writes queued before it committed and before any queued after it is
   * built (an item removal: what serves the items changes before a later write reads it), as the DuckDB
   * queue's exclusive tasks do. Its failure fails only its caller.
   */
  exclusive<T>(task: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ task, resolve: (value) => resolve(value as T), reject });
      if (!this.flushing) this.flushing = this.flushLoop();
    });
  }

  /** A write answered was committed on the server: every reader sees it already. */
  settled(): Promise<void> {
    return Promise.resolve();
  }

  /** The most records bounded writes may hold in the queue (at least one write is always taken). */
  setLimit(records: number): void {
    this.limit = records;
  }

  /** Records of bounded writes, and writes of any kind, queued or being committed (no logs: logRows 0). */
  depth(): { records: number; writes: number; limit: number; logRows: number } {
    return { records: this.records, writes: this.writes, limit: this.limit, logRows: 0 };
  }

  observe(observer: WriteQueueObserver): void {
    this.observer = observer;
  }

  /** Told, after each commit, which tenants' rows it held (the lake export follows it). */
  onCommitted(listener: (tenantIds: Set<string>) => void): void {
    this.committedListener = listener;
  }

  /** Commits (or fails) everything queued, also what is queued meanwhile; then refuses new writes. */
  async close(): Promise<void> {
    while (this.flushing) await this.flushing;
    this.closed = true;
  }

  private async flushLoop(): Promise<void> {
    // Let the requests that arrived in this turn of the event loop join the first batch too.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.pending.length > 0) {
      const first = this.pending[0];
      if (isExclusive(first)) {
        this.pending.shift();
        await first.task().then(first.resolve, first.reject);
        continue;
      }
      const stop = this.pending.findIndex(isExclusive);
      const batch = (stop < 0 ? this.pending : this.pending.slice(0, stop)) as Pending[];
      this.pending = stop < 0 ? [] : this.pending.slice(stop);
      await this.commitBatch(batch);
    }
    this.flushing = null;
  }

  /** Builds and commits `batch`, and answers its writes. */
  private commitBatch(batch: Pending[]): Promise<void> {
    return commitWrites(batch, (rows, writes) => this.commit(rows, writes));
  }

  /** Writes the flush in one transaction on a connection of the pool; nothing to write, no transaction. */
  private async commit(rows: RowBuffer, writes: number): Promise<void> {
    if (isEmpty(rows)) return;
    let seconds: number;
    try {
      const client = await this.pool.connect();
      // A connection that failed other than by the server refusing a statement may be broken: the pool
      // drops it rather than lend it again.
      let broken: Error | undefined;
      const started = performance.now();
      try {
        await writeFlush(client, rows, this.origin);
        seconds = (performance.now() - started) / 1000;
      } catch (error) {
        if (!(error instanceof pg.DatabaseError))
          broken = error instanceof Error ? error : new Error(String(error));
        throw error;
      } finally {
        client.release(broken);
      }
    } catch (error) {
      this.storage.failed(error);
      throw error;
    }
    this.storage.wrote();
    this.observer?.committed(seconds, writes);
    this.committedListener(tenantsOf(rows));
  }
}

function isEmpty(rows: RowBuffer): boolean {
  return (
    rows.items.size === 0 &&
    rows.users.size === 0 &&
    rows.interactions.length === 0 &&
    rows.impressions.length === 0 &&
    rows.ops.length === 0
  );
}

function tenantsOf(rows: RowBuffer): Set<string> {
  const tenants = new Set<string>();
  for (const [tenantId] of rows.items.values()) tenants.add(tenantId);
  for (const [tenantId] of rows.users.values()) tenants.add(tenantId);
  for (const [tenantId] of rows.interactions) tenants.add(tenantId);
  for (const [tenantId] of rows.impressions) tenants.add(tenantId);
  return tenants;
}
