import { AT } from '../openapi/examples.js';
import * as R from '../openapi/responses.js';
import type { Operations } from '../openapi/operation.js';

const FEED_EXAMPLE = {
  id: 'shop',
  name: 'Shop products',
  sourceType: 'json_url',
  url: 'https://shop.example.com/products.json',
  itemsPath: '$.data.items',
  itemIdPath: 'sku',
  mappingRules: [
    { property: 'name', path: 'title', dataType: 'string', target: 'name' },
    { property: 'price', path: 'price', dataType: 'double', target: 'basePrice' },
    { property: 'category', path: 'category', dataType: 'string', target: 'category' },
  ],
  scheduleMode: 'interval',
  intervalMinutes: 60,
};

const RECORD_ERRORS = [{ index: 17, message: 'price (price): expected a number, found string "n/a"' }];

const SYNC_EXAMPLE = {
  upserted: 240,
  markedUnavailable: 3,
  errors: RECORD_ERRORS,
  startedAt: AT,
  finishedAt: '2025-06-02T09:00:04.000Z',
};

/** A feed as the daemon keeps it: its configuration with the defaults filled in, its state, its last sync. */
function storedFeed(state: string, synced: boolean) {
  return Object.assign({}, FEED_EXAMPLE, {
    method: 'GET',
    headers: {},
    pagination: { mode: 'none', cursorParam: 'cursor', limitParam: 'limit', offsetParam: 'offset' },
    timeoutMs: 30_000,
    maxBytes: 67_108_864,
    state,
    createdAt: AT,
    updatedAt: AT,
    lastSync: synced ? { status: 'succeeded', ...SYNC_EXAMPLE } : null,
  });
}

/**
 * What the OpenAPI document says of the routes of feeds.ts beyond their schemas (docs/guide.md,
 * "The HTTP API"); src/server/openapi/document.ts gathers the entries of every module into the document.
 */
export const openapi: Operations = {
  'POST /catalog/feeds': {
    id: 'createFeed',
    tag: 'Feeds',
    summary: 'Create a feed',
    description:
      'Creates a feed configuration in state `draft`; answers 201 with it, 409 CONFLICT when its id is taken. ' +
      '`sourceType` is `api` or `json_url` (JSON, paged), `google_merchant` (a Google Merchant RSS 2.0 or Atom ' +
      "feed: paths address an item's child elements, `$['g:price']`), or `csv` and `tsv` (paths are column " +
      'names); the last three are one document, with no `itemsPath` and no pagination.',
    status: 201,
    body: R.FEED,
    errors: [409],
    example: FEED_EXAMPLE,
    answer: storedFeed('draft', false),
  },
  'GET /catalog/feeds': {
    id: 'listFeeds',
    tag: 'Feeds',
    summary: 'List the feeds',
    description: 'Every feed of the tenant with its state and last sync, as `{ data: [...] }`.',
    body: R.FEEDS,
    answer: { data: [storedFeed('active', true)] },
  },
  'GET /catalog/feeds/:id': {
    id: 'getFeed',
    tag: 'Feeds',
    summary: 'Get a feed',
    description: 'One feed with its state and last sync; 404 when there is none.',
    body: R.FEED,
    answer: storedFeed('active', true),
  },
  'PUT /catalog/feeds/:id': {
    id: 'replaceFeed',
    tag: 'Feeds',
    summary: 'Replace a feed',
    description: 'Replaces the configuration; a changed feed goes back to `draft` and needs a new preview.',
    body: R.FEED,
    errors: [409],
    example: FEED_EXAMPLE,
    answer: storedFeed('draft', true),
  },
  'DELETE /catalog/feeds/:id': {
    id: 'deleteFeed',
    tag: 'Feeds',
    summary: 'Delete a feed',
    description: 'Deletes the configuration; the items it brought stay. 204 without a body.',
    status: 204,
    body: null,
    errors: [409],
  },
  'POST /catalog/feeds/:id/preview': {
    id: 'previewFeed',
    tag: 'Feeds',
    summary: 'Preview a feed',
    description:
      'Fetches the first page (a Merchant, CSV or TSV document whole), maps its first 20 items and stores nothing: `{ items, total, errors }`. Moves a draft to `previewed`.',
    body: R.FEED_PREVIEW,
    errors: [409, 502],
    answer: {
      items: [{ externalId: 'sku-1', category: 'shoes', attributes: { name: 'Trail runner', price: 89 } }],
      total: 240,
      errors: RECORD_ERRORS,
    },
  },
  'POST /catalog/feeds/:id/activate': {
    id: 'activateFeed',
    tag: 'Feeds',
    summary: 'Activate a feed',
    description:
      "Makes a previewed feed the tenant's active one (another active feed is disabled) and starts its schedule.",
    body: R.FEED,
    errors: [409],
    answer: storedFeed('active', false),
  },
  'POST /catalog/feeds/:id/disable': {
    id: 'disableFeed',
    tag: 'Feeds',
    summary: 'Disable a feed',
    description: 'Stops the feed and its schedule; its items stay as they are.',
    body: R.FEED,
    errors: [409],
    answer: storedFeed('disabled', true),
  },
  'POST /catalog/feeds/:id/sync': {
    id: 'syncFeed',
    tag: 'Feeds',
    summary: 'Sync a feed now',
    description:
      'Fetches every page, then applies the whole source in one transaction: upserts what it lists, marks feed-managed items it does not list unavailable. A failed fetch changes nothing (502 FEED_FETCH_FAILED).',
    body: R.FEED_SYNC,
    errors: [409, 502],
    answer: SYNC_EXAMPLE,
  },
  'POST /tenants/:tenantId/feeds/sync': {
    id: 'syncTenantFeed',
    tag: 'Feeds',
    summary: "Sync a tenant's active feed",
    description: "The operator's way to sync a tenant's active feed now (`nextrec feed sync`).",
    body: R.FEED_SYNC,
    errors: [404, 409, 502],
    answer: SYNC_EXAMPLE,
  },
  'GET /tenants/:tenantId/feeds/sync': {
    id: 'feedSyncStatus',
    tag: 'Feeds',
    summary: "A tenant's feed sync progress",
    description: 'Whether a sync of the active feed runs, and how far it got.',
    errors: [404],
    answer: { feedId: 'shop', state: 'syncing', progress: { pages: 1, records: 100 } },
  },
};
