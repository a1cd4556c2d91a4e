import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { OneAtATime } from '../../one-at-a-time.js';
import type { AnalyticsStore } from '../api/analytics.js';
import type { CatalogStore } from '../api/catalog.js';
import type { FeedStore } from '../api/feeds.js';
import type { IdentityReads } from '../api/identity-reads.js';
import type { LakeSource } from '../api/lake.js';
import type { LoadReads } from '../api/load.js';
import type { StoreMemory } from '../api/memory.js';
import type { TenantReads } from '../api/tenants.js';
import { duckDbSettings, type DuckDbSettings } from '../duckdb-settings.js';
import type { Store } from '../store.js';
import { pgAnalytics } from './analytics.js';
import { removeItems } from './catalog.js';
import { PgChangeFeed } from './change-feed.js';
import { pgCatalogReads } from './catalog-reads.js';
import { PostgresDiskState } from './disk.js';
import { pgFeedStore } from './feeds.js';
import { pgIdentityReads } from './identity-reads.js';
import { pgLakeSource } from './lake.js';
import { LakeDuckDb } from './lake-duckdb.js';
import { pgLoadReads } from './load-reads.js';
import type { ModelVersionRecord } from '../api/runners.js';
import { pgModelVersions } from './model-versions.js';
import { PgRunners } from './runners.js';
import { pgStoreMemory } from './memory.js';
import { migratePostgres } from './migrations.js';
import { pgTenantReads } from './tenant-reads.js';
import { PgWriteQueue } from './write-queue.js';

/** Connections a store opens at most: one for the write queue's flushes, the rest for reads and scrubs. */
export const DEFAULT_POOL_SIZE = 10;

export interface PgStoreOptions {
  /** Connections the store's pool opens at most (DEFAULT_POOL_SIZE). */
  poolSize?: number;
  /**
   * The limits of the in-memory DuckDB the lake export writes Parquet with (default: the environment's,
   * as for the DuckDB store; docs/memory.md).
   */
  duckdb?: DuckDbSettings;
}

/**
 * The tables whose deleted (or replaced) rows `scrub` rewrites away: those a deletion of a user or of
 * an item removes rows from (docs/guide.md, "Identity", "Deleting items"), and the record of answers.
 */
const SCRUBBED_TABLES = [
  'users',
  'items',
  'interactions',
  'impressions',
  'item_keys',
  'merge_ledger',
  'answer_days',
  'answer_items',
  'experiment_users',
  // The log of changes, which a deletion rewrites so that it names the deleted ids no more.
  'change_log',
];

/**
 * The PostgreSQL store of record (`--store postgres://...`): several daemons may share its database.
 * Its reads see every committed write at once (there are no local logs to move first).
 */
export class PgStore implements Store {
  readonly writes: PgWriteQueue;
  readonly catalog: CatalogStore;
  readonly identity: IdentityReads;
  readonly analytics: AnalyticsStore;
  readonly tenants: TenantReads;
  readonly load: LoadReads;
  readonly feeds: FeedStore;
  /** What the lake export reads: a snapshot's rows, streamed into Parquet through an in-memory DuckDB. */
  readonly lake: LakeSource;
  /** Claims and exclusive tasks, on a session of their own apart from the pool (runners.ts). */
  readonly runners: PgRunners;
  readonly modelVersions: ModelVersionRecord;
  /** Whether the server's disk is full: from a write it refused for room until one commits (disk.ts). */
  readonly disk = new PostgresDiskState();
  /** The other daemons' writes, to follow (change-feed.ts). */
  readonly changes: PgChangeFeed;
  private closed = false;
  private readonly scrubs = new OneAtATime();
  /** A scrub queued behind the running one, which calls meanwhile share. */
  private waitingScrub: Promise<void> | undefined;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly poolSize: number,
    private readonly lakeDuckDb: LakeDuckDb,
    url: string,
  ) {
    this.runners = new PgRunners(url);
    this.modelVersions = pgModelVersions(pool);
    // This store's name in the change log: the changes it writes are its own (change-log.ts).
    const origin = randomUUID();
    this.writes = new PgWriteQueue(
      pool,
      { wrote: () => this.disk.wrote(), failed: (error) => this.disk.failed(error) },
      origin,
    );
    this.changes = new PgChangeFeed(pool, url, origin);
    this.catalog = {
      ...pgCatalogReads(pool),
      removeItems: (tenantId, itemIds, committed) =>
        this.writes.exclusive(async () => {
          if (itemIds.length === 0)
            return committed({ items: 0, rows: 0, interactionEventIds: [], impressionEventIds: [] });
          const client = await pool.connect();
          try {
            return committed(await removeItems(client, tenantId, itemIds, origin));
          } finally {
            client.release();
          }
        }),
    };
    this.identity = pgIdentityReads(pool);
    this.analytics = pgAnalytics(pool);
    this.tenants = pgTenantReads(pool);
    this.load = pgLoadReads(pool);
    this.feeds = pgFeedStore(pool, this.writes, origin);
    this.lake = pgLakeSource(pool, lakeDuckDb);
  }

  /**
   * Opens the store of `url` (`postgres://...`): brings its schema up to date (migrations.ts; daemons
   * starting together migrate once) and is ready to write. Its sessions commit with `synchronous_commit`
   * on at least: a 2xx answer to a write means its transaction is durable on the server (docs/guide.md,
   * "Ingestion"), so a database or role set to `off` is overridden; a stronger setting (`remote_apply`,
   * ...) is kept.
   */
  static async open(url: string, options: PgStoreOptions = {}): Promise<PgStore> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    let syncOff: boolean;
    try {
      await migratePostgres(client);
      const setting = await client.query<{ value: string }>(
        "SELECT current_setting('synchronous_commit') AS value",
      );
      syncOff = setting.rows[0].value === 'off';
    } finally {
      await client.end();
    }
    const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE;
    const pool = new pg.Pool({
      connectionString: url,
      max: poolSize,
      application_name: 'nextrec',
      ...(syncOff ? { options: '-c synchronous_commit=on' } : {}),
    });
    // An idle connection the server closed (a restart, a terminated backend) leaves the pool by itself;
    // without a listener its error would end the process. A write on a broken connection fails on its own.
    pool.on('error', () => undefined);
    return new PgStore(pool, poolSize, new LakeDuckDb(options.duckdb ?? duckDbSettings()), url);
  }

  /** The pool's connections, the database's size, and the lake export's DuckDB (docs/memory.md). */
  memory(): Promise<StoreMemory> {
    return pgStoreMemory(this.pool, this.poolSize, this.lakeDuckDb).then((postgres) => ({ postgres }));
  }

  /** PostgreSQL refuses statements on one connection at a time, never the whole store until reopened. */
  get invalidated(): boolean {
    return false;
  }

  /** The server keeps its own cache: nothing to give back here. */
  releaseCache(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * Makes the bytes of deleted rows leave the server's files (Store.scrub). A plain VACUUM is not enough:
   * it frees dead rows' space for reuse, but the bytes of a row at the free end of its page (heap or
   * index) stay there until overwritten (test/unit/store/pg-write-queue.test.ts shows it). VACUUM FULL
   * writes each table and its indexes anew and removes the old files, as DuckDB's scrub rewrites its file.
   * It holds each table exclusively while it rewrites it, so every daemon's reads and writes of that table
   * wait meanwhile, as writes wait for DuckDB's scrub (docs/guide.md, "Identity"). Run outside a
   * transaction, which VACUUM requires. A call while a scrub runs gets another one after it (its deletes
   * may have committed after the rewrite began); calls while that one waits share it.
   */
  scrub(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    this.waitingScrub ??= this.scrubs.run(() => {
      this.waitingScrub = undefined;
      return this.vacuum();
    });
    return this.waitingScrub;
  }

  private async vacuum(): Promise<void> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query(`VACUUM (FULL) ${SCRUBBED_TABLES.join(', ')}`);
    } catch (error) {
      this.disk.failed(error);
      if (!(error instanceof pg.DatabaseError))
        broken = error instanceof Error ? error : new Error(String(error));
      throw error;
    } finally {
      client.release(broken);
    }
  }

  /**
   * Commits what is queued, waits for a running scrub, then closes the pool's connections and the lake's
   * DuckDB (the lake exporter stopped first).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writes.close();
    await this.changes.stop();
    await this.scrubs.ended();
    await this.runners.close();
    await this.pool.end();
    await this.lakeDuckDb.close();
  }
}
