import { ApiError } from '../contract/errors.js';
import type { Runtime } from '../runtime.js';
import type { TenantState } from '../state/tenant-state.js';
import type { RemovedItems } from '../store/api/catalog.js';
import { finishErasure } from './erasure.js';

/**
 * Items whose deletion committed in the store but was not finished (a full disk kept the lake, the
 * models or the store file from being rewritten), by tenant: a later deletion of the tenant finishes
 * theirs too.
 */
const unfinished = new WeakMap<TenantState, Set<string>>();

/**
 * Once a removal of items committed (this daemon's, or another's it follows: src/following/): what serves
 * them goes (catalog, vectors and search), with the event ids of the events that went with them, and so
 * do the answer cache's answers (`forgetAnswers`).
 */
export function itemsRemoved(
  tenant: TenantState,
  itemIds: readonly string[],
  removed: Pick<RemovedItems, 'interactionEventIds' | 'impressionEventIds'>,
  forgetAnswers: () => void,
): void {
  tenant.removeItems(itemIds);
  for (const eventId of removed.interactionEventIds) tenant.interactionEventIds.delete(eventId);
  for (const eventId of removed.impressionEventIds) tenant.impressionEventIds.delete(eventId);
  forgetAnswers();
}

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
  // Nothing to delete nor to finish: no removal (a task of its own, which moves the logs first) is queued.
  if (ids.length === 0 && !unfinished.has(tenant)) {
    if (mustExist) throw notFound();
    return 0;
  }
  const removed = await runtime.store.catalog.removeItems(tenantId, ids, (stored) => {
    if (ids.length === 0) return { items: 0, any: false };
    const known = ids.some((id) => tenant.catalog.idOf(id) >= 0);
    // Committed: what serves them goes now, before any later write is built.
    itemsRemoved(tenant, ids, stored, forgetAnswers);
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
