import type { ItemUpsert } from '../contract/ingestion.js';
import type { Runtime } from '../runtime.js';
import type { CatalogItem } from '../state/item-catalog.js';
import type { TenantState } from '../state/tenant-state.js';
import { rowKey, type StoredItem } from '../store/rows.js';
import type { Write } from '../store/write-queue.js';
import { mergeAttributes } from './merge-attributes.js';

/** Merges a delta into the stored item (or creates it): only the fields sent change. */
export function mergeItem(current: StoredItem | undefined, delta: ItemUpsert, now: number): StoredItem {
  return {
    externalId: delta.externalId,
    category: delta.category !== undefined ? delta.category : (current?.category ?? null),
    attributes: mergeAttributes(current?.attributes, delta.attributes),
    expiresAt:
      delta.expiresAt === undefined
        ? (current?.expiresAt ?? null)
        : delta.expiresAt === null
          ? null
          : new Date(delta.expiresAt).toISOString(),
    available: current?.available ?? true,
    feedManaged: current?.feedManaged ?? false,
    createdAt: current?.createdAt ?? now,
    updatedAt: now,
  };
}

/**
 * Once item upserts committed (this daemon's, or another's it follows: src/following/): the state takes
 * the items (as stored, or in the catalog's form as the store reads them back), and the vector indexer
 * looks at them again.
 */
export function itemsCommitted(
  runtime: Pick<Runtime, 'vectors'>,
  tenant: TenantState,
  items: readonly (StoredItem | CatalogItem)[],
): void {
  for (const item of items) {
    if (typeof item.attributes === 'string') tenant.upsertCatalogItem(item as CatalogItem);
    else tenant.upsertItem(item as StoredItem);
  }
  runtime.vectors.itemsChanged(
    tenant,
    items.map((item) => item.externalId),
  );
}

/**
 * A write of the queue that upserts, for each of `ids`, what `merge` makes of its stored item: the one an
 * earlier write of the same flush staged, else the state's (undefined for an unknown id). An id that
 * `merge` gives nothing for is left out. The merge runs at flush time, so concurrent writes of one item
 * never overwrite each other. Once committed, the state takes the items and the vector indexer looks at
 * them again; the write answers how many items it upserted.
 */
export function itemsWrite(
  runtime: Runtime,
  tenant: TenantState,
  ids: readonly string[],
  merge: (current: StoredItem | undefined, index: number, now: number) => StoredItem | undefined,
): Write<number> {
  return (rows, scratch) => {
    const now = Date.now();
    const merged: StoredItem[] = [];
    ids.forEach((externalId, index) => {
      const key = rowKey(tenant.tenantId, externalId);
      const current = (scratch.get(key) as StoredItem | undefined) ?? tenant.catalog.get(externalId);
      const item = merge(current, index, now);
      if (item === undefined) return;
      scratch.set(key, item);
      rows.items.set(key, [tenant.tenantId, item]);
      merged.push(item);
    });
    return () => {
      itemsCommitted(runtime, tenant, merged);
      return merged.length;
    };
  };
}

/** Upserts item deltas durably: only the fields each delta sends change (see itemsWrite). */
export function upsertItems(runtime: Runtime, tenant: TenantState, deltas: ItemUpsert[]): Promise<number> {
  const ids = deltas.map((delta) => delta.externalId);
  const write = itemsWrite(runtime, tenant, ids, (current, index, now) =>
    mergeItem(current, deltas[index], now),
  );
  return runtime.store.writes.submit(write, deltas.length);
}
