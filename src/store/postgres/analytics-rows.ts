import type { EventWindow } from '../api/analytics.js';

/**
 * The rows an analytics query reads over a window (docs/guide.md, "Analytics and experiments"), as
 * src/store/duckdb/analytics-rows.ts reads them on DuckDB, with `$1` the tenant, `$2` the window's start
 * and `$3` its end (ms, exclusive): the routes' figures and an experiment's results count the same events.
 */

/**
 * A UTC day's length: a row's day is its ts divided by it, rounded down (src/store/api/analytics.ts).
 * PostgreSQL's `/` of two integers drops the fraction, as DuckDB's `//` does.
 */
export const DAY_MS = 86_400_000;

/** Interactions in the window, the copies identity merges make left out (their originals count). */
export const INTERACTIONS =
  'interactions WHERE tenant_id = $1 AND ts >= $2 AND ts < $3 AND NOT coalesce(merged, false)';

export const IMPRESSIONS = 'impressions WHERE tenant_id = $1 AND ts >= $2 AND ts < $3';

/**
 * Purchases in the window credited to the scenarios `scenarioIs` accepts (a test of a scenario's slug:
 * `= $4`, `= ANY($5)`), as rows of (scenario, ts, user_id, price): each purchase carrying a scenario's
 * slug, or a recommId that impressions logged with the scenario carried (an answer of it), once per
 * scenario (docs/guide.md, "Revenue"). Only the impressions whose recommId a purchase of the window
 * carries are read for the answers.
 */
export const SCENARIO_PURCHASES = (scenarioIs: string) => `(
  WITH purchases AS (SELECT * FROM ${INTERACTIONS} AND type = 'purchase'),
    answered AS (
      SELECT DISTINCT recomm_id, scenario_slug FROM impressions
       WHERE tenant_id = $1 AND ts < $3 AND scenario_slug ${scenarioIs}
         AND recomm_id IN (SELECT recomm_id FROM purchases))
  SELECT scenario_slug AS scenario, ts, user_id, price FROM purchases WHERE scenario_slug ${scenarioIs}
  UNION ALL
  SELECT a.scenario_slug, p.ts, p.user_id, p.price FROM purchases p JOIN answered a USING (recomm_id)
   WHERE p.scenario_slug IS DISTINCT FROM a.scenario_slug) AS credited`;

/**
 * Rows of a daily rollup of the answer record (answer_days, answer_items, experiment_users) in the window.
 * The window's bounds are cast: compared with an integer day alone, they would be taken for integers.
 */
export const ANSWER_DAYS = (table: string) =>
  `${table} WHERE tenant_id = $1 AND day BETWEEN $2::bigint / ${DAY_MS} AND ($3::bigint - 1) / ${DAY_MS}`;

/**
 * The item ids of `rows`' item keys (see src/store/item-keys.ts): analytics group events by key, and
 * join the few rows they answer with to the ids.
 */
export const WITH_ITEM_IDS = (rows: string) =>
  `${rows} JOIN item_keys ON item_keys.tenant_id = $1 AND item_keys.item_key = ${rows}.item_key`;

/** The parameters of these fragments, then `more` from `$4` on. */
export function windowParams(tenantId: string, window: EventWindow, ...more: unknown[]): unknown[] {
  return [tenantId, window.fromMs, window.untilMs, ...more];
}

/**
 * A figure as a number: PostgreSQL's counts (bigint) and sums of integers (bigint, numeric) come back
 * from `pg` as strings, and a sum over no rows is NULL.
 */
export const n = (value: unknown) => Number(value ?? 0);
