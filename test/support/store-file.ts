import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { liveSegments, tableDir, type EventTable } from '../../src/lake/layout.js';
import { DuckDbStore } from '../../src/store/database.js';
import { sqlString } from '../../src/store/sql.js';
import type { Store } from '../../src/store/store.js';
import { queryPostgres, TEST_STORE } from './test-store.js';

/**
 * Reads the store of a stopped daemon directly, to check what was made durable: its DuckDB file, or its
 * PostgreSQL database (test-store.ts; `sql` must then be PostgreSQL's too).
 */
export async function queryStore(
  dataDir: string,
  sql: string,
  params: (string | number)[] = [],
): Promise<Record<string, unknown>[]> {
  if (TEST_STORE === 'postgres') return queryPostgres(dataDir, sql, params);
  const instance = await DuckDBInstance.create(path.join(dataDir, 'nextrec.duckdb'));
  const connection = await instance.connect();
  try {
    return (await connection.runAndReadAll(sql, params)).getRowObjectsJS();
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/**
 * Reads the live segments of a tenant's lake table with DuckDB in memory, their paths quoted by sqlString:
 * `select` makes the query of their `read_parquet(...)`. No rows when the table has no segment yet.
 */
export async function queryLake(
  dataDir: string,
  tenantId: string,
  table: EventTable,
  select: (source: string) => string,
): Promise<unknown[][]> {
  const files = liveSegments(tableDir(dataDir, tenantId, table)).map((segment) => sqlString(segment.file));
  if (files.length === 0) return [];
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    return (await connection.runAndReadAll(select(`read_parquet([${files.join(', ')}])`))).getRowsJS();
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** The runtime's store as the DuckDB store, for tests that read its file's tables with SQL. */
export function duckDbStoreOf(store: Store): DuckDbStore {
  if (!(store instanceof DuckDbStore)) throw new Error('this test reads the DuckDB store');
  return store;
}
