import type { z } from 'zod';
import { describeAlgorithms } from '../../engine/algorithms/registry.js';
import { VERSION } from '../../version.js';
import * as R from './responses.js';

/**
 * What the OpenAPI document says of each operation beyond its schemas (docs/guide.md, "The HTTP API"): every
 * route the daemon documents has an entry here, and the document is built from this table, the routes'
 * own schemas and their credentials (see document.ts).
 */
export interface OperationDoc {
  id: string;
  tag: Tag;
  summary: string;
  description: string;
  /** The success status (default 200) and its body; `null`: no body (204). */
  status?: number;
  body?: z.ZodType | null;
  /** The success body's media type when it is not JSON (its schema is then a string). */
  mediaType?: string;
  /** Error statuses beyond those every route of its kind may answer (see document.ts). */
  errors?: number[];
  /** An example request body, for the routes that take one. */
  example?: unknown;
  /** An example success body (every status but 204): realistic, and valid against its schema. */
  answer?: unknown;
}

export const TAGS = {
  Operations: 'Health, readiness, metrics and the lake export: for the operator and for probes.',
  Tenants: 'Tenants and their credentials and rate limits (operator key).',
  Ingestion: 'Items, users, interactions and impressions, written in batches.',
  Catalog: "The tenant's stored items and users, and its settings.",
  Feeds: 'Catalog feeds: pull items from a JSON source, preview, activate, sync and schedule.',
  Recommendations:
    'Ranked lists: user-to-item, item-to-item, items-to-items, similar products, recently viewed.',
  Search: 'Hybrid natural-language search, and what vector search embeds.',
  Configuration: 'Scenarios, rules and segmentations that shape the lists.',
  Experiments: 'A/B experiments over scenarios, and their results with significance.',
  Identity: 'Merging sessions into users, exporting and deleting a user.',
  Analytics: "Figures over a window of UTC days, computed from the tenant's events.",
  Auth: 'Bearer tokens (JWT) issued from the API key.',
} as const;

export type Tag = keyof typeof TAGS;

/*
 * Example values, one shop throughout (tenant acme, user u-42, items sku-1…), shared by the operations
 * whose bodies have the same shape.
 */
const AT = '2025-06-02T09:00:00.000Z';
const RECOMM_ID = '3f2a1c9e-5b7d-4e8f-9a0b-1c2d3e4f5a6b';

const ITEM_EXAMPLE = {
  externalId: 'sku-1',
  category: 'shoes',
  attributes: { name: 'Trail runner', price: 89 },
  expiresAt: null,
  available: true,
  feedManaged: false,
  createdAt: AT,
  updatedAt: AT,
};
const USER_EXAMPLE = { externalId: 'u-42', attributes: { country: 'DE' }, createdAt: AT, updatedAt: AT };

/** Recommendation requests project the items to these paths; the answers below show them so. */
const PROJECTION = ['attributes.name', 'attributes.price'];
const RECOMMENDED = [
  { itemId: 'sku-2', attributes: { name: 'Trail runner GTX', price: 119 }, score: 0.91 },
  { itemId: 'sku-7', attributes: { name: 'Road racer', price: 95 }, score: 0.84 },
];

/** A recommendation answer of an algorithm (recently-viewed ranks without scores). */
function recommended(algorithm: string, more: object = {}) {
  const items =
    algorithm === 'recently-viewed'
      ? RECOMMENDED.map(({ itemId, attributes }) => ({ itemId, attributes }))
      : RECOMMENDED;
  return { items, count: items.length, algorithm, ...more, recommId: RECOMM_ID };
}

const RATE_LIMITS_EXAMPLE = { api: 1200, public: 6000 };
const VECTOR_DEFAULTS_EXAMPLE = { hnsw_ef: 64, score_threshold: 0.2, quantization: 'i8' };
const SETTINGS_EXAMPLE = {
  fieldMapper: {},
  dimensions: [],
  freshness: { keyPath: null, type: 'date', fallbackToCreatedAt: true },
  userProvisioningModes: ['on_first_known_interaction'],
};

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
  return {
    ...FEED_EXAMPLE,
    method: 'GET',
    headers: {},
    pagination: { mode: 'none', cursorParam: 'cursor', limitParam: 'limit', offsetParam: 'offset' },
    timeoutMs: 30_000,
    maxBytes: 67_108_864,
    state,
    createdAt: AT,
    updatedAt: AT,
    lastSync: synced ? { status: 'succeeded', ...SYNC_EXAMPLE } : null,
  };
}

const SUMMARY_EXAMPLE = {
  items: 5000,
  users: 1200,
  interactions: 48_000,
  impressions: 91_000,
  byType: { view: 40_000, cart: 5000, purchase: 2000, rating: 1000 },
};
/** A scenario's funnel over the window; CTR is clicks per impression, conversion purchases per click. */
const FUNNEL_EXAMPLE = {
  impressions: 1730,
  clicks: 104,
  carts: 5,
  purchases: 2,
  ctr: 0.0601,
  conversion: 0.0192,
};

/** The five operations of a configuration resource (CONTRACT.md, "Configuration resources"). */
function resource(
  path: string,
  key: string,
  noun: string,
  tag: Tag,
  what: string,
  example: object,
  /** What the daemon fills in when it stores the example. */
  defaults: object = {},
  idName = noun.replace(/ (\w)/g, (_, c: string) => c.toUpperCase()),
): Record<string, OperationDoc> {
  const one = `${path}/:${key === 'segmentationId' ? 'id' : key}`;
  const Name = idName.charAt(0).toUpperCase() + idName.slice(1);
  const stored = { ...example, ...defaults };
  return {
    [`POST ${path}`]: {
      id: `create${Name}`,
      tag,
      summary: `Create a ${noun}`,
      description: `${what} Answers 201 with the stored ${noun}; 409 CONFLICT when its ${key} is taken.`,
      status: 201,
      body: R.RESOURCE(key),
      errors: [409],
      example,
      answer: stored,
    },
    [`GET ${path}`]: {
      id: `list${Name}s`,
      tag,
      summary: `List the ${noun}s`,
      description: `Every ${noun} of the tenant, as \`{ data: [...] }\`.`,
      body: R.RESOURCES(key),
      answer: { data: [stored] },
    },
    [`GET ${one}`]: {
      id: `get${Name}`,
      tag,
      summary: `Get a ${noun}`,
      description: `One ${noun} by its ${key}; 404 when there is none.`,
      body: R.RESOURCE(key),
      answer: stored,
    },
    [`PUT ${one}`]: {
      id: `replace${Name}`,
      tag,
      summary: `Replace a ${noun}`,
      description: `Replaces the whole ${noun} (fields left out take their defaults); 404 when there is none.`,
      body: R.RESOURCE(key),
      example,
      answer: stored,
    },
    [`DELETE ${one}`]: {
      id: `delete${Name}`,
      tag,
      summary: `Delete a ${noun}`,
      description: `Deletes the ${noun}; answers 204 without a body, 404 when there is none.`,
      status: 204,
      body: null,
    },
  };
}

/** A legacy GET recommendation route. */
function legacy(logic: string, seed: string, what: string, algorithm: string): OperationDoc {
  const id = logic.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
  return {
    id: `${id}Get`,
    tag: 'Recommendations',
    summary: `${logic} recommendations for a ${seed}`,
    description: `${what} Query parameters: \`count\`, \`scenario\`, \`filter\`, \`booster\`, \`includedProperties\`, \`returnProperties\` and the rest of POST /recommendations' fields in query form. Callable by browsers with the public token.`,
    body: R.RECOMMENDATIONS,
    answer: recommended(algorithm),
  };
}

const ANALYTICS_QUERY =
  'Query: `from` and `to` (YYYY-MM-DD, inclusive; default the last 30 UTC days), `limit` for lists.';

function analytics(
  id: string,
  summary: string,
  description: string,
  body: z.ZodType,
  answer: unknown,
): OperationDoc {
  return { id, tag: 'Analytics', summary, description: `${description} ${ANALYTICS_QUERY}`, body, answer };
}

function scenarioAnalytics(...args: Parameters<typeof analytics>): OperationDoc {
  return { ...analytics(...args), errors: [404] };
}

export const OPERATIONS: Record<string, OperationDoc> = {
  'GET /health': {
    id: 'health',
    tag: 'Operations',
    summary: 'Liveness',
    description: 'Answers 200 while the process serves: version, uptime and the embedder vector search uses.',
    body: R.HEALTH,
    answer: {
      status: 'ok',
      version: VERSION,
      uptimeS: 3600,
      embedder: { kind: 'hashing', model: 'hashing-v1' },
    },
  },
  'GET /health/ready': {
    id: 'ready',
    tag: 'Operations',
    summary: 'Readiness',
    description:
      'Answers 200 once the state and the built models are loaded, and 503 NOT_READY saying what is not, before that and while the daemon stops. `checks.disk` is `full` while writes are refused for a full disk (507 INSUFFICIENT_STORAGE); the daemon stays ready for reads meanwhile.',
    body: R.READY,
    errors: [503],
    answer: { status: 'ready', checks: { state: 'done', models: 'done', disk: 'ok' } },
  },
  'GET /metrics': {
    id: 'metrics',
    tag: 'Operations',
    summary: 'Metrics',
    description:
      'Prometheus text format: requests and latency per route, cache hit ratio, write queue depth and commit latency, model build durations, ages, the versions serving and the rows they were not built from, vector backlog, process memory. Operator key, or no credentials on `--metrics-port`.',
    mediaType: 'text/plain; version=0.0.4',
    answer: [
      '# HELP nextrec_http_request_duration_seconds HTTP requests by route pattern, method and status class: their count and how long they took',
      '# TYPE nextrec_http_request_duration_seconds histogram',
      'nextrec_http_request_duration_seconds_count{route="/recommendations",method="POST",status_class="2xx"} 1842',
      '# HELP nextrec_model_age_seconds Seconds since the loaded version of each model was built, by tenant and model',
      '# TYPE nextrec_model_age_seconds gauge',
      'nextrec_model_age_seconds{tenant="acme",model="cooccurrence"} 42.5',
      '# HELP nextrec_model_rows_behind Rows of each tenant the serving version of each model it uses was not built from: interactions (vectors: items)',
      '# TYPE nextrec_model_rows_behind gauge',
      'nextrec_model_rows_behind{tenant="acme",model="cooccurrence"} 0',
      '',
    ].join('\n'),
  },
  'GET /debug/memory': {
    id: 'memory',
    tag: 'Operations',
    summary: 'Where the memory goes',
    description:
      "The process's resident memory and V8 heaps (the event-loop thread's and the ranking thread's), what the store's DuckDB holds against its limit, and per tenant what the serving state holds: items, identities, history events, the bytes each thread holds of its own (the catalog's columns) and of what the threads share (histories, counters, models). Operator key.",
    body: R.MEMORY,
    answer: {
      process: {
        rss: 353_640_448,
        heapTotal: 98_349_056,
        heapUsed: 40_715_752,
        external: 13_322_608,
        arrayBuffers: 9_648_841,
      },
      heaps: {
        eventLoop: { used: 40_765_832, total: 98_349_056, physical: 98_037_760, external: 13_323_184 },
        rankingThread: { used: 12_176_992, total: 13_754_368, physical: 12_898_304, external: 5_728_621 },
      },
      duckdb: {
        memoryLimit: '256MB',
        threads: 2,
        memory: {
          total: 25_137_152,
          ART_INDEX: 4_194_304,
          BASE_TABLE: 1_310_720,
          IN_MEMORY_TABLE: 19_632_128,
        },
        temporary: 0,
        fileBytes: 12_288,
        walBytes: 5_806_813,
        itemKeys: 5000,
      },
      tenants: { acme: { items: 5000, identities: 1535, historyEvents: 48_000 } },
    },
  },
  'POST /lake/export': {
    id: 'exportLake',
    tag: 'Operations',
    summary: 'Export to the lake now',
    description:
      'Exports what the store committed to the lake (Parquet) for one tenant (`tenantId`) or every tenant.',
    example: { tenantId: 'acme' },
    answer: {
      exported: [
        {
          tenantId: 'acme',
          tables: [
            { table: 'interactions', rows: 1250 },
            { table: 'impressions', rows: 3400 },
            { table: 'items', rows: 12 },
            { table: 'users', rows: 3 },
          ],
        },
      ],
    },
  },

  'GET /tenants': {
    id: 'listTenants',
    tag: 'Tenants',
    summary: 'List the tenants',
    description: 'Every tenant id, as `{ tenants: [...] }`.',
    answer: { tenants: ['acme'] },
  },
  'POST /tenants': {
    id: 'createTenant',
    tag: 'Tenants',
    summary: 'Create a tenant',
    description:
      'Creates a tenant and answers 201 with its API key, private token and public token, shown this once; 409 CONFLICT when it exists.',
    status: 201,
    errors: [409],
    example: { tenantId: 'acme' },
    answer: {
      tenantId: 'acme',
      apiKey: 'nrk_3mVq8TzL1pWc0RkY7bNf2HsJd5Ga9UeE',
      privateToken: 'nrp_Vd2kQ9sLx7TmB4cN1wRz8HfYp6Jg3Ae5Uo0KiMnXt2c',
      publicToken: 'nrpub_Hs4nWq1Zr8Lc5Tv2Yb7Kd0Mx9Pf3Ga6Je1UiOoRt5wE',
    },
  },
  'POST /tenants/:tenantId/rotate': {
    id: 'rotateCredential',
    tag: 'Tenants',
    summary: 'Rotate a credential',
    description:
      'Replaces one credential (`key`: api, private or public); the old one stops working at once.',
    body: R.CREDENTIALS,
    errors: [404],
    example: { key: 'api' },
    answer: { tenantId: 'acme', apiKey: 'nrk_8QwE2rT5yU1iO4pA7sD0fG3hJ6kL9zXc' },
  },
  'GET /tenants/:tenantId/rate-limits': {
    id: 'getRateLimits',
    tag: 'Tenants',
    summary: "Get a tenant's rate limits",
    description: 'Requests per minute per credential kind; a kind left out is unlimited.',
    body: R.RATE_LIMITS,
    answer: RATE_LIMITS_EXAMPLE,
  },
  'PUT /tenants/:tenantId/rate-limits': {
    id: 'setRateLimits',
    tag: 'Tenants',
    summary: "Set a tenant's rate limits",
    description:
      'Requests per minute per credential kind (api, private, public, jwt); over budget a request is 429 RATE_LIMITED with Retry-After.',
    body: R.RATE_LIMITS,
    example: RATE_LIMITS_EXAMPLE,
    answer: RATE_LIMITS_EXAMPLE,
  },

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
      'Appends up to 10,000 views, carts, purchases and ratings, durably. An eventId stored before is accepted and not stored again; events naming items the catalog lacks are accepted and counted in `unknownItems`.',
    example: { interactions: [{ userId: 'u-42', itemId: 'sku-1', type: 'purchase', scenarioSlug: 'home' }] },
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

  'GET /catalog/items': {
    id: 'listItems',
    tag: 'Catalog',
    summary: 'List the items',
    description: 'The stored items a page at a time (`page`, `limit` up to 1,000), with the total.',
    body: R.ITEM_PAGE,
    answer: { data: [ITEM_EXAMPLE], page: 1, limit: 50, total: 1 },
  },
  'GET /catalog/items/:externalId': {
    id: 'getItem',
    tag: 'Catalog',
    summary: 'Get an item',
    description: 'One stored item; 404 when the catalog does not hold it.',
    body: R.ITEM,
    answer: ITEM_EXAMPLE,
  },
  'GET /catalog/users': {
    id: 'listUsers',
    tag: 'Catalog',
    summary: 'List the users',
    description: 'The stored users a page at a time (`page`, `limit`), with the total.',
    body: R.USER_PAGE,
    answer: { data: [USER_EXAMPLE], page: 1, limit: 50, total: 1 },
  },
  'GET /catalog/tenant-settings': {
    id: 'getTenantSettings',
    tag: 'Catalog',
    summary: 'Get the tenant settings',
    description: 'Every setting: fieldMapper, dimensions, freshness, userProvisioningModes and the rest.',
    body: R.SETTINGS,
    answer: SETTINGS_EXAMPLE,
  },
  'PUT /catalog/tenant-settings': {
    id: 'updateTenantSettings',
    tag: 'Catalog',
    summary: 'Update the tenant settings',
    description: 'Partial: the fields sent replace those fields. API key or JWT only.',
    body: R.SETTINGS,
    example: { userProvisioningModes: ['on_first_known_interaction'] },
    answer: SETTINGS_EXAMPLE,
  },

  'POST /catalog/feeds': {
    id: 'createFeed',
    tag: 'Feeds',
    summary: 'Create a feed',
    description:
      'Creates a feed configuration in state `draft`; answers 201 with it, 409 CONFLICT when its id is taken.',
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
      'Fetches the first page, maps its first 20 items and stores nothing: `{ items, total, errors }`. Moves a draft to `previewed`.',
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

  'POST /recommendations': {
    id: 'recommend',
    tag: 'Recommendations',
    summary: 'Recommend',
    description:
      'One ranked list: the scenario (or `logicType`) decides the algorithm; filters, boosters, constraints, segments, geo and the purchase cap shape it. Callable by browsers with the public token.',
    body: R.RECOMMENDATIONS,
    errors: [404],
    example: { scenario: 'home', userId: 'u-42', count: 2, includedProperties: PROJECTION },
    answer: recommended('weighted-history', { scenario: 'home' }),
  },
  'POST /recommendations/items-to-items': {
    id: 'itemsToItems',
    tag: 'Recommendations',
    summary: 'Items for several seed items',
    description: 'Items to show beside several seeds (a cart), the seeds left out.',
    body: R.RECOMMENDATIONS,
    errors: [404],
    example: { itemIds: ['sku-1', 'sku-3'], count: 2, includedProperties: PROJECTION },
    answer: recommended('multi-seed-co-occurrence'),
  },
  'GET /recommendations/user-to-item/:userId': legacy(
    'user-to-item',
    'user',
    "Items for a user from the user's history.",
    'weighted-history',
  ),
  'GET /recommendations/item-to-item/:itemId': legacy(
    'item-to-item',
    'item',
    'Items bought or viewed with the item.',
    'co-occurrence',
  ),
  'GET /recommendations/recently-viewed/:userId': legacy(
    'recently-viewed',
    'user',
    "The user's recently viewed items, newest first.",
    'recently-viewed',
  ),
  'GET /recommendations/similar-products/:itemId': legacy(
    'similar-products',
    'item',
    "Items whose text is nearest the item's (vector similarity).",
    'vector-similarity',
  ),
  'GET /recommendations/algorithms': {
    id: 'listAlgorithms',
    tag: 'Recommendations',
    summary: 'List the algorithms',
    description: 'Every algorithm, the logic types it serves and whether it is their default.',
    body: R.ALGORITHMS,
    answer: { data: describeAlgorithms() },
  },
  'GET /recommendations/algorithms/:logicType': {
    id: 'listAlgorithmsOf',
    tag: 'Recommendations',
    summary: 'List the algorithms of a logic type',
    description: 'The algorithms that serve one logic type.',
    body: R.ALGORITHMS,
    answer: { data: describeAlgorithms('item-to-item') },
  },
  'GET /recommendations/search': {
    id: 'search',
    tag: 'Search',
    summary: 'Search',
    description:
      'Hybrid search: price bounds and category names in `query` become a filter, the rest ranks by meaning; answers the items, facets and what the text was taken to mean.',
    body: R.SEARCH,
    errors: [404],
    answer: recommended('hybrid-search', {
      facets: {
        categories: [{ value: 'shoes', count: 12 }],
        priceRanges: [
          { value: 'under 50', count: 3 },
          { value: '50 to 100', count: 7 },
          { value: '100 and over', count: 2 },
        ],
      },
      query: {
        original: 'trail running shoes under 150',
        semanticText: 'trail running shoes',
        extractedFilters: `'category' in {"shoes"} and 'price' < 150`,
      },
    }),
  },
  ...resource(
    '/catalog/embedding-templates',
    'slug',
    'embedding template',
    'Search',
    'What vector search embeds for the categories it applies to (`{name} {category} {description}` by default).',
    { slug: 'shoes', template: '{brand} {name} {category} {material}', appliesTo: ['shoes'] },
    { isDefault: false },
  ),
  'GET /catalog/vector-defaults': {
    id: 'getVectorDefaults',
    tag: 'Search',
    summary: 'Get the vector defaults',
    description: "The tenant's vector search defaults (hnsw_ef, score_threshold, quantization).",
    body: R.VECTOR_DEFAULTS,
    answer: VECTOR_DEFAULTS_EXAMPLE,
  },
  'PUT /catalog/vector-defaults': {
    id: 'setVectorDefaults',
    tag: 'Search',
    summary: 'Set the vector defaults',
    description: 'hnsw_ef, score_threshold and quantization (f32, f16, i8) for the tenant.',
    body: R.VECTOR_DEFAULTS,
    example: VECTOR_DEFAULTS_EXAMPLE,
    answer: VECTOR_DEFAULTS_EXAMPLE,
  },

  ...resource(
    '/scenarios',
    'slug',
    'scenario',
    'Configuration',
    'A named placement (home page, cart) with its logic type, algorithm, filters, boosters and constraints.',
    {
      slug: 'home',
      name: 'Home page',
      logicType: 'user-to-item',
      filter: "'stock' > 0",
      boosters: [`boost by 1.5 where 'brand' = "Stridewell"`],
    },
    {
      constraints: {},
      rulesSlugs: [],
      autoRelaxConstraints: false,
      autoRelaxFilters: false,
      relaxEntireFilterOnEmpty: false,
      autoExpandSegments: true,
    },
  ),
  ...resource(
    '/rules',
    'slug',
    'rule',
    'Configuration',
    'A reusable filter, booster or constraint.',
    { slug: 'in-stock', type: 'filter', expression: "'stock' > 0" },
    { priority: 0 },
  ),
  ...resource(
    '/segmentations',
    'segmentationId',
    'segmentation',
    'Configuration',
    'Items grouped into segments by an expression.',
    { segmentationId: 'brands', type: 'property', property: 'attributes.brand' },
  ),
  'POST /segmentations/validate-expression': {
    id: 'validateExpression',
    tag: 'Configuration',
    summary: 'Validate an expression',
    description:
      'Parses a nextQL expression as a filter, booster or segmentation: `{ valid }`, or where it fails.',
    body: R.VALIDATION,
    example: { expression: "'price' < 50", kind: 'filter' },
    answer: { valid: true },
  },
  'GET /segmentations/:id/segments': {
    id: 'listSegments',
    tag: 'Configuration',
    summary: 'List the segments',
    description: 'The segments of a segmentation with their item counts.',
    body: R.SEGMENTS,
    answer: {
      data: [
        { name: 'Stridewell', itemCount: 333 },
        { name: 'Pace', itemCount: 121 },
      ],
    },
  },

  ...resource(
    '/experiments',
    'slug',
    'experiment',
    'Experiments',
    'Serves the variants of a base scenario to users by weight, the same variant to a user every time.',
    {
      slug: 'home-test',
      baseScenario: 'home',
      variants: [
        { scenario: 'home', weight: 1 },
        { scenario: 'home-b', weight: 1 },
      ],
      status: 'running',
    },
  ),
  'GET /experiments/:slug/results': {
    id: 'experimentResults',
    tag: 'Experiments',
    summary: "An experiment's results",
    description:
      "Per variant: users served, impressions, clicks, purchases, CTR, conversion, and the lift over the first variant with a two-proportion z-test's p-value and 95% interval.",
    body: R.EXPERIMENT_RESULTS,
    answer: {
      variants: [
        {
          scenario: 'home',
          users: 135,
          impressions: 6928,
          clicks: 1144,
          purchases: 22,
          ctr: 0.1651,
          conversion: 0.0192,
          significance: null,
        },
        {
          scenario: 'home-b',
          users: 165,
          impressions: 7769,
          clicks: 1256,
          purchases: 15,
          ctr: 0.1617,
          conversion: 0.0119,
          significance: { metric: 'ctr', lift: -0.0209, pValue: 0.5712, difference95: [-0.0154, 0.0085] },
        },
      ],
    },
  },

  'POST /identity/merge': {
    id: 'mergeIdentity',
    tag: 'Identity',
    summary: 'Merge sessions into a user',
    description:
      "Attributes the sessions' history to the user; a repeat merges nothing and says `alreadyMerged`.",
    example: { userId: 'u-42', sessionIds: ['s-1'] },
    answer: { merged: 2, alreadyMerged: false },
  },
  'GET /users/:userId/export': {
    id: 'exportUser',
    tag: 'Identity',
    summary: "Export a user's data",
    description:
      'The user row, its interactions and impressions (merged sessions included) and merge ledger. API key only.',
    body: R.USER_EXPORT,
    answer: {
      user: USER_EXAMPLE,
      interactions: [
        {
          eventId: null,
          userId: 'u-42',
          sessionId: null,
          itemId: 'sku-1',
          type: 'purchase',
          weight: 4,
          scenarioSlug: 'home',
          country: null,
          timestamp: AT,
          receivedAt: AT,
        },
      ],
      impressions: [
        {
          eventId: null,
          userId: 'u-42',
          itemIds: ['sku-1', 'sku-2'],
          scenarioSlug: 'home',
          country: null,
          recommId: RECOMM_ID,
          timestamp: AT,
          receivedAt: AT,
        },
      ],
      merges: [{ userId: 'u-42', sessionId: 's-1', eventsCopied: 2, mergedAt: AT }],
    },
  },
  'DELETE /users/:userId': {
    id: 'deleteUser',
    tag: 'Identity',
    summary: 'Delete a user',
    description:
      'Removes the user and its merged sessions from the store, the lake and the serving state. API key only; 204.',
    status: 204,
    body: null,
  },

  'GET /analytics/summary': analytics(
    'analyticsSummary',
    'Summary',
    'Items, users, interactions, impressions and interactions by type.',
    R.SUMMARY,
    SUMMARY_EXAMPLE,
  ),
  'GET /analytics/interaction-volume': analytics(
    'interactionVolume',
    'Interaction volume',
    'Interactions per day, every day of the window.',
    R.VOLUME,
    {
      data: [
        { date: '2025-05-31', count: 1520 },
        { date: '2025-06-01', count: 1710 },
        { date: '2025-06-02', count: 1630 },
      ],
    },
  ),
  'GET /analytics/interactions-by-type': analytics(
    'interactionsByType',
    'Interactions by type',
    'Views, carts, purchases and ratings.',
    R.BY_TYPE,
    { data: Object.entries(SUMMARY_EXAMPLE.byType).map(([type, count]) => ({ type, count })) },
  ),
  'GET /analytics/top-items': analytics(
    'topItems',
    'Top items',
    'The items with the most interactions.',
    R.TOP_ITEMS,
    {
      data: [
        { itemId: 'sku-2', count: 1130 },
        { itemId: 'sku-7', count: 570 },
      ],
    },
  ),
  'GET /analytics/catalog-coverage': analytics(
    'catalogCoverage',
    'Catalog coverage',
    'The share of the catalog any recommendation returned.',
    R.COVERAGE,
    { catalogSize: 5000, recommendedItems: 1850, coverage: 0.37 },
  ),
  'GET /analytics/top-recommended': analytics(
    'topRecommended',
    'Top recommended items',
    'Impressions, clicks, carts and purchases of events with a scenario, per item.',
    R.TOP_RECOMMENDED,
    { data: [{ itemId: 'sku-2', ...FUNNEL_EXAMPLE }] },
  ),
  'GET /analytics/algorithms': analytics(
    'algorithmFigures',
    'Figures per algorithm',
    'Answers, and impressions and clicks credited by their recommId, per algorithm.',
    R.ALGORITHM_FIGURES,
    {
      data: [
        { algorithm: 'matrix-factorization', answers: 1650, impressions: 16_500, clicks: 320, ctr: 0.0194 },
        { algorithm: 'weighted-history', answers: 1350, impressions: 13_500, clicks: 280, ctr: 0.0207 },
      ],
    },
  ),
  'GET /analytics/scenario/:slug/summary': scenarioAnalytics(
    'scenarioSummary',
    'Scenario summary',
    "A scenario's impressions, clicks, carts, purchases, CTR and conversion.",
    R.SCENARIO_SUMMARY,
    FUNNEL_EXAMPLE,
  ),
  'GET /analytics/scenario/:slug/funnel-volume': scenarioAnalytics(
    'scenarioFunnelVolume',
    'Scenario funnel per day',
    "A scenario's funnel, every day of the window.",
    R.FUNNEL_VOLUME,
    {
      data: [
        { date: '2025-06-01', impressions: 860, clicks: 51, carts: 3, purchases: 1 },
        { date: '2025-06-02', impressions: 870, clicks: 53, carts: 2, purchases: 1 },
      ],
    },
  ),
  'GET /analytics/scenario/:slug/top-items': scenarioAnalytics(
    'scenarioTopItems',
    'Scenario top items',
    "A scenario's most shown items with their funnel.",
    R.SCENARIO_TOP_ITEMS,
    { data: [{ itemId: 'sku-2', impressions: 77, clicks: 5, carts: 1, purchases: 0, ctr: 0.0649 }] },
  ),

  'POST /auth/token': {
    id: 'issueToken',
    tag: 'Auth',
    summary: 'Issue a bearer token',
    description:
      'A JWT for the tenant (claim `tid`), valid `ttlSeconds` (default 3,600, at most 86,400). API key only.',
    example: { ttlSeconds: 3600 },
    answer: {
      token:
        'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0aWQiOiJhY21lIiwiaWF0IjoxNzQ4ODU0ODAwLCJleHAiOjE3NDg4NTg0MDB9.kLn-bhWVBq2WGpPu-Fs6By3fHt6btdymohRg8YFH798',
      expiresAt: '2025-06-02T10:00:00.000Z',
    },
  },
};
