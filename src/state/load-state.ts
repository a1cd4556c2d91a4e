import type { LoadReads, TenantChunk } from '../store/api/load.js';
import type { TenantReads } from '../store/api/tenants.js';
import type { VectorConfigField } from '../store/lake-export.js';
import type { ServingState, TenantState } from './tenant-state.js';
import { HISTORY_WINDOW_MS, PURCHASE_WINDOW_MS } from './user-histories.js';

/**
 * A kind of configuration document and how its documents go back into a tenant's state at start. The
 * state knows none of the kinds: their owners (config/, tenants/, feeds/) define them, and the runtime
 * (src/runtime.ts) hands them all to `loadState`.
 */
export interface StoredDocumentKind {
  readonly kind: string;
  /** The field of the vectors job's configuration its documents fill, when the job reads them. */
  readonly vectorConfig?: VectorConfigField;
  /** Puts one stored document back in memory; one its schema no longer accepts is left out. */
  restore(tenant: TenantState, stored: unknown): void;
  /**
   * Puts a document another daemon stored in memory (src/following/), when that differs from `restore`
   * (which undoes what does not outlive a process).
   */
  follow?(tenant: TenantState, stored: unknown): void;
  /** The tenant has no document of the key (any more): memory holds what it holds without one. */
  forget(tenant: TenantState, key: string): void;
}

/** What loading reads of the store (the Store has both). */
export interface LoadSource {
  readonly tenants: TenantReads;
  readonly load: LoadReads;
}

/** Rebuilds the serving state from the store (at start), with the documents of the `kinds` given. */
export async function loadState(
  store: LoadSource,
  state: ServingState,
  kinds: readonly StoredDocumentKind[],
  now = Date.now(),
): Promise<void> {
  const { load } = store;
  for (const tenantId of await store.tenants.ids()) state.add(tenantId);
  for (const { tenantId, userId, sessionId } of await load.merges()) {
    state.get(tenantId)?.recordMerge(userId, sessionId);
  }
  for (const documents of kinds) {
    for (const { tenantId, document } of await load.documents(documents.kind)) {
      const tenant = state.get(tenantId);
      if (tenant) documents.restore(tenant, document);
    }
  }
  await eachRow(load.items(), (tenantId, item) => state.get(tenantId)?.upsertCatalogItem(item));
  await eachRow(load.users(), (tenantId, user) => state.get(tenantId)?.users.set(user.externalId, user));
  for (const { tenantId, total } of await load.interactionTotals()) {
    const tenant = state.get(tenantId);
    if (tenant) tenant.interactionTotal = total;
  }
  await eachRow(load.interactionEventIds(), (tenantId, eventId) =>
    state.get(tenantId)?.interactionEventIds.add(eventId),
  );
  await eachRow(load.impressionEventIds(), (tenantId, eventId) =>
    state.get(tenantId)?.impressionEventIds.add(eventId),
  );
  // The histories, in time order; only events still inside a window: 30 days of everything, 90 days of
  // purchases.
  await eachRow(
    load.windowedInteractions(now - HISTORY_WINDOW_MS, now - PURCHASE_WINDOW_MS),
    (tenantId, event) => state.get(tenantId)?.recordInteraction(event, now),
  );
}

/** Calls `each` with every row of a stream, read a chunk at a time. */
async function eachRow<T>(
  chunks: AsyncIterable<TenantChunk<T>>,
  each: (tenantId: string, row: T) => void,
): Promise<void> {
  for await (const { tenantIds, rows } of chunks) {
    for (let i = 0; i < rows.length; i++) each(tenantIds[i], rows[i]);
  }
}
