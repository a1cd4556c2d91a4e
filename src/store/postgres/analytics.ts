import type pg from 'pg';
import type {
  AlgorithmFigures,
  AnalyticsReads,
  AnalyticsStore,
  DayCount,
  EventWindow,
  ItemCount,
  ItemFunnel,
  ScenarioDay,
  SummaryFigures,
  TypeTotal,
} from '../api/analytics.js';
import {
  ANSWER_DAYS,
  DAY_MS,
  IMPRESSIONS,
  INTERACTIONS,
  SCENARIO_PURCHASES,
  WITH_ITEM_IDS,
  n,
  windowParams,
} from './analytics-rows.js';
import { selectRows } from './read-rows.js';
import { pgAnswerRecord } from './answer-record-store.js';
import { experimentFigures } from './experiment-figures.js';

/**
 * The analytics of a tenant over a window of UTC days (docs/guide.md, "Analytics and experiments") on
 * PostgreSQL: the statements of src/store/duckdb/analytics.ts, with the same results. Events are grouped
 * by their items' integer keys; only the rows a top list may answer with are joined to item ids, which
 * order ties (by code point, as every text column sorts: migrations.ts). Where DuckDB's order is
 * unspecified (no ORDER BY there), the rows come in the order of their day, type or code.
 */

async function summary(pool: pg.Pool, tenantId: string, window: EventWindow): Promise<SummaryFigures> {
  // Identities are told apart by the 64-bit hash each interaction stores (src/store/identity-hash.ts).
  const types = await interactionTotals(pool, tenantId, window);
  const params = windowParams(tenantId, window);
  const [[users]] = await selectRows(
    pool,
    `SELECT count(DISTINCT identity_hash) FROM ${INTERACTIONS}`,
    params,
  );
  const [[impressions]] = await selectRows(
    pool,
    `SELECT sum(cardinality(item_keys)) FROM ${IMPRESSIONS}`,
    params,
  );
  return { types, users: n(users), impressions: n(impressions) };
}

async function interactionsByDay(pool: pg.Pool, tenantId: string, window: EventWindow): Promise<DayCount[]> {
  const found = await selectRows(
    pool,
    `SELECT ts / ${DAY_MS} AS day, count(*) FROM ${INTERACTIONS} GROUP BY day ORDER BY day`,
    windowParams(tenantId, window),
  );
  return found.map(([day, count]) => ({ day: n(day), count: n(count) }));
}

/** Interactions by type, and the sums of their prices and profits, in one pass. */
async function interactionTotals(pool: pg.Pool, tenantId: string, window: EventWindow): Promise<TypeTotal[]> {
  const found = await selectRows(
    pool,
    `SELECT type, count(*), sum(price), sum(profit) FROM ${INTERACTIONS} GROUP BY type ORDER BY type`,
    windowParams(tenantId, window),
  );
  return found.map(([type, count, price, profit]) => ({
    type: String(type),
    count: n(count),
    price: n(price),
    profit: n(profit),
  }));
}

async function topItems(
  pool: pg.Pool,
  tenantId: string,
  window: EventWindow,
  limit: number,
): Promise<ItemCount[]> {
  // Items with as many interactions as the `limit`-th most or more are the only ones that can make it.
  const found = await selectRows(
    pool,
    `WITH counted AS (SELECT item_key, count(*) AS count FROM ${INTERACTIONS} GROUP BY item_key),
      cut AS (SELECT min(count) AS least FROM (SELECT count FROM counted ORDER BY count DESC LIMIT $4) AS top)
     SELECT item_id, count FROM ${WITH_ITEM_IDS('counted')}
      WHERE count >= (SELECT least FROM cut)
      ORDER BY count DESC, item_id LIMIT $4`,
    windowParams(tenantId, window, limit),
  );
  return found.map(([itemId, count]) => ({ itemId: String(itemId), count: n(count) }));
}

async function itemsAnswered(pool: pg.Pool, tenantId: string, window: EventWindow): Promise<number> {
  const [[answered]] = await selectRows(
    pool,
    `SELECT count(DISTINCT item_id) FROM ${ANSWER_DAYS('answer_items')}`,
    windowParams(tenantId, window),
  );
  return n(answered);
}

/**
 * Per item: impressions, clicks, carts and purchases of events with a scenarioSlug (`scenario`: only that
 * one's), most shown first. Once `limit` items were shown, only items shown at least as often as the
 * `limit`-th can make the list, so their actions alone are counted.
 */
async function itemFunnels(
  pool: pg.Pool,
  tenantId: string,
  window: EventWindow,
  limit: number,
  scenario: string | undefined,
): Promise<ItemFunnel[]> {
  const slug = scenario === undefined ? 'scenario_slug IS NOT NULL' : 'scenario_slug = $5';
  const found = await selectRows(
    pool,
    `WITH shown AS (
        SELECT item_key, count(*) AS impressions
          FROM (SELECT unnest(item_keys) AS item_key FROM ${IMPRESSIONS} AND ${slug}) AS each_shown
         GROUP BY item_key),
      cut AS (
        SELECT min(impressions) AS least, count(*) AS listed
          FROM (SELECT impressions FROM shown ORDER BY impressions DESC LIMIT $4) AS top),
      candidates AS (
        SELECT * FROM shown WHERE (SELECT listed FROM cut) < $4 OR impressions >= (SELECT least FROM cut)),
      acted AS (
        SELECT item_key,
               count(*) FILTER (WHERE type = 'view') AS clicks,
               count(*) FILTER (WHERE type = 'cart') AS carts,
               count(*) FILTER (WHERE type = 'purchase') AS purchases
          FROM ${INTERACTIONS} AND ${slug}
           AND ((SELECT listed FROM cut) < $4 OR item_key IN (SELECT item_key FROM candidates))
         GROUP BY item_key),
      funnel AS (
        SELECT item_key, coalesce(impressions, 0) AS impressions, coalesce(clicks, 0) AS clicks,
               coalesce(carts, 0) AS carts, coalesce(purchases, 0) AS purchases
          FROM candidates FULL OUTER JOIN acted USING (item_key))
     SELECT item_id, impressions, clicks, carts, purchases FROM ${WITH_ITEM_IDS('funnel')}
      WHERE impressions + clicks + carts + purchases > 0
      ORDER BY impressions DESC, clicks DESC, purchases DESC, item_id
      LIMIT $4`,
    scenario === undefined
      ? windowParams(tenantId, window, limit)
      : windowParams(tenantId, window, limit, scenario),
  );
  return found.map(([itemId, impressions, clicks, carts, purchases]) => ({
    itemId: String(itemId),
    impressions: n(impressions),
    clicks: n(clicks),
    carts: n(carts),
    purchases: n(purchases),
  }));
}

/** Per day of a scenario: impressions, clicks, carts, purchases, revenue. */
async function scenarioDays(
  pool: pg.Pool,
  tenantId: string,
  window: EventWindow,
  scenario: string,
): Promise<ScenarioDay[]> {
  const found = await selectRows(
    pool,
    `WITH shown AS (
        SELECT ts / ${DAY_MS} AS day, sum(cardinality(item_keys)) AS impressions
          FROM ${IMPRESSIONS} AND scenario_slug = $4 GROUP BY day),
      acted AS (
        SELECT ts / ${DAY_MS} AS day,
               count(*) FILTER (WHERE type = 'view') AS clicks,
               count(*) FILTER (WHERE type = 'cart') AS carts,
               count(*) FILTER (WHERE type = 'purchase') AS purchases
          FROM ${INTERACTIONS} AND scenario_slug = $4 GROUP BY day),
      paid AS (
        SELECT ts / ${DAY_MS} AS day, sum(price) AS revenue FROM ${SCENARIO_PURCHASES('= $4')} GROUP BY day)
     SELECT day, coalesce(impressions, 0), coalesce(clicks, 0), coalesce(carts, 0), coalesce(purchases, 0),
            coalesce(revenue, 0)
       FROM shown FULL OUTER JOIN acted USING (day) FULL OUTER JOIN paid USING (day)
      ORDER BY day`,
    windowParams(tenantId, window, scenario),
  );
  return found.map(([day, impressions, clicks, carts, purchases, revenue]) => ({
    day: n(day),
    impressions: n(impressions),
    clicks: n(clicks),
    carts: n(carts),
    purchases: n(purchases),
    revenue: n(revenue),
  }));
}

/**
 * The answers each algorithm gave in the window, and the item impressions and clicks in the window by the
 * algorithm code their recommId begins with (its first four characters, src/engine/recomm-id.ts).
 */
async function algorithmFigures(
  pool: pg.Pool,
  tenantId: string,
  window: EventWindow,
): Promise<AlgorithmFigures> {
  const params = windowParams(tenantId, window);
  const answered = await selectRows(
    pool,
    `SELECT algorithm, sum(answers) FROM ${ANSWER_DAYS('answer_days')} GROUP BY algorithm ORDER BY algorithm`,
    params,
  );
  const byCode = async (text: string) =>
    (await selectRows(pool, text, params)).map(([code, count]) => ({ code: String(code), count: n(count) }));
  const impressions = await byCode(
    `SELECT left(recomm_id, 4) AS code, sum(cardinality(item_keys)) FROM ${IMPRESSIONS}
        AND recomm_id IS NOT NULL
      GROUP BY code ORDER BY code`,
  );
  const clicks = await byCode(
    `SELECT left(recomm_id, 4) AS code, count(*) FROM ${INTERACTIONS} AND type = 'view' AND recomm_id IS NOT NULL
      GROUP BY code ORDER BY code`,
  );
  return {
    answers: answered.map(([algorithm, answers]) => ({ algorithm: String(algorithm), answers: n(answers) })),
    impressions,
    clicks,
  };
}

function pgAnalyticsReads(pool: pg.Pool): AnalyticsReads {
  return {
    summary: (tenantId, window) => summary(pool, tenantId, window),
    interactionsByDay: (tenantId, window) => interactionsByDay(pool, tenantId, window),
    interactionTotals: (tenantId, window) => interactionTotals(pool, tenantId, window),
    topItems: (tenantId, window, limit) => topItems(pool, tenantId, window, limit),
    itemsAnswered: (tenantId, window) => itemsAnswered(pool, tenantId, window),
    itemFunnels: (tenantId, window, limit, scenario) => itemFunnels(pool, tenantId, window, limit, scenario),
    scenarioDays: (tenantId, window, scenario) => scenarioDays(pool, tenantId, window, scenario),
    algorithmFigures: (tenantId, window) => algorithmFigures(pool, tenantId, window),
    experimentFigures: (tenantId, window, experiment, scenarios) =>
      experimentFigures(pool, tenantId, window, experiment, scenarios),
  };
}

/** The analytics area on PostgreSQL: its reads, and the record of answers written beside the write queue. */
export function pgAnalytics(pool: pg.Pool): AnalyticsStore {
  return Object.assign(pgAnalyticsReads(pool), pgAnswerRecord(pool));
}
