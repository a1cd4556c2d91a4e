import type { DuckDBConnection } from '@duckdb/node-api';
import type {
  AlgorithmFigures,
  AnalyticsReads,
  AnalyticsStore,
  EventWindow,
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
  windowParams,
} from './analytics-rows.js';
import { duckDbAnswerRecord } from './answer-record.js';
import { experimentFigures } from './experiment-figures.js';
import type { ReadRunner } from './reads.js';

/**
 * The analytics of a tenant over a window of UTC days (docs/guide.md, "Analytics and experiments"), each
 * read one or a few DuckDB statements on one connection. Events are grouped by their items' integer keys;
 * only the rows a top list may answer with are joined to item ids, which order ties.
 */

type Row = unknown[];

async function rows(db: DuckDBConnection, sql: string, params: (string | number)[]): Promise<Row[]> {
  return (await db.runAndReadAll(sql, params)).getRowsJS();
}

/** A figure as a number: DuckDB's counts are BigInts, and a sum over no rows is NULL. */
const n = (value: unknown) => Number(value ?? 0);

async function summary(db: DuckDBConnection, tenantId: string, window: EventWindow): Promise<SummaryFigures> {
  // Three statements: counting by type groups faster than a filtered count per type, and identities are
  // told apart by the 64-bit hash each interaction stores (src/store/identity-hash.ts).
  const types = await interactionTotals(db, tenantId, window);
  const [[users]] = await rows(
    db,
    `SELECT count(DISTINCT identity_hash) FROM ${INTERACTIONS}`,
    windowParams(tenantId, window),
  );
  const [[impressions]] = await rows(
    db,
    `SELECT sum(len(item_keys)) FROM ${IMPRESSIONS}`,
    windowParams(tenantId, window),
  );
  return { types, users: n(users), impressions: n(impressions) };
}

async function interactionsByDay(db: DuckDBConnection, tenantId: string, window: EventWindow) {
  const found = await rows(
    db,
    `SELECT ts // ${DAY_MS} AS day, count(*) FROM ${INTERACTIONS} GROUP BY day`,
    windowParams(tenantId, window),
  );
  return found.map(([day, count]) => ({ day: n(day), count: n(count) }));
}

/** Interactions by type, and the sums of their prices and profits, in one pass. */
async function interactionTotals(
  db: DuckDBConnection,
  tenantId: string,
  window: EventWindow,
): Promise<TypeTotal[]> {
  const found = await rows(
    db,
    `SELECT type, count(*), sum(price), sum(profit) FROM ${INTERACTIONS} GROUP BY type`,
    windowParams(tenantId, window),
  );
  return found.map(([type, count, price, profit]) => ({
    type: String(type),
    count: n(count),
    price: n(price),
    profit: n(profit),
  }));
}

async function topItems(db: DuckDBConnection, tenantId: string, window: EventWindow, limit: number) {
  // Items with as many interactions as the `limit`-th most or more are the only ones that can make it.
  const found = await rows(
    db,
    `WITH counted AS (SELECT item_key, count(*) AS count FROM ${INTERACTIONS} GROUP BY item_key),
      cut AS (SELECT min(count) AS least FROM (SELECT count FROM counted ORDER BY count DESC LIMIT $4))
     SELECT item_id, count FROM ${WITH_ITEM_IDS('counted')}
      WHERE count >= (SELECT least FROM cut)
      ORDER BY count DESC, item_id LIMIT $4`,
    windowParams(tenantId, window, limit),
  );
  return found.map(([itemId, count]) => ({ itemId: String(itemId), count: n(count) }));
}

async function itemsAnswered(db: DuckDBConnection, tenantId: string, window: EventWindow) {
  const [[answered]] = await rows(
    db,
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
  db: DuckDBConnection,
  tenantId: string,
  window: EventWindow,
  limit: number,
  scenario: string | undefined,
): Promise<ItemFunnel[]> {
  const slug = scenario === undefined ? 'scenario_slug IS NOT NULL' : 'scenario_slug = $5';
  const found = await rows(
    db,
    `WITH shown AS (
        SELECT item_key, count(*) AS impressions
          FROM (SELECT unnest(item_keys) AS item_key FROM ${IMPRESSIONS} AND ${slug})
         GROUP BY item_key),
      cut AS (
        SELECT min(impressions) AS least, count(*) AS listed
          FROM (SELECT impressions FROM shown ORDER BY impressions DESC LIMIT $4)),
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
  db: DuckDBConnection,
  tenantId: string,
  window: EventWindow,
  scenario: string,
): Promise<ScenarioDay[]> {
  const found = await rows(
    db,
    `WITH shown AS (
        SELECT ts // ${DAY_MS} AS day, sum(len(item_keys)) AS impressions
          FROM ${IMPRESSIONS} AND scenario_slug = $4 GROUP BY day),
      acted AS (
        SELECT ts // ${DAY_MS} AS day,
               count(*) FILTER (WHERE type = 'view') AS clicks,
               count(*) FILTER (WHERE type = 'cart') AS carts,
               count(*) FILTER (WHERE type = 'purchase') AS purchases
          FROM ${INTERACTIONS} AND scenario_slug = $4 GROUP BY day),
      paid AS (
        SELECT ts // ${DAY_MS} AS day, sum(price) AS revenue FROM ${SCENARIO_PURCHASES('$4')} GROUP BY day)
     SELECT day, coalesce(impressions, 0), coalesce(clicks, 0), coalesce(carts, 0), coalesce(purchases, 0),
            coalesce(revenue, 0)
       FROM shown FULL OUTER JOIN acted USING (day) FULL OUTER JOIN paid USING (day)`,
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
  db: DuckDBConnection,
  tenantId: string,
  window: EventWindow,
): Promise<AlgorithmFigures> {
  const answered = await rows(
    db,
    `SELECT algorithm, sum(answers) FROM ${ANSWER_DAYS('answer_days')} GROUP BY algorithm`,
    windowParams(tenantId, window),
  );
  const byCode = async (sql: string) =>
    (await rows(db, sql, windowParams(tenantId, window))).map(([code, count]) => ({
      code: String(code),
      count: n(count),
    }));
  const impressions = await byCode(
    `SELECT left(recomm_id, 4) AS code, sum(len(item_keys)) FROM ${IMPRESSIONS} AND recomm_id IS NOT NULL
      GROUP BY code`,
  );
  const clicks = await byCode(
    `SELECT left(recomm_id, 4) AS code, count(*) FROM ${INTERACTIONS} AND type = 'view' AND recomm_id IS NOT NULL
      GROUP BY code`,
  );
  return {
    answers: answered.map(([algorithm, answers]) => ({ algorithm: String(algorithm), answers: n(answers) })),
    impressions,
    clicks,
  };
}

function duckDbAnalyticsReads(read: ReadRunner): AnalyticsReads {
  return {
    summary: (tenantId, window) => read((db) => summary(db, tenantId, window)),
    interactionsByDay: (tenantId, window) => read((db) => interactionsByDay(db, tenantId, window)),
    interactionTotals: (tenantId, window) => read((db) => interactionTotals(db, tenantId, window)),
    topItems: (tenantId, window, limit) => read((db) => topItems(db, tenantId, window, limit)),
    itemsAnswered: (tenantId, window) => read((db) => itemsAnswered(db, tenantId, window)),
    itemFunnels: (tenantId, window, limit, scenario) =>
      read((db) => itemFunnels(db, tenantId, window, limit, scenario)),
    scenarioDays: (tenantId, window, scenario) => read((db) => scenarioDays(db, tenantId, window, scenario)),
    algorithmFigures: (tenantId, window) => read((db) => algorithmFigures(db, tenantId, window)),
    experimentFigures: (tenantId, window, experiment, scenarios) =>
      read((db) => experimentFigures(db, tenantId, window, experiment, scenarios)),
  };
}

/** The analytics area on DuckDB: its reads, and the record of answers written beside the write queue. */
export function duckDbAnalytics(read: ReadRunner): AnalyticsStore {
  return Object.assign(duckDbAnalyticsReads(read), duckDbAnswerRecord(read));
}
