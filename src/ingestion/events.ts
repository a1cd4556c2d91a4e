import { REVENUE_TYPES, type Impression, type Interaction } from '../contract/ingestion.js';
import type { InteractionWeights } from '../contract/tenant-settings.js';
import { normalizeCountry } from '../geo/countries.js';
import type { Runtime } from '../runtime.js';
import type { TenantState } from '../state/tenant-state.js';
import type { StoredImpression, StoredInteraction, StoredUser } from '../store/rows.js';
import { provisionUser, usersCommitted } from './users.js';

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
 * Once interactions committed (this daemon's writes, or another's it follows: src/following/): each joins
 * the state (`each` is told the item's dense id, see TenantState.recordInteraction), the tenant's total
 * counts them, and the models hear of them.
 */
export function interactionsCommitted(
  runtime: Pick<Runtime, 'models'>,
  tenant: TenantState,
  events: readonly StoredInteraction[],
  each?: (event: StoredInteraction, item: number) => void,
): void {
  const now = Date.now();
  for (const event of events) {
    const item = tenant.recordInteraction(event, now);
    each?.(event, item);
  }
  tenant.interactionTotal += events.length;
  runtime.models.interactionsCommitted(tenant);
}

/** Once impressions committed (this daemon's, or another's it follows): their event ids are held. */
export function impressionsCommitted(tenant: TenantState, eventIds: Iterable<string | null>): void {
  for (const eventId of eventIds) if (eventId !== null) tenant.impressionEventIds.add(eventId);
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
        const { catalog } = tenant;
        let unknown: Set<string> | undefined;
        // Only what the store stored: an event whose id another daemon stored meanwhile is its change,
        // which this daemon follows (src/following/).
        const kept = stored.filter((row) => rows.stored(row));
        interactionsCommitted(runtime, tenant, kept, (row, item) => {
          // The dense id recording gave tells whether the catalog holds the item, without looking it up again.
          if (item >= 0 ? catalog.inCatalog[item] !== 1 : !catalog.holds(row.itemId))
            (unknown ??= new Set()).add(row.itemId);
        });
        for (const itemId of repeated) if (!catalog.holds(itemId)) (unknown ??= new Set()).add(itemId);
        for (const row of stored)
          if (!rows.stored(row) && !catalog.holds(row.itemId)) (unknown ??= new Set()).add(row.itemId);
        usersCommitted(tenant, provisioned);
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
      impressionsCommitted(
        tenant,
        stored.filter((row) => rows.stored(row)).map((row) => row.eventId),
      );
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
