import { listValue, type DuckDBConnection } from '@duckdb/node-api';
import type { CatalogReads, CatalogStore, Page, RemovedItems } from '../api/catalog.js';
import { ITEM_COLUMNS, USER_COLUMNS, itemFromRow, userFromRow } from '../row-mapping.js';
import type { StoredItem, StoredUser } from '../rows.js';
import type { WriteQueue } from '../write-queue.js';
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

/** The ids being deleted, in the write connection's TEMP schema while a removal runs. */
const DELETED = 'temp.deleted_items';

/** The rows of each table that name one of the items in DELETED (`$1` the tenant). */
const NAMING = {
  items: `tenant_id = $1 AND external_id IN (SELECT id FROM ${DELETED})`,
  interactions: `tenant_id = $1 AND item_id IN (SELECT id FROM ${DELETED})`,
  impressions: `tenant_id = $1 AND list_has_any(item_ids, (SELECT list(id) FROM ${DELETED}))`,
  itemKeys: `tenant_id = $1 AND item_id IN (SELECT id FROM ${DELETED})`,
};

/**
 * The statements that remove the items in DELETED from the store (`$1` the tenant): the items, their
 * interactions and keys; an impression keeps the other items it showed (with their keys, in order) and
 * goes when it showed none of the others. The event ids of the events that go are read first (a
 * DELETE ... RETURNING of 40,000 interactions took 13 times as long as the DELETE).
 */
const DELETIONS = {
  items: `DELETE FROM items WHERE ${NAMING.items}`,
  interactionEventIds: `SELECT event_id FROM interactions WHERE ${NAMING.interactions} AND event_id IS NOT NULL`,
  interactions: `DELETE FROM interactions WHERE ${NAMING.interactions}`,
  impressionsKept: `UPDATE impressions SET item_ids = k.item_ids, item_keys = k.item_keys FROM (
      SELECT seq, list(item_id ORDER BY position) AS item_ids, list(item_key ORDER BY position) AS item_keys
        FROM (SELECT seq, unnest(item_ids) AS item_id, unnest(item_keys) AS item_key,
                     unnest(range(1, len(item_ids) + 1)) AS position
                FROM impressions WHERE ${NAMING.impressions})
       WHERE item_id NOT IN (SELECT id FROM ${DELETED}) GROUP BY seq) k
    WHERE impressions.tenant_id = $1 AND impressions.seq = k.seq`,
  impressionEventIds: `SELECT event_id FROM impressions WHERE ${NAMING.impressions} AND event_id IS NOT NULL`,
  impressions: `DELETE FROM impressions WHERE ${NAMING.impressions}`,
  itemKeys: `DELETE FROM item_keys WHERE ${NAMING.itemKeys}`,
};

const NOTHING_REMOVED: RemovedItems = { items: 0, rows: 0, interactionEventIds: [], impressionEventIds: [] };

function eventIds(rows: unknown[][]): string[] {
  return rows
    .map(([eventId]) => eventId)
    .filter((id) => id !== null && id !== undefined)
    .map(String);
}

/** Removes the items from the store in one transaction on the write connection. */
async function removeFromStore(
  db: DuckDBConnection,
  tenantId: string,
  itemIds: readonly string[],
): Promise<RemovedItems> {
  await db.run(`CREATE OR REPLACE TEMP TABLE deleted_items AS SELECT DISTINCT unnest($1::VARCHAR[]) AS id`, [
    listValue([...itemIds]),
  ]);
  try {
    await db.run('BEGIN TRANSACTION');
    try {
      const run = async (sql: string) => (await db.run(sql, [tenantId])).rowsChanged;
      const eventIdsOf = async (sql: string) =>
        eventIds((await db.runAndReadAll(sql, [tenantId])).getRowsJS());
      const items = await run(DELETIONS.items);
      const interactionEventIds = await eventIdsOf(DELETIONS.interactionEventIds);
      const interactions = await run(DELETIONS.interactions);
      const kept = await run(DELETIONS.impressionsKept);
      const impressionEventIds = await eventIdsOf(DELETIONS.impressionEventIds);
      const impressions = await run(DELETIONS.impressions);
      const keys = await run(DELETIONS.itemKeys);
      await db.run('COMMIT');
      return {
        items,
        rows: items + interactions + kept + impressions + keys,
        interactionEventIds,
        impressionEventIds,
      };
    } catch (error) {
      await db.run('ROLLBACK').catch(() => undefined);
      throw error;
    }
  } finally {
    await db.run('DROP TABLE IF EXISTS temp.deleted_items').catch(() => undefined);
  }
}

/** The catalog's reads, and its removal of items as an exclusive task of the write queue. */
export function duckDbCatalog(read: ReadRunner, writes: WriteQueue): CatalogStore {
  return {
    ...duckDbCatalogReads(read),
    removeItems: (tenantId, itemIds, committed) =>
      writes.exclusive(async (db) => {
        if (itemIds.length === 0) return committed(NOTHING_REMOVED);
        const removed = await removeFromStore(db, tenantId, itemIds);
        // Committed with their item_keys rows: an event naming one of the ids later gets a new key.
        writes.forgetItemKeys(tenantId, itemIds);
        return committed(removed);
      }),
  };
}
