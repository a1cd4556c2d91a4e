import { REVENUE_TYPES, type Impression, type Interaction } from '../contract/ingestion.js';
import type { InteractionWeights } from '../contract/tenant-settings.js';
import { normalizeCountry } from '../geo/countries.js';
import type { Runtime } from '../runtime.js';
import type { TenantState } from '../state/tenant-state.js';
import type { StoredImpression, StoredInteraction, StoredUser } from '../store/rows.js';
import { provisionUser } from './users.js';

function eventTime(timestamp: number | undefined, receivedAt: number): number {
  return timestamp ?? receivedAt;
}

/**
 * The row an interaction is stored as: without a weight of its own, it gets its type's weight of the
 * tenant's settings (docs/guide.md, "Tenant settings"); a purchase or a cart keeps its amount (1 when
 * not given), price and profit (docs/guide.md, "Revenue").
 */
export function toStoredInteraction(
  event: Interaction,
  receivedAt: number,
  weights: InteractionWeights,
): StoredInteraction {
  const revenue = REVENUE_TYPES.has(event.type);
  return {
    eventId: event.eventId ?? null,
    userId: event.userId ?? null,
    sessionId: event.sessionId ?? null,
    itemId: event.itemId,
    type: event.type,
    weight: event.weight ?? weights[event.type],
    scenarioSlug: event.scenarioSlug ?? null,
    country: normalizeCountry(event.country),
    ts: eventTime(event.timestamp, receivedAt),
    receivedAt,
    recommId: event.recommId ?? null,
    amount: revenue ? (event.amount ?? 1) : null,
    price: event.price ?? null,
    profit: event.profit ?? null,
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
  /** The distinct item ids the batch names that the catalog does not hold (docs/guide.md, "Ingestion"). */
  unknownItems?: number;
}

/** The answer to a batch of `accepted` records that named `unknown` items the catalog does not hold. */
function acceptedOf(accepted: number, unknown: ReadonlySet<string> | undefined): Accepted {
  return unknown && unknown.size > 0 ? { accepted, unknownItems: unknown.size } : { accepted };
}

/** The distinct items of `itemIds` the catalog does not hold, if any. */
function unknownOf(tenant: TenantState, itemIds: Iterable<string>): Set<string> | undefined {
  let unknown: Set<string> | undefined;
  for (const itemId of itemIds) if (!tenant.catalog.holds(itemId)) (unknown ??= new Set()).add(itemId);
  return unknown;
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
  return runtime.store.writes.submit(
    (rows, scratch) => {
      const stored: StoredInteraction[] = [];
      /** The items of events not stored again (their eventId was). */
      const repeated: string[] = [];
      const provisioned: StoredUser[] = [];
      const provisioning = tenant.settings.userProvisioningModes.includes('on_first_known_interaction');
      const scope = `interaction\u0000${tenant.tenantId}`;
      for (const event of events) {
        const row = toStoredInteraction(event, receivedAt, tenant.settings.interactionWeights);
        if (seenBefore(scratch, tenant.interactionEventIds, scope, row.eventId)) {
          repeated.push(row.itemId);
          continue;
        }
        rows.interactions.push([tenant.tenantId, row]);
        stored.push(row);
        if (provisioning && row.userId !== null) {
          const user = provisionUser(rows, scratch, tenant, row.userId, receivedAt);
          if (user) provisioned.push(user);
        }
      }
      return () => {
        const now = Date.now();
        const { catalog } = tenant;
        let unknown: Set<string> | undefined;
        for (const row of stored) {
          // The dense id recording gave tells whether the catalog holds the item, without looking it up again.
          const item = tenant.recordInteraction(row, now);
          if (item >= 0 ? catalog.inCatalog[item] !== 1 : !catalog.holds(row.itemId))
            (unknown ??= new Set()).add(row.itemId);
        }
        for (const itemId of repeated) if (!catalog.holds(itemId)) (unknown ??= new Set()).add(itemId);
        tenant.interactionTotal += stored.length;
        runtime.models.interactionsCommitted(tenant);
        for (const user of provisioned) tenant.users.set(user.externalId, user);
        return acceptedOf(events.length, unknown);
      };
    },
    events.length,
    // Batched apart from item upserts, so each batch goes whole to its own log (docs/guide.md, "The HTTP API").
    { interactionsOnly: true },
  );
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
        events.length,
        unknownOf(
          tenant,
          events.flatMap((event) => event.itemIds),
        ),
      );
    };
  }, events.length);
}
