import { z } from 'zod';
import { ISO_DATE_TIME, MAX_BATCH, NON_EMPTY_ID } from './common.js';

const COUNTRY = z.string().max(16).nullable();
const SLUG = z.string().min(1).max(128).nullable();
const EVENT_ID = z.string().min(1).max(256);

/** A partial delta: attributes merge key by key, and a null attribute value removes that key. */
export const ITEM_UPSERT = z.strictObject({
  externalId: NON_EMPTY_ID,
  category: z.string().max(512).nullable().optional(),
  attributes: z.record(z.string(), z.unknown()).optional(),
  expiresAt: ISO_DATE_TIME.nullable().optional(),
});
export type ItemUpsert = z.infer<typeof ITEM_UPSERT>;

export const USER_UPSERT = z.strictObject({
  externalId: NON_EMPTY_ID,
  attributes: z.record(z.string(), z.unknown()).optional(),
});
export type UserUpsert = z.infer<typeof USER_UPSERT>;

export const INTERACTION_TYPES = ['view', 'cart', 'purchase', 'rating', 'bookmark'] as const;

/** The types whose events may carry `amount`, `price` and `profit` (docs/guide.md, "Revenue"). */
export const REVENUE_TYPES: ReadonlySet<unknown> = new Set(['purchase', 'cart']);
export const REVENUE_FIELDS = ['amount', 'price', 'profit'] as const;

/** Fields every event carries; one of userId or sessionId names who acted. */
const EVENT_FIELDS = {
  userId: NON_EMPTY_ID.optional(),
  sessionId: NON_EMPTY_ID.optional(),
  scenarioSlug: SLUG.optional(),
  country: COUNTRY.optional(),
  timestamp: ISO_DATE_TIME.optional(),
  eventId: EVENT_ID.optional(),
  recommId: z.string().max(256).optional(),
};

function hasIdentity(value: { userId?: string; sessionId?: string }): boolean {
  return value.userId !== undefined || value.sessionId !== undefined;
}

function event<T extends z.ZodRawShape>(fields: T) {
  return z
    .strictObject({ ...EVENT_FIELDS, ...fields })
    .refine((value) => hasIdentity(value as { userId?: string; sessionId?: string }), {
      message: 'one of userId or sessionId is required',
      path: ['userId'],
    });
}

export const INTERACTION = event({
  itemId: NON_EMPTY_ID,
  type: z.enum(INTERACTION_TYPES),
  weight: z.number().finite().optional(),
  amount: z
    .number()
    .finite()
    .gt(0)
    .optional()
    .describe('Units bought or put in the cart (purchase and cart only; default 1)'),
  price: z
    .number()
    .finite()
    .min(0)
    .optional()
    .describe('The total price for the amount (purchase and cart only)'),
  profit: z.number().finite().optional().describe('The total profit for the amount (purchase and cart only)'),
}).refine(
  (value) => REVENUE_TYPES.has(value.type) || REVENUE_FIELDS.every((field) => value[field] === undefined),
  { message: 'amount, price and profit are accepted on purchase and cart events only', path: ['type'] },
);
export type Interaction = z.infer<typeof INTERACTION>;

export const IMPRESSION = event({ itemIds: z.array(NON_EMPTY_ID).min(1, 'at least one item id') });
export type Impression = z.infer<typeof IMPRESSION>;

function batch<T extends z.ZodType>(record: T) {
  return z.array(record).max(MAX_BATCH, `at most ${MAX_BATCH} records per request`);
}

export const ITEMS_BODY = z.strictObject({ items: batch(ITEM_UPSERT) });
export const USERS_BODY = z.strictObject({ users: batch(USER_UPSERT) });
export const INTERACTIONS_BODY = z.strictObject({ interactions: batch(INTERACTION) });
export const IMPRESSIONS_BODY = z.strictObject({ impressions: batch(IMPRESSION) });

export const UPSERTED = z.object({ upserted: z.number().int() });
export const ACCEPTED = z.object({
  accepted: z.number().int(),
  /** Beyond the contract, when some are: the distinct item ids named that the catalog does not hold. */
  unknownItems: z.number().int().optional(),
});
