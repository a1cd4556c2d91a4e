import { listValue, type DuckDBConnection } from '@duckdb/node-api';
import { ApiError } from '../contract/errors.js';
import type { Runtime } from '../runtime.js';
import type { TenantState } from '../state/tenant-state.js';
import { finishErasure } from './erasure.js';

/** The ids being deleted, in the write connection's TEMP schema while a deletion runs. */
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

/** What the store held of the deleted items. */
interface Removed {
  /** Item rows deleted. */
  items: number;
  /** Rows of any table that named one of them. */
  rows: number;
  interactionEventIds: string[];
  impressionEventIds: string[];
}

function eventIds(rows: unknown[][]): string[] {
  return rows
    .map(([eventId]) => eventId)
    .filter((id) => id !== null && id !== undefined)
    .map(String);
}

/** Removes the items from the store in one transaction on the write connection. */
async function removeFromStore(db: DuckDBConnection, tenantId: string, itemIds: string[]): Promise<Removed> {
  await db.run(`CREATE OR REPLACE TEMP TABLE deleted_items AS SELECT DISTINCT unnest($1::VARCHAR[]) AS id`, [
    listValue(itemIds),
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

/**
 * Items whose deletion committed in the store but was not finished (a full disk kept the lake, the
 * models or the store file from being rewritten), by tenant: a later deletion of the tenant finishes
 * theirs too.
 */
const unfinished = new WeakMap<TenantState, Set<string>>();

/**
 * Deletes items (docs/guide.md, "Deleting items"): from the store (its file then rewritten, so that no
 * freed page keeps them), the serving state of both threads (catalog, vectors and search), the answer
 * cache and the answer record, the lake (files naming them rewritten) and every kept model version
 * (docs/batch-models.md, "Deleted ids"); the tenant's models are then built again without them. Runs
 * through the write queue as one task of its own, after the writes queued before it. Returns how many of
 * the items the store held; when neither the store nor the serving state knew any of the ids and
 * `mustExist`, 404 ITEM_NOT_FOUND.
 * `forgetAnswers` drops what the server keeps of requests besides the runtime (cached answers, bodies).
 */
export async function deleteItems(
  runtime: Runtime,
  tenant: TenantState,
  itemIds: readonly string[],
  forgetAnswers: () => void,
  mustExist = false,
): Promise<number> {
  const ids = [...new Set(itemIds)];
  const { tenantId } = tenant;
  const notFound = () => new ApiError('ITEM_NOT_FOUND', `item '${ids[0]}' does not exist`);
  // Nothing to delete nor to finish: no exclusive task (which moves the logs first) is queued.
  if (ids.length === 0 && !unfinished.has(tenant)) {
    if (mustExist) throw notFound();
    return 0;
  }
  const removed = await runtime.store.writes.exclusive(async (db) => {
    if (ids.length === 0) return { items: 0, any: false };
    const known = ids.some((id) => tenant.catalog.idOf(id) >= 0);
    const stored = await removeFromStore(db, tenantId, ids);
    // Committed: what serves them goes now, before any later write is built.
    tenant.removeItems(ids);
    runtime.store.writes.forgetItemKeys(tenantId, ids);
    for (const eventId of stored.interactionEventIds) tenant.interactionEventIds.delete(eventId);
    for (const eventId of stored.impressionEventIds) tenant.impressionEventIds.delete(eventId);
    forgetAnswers();
    return { items: stored.items, any: known || stored.rows > 0 };
  });
  const left = unfinished.get(tenant);
  if (!removed.any && !left) {
    if (mustExist) throw notFound();
    return 0;
  }
  const erased = [...new Set([...ids, ...(left ?? [])])];
  unfinished.set(tenant, new Set(erased));
  await finishErasure(runtime, tenantId, {
    purgeAnswers: async () => {
      runtime.answers.forgetItems(tenantId, erased);
      await runtime.answers.purgeItems(tenantId, erased);
    },
    eraseLake: () => runtime.lake.eraseItems(tenantId, erased),
    erased: { items: new Set(erased) },
    // A later deletion finishes it.
    diskFull:
      "the items' rows were deleted from the store and from serving, but the data dir's disk is full: the " +
      'answer record, the lake, the model versions or the store file could not be rewritten without ' +
      'them; the next item deletion of the tenant, once space is freed, finishes it',
  });
  unfinished.delete(tenant);
  if (!removed.any && mustExist) throw notFound();
  return removed.items;
}
