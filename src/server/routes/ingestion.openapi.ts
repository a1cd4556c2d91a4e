import type { Operations } from '../openapi/operation.js';

/**
 * What the OpenAPI document says of the routes of ingestion.ts beyond their schemas (docs/guide.md,
 * "The HTTP API"); src/server/openapi/document.ts gathers the entries of every module into the document.
 */
export const openapi: Operations = {
  'POST /ingestion/items': {
    id: 'upsertItems',
    tag: 'Ingestion',
    summary: 'Upsert items',
    description:
      'Creates or updates up to 10,000 items; attributes merge key by key and `null` removes a key. All or nothing: one bad record rejects the batch with a detail per problem.',
    example: {
      items: [{ externalId: 'sku-1', category: 'shoes', attributes: { name: 'Trail runner', price: 89 } }],
    },
    answer: { upserted: 1 },
  },
  'POST /ingestion/users': {
    id: 'upsertUsers',
    tag: 'Ingestion',
    summary: 'Upsert users',
    description: 'Creates or updates up to 10,000 users; attributes merge key by key.',
    example: { users: [{ externalId: 'u-42', attributes: { country: 'DE' } }] },
    answer: { upserted: 1 },
  },
  'POST /ingestion/interactions': {
    id: 'appendInteractions',
    tag: 'Ingestion',
    summary: 'Send interactions',
    description:
      'Appends up to 10,000 views, carts, purchases, ratings and bookmarks, durably. An eventId stored before is accepted and not stored again; events naming items the catalog lacks are accepted and counted in `unknownItems`. Purchases and carts may carry `amount` (> 0, default 1), `price` (≥ 0, the total for the amount) and `profit` (the total); other types may not (400 `INVALID_BODY`).',
    example: {
      interactions: [
        {
          userId: 'u-42',
          itemId: 'sku-1',
          type: 'purchase',
          scenarioSlug: 'home',
          amount: 2,
          price: 59.8,
          profit: 12,
        },
      ],
    },
    answer: { accepted: 1 },
  },
  'POST /ingestion/impressions': {
    id: 'appendImpressions',
    tag: 'Ingestion',
    summary: 'Send impressions',
    description:
      "Appends up to 10,000 impressions (the items a list showed), with the answer's `recommId` to credit its algorithm.",
    example: { impressions: [{ userId: 'u-42', itemIds: ['sku-1', 'sku-2'], scenarioSlug: 'home' }] },
    answer: { accepted: 1, unknownItems: 1 },
  },
};
