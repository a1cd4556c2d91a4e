import type pg from 'pg';
import type { RemovedItems } from '../api/catalog.js';
import { ERASE_ITEMS_FROM_LOG, hashesOf, logChanges } from './change-log.js';
import { inTransaction, runStatements } from './transaction.js';

/**
 * The statements that remove the items `$2` (an array) of the tenant `$1` (CatalogStore.removeItems):
 * the items, their interactions and keys; an impression keeps the other items it showed (with their keys,
 * in order) and goes when it showed none of the others. The event ids of the events that go are read
 * before they go.
 */
const REMOVAL = {
  // First, as a flush takes them: the tenant's event counters. A flush of the tenant and the removal then
  // run one after the other, so no flush reads a key of these items before they go and stores events
  // under it after (event-numbers.ts).
  counters: 'SELECT 1 FROM event_counters WHERE tenant_id = $1 FOR UPDATE',
  items: 'DELETE FROM items WHERE tenant_id = $1 AND external_id = ANY($2)',
  interactionEventIds: `SELECT event_id FROM interactions
                         WHERE tenant_id = $1 AND item_id = ANY($2) AND event_id IS NOT NULL`,
  interactions: 'DELETE FROM interactions WHERE tenant_id = $1 AND item_id = ANY($2)',
  impressionsKept: `UPDATE impressions SET
      item_ids = ARRAY(SELECT s.id FROM unnest(item_ids, item_keys) WITH ORDINALITY AS s(id, key, n)
                        WHERE s.id <> ALL($2) ORDER BY s.n),
      item_keys = ARRAY(SELECT s.key FROM unnest(item_ids, item_keys) WITH ORDINALITY AS s(id, key, n)
                         WHERE s.id <> ALL($2) ORDER BY s.n)
    WHERE tenant_id = $1 AND item_ids && $2::text[]
      AND EXISTS (SELECT 1 FROM unnest(item_ids) AS s(id) WHERE s.id <> ALL($2))`,
  impressionEventIds: `SELECT event_id FROM impressions
                        WHERE tenant_id = $1 AND item_ids && $2::text[] AND event_id IS NOT NULL`,
  impressions: 'DELETE FROM impressions WHERE tenant_id = $1 AND item_ids && $2::text[]',
  itemKeys: 'DELETE FROM item_keys WHERE tenant_id = $1 AND item_id = ANY($2)',
};

/**
 * Removes the items from the store in one transaction on `client` (CatalogStore.removeItems); last, the
 * removal goes to the tenant's change log in the name of `origin` (change-log.ts).
 */
export async function removeItems(
  client: pg.ClientBase,
  tenantId: string,
  itemIds: readonly string[],
  origin = '',
): Promise<RemovedItems> {
  const values = [tenantId, [...new Set(itemIds)]];
  const run = async (text: string) => (await client.query(text, values)).rowCount ?? 0;
  const eventIdsOf = async (text: string) =>
    (await client.query<{ event_id: string }>(text, values)).rows.map((row) => row.event_id);
  return inTransaction(client, async () => {
    await client.query(REMOVAL.counters, [tenantId]);
    const items = await run(REMOVAL.items);
    const interactionEventIds = await eventIdsOf(REMOVAL.interactionEventIds);
    const interactions = await run(REMOVAL.interactions);
    const kept = await run(REMOVAL.impressionsKept);
    const impressionEventIds = await eventIdsOf(REMOVAL.impressionEventIds);
    const impressions = await run(REMOVAL.impressions);
    const keys = await run(REMOVAL.itemKeys);
    // The log names the items no more: the removal by their hashes (change-log.ts).
    await run(ERASE_ITEMS_FROM_LOG);
    const change = {
      kind: 'item-removals' as const,
      tenantId,
      hashes: hashesOf(values[1] as string[]),
      interactionEventIds,
      impressionEventIds,
    };
    await runStatements(client, logChanges(origin, new Map([[tenantId, [change]]])));
    return {
      items,
      rows: items + interactions + kept + impressions + keys,
      interactionEventIds,
      impressionEventIds,
    };
  });
}
