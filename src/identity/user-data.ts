import { userDocument } from '../contract/catalog.js';
import { ApiError } from '../contract/errors.js';
import type { Runtime } from '../runtime.js';
import type { TenantState } from '../state/tenant-state.js';
import { REVENUE_TYPES } from '../contract/ingestion.js';
import { REVENUE_COLUMNS, type Revenue } from '../store/row-mapping.js';
import type { StoredInteraction } from '../store/rows.js';
import { forgetIdentities } from '../store/api/identity.js';
import { finishErasure } from '../ingestion/erasure.js';

/** The sessions merged into a user, whose data is the user's too. */
function mergedSessionsOf(tenant: TenantState, userId: string): string[] {
  return [...(tenant.mergedSessions.get(userId) ?? [])];
}

/** A user and the sessions merged into it: every identity whose data is the user's. */
function identitiesOf(tenant: TenantState, userId: string): string[] {
  return [userId, ...mergedSessionsOf(tenant, userId)];
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** A purchase's or a cart's amount, price and profit (docs/guide.md, "Revenue"); nothing for other types. */
function revenueFields(event: StoredInteraction): Partial<Revenue> {
  if (!REVENUE_TYPES.has(event.type)) return {};
  return Object.fromEntries(REVENUE_COLUMNS.map((column) => [column, event[column] ?? null])) as Revenue;
}

/**
 * `GET /users/:userId/export`: the user row, its interactions and impressions (those of the sessions
 * merged into it included) and its merge ledger rows; 404 when the tenant holds nothing of it.
 */
export async function exportUser(runtime: Runtime, tenant: TenantState, userId: string): Promise<object> {
  const data = await runtime.store.identity.userData(
    tenant.tenantId,
    userId,
    mergedSessionsOf(tenant, userId),
  );
  if (!data.user && !data.interactions.length && !data.impressions.length && !data.merges.length) {
    throw new ApiError('NOT_FOUND', `user '${userId}' has no data`);
  }
  return {
    user: data.user ? userDocument(data.user) : null,
    interactions: data.interactions.map((event) => ({
      eventId: event.eventId,
      userId: event.userId,
      sessionId: event.sessionId,
      itemId: event.itemId,
      type: event.type,
      weight: event.weight,
      scenarioSlug: event.scenarioSlug,
      country: event.country,
      timestamp: iso(event.ts),
      receivedAt: iso(event.receivedAt),
      ...revenueFields(event),
    })),
    impressions: data.impressions.map((impression) => ({
      eventId: impression.eventId,
      userId: impression.userId,
      itemIds: impression.itemIds,
      scenarioSlug: impression.scenarioSlug,
      country: impression.country,
      recommId: impression.recommId,
      timestamp: iso(impression.ts),
      receivedAt: iso(impression.receivedAt),
    })),
    merges: data.merges.map((merge) => ({
      userId: merge.userId,
      sessionId: merge.sessionId,
      eventsCopied: merge.eventsCopied,
      mergedAt: iso(merge.mergedAt),
    })),
  };
}

/**
 * Once a deletion of identities committed (this daemon's, or another's it follows: src/following/): the
 * state forgets them and the event ids they sent, and so do the answer cache (`forgetAnswers`) and the
 * answers not yet recorded.
 */
export function identitiesForgotten(
  runtime: Pick<Runtime, 'answers'>,
  tenant: TenantState,
  identities: string[],
  eventIds: string[],
  forgetAnswers: (userIds: string[]) => void,
): void {
  tenant.forgetIdentities(identities, eventIds);
  forgetAnswers(identities);
  runtime.answers.forget(tenant.tenantId, identities);
}

/**
 * `DELETE /users/:userId`: removes the user row, its events and impressions, its merge ledger rows and
 * the events of the sessions merged into it, from the store (whose file is then rewritten, so that no
 * freed page keeps them), the serving state of both threads, the lake (affected files rewritten), the
 * answer cache and every kept model version (docs/batch-models.md, "Deleted ids"); the tenant's models are
 * rebuilt without it. Answers once all of that is done.
 */
export async function deleteUser(
  runtime: Runtime,
  tenant: TenantState,
  userId: string,
  forgetAnswers: (userIds: string[]) => void,
): Promise<void> {
  const identities = identitiesOf(tenant, userId);
  const eventIds = await runtime.store.identity.interactionEventIds(tenant.tenantId, identities);
  await runtime.store.writes.submit((rows) => {
    rows.ops.push(forgetIdentities(tenant.tenantId, identities));
    return () => identitiesForgotten(runtime, tenant, identities, eventIds, forgetAnswers);
  });
  await finishErasure(runtime, tenant.tenantId, {
    // The answer record's rows of them (its experiments' users), which only the answer log writes.
    purgeAnswers: () => runtime.answers.purge(tenant.tenantId, identities),
    eraseLake: () => runtime.lake.erase(tenant.tenantId, identities),
    erased: { users: new Set(identities) },
    // A second DELETE finishes it.
    diskFull:
      "the user's rows were deleted from the store, but the data dir's disk is full: the answer record, " +
      'the lake, the model versions or the store file could not be rewritten without them; send the DELETE again once ' +
      'space is freed',
  });
}
