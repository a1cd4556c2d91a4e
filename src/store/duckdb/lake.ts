import type { DuckDBConnection } from '@duckdb/node-api';
import type { EventTable, SnapshotTable } from '../../lake/layout.js';
import type { LakeSnapshot, LakeSource } from '../api/lake.js';
import { copyToParquet, lakeSelectList } from '../lake-columns.js';
import { sqlString } from '../sql.js';
import type { ReadRunner } from './reads.js';

async function numbers(db: DuckDBConnection, sql: string): Promise<number[]> {
  const reader = await db.runAndReadAll(sql);
  return reader.getRows()[0].map((value) => Number(value ?? 0));
}

/** The tenant's rows in the transaction open on `db`: copied straight from the store's tables to Parquet. */
function snapshotOf(db: DuckDBConnection, tenantId: string): LakeSnapshot {
  const tenant = sqlString(tenantId);
  return {
    files: db,
    events: async (table: EventTable, after: number) => {
      const [through, rows] = await numbers(
        db,
        `SELECT max(seq), count(*) FROM ${table} WHERE tenant_id = ${tenant} AND seq > ${after}`,
      );
      return { rows, through };
    },
    writeEvents: (table: EventTable, after: number, through: number, file: string) =>
      copyToParquet(
        db,
        `SELECT ${lakeSelectList(table, 'VARCHAR')} FROM ${table}
          WHERE tenant_id = ${tenant} AND seq > ${after} AND seq <= ${through} ORDER BY seq`,
        file,
      ),
    catalog: async (table: SnapshotTable) => {
      const [rows, updated] = await numbers(
        db,
        `SELECT count(*), max(updated_at) FROM ${table} WHERE tenant_id = ${tenant}`,
      );
      return { rows, updated };
    },
    writeCatalog: (table: SnapshotTable, file: string) =>
      copyToParquet(
        db,
        `SELECT ${lakeSelectList(table, 'VARCHAR')} FROM ${table} WHERE tenant_id = ${tenant} ORDER BY external_id`,
        file,
      ),
    documents: async (kinds: readonly string[]) => {
      if (kinds.length === 0) return [];
      const reader = await db.runAndReadAll(
        `SELECT kind, doc::VARCHAR FROM config_documents
          WHERE tenant_id = ${tenant} AND kind IN (${kinds.map(sqlString).join(', ')})
          ORDER BY kind, key`,
      );
      return reader.getRows().map(([kind, text]) => ({ kind: String(kind), text: String(text) }));
    },
  };
}

/**
 * The DuckDB store's lake source: a snapshot is one transaction on a read connection, and the lake's
 * files are worked on with the store's own DuckDB, within its memory limit (docs/memory.md).
 */
export function duckDbLakeSource(read: ReadRunner): LakeSource {
  return {
    snapshot: (_dataDir, tenantId, work, tables = 'all') =>
      read(async (db) => {
        await db.run('BEGIN TRANSACTION');
        try {
          return await work(snapshotOf(db, tenantId));
        } finally {
          await db.run('ROLLBACK');
        }
      }, tables),
    files: (_dataDir, work) => read(work),
  };
}
