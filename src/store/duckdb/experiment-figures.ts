import type { DuckDBConnection } from '@duckdb/node-api';
import type { EventWindow, ExperimentFigures } from '../api/analytics.js';
import {
  ANSWER_DAYS,
  IMPRESSIONS,
  INTERACTIONS,
  SCENARIO_PURCHASES,
  windowParams,
} from './analytics-rows.js';

/**
 * What an experiment's variants did (src/analytics/experiment-results.ts computes its results from it):
 * per scenario of `scenarios`, the impressions, clicks and purchases logged with it, and the users it
 * served (from the record of answers) with what each of them and each user who bought through it spent
 * (docs/guide.md, "Revenue").
 */
export async function experimentFigures(
  db: DuckDBConnection,
  tenantId: string,
  window: EventWindow,
  experiment: string,
  scenarios: readonly string[],
): Promise<ExperimentFigures> {
  // Rows of (scenario, ...numbers). `$1` the tenant, `$2` and `$3` the window; then what `first` adds,
  // then the scenarios.
  const read = async (sql: (slugList: string) => string, first: (string | number)[]) => {
    const params = windowParams(tenantId, window, ...first);
    const slugList = scenarios.map((_, i) => `$${params.length + i + 1}`).join(', ');
    const found = (await db.runAndReadAll(sql(slugList), [...params, ...scenarios])).getRowsJS();
    return found.map((row): [string, number[]] => [String(row[0]), row.slice(1).map(Number)]);
  };
  const impressions = await read(
    (list) => `SELECT scenario_slug, sum(len(item_keys)) FROM ${IMPRESSIONS} AND scenario_slug IN (${list})
      GROUP BY scenario_slug`,
    [],
  );
  const actions = await read(
    (
      list,
    ) => `SELECT scenario_slug, count(*) FILTER (WHERE type = 'view'), count(*) FILTER (WHERE type = 'purchase')
       FROM ${INTERACTIONS} AND scenario_slug IN (${list})
      GROUP BY scenario_slug`,
    [],
  );
  // Per scenario: the users it served, its revenue, and the sample of what each user it served or who
  // bought through it spent (count, mean, variance), the purchases read once.
  const spending = await read(
    (list) => `WITH bought AS MATERIALIZED (SELECT scenario, user_id, price FROM ${SCENARIO_PURCHASES(list)}),
      earned AS (SELECT scenario, sum(price) AS revenue FROM bought GROUP BY scenario),
      served AS (
        SELECT DISTINCT scenario, user_id, true AS served FROM ${ANSWER_DAYS('experiment_users')}
           AND experiment = $4 AND scenario IN (${list})),
      spent AS (
        SELECT scenario, user_id, sum(coalesce(price, 0)) AS spent FROM bought
         WHERE user_id IS NOT NULL GROUP BY ALL),
      each AS (
        SELECT scenario, served, coalesce(spent, 0) AS spent
          FROM served FULL OUTER JOIN spent USING (scenario, user_id)),
      stats AS (
        SELECT scenario, count(*) FILTER (WHERE served) AS users, count(*) AS count, avg(spent) AS mean,
               coalesce(var_samp(spent), 0) AS variance
          FROM each GROUP BY scenario)
     SELECT scenario, coalesce(users, 0), coalesce(revenue, 0), coalesce(count, 0), coalesce(mean, 0),
            coalesce(variance, 0)
       FROM stats FULL OUTER JOIN earned USING (scenario)`,
    [experiment],
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
