import type { Impression, Interaction } from '../contract/ingestion.js';
import { normalizeCountry } from '../geo/countries.js';
import type { Runtime } from '../runtime.js';
import type { TenantState } from '../state/tenant-state.js';
import type { StoredImpression, StoredInteraction, StoredUser } from '../store/rows.js';
import { provisionUser } from './users.js';

export const DEFAULT_WEIGHTS = { view: 1, cart: 2, purchase: 4, rating: 3 } as const;

function eventTime(timestamp: number | undefined, receivedAt: number): number {
  return timestamp ?? receivedAt;
}

export function toStoredInteraction(event: Interaction, receivedAt: number): StoredInteraction {
  return {
    eventId: event.eventId ?? null,
    userId: event.userId ?? null,
    sessionId: event.sessionId ?? null,
    itemId: event.itemId,
    type: event.type,
    weight: event.weight ?? DEFAULT_WEIGHTS[event.type],
    scenarioSlug: event.scenarioSlug ?? null,
    country: normalizeCountry(event.country),
    ts: eventTime(event.timestamp, receivedAt),
    receivedAt,
    recommId: event.recommId ?? null,
  };
}

export function toStoredImpression(event: Impression, receivedAt: number): StoredImpression {
  return {
    eventId: event.eventId ?? null,
    userId: event.userId ?? event.sessionId ?? null,
    itemIds: event.itemIds,
    scenarioSlug: event.scenarioSlug ?? null,
    country: normalizeCountry(event.country),
    recommId: event.recommId ?? null,
    ts: eventTime(event.timestamp, receivedAt),
    receivedAt,
  };
}

/** Whether an event id was stored before or earlier in this flush; remembers it for the flush. */
function seenBefore(
  scratch: Map<string, unknown>,
  stored: Set<string>,
  scope: string,
  eventId: string | null,
) {
  if (eventId === null) return false;
  const key = `${scope}\u0000${eventId}`;
  if (stored.has(eventId) || scratch.has(key)) return true;
  scratch.set(key, true);
  return false;
}

/** What an event batch's answer says: every record counts as accepted; `unknownItems` when some are. */
export interface Accepted {
  accepted: number;
  /** The distinct item ids the batch names that the catalog does not hold (README, "Ingestion"). */
  unknownItems?: number;
}

/** The answer to a batch of `accepted` records naming these items. */
function acceptedOf(tenant: TenantState, accepted: number, itemIds: Iterable<string>): Accepted {
  const unknown = new Set<string>();
  for (const itemId of itemIds) if (!tenant.catalog.holds(itemId)) unknown.add(itemId);
  return unknown.size > 0 ? { accepted, unknownItems: unknown.size } : { accepted };
}

/**
 * Appends interactions durably. Every record counts as accepted, also one naming an item the catalog
 * does not hold yet (a feed may bring it later); one whose eventId is already stored is not stored again.
 * With on_first_known_interaction, a first userId also gets a minimal user row.
 */
export function appendInteractions(
  runtime: Runtime,
  tenant: TenantState,
  events: Interaction[],
): Promise<Accepted> {
  const receivedAt = Date.now();
  return runtime.store.writes.submit((rows, scratch) => {
    const stored: StoredInteraction[] = [];
    const provisioned: StoredUser[] = [];
    const provisioning = tenant.settings.userProvisioningModes.includes('on_first_known_interaction');
    const scope = `interaction\u0000${tenant.tenantId}`;
    for (const event of events) {
      const row = toStoredInteraction(event, receivedAt);
      if (seenBefore(scratch, tenant.interactionEventIds, scope, row.eventId)) continue;
      rows.interactions.push([tenant.tenantId, row]);
      stored.push(row);
      if (provisioning && row.userId !== null) {
        const user = provisionUser(rows, scratch, tenant, row.userId, receivedAt);
        if (user) provisioned.push(user);
      }
    }
    return () => {
      const now = Date.now();
      for (const row of stored) tenant.recordInteraction(row, now);
      tenant.interactionTotal += stored.length;
      runtime.models.interactionsCommitted(tenant);
      for (const user of provisioned) tenant.users.set(user.externalId, user);
      return acceptedOf(
        tenant,
        events.length,
        events.map((event) => event.itemId),
      );
    };
  }, events.length);
}

/** Appends impressions durably, deduplicated by eventId like interactions. */
export function appendImpressions(
  runtime: Runtime,
  tenant: TenantState,
  events: Impression[],
): Promise<Accepted> {
  const receivedAt = Date.now();
  return runtime.store.writes.submit((rows, scratch) => {
    const stored: StoredImpression[] = [];
    const scope = `impression\u0000${tenant.tenantId}`;
    for (const event of events) {
      const row = toStoredImpression(event, receivedAt);
      if (seenBefore(scratch, tenant.impressionEventIds, scope, row.eventId)) continue;
      rows.impressions.push([tenant.tenantId, row]);
      stored.push(row);
    }
    return () => {
      for (const row of stored) if (row.eventId !== null) tenant.impressionEventIds.add(row.eventId);
      return acceptedOf(
        tenant,
        events.length,
        events.flatMap((event) => event.itemIds),
      );
    };
  }, events.length);
}
