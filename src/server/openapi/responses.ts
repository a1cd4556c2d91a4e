import { z } from 'zod';

/**
 * The bodies routes answer, for the OpenAPI document only (docs/guide.md, "The HTTP API"): the routes serialize
 * their answers themselves. Objects are loose (an answer may carry more than is listed here); the
 * integration tests check every real answer against them, so they cannot drift.
 */

const ID = z.string();
const COUNT = z.number().int();
const RATE = z.number();
const MS = z.number();

const data = <T extends z.ZodType>(row: T) => z.looseObject({ data: z.array(row) });

/** A stored item as the catalog shows it. */
export const ITEM = z.looseObject({
  externalId: ID,
  category: z.string().nullable().optional(),
  attributes: z.record(z.string(), z.unknown()),
  available: z.boolean(),
  feedManaged: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const USER = z.looseObject({ externalId: ID, attributes: z.record(z.string(), z.unknown()) });

const page = <T extends z.ZodType>(row: T) =>
  z.looseObject({ data: z.array(row), page: COUNT, limit: COUNT, total: COUNT });
export const ITEM_PAGE = page(ITEM);
export const USER_PAGE = page(USER);

/** A recommendation answer (CONTRACT.md, "Recommendation responses"). */
export const RECOMMENDATIONS = z.looseObject({
  items: z.array(z.looseObject({ itemId: ID })),
  count: COUNT,
  algorithm: z.string(),
  scenario: z.string().optional(),
  experiment: z.looseObject({ slug: z.string(), variant: z.string() }).optional(),
  filterRelaxation: z.looseObject({}).optional(),
  recommId: z.string(),
});

export const SEARCH = RECOMMENDATIONS.extend({
  facets: z.looseObject({
    categories: z.array(z.looseObject({ value: z.string(), count: COUNT })),
    priceRanges: z.array(z.looseObject({ value: z.string(), count: COUNT })),
  }),
  query: z.looseObject({
    original: z.string(),
    semanticText: z.string(),
    extractedFilters: z.string().nullable(),
  }),
});

export const ALGORITHMS = data(
  z.looseObject({
    name: z.string(),
    logicTypes: z.array(z.string()),
    isDefault: z.record(z.string(), z.boolean()),
    description: z.string(),
  }),
);

/** A configuration resource as stored: its own fields, defaults filled in. */
export const RESOURCE = (key: string) => z.looseObject({ [key]: z.string() });
export const RESOURCES = (key: string) => data(RESOURCE(key));

export const SEARCH_SYNONYM = z.strictObject({
  id: z.string(),
  term: z.string(),
  synonym: z.string(),
  oneWay: z.boolean(),
});
export const SEARCH_SYNONYMS = data(SEARCH_SYNONYM);

export const VALIDATION = z.looseObject({
  valid: z.boolean(),
  error: z.looseObject({ message: z.string() }).optional(),
});

export const SEGMENTS = data(z.looseObject({ name: z.string(), itemCount: COUNT }));

export const SETTINGS = z.looseObject({
  userProvisioningModes: z.array(z.string()),
  interactionWeights: z
    .looseObject({
      view: z.number(),
      cart: z.number(),
      purchase: z.number(),
      rating: z.number(),
      bookmark: z.number(),
    })
    .describe('The weight an interaction of each type gets when it carries none, in histories and models'),
});

export const VECTOR_DEFAULTS = z.looseObject({});

export const CREDENTIALS = z.looseObject({ tenantId: z.string() });

export const RATE_LIMITS = z.looseObject({});

export const USER_EXPORT = z.looseObject({
  user: USER.nullable(),
  interactions: z.array(z.looseObject({})),
  impressions: z.array(z.looseObject({})),
});

/** A sum of prices or profits, rounded to 4 places (docs/guide.md, "Revenue"). */
const MONEY = z.number();

export const SUMMARY = z.looseObject({
  items: COUNT,
  users: COUNT,
  interactions: COUNT,
  impressions: COUNT,
  byType: z.looseObject({ view: COUNT, cart: COUNT, purchase: COUNT, rating: COUNT, bookmark: COUNT }),
  revenue: MONEY.describe('The sum of the prices of purchases in the window'),
  profit: MONEY.describe('The sum of the profits of purchases in the window'),
});

export const VOLUME = data(z.looseObject({ date: z.string(), count: COUNT }));
export const BY_TYPE = data(z.looseObject({ type: z.string(), count: COUNT }));
export const TOP_ITEMS = data(z.looseObject({ itemId: ID, count: COUNT }));
export const COVERAGE = z.looseObject({ catalogSize: COUNT, recommendedItems: COUNT, coverage: RATE });

const FUNNEL = { impressions: COUNT, clicks: COUNT, carts: COUNT, purchases: COUNT };
export const TOP_RECOMMENDED = data(z.looseObject({ itemId: ID, ...FUNNEL, ctr: RATE, conversion: RATE }));
export const SCENARIO_TOP_ITEMS = data(z.looseObject({ itemId: ID, ...FUNNEL, ctr: RATE }));
export const ALGORITHM_FIGURES = data(
  z.looseObject({ algorithm: z.string(), answers: COUNT, impressions: COUNT, clicks: COUNT, ctr: RATE }),
);
/** Purchases carrying the scenario, or a recommId impressions logged with it carried. */
const SCENARIO_REVENUE = MONEY.describe(
  "The sum of the prices of the scenario's purchases: those carrying its slug or a recommId of its answers",
);
export const SCENARIO_SUMMARY = z.looseObject({
  ...FUNNEL,
  ctr: RATE,
  conversion: RATE,
  revenue: SCENARIO_REVENUE,
});
export const FUNNEL_VOLUME = data(z.looseObject({ date: z.string(), ...FUNNEL, revenue: SCENARIO_REVENUE }));

/** Welch's t-test of revenue per user, a later variant against the first. */
const REVENUE_SIGNIFICANCE = z.looseObject({
  lift: z.number().nullable(),
  pValue: z.number().nullable(),
  difference95: z.array(z.number()).nullable(),
});

export const EXPERIMENT_RESULTS = z.looseObject({
  variants: z.array(
    z.looseObject({
      scenario: z.string(),
      users: COUNT,
      impressions: COUNT,
      clicks: COUNT,
      purchases: COUNT,
      ctr: RATE,
      conversion: RATE,
      significance: z.looseObject({}).nullable(),
      revenue: MONEY,
      revenuePerUser: MONEY,
      revenueSignificance: REVENUE_SIGNIFICANCE.nullable(),
    }),
  ),
});

export const FEED = z.looseObject({ id: z.string(), state: z.string() });
export const FEEDS = data(FEED);
export const FEED_PREVIEW = z.looseObject({
  items: z.array(z.looseObject({})),
  total: COUNT,
  errors: z.array(z.looseObject({ index: COUNT, message: z.string() })),
});
export const FEED_SYNC = z.looseObject({
  upserted: COUNT,
  markedUnavailable: COUNT,
  errors: z.array(z.looseObject({})),
  startedAt: z.string(),
  finishedAt: z.string(),
});

export const HEALTH = z.looseObject({ status: z.string(), version: z.string(), uptimeS: MS });
export const READY = z.looseObject({});

const BYTES = z.number().int().nonnegative();
const HEAP = z.looseObject({ used: BYTES, total: BYTES, physical: BYTES, external: BYTES });
const CONNECTIONS = z.number().int().nonnegative();
/** What a DuckDB holds against its limits (docs/memory.md). */
const DUCKDB_FIGURES = z.looseObject({
  memoryLimit: z.string(),
  threads: z.number().int().positive(),
  memory: z.record(z.string(), BYTES),
  temporary: BYTES,
});
export const MEMORY = z.looseObject({
  process: z.looseObject({
    rss: BYTES,
    heapTotal: BYTES,
    heapUsed: BYTES,
    external: BYTES,
    arrayBuffers: BYTES,
  }),
  heaps: z.looseObject({ eventLoop: HEAP, rankingThread: HEAP.nullable() }),
  // The store's part, under the name of the store that runs: one of the two.
  duckdb: DUCKDB_FIGURES.extend({ fileBytes: BYTES, walBytes: BYTES, itemKeys: COUNT }).optional(),
  postgres: z
    .looseObject({
      poolSize: CONNECTIONS,
      connections: CONNECTIONS,
      inUse: CONNECTIONS,
      waiting: CONNECTIONS,
      databaseBytes: BYTES,
      lake: DUCKDB_FIGURES.nullable(),
    })
    .optional(),
  tenants: z.record(z.string(), z.looseObject({ items: COUNT, identities: COUNT, historyEvents: COUNT })),
});
