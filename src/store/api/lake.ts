import type { DuckDBConnection } from '@duckdb/node-api';
import type { EventTable, SnapshotTable } from '../../lake/layout.js';

/**
 * One tenant's rows as of one snapshot of the store, for the lake export (src/store/lake-export.ts): every
 * read and every file written sees the same commits. Files are written in the lake's columns
 * (src/store/lake-columns.ts), whichever store runs.
 */
export interface LakeSnapshot {
  /**
   * DuckDB for the lake's Parquet files (comparing a snapshot, merging segments): the store's own
   * connection on DuckDB, one of an in-memory DuckDB on PostgreSQL.
   */
  readonly files: DuckDBConnection;
  /** How many of the table's events come after `after`, and the highest seq among them (0 when none). */
  events(table: EventTable, after: number): Promise<{ rows: number; through: number }>;
  /** Writes the table's events `after < seq <= through`, in seq order, to `file` as Parquet. */
  writeEvents(table: EventTable, after: number, through: number, file: string): Promise<void>;
  /** How many rows the catalog table holds, and the latest `updated_at` among them (0 when none). */
  catalog(table: SnapshotTable): Promise<{ rows: number; updated: number }>;
  /** Writes the catalog table's rows, in external-id order, to `file` as Parquet. */
  writeCatalog(table: SnapshotTable, file: string): Promise<void>;
  /** The configuration documents of these kinds, as the text each was stored as, by kind then key. */
  documents(kinds: readonly string[]): Promise<{ kind: string; text: string }[]>;
}

/**
 * The tables a lake export writes: all of them, or the event tables alone (interactions and impressions),
 * all that a build of co-occurrence, EASE or factors reads (docs/batch-models.md, "The lake").
 */
export type LakeTables = 'all' | 'events';

/** What the lake export reads of the store, and where it works on the lake's files. */
export interface LakeSource {
  /**
   * Runs `work` on one snapshot of the tenant's rows; `dataDir` is the lake's data dir; `tables` says
   * whether `work` reads the catalog too (the default) or the event tables alone. The snapshot's
   * `files` is a connection of its own, closed after `work`.
   */
  snapshot<T>(
    dataDir: string,
    tenantId: string,
    work: (snapshot: LakeSnapshot) => Promise<T>,
    tables?: LakeTables,
  ): Promise<T>;
  /**
   * Runs `work` on DuckDB for the lake's Parquet files alone (rewriting them for erasures), on a connection
   * of its own that is closed after it (its TEMP tables with it).
   */
  files<T>(dataDir: string, work: (db: DuckDBConnection) => Promise<T>): Promise<T>;
}
