import type { AnalyticsStore } from './api/analytics.js';
import type { ChangeFeed } from './api/changes.js';
import type { CatalogStore } from './api/catalog.js';
import type { FeedStore } from './api/feeds.js';
import type { IdentityReads } from './api/identity-reads.js';
import type { LakeSource } from './api/lake.js';
import type { LoadReads } from './api/load.js';
import type { ModelVersionRecord, Runners } from './api/runners.js';
import type { StoreMemory } from './api/memory.js';
import type { TenantReads } from './api/tenants.js';
import type { DiskState } from './disk-full.js';
import type { SubmitOptions, Write, WriteQueueObserver } from './write-queue.js';

/**
 * How writes reach the store (docs/architecture.md, "The store"): queued, grouped into one transaction a
 * flush, and acknowledged once it committed.
 */
export interface StoreWrites {
  /** Queues a write; resolves with what its apply step returns once the flush that holds it committed. */
  submit<T>(write: Write<T>, records?: number, options?: SubmitOptions): Promise<T>;
  /** Resolves once every acknowledged write can be read back. */
  settled(): Promise<void>;
  /** The most records the queue holds before it refuses writes (`--write-queue-limit`). */
  setLimit(records: number): void;
  depth(): { records: number; writes: number; limit: number; logRows: number };
  observe(observer: WriteQueueObserver): void;
  /** Called with the tenants whose rows a commit (or a move of a log) stored. */
  onCommitted(listener: (tenantIds: Set<string>) => void): void;
}

/**
 * The store of record, by area (src/store/api). The embedded DuckDB store (database.ts) and the PostgreSQL
 * store (postgres/pg-store.ts) implement it; nothing outside src/store depends on which store runs.
 */
export interface Store {
  readonly writes: StoreWrites;
  /** Whether the data dir's disk is full (docs/configuration.md, "Health and metrics"). */
  readonly disk: DiskState;
  readonly catalog: CatalogStore;
  readonly identity: IdentityReads;
  /** Analytics' reads, and the record of answers, written beside the write queue. */
  readonly analytics: AnalyticsStore;
  readonly tenants: TenantReads;
  /** What loading the serving state reads at start. */
  readonly load: LoadReads;
  /** A feed sync's staged records (src/feeds/staging.ts). */
  readonly feeds: FeedStore;
  /** What the lake export reads, one snapshot of a tenant at a time (src/store/lake-export.ts). */
  readonly lake: LakeSource;
  /**
   * The writes of the other daemons sharing the store, for this one to follow (docs/architecture.md,
   * "The store"); none where one process owns the store (DuckDB).
   */
  readonly changes?: ChangeFeed;
  /**
   * Which process runs each tenant's background work (builds, lake writes, feed schedules, retention)
   * among those sharing the store (docs/batch-models.md, "Cluster mode").
   */
  readonly runners: Runners;
  /** The version of each tenant's model to serve, where several daemons share the store. */
  readonly modelVersions: ModelVersionRecord;
  /** Whether the store refuses every statement until it is opened again (after a fatal error). */
  readonly invalidated: boolean;
  /** Gives back memory the store caches and can read again (the daemon asks when it is idle). */
  releaseCache(): Promise<void>;
  /** What the store holds in memory and on disk (docs/memory.md; GET /debug/memory). */
  memory(): Promise<StoreMemory>;
  /** Rewrites what the store keeps on disk so that the bytes of deleted rows are gone. */
  scrub(): Promise<void>;
  /** Waits for queued writes and running reads, then releases the store. */
  close(): Promise<void>;
}
