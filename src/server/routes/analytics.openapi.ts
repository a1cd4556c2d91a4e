import type { z } from 'zod';
import type { OperationDoc, Operations } from '../openapi/operation.js';
import * as R from '../openapi/responses.js';

const SUMMARY_EXAMPLE = {
  items: 5000,
  users: 1200,
  interactions: 48_000,
  impressions: 91_000,
  byType: { view: 40_000, cart: 5000, purchase: 2000, rating: 1000, bookmark: 0 },
  revenue: 61_870.5,
  profit: 9_412.25,
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
  return Object.assign(analytics(...args), { errors: [404] });
}

/**
 * What the OpenAPI document says of the routes of analytics.ts beyond their schemas (docs/guide.md,
 * "The HTTP API"); src/server/openapi/document.ts gathers the entries of every module into the document.
 */
export const openapi: Operations = {
  'GET /analytics/summary': analytics(
    'analyticsSummary',
    'Summary',
    'Items, users, interactions, impressions, interactions by type, and the revenue and profit of purchases (the sums of their `price` and `profit`).',
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
    "A scenario's impressions, clicks, carts, purchases, CTR, conversion and revenue (the prices of purchases carrying its slug or a recommId of its answers).",
    R.SCENARIO_SUMMARY,
    Object.assign({}, FUNNEL_EXAMPLE, { revenue: 84.9 }),
  ),
  'GET /analytics/scenario/:slug/funnel-volume': scenarioAnalytics(
    'scenarioFunnelVolume',
    'Scenario funnel per day',
    "A scenario's funnel and revenue, every day of the window.",
    R.FUNNEL_VOLUME,
    {
      data: [
        { date: '2025-06-01', impressions: 860, clicks: 51, carts: 3, purchases: 1, revenue: 39.95 },
        { date: '2025-06-02', impressions: 870, clicks: 53, carts: 2, purchases: 1, revenue: 44.95 },
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
};
