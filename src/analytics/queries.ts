import type { DuckDBConnection } from '@duckdb/node-api';
import { INTERACTION_TYPES as TYPE_NAMES } from '../contract/ingestion.js';
import { algorithmCode } from '../engine/recomm-id.js';
import {
  ANSWER_DAYS,
  DAY_MS,
  IMPRESSIONS,
  INTERACTIONS,
  SCENARIO_PURCHASES,
  WITH_ITEM_IDS,
  windowParams,
} from './sql.js';
import { money, rate, type Window } from './window.js';

/**
 * The analytics of a tenant over a window of UTC days (docs/guide.md, "Analytics and experiments"), each one DuckDB query over
 * the store. Clicks are views that carry a scenarioSlug; an impression counts once per item it showed.
 * Copies of session events made by identity merges are left out: their originals count. Events are
 * grouped by their items' integer keys; only the rows a top list may answer with are joined to item ids,
 * which order ties.
 */

type Row = unknown[];

async function rows(db: DuckDBConnection, sql: string, params: (string | number)[]): Promise<Row[]> {
  return (await db.runAndReadAll(sql, params)).getRowsJS();
}

const n = (value: unknown) => Number(value ?? 0);

/** A zero-filled series over the window's days from rows of (day number, ...values). */
function series<T>(window: Window, found: Row[], make: (values: number[]) => T): (T & { date: string })[] {
  const byDay = new Map(found.map((row) => [n(row[0]), row.slice(1).map(n)]));
  return window.days.map((date) => {
    const values = byDay.get(Date.parse(`${date}T00:00:00Z`) / DAY_MS) ?? [];
    return { date, ...make(values) };
  });
}

export async function summary(db: DuckDBConnection, tenantId: string, window: Window, items: number) {
  // Three statements: counting by type groups faster than a filtered count per type, and identities are
  // told apart by the 64-bit hash each interaction stores (src/store/identity-hash.ts).
  const byType = await typeTotals(db, tenantId, window);
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
  return {
    items,
    users: n(users),
    interactions: byType.data.reduce((sum, { count }) => sum + count, 0),
    impressions: n(impressions),
    byType: Object.fromEntries(byType.data.map(({ type, count }) => [type, count])),
    // The prices and profits of purchases (docs/guide.md, "Revenue").
    revenue: money(byType.revenue),
    profit: money(byType.profit),
  };
}

export async function interactionVolume(db: DuckDBConnection, tenantId: string, window: Window) {
  const found = await rows(
    db,
    `SELECT ts // ${DAY_MS} AS day, count(*) FROM ${INTERACTIONS} GROUP BY day`,
    windowParams(tenantId, window),
  );
  return { data: series(window, found, ([count = 0]) => ({ count })) };
}

/** Interactions by type, and the sums of the purchases' prices and profits, in one pass. */
async function typeTotals(db: DuckDBConnection, tenantId: string, window: Window) {
  const found = await rows(
    db,
    `SELECT type, count(*), sum(price), sum(profit) FROM ${INTERACTIONS} GROUP BY type`,
    windowParams(tenantId, window),
  );
  const counts = new Map(found.map(([type, count]) => [String(type), n(count)]));
  const purchases = found.find(([type]) => type === 'purchase') ?? [];
  return {
    data: TYPE_NAMES.map((type) => ({ type, count: counts.get(type) ?? 0 })),
    revenue: n(purchases[2]),
    profit: n(purchases[3]),
  };
}

export async function interactionsByType(db: DuckDBConnection, tenantId: string, window: Window) {
  return { data: (await typeTotals(db, tenantId, window)).data };
}

export async function topItems(db: DuckDBConnection, tenantId: string, window: Window, limit: number) {
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
  return { data: found.map(([itemId, count]) => ({ itemId: String(itemId), count: n(count) })) };
}

export async function catalogCoverage(
  db: DuckDBConnection,
  tenantId: string,
  window: Window,
  catalogSize: number,
) {
  const [[recommended]] = await rows(
    db,
    `SELECT count(DISTINCT item_id) FROM ${ANSWER_DAYS('answer_items')}`,
    windowParams(tenantId, window),
  );
  const recommendedItems = Math.min(n(recommended), catalogSize);
  return { catalogSize, recommendedItems, coverage: rate(recommendedItems, catalogSize) };
}

/**
 * Per item: impressions, clicks, carts and purchases of events with a scenarioSlug (`scenario`: only that
 * one's), most shown first. Once `limit` items were shown, only items shown at least as often as the
 * `limit`-th can make the list, so their actions alone are counted.
 */
async function funnelByItem(
  db: DuckDBConnection,
  tenantId: string,
  window: Window,
  limit: number,
  scenario: string | undefined,
): Promise<Row[]> {
  const slug = scenario === undefined ? 'scenario_slug IS NOT NULL' : 'scenario_slug = $5';
  return rows(
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
}

/** A row of funnelByItem as the answers give it. */
function funnelRow([itemId, impressions, clicks, carts, purchases]: Row) {
  return {
    itemId: String(itemId),
    impressions: n(impressions),
    clicks: n(clicks),
    carts: n(carts),
    purchases: n(purchases),
    ctr: rate(n(clicks), n(impressions)),
  };
}

export async function topRecommended(db: DuckDBConnection, tenantId: string, window: Window, limit: number) {
  const found = await funnelByItem(db, tenantId, window, limit, undefined);
  return {
    data: found.map((row) => {
      const figures = funnelRow(row);
      return { ...figures, conversion: rate(figures.purchases, figures.clicks) };
    }),
  };
}

export async function scenarioTopItems(
  db: DuckDBConnection,
  tenantId: string,
  window: Window,
  limit: number,
  scenario: string,
) {
  return { data: (await funnelByItem(db, tenantId, window, limit, scenario)).map(funnelRow) };
}

/** Per day (by day number) of a scenario: impressions, clicks, carts, purchases, revenue. */
async function scenarioDays(db: DuckDBConnection, tenantId: string, window: Window, scenario: string) {
  return rows(
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
}

export async function scenarioFunnelVolume(
  db: DuckDBConnection,
  tenantId: string,
  window: Window,
  scenario: string,
) {
  const found = await scenarioDays(db, tenantId, window, scenario);
  return {
    data: series(window, found, ([impressions = 0, clicks = 0, carts = 0, purchases = 0, revenue = 0]) => ({
      impressions,
      clicks,
      carts,
      purchases,
      revenue: money(revenue),
    })),
  };
}

export async function scenarioSummary(
  db: DuckDBConnection,
  tenantId: string,
  window: Window,
  scenario: string,
) {
  const found = await scenarioDays(db, tenantId, window, scenario);
  const total = [0, 0, 0, 0, 0];
  for (const row of found) for (let i = 0; i < 5; i++) total[i] += n(row[i + 1]);
  const [impressions, clicks, carts, purchases, revenue] = total;
  return {
    impressions,
    clicks,
    carts,
    purchases,
    ctr: rate(clicks, impressions),
    conversion: rate(purchases, clicks),
    revenue: money(revenue),
  };
}

/**
 * Per algorithm (beyond the contract, docs/guide.md, "Analytics and experiments"): the answers it gave in the window, and the item
 * impressions and clicks in the window whose recommId names it (see recomm-id.ts).
 */
export async function algorithms(db: DuckDBConnection, tenantId: string, window: Window) {
  const answered = await rows(
    db,
    `SELECT algorithm, sum(answers) FROM ${ANSWER_DAYS('answer_days')} GROUP BY algorithm`,
    windowParams(tenantId, window),
  );
  const byCode = async (sql: string) =>
    new Map(
      (await rows(db, sql, windowParams(tenantId, window))).map(([code, count]) => [String(code), n(count)]),
    );
  const shown = await byCode(
    `SELECT left(recomm_id, 4) AS code, sum(len(item_keys)) FROM ${IMPRESSIONS} AND recomm_id IS NOT NULL
      GROUP BY code`,
  );
  const clicked = await byCode(
    `SELECT left(recomm_id, 4) AS code, count(*) FROM ${INTERACTIONS} AND type = 'view' AND recomm_id IS NOT NULL
      GROUP BY code`,
  );
  const data = answered.map(([name, answers]) => {
    const algorithm = String(name);
    const code = algorithmCode(algorithm);
    const impressions = shown.get(code) ?? 0;
    const clicks = clicked.get(code) ?? 0;
    return { algorithm, answers: n(answers), impressions, clicks, ctr: rate(clicks, impressions) };
  });
  data.sort((a, b) => b.answers - a.answers || (a.algorithm < b.algorithm ? -1 : 1));
  return { data };
}
