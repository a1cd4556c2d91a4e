import type { AnsweredItem, ServedUser } from './api/analytics.js';
import type { InteractionType, StoredInteraction, StoredItem, StoredUser } from './rows.js';

/**
 * An item as the catalog (state/item-catalog.ts) holds it: the stored item with its attributes as JSON
 * text. A text costs less than half of the object it encodes (docs/memory.md), and crosses to the ranking
 * thread as one string rather than key by key.
 */
export type CatalogItem = Omit<StoredItem, 'attributes'> & { attributes: string };

/** The item columns, in the order `itemFromRow` reads them. */
export const ITEM_COLUMNS =
  'external_id, category, attributes, expires_at, available, feed_managed, created_at, updated_at';

/** The user columns, in the order `userFromRow` reads them. */
export const USER_COLUMNS = 'external_id, attributes, created_at, updated_at';

function attributesOf(value: unknown): Record<string, unknown> {
  return value === null ? {} : (JSON.parse(String(value)) as Record<string, unknown>);
}

export function nullableString(value: unknown): string | null {
  return value === null ? null : String(value);
}

export function nullableNumber(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** The revenue columns of `interactions`, in their order (docs/guide.md, "Revenue"). */
export const REVENUE_COLUMNS = ['amount', 'price', 'profit'] as const;

export type Revenue = Record<(typeof REVENUE_COLUMNS)[number], number | null>;

/** The REVENUE_COLUMNS of a row (as DuckDB's JS values), starting at `offset`. */
export function revenueFromRow(row: readonly unknown[], offset = 0): Revenue {
  return Object.fromEntries(
    REVENUE_COLUMNS.map((column, i) => [column, nullableNumber(row[offset + i])]),
  ) as Revenue;
}

/** A row of ITEM_COLUMNS (as DuckDB's JS values), starting at `offset`. */
export function itemFromRow(row: readonly unknown[], offset = 0): StoredItem {
  const item = catalogItemFromRow(row, offset);
  return { ...item, attributes: attributesOf(item.attributes) };
}

/** A row of ITEM_COLUMNS as the serving state's catalog holds it: the attributes stay JSON text. */
export function catalogItemFromRow(row: readonly unknown[], offset = 0): CatalogItem {
  const [id, category, attributes, expiresAt, available, feedManaged, createdAt, updatedAt] =
    row.slice(offset);
  return {
    externalId: String(id),
    category: nullableString(category),
    attributes: attributes === null ? '{}' : String(attributes),
    expiresAt: nullableString(expiresAt),
    available: Boolean(available),
    feedManaged: Boolean(feedManaged),
    createdAt: Number(createdAt),
    updatedAt: Number(updatedAt),
  };
}

/** A row of USER_COLUMNS, starting at `offset`. */
export function userFromRow(row: readonly unknown[], offset = 0): StoredUser {
  const [id, attributes, createdAt, updatedAt] = row.slice(offset);
  return {
    externalId: String(id),
    attributes: attributesOf(attributes),
    createdAt: Number(createdAt),
    updatedAt: Number(updatedAt),
  };
}

/**
 * An interaction as a history keeps it (LoadReads.windowedInteractions), from the columns tenant_id,
 * user_id, session_id, item_id, type, weight, country, ts and merged: no event id, scenario or revenue,
 * and `ts` as its receipt.
 */
export function historyEventFromRow(row: readonly unknown[]): StoredInteraction {
  const [, userId, sessionId, itemId, type, weight, country, ts, merged] = row;
  return {
    eventId: null,
    userId: nullableString(userId),
    sessionId: nullableString(sessionId),
    itemId: String(itemId),
    type: type as InteractionType,
    weight: Number(weight),
    scenarioSlug: null,
    country: nullableString(country),
    ts: Number(ts),
    receivedAt: Number(ts),
    merged: merged === true,
  };
}

/**
 * The record of answers' rows of `answer_items` (tenant_id, day, item_id) and `experiment_users`
 * (tenant_id, day, experiment, scenario, user_id), as AnswerRecordStore.answerRecordRows gives them.
 */
export function answerRecordFromRows(
  items: readonly (readonly unknown[])[],
  users: readonly (readonly unknown[])[],
): { items: AnsweredItem[]; users: ServedUser[] } {
  return {
    items: items.map(([tenantId, day, itemId]): AnsweredItem => [`${tenantId}`, Number(day), `${itemId}`]),
    users: users.map(([tenantId, day, experiment, scenario, userId]): ServedUser => [
      `${tenantId}`,
      Number(day),
      `${experiment}`,
      `${scenario}`,
      `${userId}`,
    ]),
  };
}
