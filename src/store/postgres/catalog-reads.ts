import type { Pool } from 'pg';
import type { CatalogReads, Page } from '../api/catalog.js';
import { itemFromRow, userFromRow } from '../row-mapping.js';
import { ITEM_COLUMNS, selectRows, USER_COLUMNS } from './read-rows.js';

/**
 * One page of a table's rows of a tenant in external-id order (code-point order, as on DuckDB:
 * migrations.ts); `total` counts them all. One statement, so that the page and the total are of one
 * snapshot: a row for each of the page's rows after the total, or one row of the total alone (the page's
 * columns null) when the page is empty.
 */
async function page<T>(
  pool: Pool,
  table: 'items' | 'users',
  columns: string,
  fromRow: (row: readonly unknown[], offset: number) => T,
  tenantId: string,
  pageNumber: number,
  limit: number,
): Promise<Page<T>> {
  const rows = await selectRows(
    pool,
    `SELECT total.n, page.* FROM (SELECT count(*) AS n FROM ${table} WHERE tenant_id = $1) total
       LEFT JOIN (SELECT ${columns} FROM ${table} WHERE tenant_id = $1 ORDER BY external_id LIMIT $2 OFFSET $3) page
         ON true
      ORDER BY page.external_id`,
    [tenantId, limit, (pageNumber - 1) * limit],
  );
  // external_id is never null in a row of the page.
  const onPage = rows.filter((row) => row[1] !== null);
  return { rows: onPage.map((row) => fromRow(row, 1)), total: Number(rows[0][0]) };
}

/** The catalog's reads (CatalogReads), as the DuckDB store reads them (src/store/duckdb/catalog.ts). */
export function pgCatalogReads(pool: Pool): CatalogReads {
  return {
    listItems: (tenantId, pageNumber, limit) =>
      page(pool, 'items', ITEM_COLUMNS, itemFromRow, tenantId, pageNumber, limit),
    listUsers: (tenantId, pageNumber, limit) =>
      page(pool, 'users', USER_COLUMNS, userFromRow, tenantId, pageNumber, limit),
  };
}
