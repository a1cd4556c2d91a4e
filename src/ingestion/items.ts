import type { ItemUpsert } from '../contract/ingestion.js';
import type { Runtime } from '../runtime.js';
import type { TenantState } from '../state/tenant-state.js';
import { rowKey, type StoredItem } from '../store/rows.js';
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
 * Upserts item deltas durably. The merge runs at flush time against the state plus what earlier writes
 * of the same flush staged, so concurrent deltas of one item never overwrite each other.
 */
export function upsertItems(runtime: Runtime, tenant: TenantState, deltas: ItemUpsert[]): Promise<number> {
  return runtime.store.writes.submit((rows, scratch) => {
    const now = Date.now();
    const merged: StoredItem[] = [];
    for (const delta of deltas) {
      const key = rowKey(tenant.tenantId, delta.externalId);
      const current = (scratch.get(key) as StoredItem | undefined) ?? tenant.catalog.get(delta.externalId);
      const item = mergeItem(current, delta, now);
      scratch.set(key, item);
      rows.items.set(key, [tenant.tenantId, item]);
      merged.push(item);
    }
    return () => {
      for (const item of merged) tenant.upsertItem(item);
      runtime.vectors.itemsChanged(
        tenant,
        merged.map((item) => item.externalId),
      );
      return deltas.length;
    };
  }, deltas.length);
}
