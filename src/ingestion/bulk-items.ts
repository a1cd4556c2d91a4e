import type { BulkUpdateSet } from '../contract/catalog-bulk.js';
import { compileFilter } from '../nextql/index.js';
import type { Runtime } from '../runtime.js';
import type { TenantState } from '../state/tenant-state.js';
import type { StoredItem } from '../store/rows.js';
import { itemsWrite } from './items.js';
import { mergeAttributes } from './merge-attributes.js';

/** Items a bulk update writes at a time: each chunk is one write of the queue, as an upsert batch is. */
const BULK_CHUNK = 5_000;

/**
 * The external ids of the catalog's items that a nextQL filter (validated) matches, in catalog order;
 * `true` matches every item. Context functions find no context here, so what reads them fails closed.
 */
export function matchingItems(tenant: TenantState, filter: string): string[] {
  const { catalog } = tenant;
  const mask = compileFilter(filter).filterAll(catalog, { now: Date.now() });
  const ids: string[] = [];
  for (let id = 0; id < catalog.size; id++) {
    if (mask[id] && catalog.inCatalog[id]) ids.push(catalog.externalIds[id]);
  }
  return ids;
}

/** The stored item with `set` applied: attributes merge key by key, a null removes the key. */
function updatedItem(current: StoredItem, set: BulkUpdateSet, now: number): StoredItem {
  return {
    ...current,
    category: set.category !== undefined ? set.category : current.category,
    attributes: mergeAttributes(current.attributes, set.attributes),
    available: set.available ?? current.available,
    updatedAt: now,
  };
}

/**
 * Applies `set` to the items, through the write queue as item upserts go (docs/guide.md, "Deleting
 * items"): a chunk of BULK_CHUNK items per write, each durable when its write is answered; each item is
 * merged at flush time with what is stored (an item deleted meanwhile is left out) and looked at again
 * for its vector, as an upserted item is. Returns how many items were updated.
 */
export async function updateItems(
  runtime: Runtime,
  tenant: TenantState,
  externalIds: readonly string[],
  set: BulkUpdateSet,
): Promise<number> {
  let updated = 0;
  for (let start = 0; start < externalIds.length; start += BULK_CHUNK) {
    const chunk = externalIds.slice(start, start + BULK_CHUNK);
    updated += await runtime.store.writes.submit(
      itemsWrite(runtime, tenant, chunk, (current, _index, now) => current && updatedItem(current, set, now)),
    );
  }
  return updated;
}
