import type { Pool } from 'pg';
import type { PostgresMemory } from '../api/memory.js';
import type { LakeDuckDb } from './lake-duckdb.js';
import { selectRows } from './read-rows.js';

/** The pool's connections, the database's size and the lake's DuckDB (docs/memory.md). */
export async function pgStoreMemory(pool: Pool, poolSize: number, lake: LakeDuckDb): Promise<PostgresMemory> {
  // Counted before the size is asked for, which takes a connection of the pool.
  const connections = {
    poolSize,
    connections: pool.totalCount,
    inUse: pool.totalCount - pool.idleCount,
    waiting: pool.waitingCount,
  };
  const [[databaseBytes]] = await selectRows(pool, 'SELECT pg_database_size(current_database())');
  return { ...connections, databaseBytes: Number(databaseBytes), lake: await lake.memory() };
}
