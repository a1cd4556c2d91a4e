/** What a DuckDB holds against its limits (docs/memory.md), in bytes. */
export interface DuckDbFigures {
  memoryLimit: string;
  threads: number;
  /** DuckDB's own count (`duckdb_memory()`): the buffer pool's memory by what it holds, the total first. */
  memory: Record<string, number>;
  /** Spilled to disk beyond the limit. */
  temporary: number;
}

/** What the DuckDB store holds (docs/memory.md), in bytes. */
export interface DuckDbMemory extends DuckDbFigures {
  /** The store file and its write-ahead log, on disk. */
  fileBytes: number;
  walBytes: number;
  /** Item ids whose keys the write queue keeps in the event loop's heap (src/store/item-keys.ts). */
  itemKeys: number;
}

/** What the PostgreSQL store holds (docs/memory.md): its connections, the database, the lake's DuckDB. */
export interface PostgresMemory {
  /** Connections the pool opens at most. */
  poolSize: number;
  /** Connections open now, those of them taken by a write or a read, and requests waiting for one. */
  connections: number;
  inUse: number;
  waiting: number;
  /** The database's size on the server's disk (`pg_database_size`), every daemon's rows. */
  databaseBytes: number;
  /** The in-memory DuckDB the lake export writes Parquet with; null until the first export opened it. */
  lake: DuckDbFigures | null;
}

/**
 * What the store holds in memory and on disk, under the name of the store that runs: `GET /debug/memory`
 * shows it as it is (docs/memory.md).
 */
export type StoreMemory = { duckdb: DuckDbMemory } | { postgres: PostgresMemory };
