import type pg from 'pg';
import type { EventWindow, ExperimentFigures } from '../api/analytics.js';
import {
  ANSWER_DAYS,
  IMPRESSIONS,
  INTERACTIONS,
  SCENARIO_PURCHASES,
  windowParams,
} from './analytics-rows.js';
import { selectRows } from './read-rows.js';

/**
 * What an experiment's variants did (src/analytics/experiment-results.ts computes its results from it),
 * as src/store/duckdb/experiment-figures.ts reads it on DuckDB: per scenario of `scenarios`, the
 * impressions, clicks and purchases logged with it, and the users it served (from the record of answers)
 * with what each of them and each user who bought through it spent (docs/guide.md, "Revenue"). The
 * scenarios bind as one array; rows come in scenario order.
 */
export async function experimentFigures(
  pool: pg.Pool,
  tenantId: string,
  window: EventWindow,
  experiment: string,
  scenarios: readonly string[],
): Promise<ExperimentFigures> {
  // Rows of (scenario, ...numbers): figures are counts (strings from pg), sums, means and variances.
  const read = async (text: string, values: unknown[]) =>
    (await selectRows(pool, text, values)).map((row): [string, number[]] => [
      String(row[0]),
      row.slice(1).map(Number),
    ]);
  const list = [...scenarios];
  const impressions = await read(
    `SELECT scenario_slug, sum(cardinality(item_keys)) FROM ${IMPRESSIONS} AND scenario_slug = ANY($4)
      GROUP BY scenario_slug ORDER BY scenario_slug`,
    windowParams(tenantId, window, list),
  );
  const actions = await read(
    `SELECT scenario_slug, count(*) FILTER (WHERE type = 'view'), count(*) FILTER (WHERE type = 'purchase')
       FROM ${INTERACTIONS} AND scenario_slug = ANY($4)
      GROUP BY scenario_slug ORDER BY scenario_slug`,
    windowParams(tenantId, window, list),
  );
  // Per scenario: the users it served, its revenue, and the sample of what each user it served or who
  // bought through it spent (count, mean, variance), the purchases read once.
  const spending = await read(
    `WITH bought AS MATERIALIZED (SELECT scenario, user_id, price FROM ${SCENARIO_PURCHASES('= ANY($5)')}),
      earned AS (SELECT scenario, sum(price) AS revenue FROM bought GROUP BY scenario),
      served AS (
        SELECT DISTINCT scenario, user_id, true AS served FROM ${ANSWER_DAYS('experiment_users')}
           AND experiment = $4 AND scenario = ANY($5)),
      spent AS (
        SELECT scenario, user_id, sum(coalesce(price, 0)) AS spent FROM bought
         WHERE user_id IS NOT NULL GROUP BY scenario, user_id),
      each_user AS (
        SELECT scenario, served, coalesce(spent, 0) AS spent
          FROM served FULL OUTER JOIN spent USING (scenario, user_id)),
      stats AS (
        SELECT scenario, count(*) FILTER (WHERE served) AS users, count(*) AS count, avg(spent) AS mean,
               coalesce(var_samp(spent), 0) AS variance
          FROM each_user GROUP BY scenario)
     SELECT scenario, coalesce(users, 0), coalesce(revenue, 0), coalesce(count, 0), coalesce(mean, 0),
            coalesce(variance, 0)
       FROM stats FULL OUTER JOIN earned USING (scenario)
      ORDER BY scenario`,
    windowParams(tenantId, window, experiment, list),
  );
  return {
    impressions: impressions.map(([scenario, [count]]) => ({ scenario, impressions: count })),
    actions: actions.map(([scenario, [clicks, purchases]]) => ({ scenario, clicks, purchases })),
    spending: spending.map(([scenario, [users, revenue, count, mean, variance]]) => ({
      scenario,
      users,
      revenue,
      count,
      mean,
      variance,
    })),
  };
}
