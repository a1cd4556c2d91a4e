import { interactionsCommitted, impressionsCommitted } from '../ingestion/events.js';
import { itemsRemoved } from '../ingestion/item-deletes.js';
import { itemsCommitted } from '../ingestion/items.js';
import { usersCommitted } from '../ingestion/users.js';
import { identitiesForgotten } from '../identity/user-data.js';
import { DOCUMENT_KINDS, type Runtime } from '../runtime.js';
import type { TenantState } from '../state/tenant-state.js';
import type { ChangeFeed, ChangeReads, StoreChange } from '../store/api/changes.js';
import type { ConfigOp } from '../store/api/config.js';
import { identityHash } from '../store/identity-hash.js';
import { syncedItemsCommitted } from '../feeds/feeds.js';
import { credentialsStored } from '../tenants/load-credentials.js';

/**
 * What the server keeps beside the runtime that a deletion makes stale, whether this daemon took it or
 * followed it from another: the answer cache, the pages of answers, the remembered bodies.
 */
export interface StaleAnswers {
  /** Items of the tenant were deleted. */
  itemsRemoved(tenantId: string): void;
  /** Identities (a user and the sessions merged into it) were deleted. */
  identitiesForgotten(tenantId: string, identities: string[]): void;
}

/** Where following reports a change it could not apply (it is tried again). */
export type FollowFailed = (error: unknown) => void;

const kindsByName = new Map(DOCUMENT_KINDS.map((documents) => [documents.kind, documents]));

/**
 * Follows the writes of the other daemons sharing the runtime's store into its serving state
 * (docs/architecture.md, "The store"), from where its state was loaded: each change is read back as
 * committed now and applied by the code the writing daemon's apply step ran, so that both states end
 * alike; what that step does beyond the state (the models told of interactions, vector indexing of
 * items, the answer cache and the answers not yet recorded forgetting deleted ids) is done here too.
 * What the writing daemon does once for every daemon (the lake, model versions, the store's scrub, the
 * models rebuilt after a deletion) is left to it. Returns the feed, to wait until caught up; none for
 * a store no other daemon shares.
 */
export function followChanges(
  runtime: Runtime,
  deletions: StaleAnswers,
  failed: FollowFailed,
): ChangeFeed | undefined {
  const feed = runtime.store.changes;
  if (!feed || !runtime.loadedAt) return undefined;
  feed.follow(runtime.loadedAt, (change) => applyChange(runtime, feed.reads, deletions, change), failed);
  return feed;
}

/**
 * Applies one change: reads first, then changes the state without waiting, so that a read that fails
 * leaves the state as it was (the change is handed again).
 */
export async function applyChange(
  runtime: Runtime,
  reads: ChangeReads,
  deletions: StaleAnswers,
  change: StoreChange,
): Promise<void> {
  const { tenantId } = change;
  if (change.kind === 'op' && change.op.area === 'tenants') {
    // Created or given a credential: the tenant and its credentials as stored now.
    const exists = await reads.tenant(tenantId);
    const credentials = await reads.credentials(tenantId);
    if (exists) runtime.state.add(tenantId);
    credentialsStored(runtime.credentials, credentials);
    return;
  }
  const tenant = runtime.state.get(tenantId);
  // A tenant is never removed: one not held is not created yet, which its own change does first.
  if (!tenant) return;
  switch (change.kind) {
    case 'items': {
      const items = await reads.items(tenantId, change.itemIds);
      itemsCommitted(runtime, tenant, items);
      return;
    }
    case 'users':
      usersCommitted(tenant, await reads.users(tenantId, change.userIds));
      return;
    case 'interactions':
      interactionsCommitted(runtime, tenant, await reads.interactions(tenantId, change.first, change.last));
      return;
    case 'impressions':
      impressionsCommitted(tenant, await reads.impressionEventIds(tenantId, change.first, change.last));
      return;
    case 'item-removals': {
      const itemIds = hashed(tenant.catalog.externalIds, change.hashes);
      // Items written again since (by a write committed after the removal) stay, as stored now.
      const again = itemIds.length > 0 ? await reads.items(tenantId, itemIds) : [];
      itemsRemoved(tenant, itemIds, change, () => deletions.itemsRemoved(tenantId));
      runtime.answers.forgetItems(tenantId, itemIds);
      if (again.length > 0) itemsCommitted(runtime, tenant, again);
      return;
    }
    case 'identities-forgotten': {
      const identities = hashed(identitiesOf(tenant), change.hashes);
      // Users created again since (by a write committed after the deletion) stay, as stored now.
      const again = identities.length > 0 ? await reads.users(tenantId, identities) : [];
      identitiesForgotten(runtime, tenant, identities, [], (forgotten) =>
        deletions.identitiesForgotten(tenantId, forgotten),
      );
      usersCommitted(tenant, again);
      return;
    }
    case 'feed-apply': {
      const changed: string[] = [];
      // Chunk by chunk, as the syncing daemon took them: taking an item again changes nothing, so a read
      // that fails midway and the change handed again do no harm.
      for await (const items of reads.itemsUpdatedAt(tenantId, change.updatedAt))
        syncedItemsCommitted(tenant, items, changed);
      runtime.vectors.itemsChanged(tenant, changed);
      return;
    }
    case 'erased':
      return;
    case 'op':
      if (change.op.area === 'config') return applyConfig(reads, tenant, change.op);
      if (change.op.area === 'identity') {
        // The merge ledger's pair, unless a deletion of either identity committed since.
        const { userId, sessionId } = change.op;
        if (await reads.merged(tenantId, userId, sessionId)) tenant.recordMerge(userId, sessionId);
      }
  }
}

/**
 * The ids of `held` whose hashes (identityHash) are among `hashes`: a deletion names what it deleted by
 * hashes only (src/store/api/changes.ts). Two ids share a hash only when both 32-bit lanes collide.
 */
function hashed(held: Iterable<string>, hashes: readonly string[]): string[] {
  const wanted = new Set(hashes);
  const found = new Set<string>();
  for (const id of held) if (wanted.has(identityHash(id).toString())) found.add(id);
  return [...found];
}

/** Every identity the tenant's state holds something of: users, histories, the merge ledger's. */
function* identitiesOf(tenant: TenantState): Iterable<string> {
  yield* tenant.users.keys();
  yield* tenant.histories.identities();
  for (const [userId, sessions] of tenant.mergedSessions) {
    yield userId;
    yield* sessions;
  }
}

/** A configuration document saved or deleted: memory takes the document of the key as stored now. */
async function applyConfig(reads: ChangeReads, tenant: TenantState, op: ConfigOp): Promise<void> {
  const documents = kindsByName.get(op.kind);
  if (!documents) return;
  const stored = await reads.document(tenant.tenantId, op.kind, op.key);
  if (stored === undefined) documents.forget(tenant, op.key);
  else (documents.follow ?? documents.restore).call(documents, tenant, stored);
}
