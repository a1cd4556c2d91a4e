import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { fsyncPath } from '../durable-files.js';
import { DiskState, isStoreInvalidated } from './disk-full.js';
import { duckDbSettings, instanceOptions, type DuckDbSettings } from './duckdb-settings.js';
import { ItemKeys } from './item-keys.js';
import { migrate } from './migrations.js';
import { duckDbMemory } from './duckdb-memory.js';
import { sqlIdentifier, sqlString } from './sql.js';
import { EventLog, recoverEventLog } from './event-log.js';
import { RecordLog, recoverRecordLog } from './record-log.js';
import { WriteQueue, type EventSequences } from './write-queue.js';
import type { SettledLogs } from './duckdb/reads.js';
import type { Store } from './store.js';
import type { CatalogStore } from './api/catalog.js';
import { duckDbCatalog } from './duckdb/catalog.js';
import type { IdentityReads } from './api/identity-reads.js';
import { duckDbIdentityReads } from './duckdb/identity.js';
import type { AnalyticsStore } from './api/analytics.js';
import { duckDbAnalytics } from './duckdb/analytics.js';
import type { TenantReads } from './api/tenants.js';
import { duckDbTenantReads } from './duckdb/tenants.js';
import type { LoadReads } from './api/load.js';
import { duckDbLoadReads } from './duckdb/load.js';
import type { FeedStore } from './api/feeds.js';
import { duckDbFeedStore } from './duckdb/feeds.js';
import type { LakeSource } from './api/lake.js';
import { duckDbLakeSource } from './duckdb/lake.js';
import type { StoreMemory } from './api/memory.js';
import { duckDbStoreMemory } from './duckdb/memory.js';
import type { ModelVersionRecord } from './api/runners.js';
import { POINTERS_ONLY, SingleProcessRunners } from './single-process-runners.js';

export const STORE_FILE = 'nextrec.duckdb';

/** Where `scrub` writes the copy of the store before it replaces the store file. */
export function scrubFileOf(file: string): string {
  return `${file}.scrub`;
}

/** The write-ahead log DuckDB keeps next to a database file. */
function walOf(file: string): string {
  return `${file}.wal`;
}

/** The name the store file is attached under while `scrub` copies into it. */
const SCRUB_ALIAS = 'nextrec_scrub';

/**
 * The online store: one DuckDB file. Writes go through one connection and the group-commit queue;
 * reads use their own connection so that they see committed snapshots and never wait on a flush.
 */
/** The store file is locked by another process: a daemon, or a command working on it. */
export class StoreInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number | undefined,
  ) {
    super(`another nextrec process (pid ${pid ?? 'unknown'}) is using ${dataDir}`);
    this.name = 'StoreInUseError';
  }

  /** DuckDB's lock error as a StoreInUseError; undefined for any other error. */
  static from(error: unknown, dataDir: string): StoreInUseError | undefined {
    const message = error instanceof Error ? error.message : '';
    if (!message.includes('Could not set lock on file')) return undefined;
    const pid = /\(PID (\d+)\)/.exec(message)?.[1];
    return new StoreInUseError(dataDir, pid === undefined ? undefined : Number(pid));
  }
}

export class DuckDbStore implements Store {
  readonly writes: WriteQueue;
  /** Whether the data dir's disk is full (docs/configuration.md, "Health and metrics"). */
  readonly disk: DiskState;
  /** Reads by area (src/store/api): what the daemon reads of the store beyond its serving state. */
  readonly catalog: CatalogStore;
  readonly identity: IdentityReads;
  /** Analytics' reads, and the record of answers, written beside the write queue. */
  readonly analytics: AnalyticsStore;
  readonly tenants: TenantReads;
  /** What loading the serving state reads at start. */
  readonly load: LoadReads;
  /** A feed sync's staged records (src/feeds/staging.ts). */
  readonly feeds: FeedStore;
  /** What the lake export reads: a read's transaction, copied straight to Parquet. */
  readonly lake: LakeSource;
  /** One process owns the store: every claim is granted, and the artifacts' pointers record versions. */
  readonly runners = new SingleProcessRunners();
  readonly modelVersions: ModelVersionRecord = POINTERS_ONLY;
  private closed = false;
  /** Set from a fatal error of DuckDB until the store file is open again (see `revive`). */
  private invalid = false;
  private reviving: Promise<void> | undefined;
  /** Reads in progress; a scrub waits until there are none. */
  private activeReads = 0;
  private readsDone: (() => void) | null = null;
  /** Set while a scrub runs: reads wait for it before they connect. */
  private readGate: Promise<void> | null = null;

  private constructor(
    readonly file: string,
    /** The DuckDB limits it was opened with (docs/memory.md). */
    readonly settings: DuckDbSettings,
    private instance: DuckDBInstance,
    private writer: DuckDBConnection,
    sequences: EventSequences,
    itemKeys: ItemKeys,
    /** The last sequence number of the records log the store holds. */
    records: number,
  ) {
    const log = new EventLog(eventLogDirOf(file), settings.threads);
    const recordLog = new RecordLog(recordLogDirOf(file), records, settings.threads);
    this.writes = new WriteQueue(writer, log, recordLog, sequences, itemKeys);
    this.disk = new DiskState(path.dirname(file));
    this.writes.watchStorage({ wrote: () => this.disk.wrote(), failed: (error) => this.failed(error) });
    const read = this.read.bind(this);
    this.catalog = duckDbCatalog(read, this.writes);
    this.identity = duckDbIdentityReads(read);
    this.analytics = duckDbAnalytics(read);
    this.tenants = duckDbTenantReads(read);
    this.load = duckDbLoadReads(read);
    this.feeds = duckDbFeedStore(this.writes);
    this.lake = duckDbLakeSource(read);
  }

  /** The store's DuckDB against its limits, its file and log, and the item keys of the write queue. */
  async memory(): Promise<StoreMemory> {
    return {
      duckdb: await duckDbStoreMemory(
        this.read.bind(this),
        this.settings,
        this.file,
        this.writes.itemKeyCount,
      ),
    };
  }

  /** Whether DuckDB refuses every statement until the store file is opened again (see `revive`). */
  get invalidated(): boolean {
    return this.invalid;
  }

  /**
   * A write or a read failed: the disk may be full; and after a fatal error (a checkpoint that could not
   * write its file) DuckDB refuses every statement until the file is opened again, which `revive` does.
   */
  private failed(error: unknown): void {
    this.disk.failed(error);
    if (isStoreInvalidated(error) || this.invalid) {
      this.invalid = true;
      this.revive().catch(() => undefined);
    }
  }

  /**
   * Opens the store file again after DuckDB invalidated it, alone like a scrub: what was committed is in
   * the file and its write-ahead log, a transaction that failed is not, and the interactions log still
   * holds the rows it has not moved. Calls while one waits share it; one that fails (the disk still full)
   * leaves the store invalidated, and the next failure tries again.
   */
  private revive(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.reviving ??= this.writes
      .exclusive(() => this.alone(() => this.reopenInvalidated()), 'revive', false)
      .finally(() => (this.reviving = undefined));
    return this.reviving;
  }

  private async reopenInvalidated(): Promise<void> {
    if (!this.invalid) return;
    for (const close of [() => this.writer.closeSync(), () => this.instance.closeSync()]) {
      try {
        close();
      } catch {
        // Closed already, or refusing as an invalidated database does: it is given up either way.
      }
    }
    await this.reopen();
    this.invalid = false;
  }

  /** `settings`: the environment's (or the defaults) unless given; a store already open keeps its own. */
  static async open(dataDir: string, settings: DuckDbSettings = duckDbSettings()): Promise<DuckDbStore> {
    mkdirSync(dataDir, { recursive: true });
    const file = path.resolve(dataDir, STORE_FILE);
    // DuckDB silently diverges when one process opens a file twice: share one instance per file.
    const existing = openStores.get(file);
    if (existing) return existing;
    const opening = DuckDbStore.create(file, settings);
    openStores.set(file, opening);
    opening.catch(() => openStores.delete(file));
    return opening;
  }

  private static async create(file: string, settings: DuckDbSettings): Promise<DuckDbStore> {
    const instance = await DuckDBInstance.create(file, instanceOptions(settings)).catch((error: unknown) => {
      throw StoreInUseError.from(error, path.dirname(file)) ?? error;
    });
    // Only now, holding the file's lock, is no other process scrubbing it: a copy left here is a dead one's.
    removeScrubCopy(file);
    const writer = await instance.connect();
    let sequences: EventSequences;
    let itemKeys: ItemKeys;
    let records: number;
    try {
      await migrate(writer);
      // Writes a previous run acknowledged from its logs before moving them (event-log.ts, record-log.ts).
      await recoverEventLog(eventLogDirOf(file), writer, settings.threads);
      records = await recoverRecordLog(recordLogDirOf(file), writer);
      await writer.run(STAGING_TABLES);
      const last = await writer.runAndReadAll(
        'SELECT (SELECT coalesce(max(seq), 0) FROM interactions), (SELECT coalesce(max(seq), 0) FROM impressions)',
      );
      const [interactions, impressions] = last.getRows()[0].map(Number);
      sequences = { interactions, impressions };
      itemKeys = await ItemKeys.load(writer);
    } catch (error) {
      writer.closeSync();
      instance.closeSync();
      throw error;
    }
    return new DuckDbStore(file, settings, instance, writer, sequences, itemKeys, records);
  }

  async read<T>(query: (db: DuckDBConnection) => Promise<T>, logs: SettledLogs = 'all'): Promise<T> {
    // Once closing, the file is about to be released: no new read may start on it.
    if (this.closed) throw new Error('the store is closed');
    // Every write acknowledged before the read is in the store, also what the interactions log holds.
    await this.writes.settled(logs);
    while (this.readGate) await this.readGate;
    this.activeReads++;
    try {
      const connection = await this.instance.connect();
      try {
        return await query(connection);
      } finally {
        connection.closeSync();
      }
    } catch (error) {
      this.failed(error);
      throw error;
    } finally {
      this.activeReads--;
      if (this.activeReads === 0) this.readsDone?.();
    }
  }

  /**
   * Rewrites the store file so that the bytes of deleted rows are gone from the disk: DuckDB keeps them
   * in the freed blocks of the file until they are reused. Runs alone, between two flushes of the write
   * queue and while no read runs; the rows committed before the call are what the new file holds.
   * A call while a scrub runs gets another one after it (its deletes may have committed after the copy
   * began); calls while that one waits share it.
   */
  scrub(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    return this.writes.exclusive(() => this.rewrite(), 'scrub');
  }

  /**
   * Gives back the store's pages DuckDB keeps cached (docs/memory.md): a checkpoint first, so that the
   * rows written since the last one are pages of the file too, then DuckDB's memory limit lowered for a
   * moment, which evicts every page no query holds. The daemon calls it when idle; reads afterwards load
   * the pages they need again. It runs alone, like a scrub, but never waits for reads: while one runs (a
   * lake export, an analytics query) it does nothing, so as not to hold writes back until it ends. It
   * only checkpoints while TEMP tables hold rows (a feed sync staging its pages), and while DuckDB caches
   * less than `atLeast` bytes of pages, not worth reading again. Calls while one waits share it.
   */
  releaseCache(atLeast = RELEASE_AT_LEAST): Promise<void> {
    if (this.closed) return Promise.resolve();
    return this.writes.exclusive(
      () => (this.activeReads > 0 ? Promise.resolve() : this.alone(() => this.evictPages(atLeast))),
      'release-cache',
    );
  }

  private async evictPages(atLeast: number): Promise<void> {
    await this.writer.run('CHECKPOINT');
    // What is still in memory after a checkpoint besides pages is TEMP tables: a feed sync's staged
    // records, which a lower limit would spill to disk midway through the sync.
    const { memory } = await duckDbMemory(this.writer);
    if ((memory.IN_MEMORY_TABLE ?? 0) > 0 || (memory.BASE_TABLE ?? 0) < atLeast) return;
    try {
      await this.writer.run(`SET memory_limit = ${sqlString(EVICTING_LIMIT)}`);
    } catch (error) {
      // DuckDB evicted what it could before it found that the rest (pages a query holds) does not fit
      // under the lower limit: that is all there is to give back.
      if (!/could not free up enough memory/i.test(String(error))) throw error;
    } finally {
      await this.restoreMemoryLimit();
    }
  }

  /** Sets the store's own memory limit again; one retry, since a store left at 1MB fails its queries. */
  private async restoreMemoryLimit(): Promise<void> {
    const restore = `SET memory_limit = ${sqlString(this.settings.memoryLimit)}`;
    await this.writer.run(restore).catch(() => this.writer.run(restore));
  }

  /** Copies the database into a fresh file and swaps it in; the write queue holds its flushes meanwhile. */
  private rewrite(): Promise<void> {
    return this.alone(async () => {
      await this.writer.run('CHECKPOINT');
      await this.copyToScrubFile();
      this.writer.closeSync();
      this.instance.closeSync();
      try {
        replaceStoreFile(this.file);
      } finally {
        // Reopen whichever file is in place: the copy, or the untouched original if the swap failed.
        await this.reopen();
      }
    });
  }

  /** Runs `task` once no read runs, holding new reads (and writes apart) until it ends. */
  private async alone<T>(task: () => Promise<T>): Promise<T> {
    let openGate!: () => void;
    this.readGate = new Promise((resolve) => (openGate = resolve));
    try {
      await this.untilNoReads();
      return await task();
    } finally {
      this.readGate = null;
      openGate();
    }
  }

  private async untilNoReads(): Promise<void> {
    while (this.activeReads > 0) {
      await new Promise<void>((resolve) => (this.readsDone = resolve));
      this.readsDone = null;
    }
  }

  /** Copies schema (with keys) and rows into `<file>.scrub`, durable and without a log of its own. */
  private async copyToScrubFile(): Promise<void> {
    const scrubFile = scrubFileOf(this.file);
    removeScrubCopy(this.file);
    const current = await this.writer.runAndReadAll('SELECT current_database()');
    const database = sqlIdentifier(String(current.getRows()[0][0]));
    const alias = sqlIdentifier(SCRUB_ALIAS);
    await this.writer.run(`ATTACH ${sqlString(scrubFile)} AS ${alias}`);
    try {
      await this.writer.run(`COPY FROM DATABASE ${database} TO ${alias}`);
      await this.writer.run(`CHECKPOINT ${alias}`);
      await this.writer.run(`DETACH ${alias}`);
      if (existsSync(walOf(scrubFile))) throw new Error('the scrub copy kept a write-ahead log');
    } catch (error) {
      await this.writer.run(`DETACH DATABASE IF EXISTS ${alias}`).catch(() => undefined);
      removeScrubCopy(this.file);
      throw error;
    }
  }

  /** Opens the store file again after a swap and hands the new writer to the write queue. */
  private async reopen(): Promise<void> {
    this.instance = await DuckDBInstance.create(this.file, instanceOptions(this.settings));
    this.writer = await this.instance.connect();
    await this.writer.run(STAGING_TABLES);
    this.writes.replaceConnection(this.writer);
  }

  /** Waits for queued writes and running reads (and writes apart), checkpoints and releases the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writes.drain();
    // A log that cannot be moved now stays on disk, and the next start moves it.
    await this.writes.settled().catch(() => undefined);
    await this.writes.closeLog();
    this.writes.releaseAppenders();
    // Reads and writes apart (the answer log's) that are running end on an open store.
    await this.untilNoReads();
    openStores.delete(this.file);
    // A checkpoint that cannot be written (a full disk) leaves the write-ahead log, replayed at the next open.
    await this.writer.run('CHECKPOINT').catch(() => undefined);
    for (const close of [() => this.writer.closeSync(), () => this.instance.closeSync()]) {
      try {
        close();
      } catch {
        // An invalidated database: what it committed is in its file and log.
      }
    }
  }
}

const openStores = new Map<string, Promise<DuckDbStore>>();

/** The memory limit `releaseCache` sets for a moment: below what any cached page takes. */
const EVICTING_LIMIT = '1MB';

/** Cached pages `releaseCache` leaves alone: less than this is not worth reading again. */
const RELEASE_AT_LEAST = 16 * 1024 * 1024;

/** Upserts append to these first, then one INSERT OR REPLACE moves them, keeping upserts set-based. */
const STAGING_TABLES = `
  CREATE TEMP TABLE items_stage AS SELECT * FROM items LIMIT 0;
  CREATE TEMP TABLE users_stage AS SELECT * FROM users LIMIT 0;
`;

/** The directory of the store's interactions log (see event-log.ts), beside its file. */
export function eventLogDirOf(file: string): string {
  return path.join(path.dirname(file), 'interactions-log');
}

/** The directory of the store's records log (see record-log.ts), beside its file. */
export function recordLogDirOf(file: string): string {
  return path.join(path.dirname(file), 'records-log');
}

/** Removes a scrub copy (and its log) that was never swapped in. */
function removeScrubCopy(file: string): void {
  rmSync(scrubFileOf(file), { force: true });
  rmSync(walOf(scrubFileOf(file)), { force: true });
}

/**
 * Puts the closed store's scrub copy in place of the store file. The old log goes first: everything in
 * it was checkpointed before the copy, and replayed onto the copy it would corrupt it. The rename is
 * atomic, so a crash leaves either the original file or the complete copy.
 */
function replaceStoreFile(file: string): void {
  rmSync(walOf(file), { force: true });
  renameSync(scrubFileOf(file), file);
  fsyncPath(path.dirname(file));
}
