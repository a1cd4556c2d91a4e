import { randomUUID } from 'node:crypto';
import { FEED_BODY, FEED_STATES, type Feed, type FeedBody, type FeedState } from '../contract/feeds.js';
import { ApiError } from '../contract/errors.js';
import type { StoredDocumentKind } from '../state/load-state.js';
import type { CatalogItem } from '../state/item-catalog.js';
import type { TenantState } from '../state/tenant-state.js';
import { deleteConfigDocument, saveConfigDocument } from '../store/api/config.js';
import type { Store } from '../store/store.js';

/** The `config_documents.kind` of feeds. */
export const FEED_KIND = 'feed';

/**
 * A tenant's feeds as configuration documents, and their states (docs/guide.md, "Catalog feeds"):
 *
 *   draft ──preview──► previewed ──activate──► active ⇄ syncing
 *                                                │ activating another feed, or disable
 *                                                ▼
 *                                            disabled ──activate──► active
 *
 * A PUT puts a feed back to draft (its source or mapping changed: preview it again). Every change is a
 * write: it decides against the feeds as committed plus those staged earlier in the same flush, so
 * concurrent requests on a tenant's feeds act one after another.
 */

function claim(tenant: TenantState, id: string): string {
  return `feed\u0000${tenant.tenantId}\u0000${id}`;
}

function staged(tenant: TenantState, scratch: Map<string, unknown>, id: string): Feed | undefined {
  const key = claim(tenant, id);
  if (scratch.has(key)) return (scratch.get(key) as Feed | null) ?? undefined;
  return tenant.feeds.get(id);
}

export function notFound(id: string): ApiError {
  return new ApiError('NOT_FOUND', `feed '${id}' does not exist`);
}

export function conflict(message: string): ApiError {
  return new ApiError('CONFLICT', message);
}

export function listFeeds(tenant: TenantState): Feed[] {
  return [...tenant.feeds.values()].sort((a, b) =>
    a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1,
  );
}

export function getFeed(tenant: TenantState, id: string): Feed {
  const feed = tenant.feeds.get(id);
  if (!feed) throw notFound(id);
  return feed;
}

/** The tenant's active feed (syncing counts: it is the active one, busy), if any. */
export function activeFeed(tenant: TenantState): Feed | undefined {
  for (const feed of tenant.feeds.values())
    if (feed.state === 'active' || feed.state === 'syncing') return feed;
  return undefined;
}

/**
 * The feeds of the tenant a write sees: as committed, with the changes of the writes before it in the
 * same flush. (`all` leaves out a feed created in the same flush: a draft, which no decision about other
 * feeds concerns.)
 */
export interface FeedView {
  get(id: string): Feed | undefined;
  all(): Feed[];
}

/**
 * Changes some of a tenant's feeds in one write: `decide` sees them (throwing an ApiError refuses
 * the change) and returns the feeds to store and the ids to remove. Resolves once they are committed;
 * `committed` runs then, before the answer.
 */
export function changeFeeds(
  store: Store,
  tenant: TenantState,
  decide: (view: FeedView, now: string) => { store: Feed[]; remove?: string[] },
  committed: (tenant: TenantState) => void,
): Promise<void> {
  return store.writes.submit((rows, scratch) => {
    const view: FeedView = {
      get: (id) => staged(tenant, scratch, id),
      all: () =>
        [...tenant.feeds.keys()].map((id) => staged(tenant, scratch, id)).filter((f): f is Feed => !!f),
    };
    const decision = decide(view, new Date().toISOString());
    for (const feed of decision.store) {
      scratch.set(claim(tenant, feed.id), feed);
      rows.ops.push(saveConfigDocument(tenant.tenantId, FEED_KIND, feed.id, feed));
    }
    for (const id of decision.remove ?? []) {
      scratch.set(claim(tenant, id), null);
      rows.ops.push(deleteConfigDocument(tenant.tenantId, FEED_KIND, id));
    }
    return () => {
      for (const feed of decision.store) tenant.feeds.set(feed.id, feed);
      for (const id of decision.remove ?? []) forgetFeed(tenant, id);
      committed(tenant);
    };
  });
}

/** A stored feed of a configuration body: its id first, the daemon's fields last. */
export function feedOf(
  id: string,
  body: FeedBody,
  system: Pick<Feed, 'state' | 'createdAt' | 'updatedAt' | 'lastSync'>,
): Feed {
  const config: Omit<FeedBody, 'id'> & { id?: string } = { ...body };
  delete config.id;
  return { id, ...config, ...system };
}

export function newFeedId(): string {
  return randomUUID();
}

/**
 * Items a sync's apply changed come into memory, as committed (this daemon's sync, or another's it
 * follows: src/following/); their ids join `changed`, which vector indexing looks at once, after the sync.
 */
export function syncedItemsCommitted(
  tenant: TenantState,
  items: readonly CatalogItem[],
  changed: string[],
): void {
  for (const item of items) {
    tenant.upsertCatalogItem(item);
    changed.push(item.externalId);
  }
}

/** A feed removed (here, or by another daemon followed: src/following/) leaves memory. */
export function forgetFeed(tenant: TenantState, id: string): void {
  tenant.feeds.delete(id);
}

/**
 * Puts a stored feed back in memory at start; one the schema no longer accepts is left out. `asStored`:
 * a feed another daemon stored (src/following/) keeps its state, syncing included (that daemon syncs it).
 */
export function restoreFeed(tenant: TenantState, stored: unknown, asStored = false): void {
  const parsed = FEED_BODY.safeParse(stored);
  const doc = stored as Partial<Feed>;
  if (!parsed.success || typeof doc.id !== 'string') return;
  const known = FEED_STATES.includes(doc.state as FeedState) ? (doc.state as FeedState) : 'draft';
  const now = new Date().toISOString();
  tenant.feeds.set(
    doc.id,
    feedOf(doc.id, parsed.data, {
      // A sync does not outlive its process: the feed it ran for is active again.
      state: known === 'syncing' && !asStored ? 'active' : known,
      createdAt: typeof doc.createdAt === 'string' ? doc.createdAt : now,
      updatedAt: typeof doc.updatedAt === 'string' ? doc.updatedAt : now,
      lastSync: doc.lastSync ?? null,
    }),
  );
}

export const feedDocuments: StoredDocumentKind = {
  kind: FEED_KIND,
  restore: (tenant, stored) => restoreFeed(tenant, stored),
  follow: (tenant, stored) => restoreFeed(tenant, stored, true),
  forget: forgetFeed,
};
