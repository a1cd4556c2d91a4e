import type { DuckDBConnection } from '@duckdb/node-api';
import type { StoredItem, StoredUser } from './rows.js';

export interface Page<T> {
  rows: T[];
  total: number;
}

/** One page of a tenant's items in external-id order, read from the committed store. */
export async function listItems(
  db: DuckDBConnection,
  tenantId: string,
  page: number,
  limit: number,
): Promise<Page<StoredItem>> {
  const reader = await db.runAndReadAll(
    `SELECT external_id, category, attributes, expires_at, available, feed_managed, created_at, updated_at,
            count(*) OVER () AS total
       FROM items WHERE tenant_id = $1 ORDER BY external_id LIMIT $2 OFFSET $3`,
    [tenantId, limit, (page - 1) * limit],
  );
  const rows = reader.getRowsJS();
  const total = rows.length ? Number(rows[0][8]) : await count(db, 'items', tenantId);
  return {
    total,
    rows: rows.map(([id, category, attributes, expiresAt, available, feedManaged, createdAt, updatedAt]) => ({
      externalId: String(id),
      category: category === null ? null : String(category),
      attributes: attributes === null ? {} : (JSON.parse(String(attributes)) as Record<string, unknown>),
      expiresAt: expiresAt === null ? null : String(expiresAt),
      available: Boolean(available),
      feedManaged: Boolean(feedManaged),
      createdAt: Number(createdAt),
      updatedAt: Number(updatedAt),
    })),
  };
}

export async function listUsers(
  db: DuckDBConnection,
  tenantId: string,
  page: number,
  limit: number,
): Promise<Page<StoredUser>> {
  const reader = await db.runAndReadAll(
    `SELECT external_id, attributes, created_at, updated_at, count(*) OVER () AS total
       FROM users WHERE tenant_id = $1 ORDER BY external_id LIMIT $2 OFFSET $3`,
    [tenantId, limit, (page - 1) * limit],
  );
  const rows = reader.getRowsJS();
  const total = rows.length ? Number(rows[0][4]) : await count(db, 'users', tenantId);
  return {
    total,
    rows: rows.map(([id, attributes, createdAt, updatedAt]) => ({
      externalId: String(id),
      attributes: attributes === null ? {} : (JSON.parse(String(attributes)) as Record<string, unknown>),
      createdAt: Number(createdAt),
      updatedAt: Number(updatedAt),
    })),
  };
}

async function count(db: DuckDBConnection, table: 'items' | 'users', tenantId: string): Promise<number> {
  const reader = await db.runAndReadAll(`SELECT count(*) FROM ${table} WHERE tenant_id = $1`, [tenantId]);
  return Number(reader.getRowsJS()[0][0]);
}
