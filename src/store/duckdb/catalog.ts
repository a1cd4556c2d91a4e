import type { DuckDBConnection } from '@duckdb/node-api';
import type { CatalogReads, Page } from '../api/catalog.js';
import { ITEM_COLUMNS, USER_COLUMNS, itemFromRow, userFromRow } from '../row-mapping.js';
import type { StoredItem, StoredUser } from '../rows.js';
import type { ReadRunner } from './reads.js';

/** One page of a table's rows of a tenant in external-id order; `total` counts them all. */
async function page<T>(
  db: DuckDBConnection,
  table: 'items' | 'users',
  columns: string,
  fromRow: (row: readonly unknown[]) => T,
  tenantId: string,
  pageNumber: number,
  limit: number,
): Promise<Page<T>> {
  const reader = await db.runAndReadAll(
    `SELECT ${columns} FROM ${table} WHERE tenant_id = $1 ORDER BY external_id LIMIT $2 OFFSET $3`,
    [tenantId, limit, (pageNumber - 1) * limit],
  );
  const counted = await db.runAndReadAll(`SELECT count(*) FROM ${table} WHERE tenant_id = $1`, [tenantId]);
  return { rows: reader.getRowsJS().map(fromRow), total: Number(counted.getRowsJS()[0][0]) };
}

export function duckDbCatalogReads(read: ReadRunner): CatalogReads {
  return {
    listItems: (tenantId, pageNumber, limit) =>
      read((db) =>
        page<StoredItem>(db, 'items', ITEM_COLUMNS, (row) => itemFromRow(row), tenantId, pageNumber, limit),
      ),
    listUsers: (tenantId, pageNumber, limit) =>
      read((db) =>
        page<StoredUser>(db, 'users', USER_COLUMNS, (row) => userFromRow(row), tenantId, pageNumber, limit),
      ),
  };
}
