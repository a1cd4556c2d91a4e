import { LIST, VARCHAR, type DuckDBAppender, type DuckDBConnection } from '@duckdb/node-api';
import type { Pool, PoolClient } from 'pg';
import type { EventTable, LakeTable, SnapshotTable } from '../../lake/layout.js';
import type { LakeSnapshot, LakeSource } from '../api/lake.js';
import { closeAppender } from '../appenders.js';
import { LAKE_COLUMNS, copyToParquet, lakeSelectList, type LakeColumnType } from '../lake-columns.js';
import type { LakeDuckDb } from './lake-duckdb.js';
import { ROWS_PER_CHUNK, inSnapshot, selectRows, transactionCursor } from './read-rows.js';

const VARCHAR_LIST = LIST(VARCHAR);

/** The in-memory table a file's rows are appended to before they are written (one per connection). */
const ROWS_TABLE = 'lake_rows';

/** Appends one value as the column's type: `pg` gives a bigint as a string, a text[] as an array. */
function appendValue(appender: DuckDBAppender, type: LakeColumnType, value: unknown): void {
  if (value === null || value === undefined) appender.appendNull();
  else if (type === 'BIGINT') appender.appendBigInt(BigInt(value as string | number));
  else if (type === 'DOUBLE') appender.appendDouble(Number(value));
  else if (type === 'BOOLEAN') appender.appendBoolean(value === true);
  else if (type === 'VARCHAR[]') appender.appendList(value as (string | null)[], VARCHAR_LIST);
  else appender.appendVarchar(String(value));
}

/**
 * Streams a query's rows (the table's lake columns, in order) from PostgreSQL into `file` as Parquet: a
 * chunk at a time through a cursor of the snapshot's transaction, appended to an in-memory DuckDB table of
 * the lake's column types, which spills beyond DuckDB's memory limit, then written as the DuckDB store
 * writes its files. The rows keep the query's order: a table's scan and COPY keep insertion order.
 */
async function streamToParquet(
  client: PoolClient,
  db: DuckDBConnection,
  table: LakeTable,
  query: string,
  values: readonly unknown[],
  file: string,
  rowsPerChunk: number,
): Promise<void> {
  const columns = LAKE_COLUMNS[table];
  await db.run(`CREATE TEMP TABLE ${ROWS_TABLE} (${columns.map((c) => `${c.name} ${c.type}`).join(', ')})`);
  try {
    const appender = await db.createAppender(ROWS_TABLE, 'main', 'temp');
    try {
      for await (const chunk of transactionCursor(client, query, values, rowsPerChunk)) {
        for (const row of chunk) {
          for (let i = 0; i < columns.length; i++) appendValue(appender, columns[i].type, row[i]);
          appender.endRow();
        }
        appender.flushSync();
      }
      appender.closeSync();
    } catch (error) {
      closeAppender(appender, true);
      throw error;
    }
    await copyToParquet(db, `SELECT * FROM ${ROWS_TABLE}`, file);
  } finally {
    await db.run(`DROP TABLE IF EXISTS ${ROWS_TABLE}`);
  }
}

async function numbers(client: PoolClient, text: string, values: readonly unknown[]): Promise<number[]> {
  const [row] = await selectRows(client, text, values);
  return row.map((value) => Number(value ?? 0));
}

function snapshotOf(
  client: PoolClient,
  db: DuckDBConnection,
  tenantId: string,
  rowsPerChunk: number,
): LakeSnapshot {
  return {
    files: db,
    events: async (table: EventTable, after: number) => {
      const [through, rows] = await numbers(
        client,
        `SELECT max(seq), count(*) FROM ${table} WHERE tenant_id = $1 AND seq > $2`,
        [tenantId, after],
      );
      return { rows, through };
    },
    writeEvents: (table: EventTable, after: number, through: number, file: string) =>
      streamToParquet(
        client,
        db,
        table,
        `SELECT ${lakeSelectList(table, 'text')} FROM ${table}
          WHERE tenant_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq`,
        [tenantId, after, through],
        file,
        rowsPerChunk,
      ),
    catalog: async (table: SnapshotTable) => {
      const [rows, updated] = await numbers(
        client,
        `SELECT count(*), max(updated_at) FROM ${table} WHERE tenant_id = $1`,
        [tenantId],
      );
      return { rows, updated };
    },
    writeCatalog: (table: SnapshotTable, file: string) =>
      streamToParquet(
        client,
        db,
        table,
        `SELECT ${lakeSelectList(table, 'text')} FROM ${table} WHERE tenant_id = $1 ORDER BY external_id`,
        [tenantId],
        file,
        rowsPerChunk,
      ),
    documents: async (kinds: readonly string[]) => {
      if (kinds.length === 0) return [];
      const rows = await selectRows(
        client,
        `SELECT kind, doc::text FROM config_documents
          WHERE tenant_id = $1 AND kind = ANY($2) ORDER BY kind, key`,
        [tenantId, kinds],
      );
      return rows.map(([kind, text]) => ({ kind: String(kind), text: String(text) }));
    },
  };
}

/**
 * The PostgreSQL store's lake source: a snapshot is a read-only REPEATABLE READ transaction, whose rows
 * are streamed into Parquet through the lake's in-memory DuckDB (lake-duckdb.ts); the lake's files are
 * worked on with that DuckDB too. A tenant's seq numbers follow commit order (migrations.ts, version 3),
 * so a snapshot holds every event up to the highest seq it sees.
 */
export function pgLakeSource(pool: Pool, duckdb: LakeDuckDb, rowsPerChunk = ROWS_PER_CHUNK): LakeSource {
  return {
    snapshot: (dataDir, tenantId, work) =>
      inSnapshot(pool, (client) =>
        duckdb.run(dataDir, (db) => work(snapshotOf(client, db, tenantId, rowsPerChunk))),
      ),
    files: (dataDir, work) => duckdb.run(dataDir, work),
  };
}
