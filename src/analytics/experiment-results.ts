import type { DuckDBConnection } from '@duckdb/node-api';
import type { Experiment } from '../contract/scenarios.js';
import { compareMeans, compareRates } from './significance.js';
import { ANSWER_DAYS, IMPRESSIONS, INTERACTIONS, SCENARIO_PURCHASES, windowParams } from './sql.js';
import { money, rate } from './window.js';

/**
 * `GET /experiments/:slug/results` (CONTRACT.md, "Configuration resources"): per variant, the users it
 * served (from the answer record), the impressions, clicks and purchases logged with its scenario, CTR and
 * conversion, and beyond the contract how its CTR compares with the first variant's (docs/guide.md, "Analytics and experiments").
 * Its revenue, revenue per user and, for later variants, Welch's t-test of revenue per user against the
 * first's (docs/guide.md, "Revenue"): the users it served and those who bought through it, each with the
 * prices of their purchases credited to it (0 for those who bought nothing).
 */
export async function experimentResults(
  db: DuckDBConnection,
  tenantId: string,
  experiment: Experiment,
  window: { fromMs: number; untilMs: number } = { fromMs: 0, untilMs: Number.MAX_SAFE_INTEGER },
) {
  const slugs = experiment.variants.map((variant) => variant.scenario);
  // Rows of (scenario, ...numbers) by scenario. `$1` the tenant, `$2` and `$3` the window; then what
  // `first` adds, then the variants' slugs.
  const read = async (sql: (slugList: string) => string, first: (string | number)[]) => {
    const params = windowParams(tenantId, window, ...first);
    const slugList = slugs.map((_, i) => `$${params.length + i + 1}`).join(', ');
    const found = (await db.runAndReadAll(sql(slugList), [...params, ...slugs])).getRowsJS();
    return new Map(found.map((row) => [String(row[0]), row.slice(1).map(Number)]));
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
    [experiment.slug],
  );
  const figures = slugs.map((scenario) => {
    const [clicks = 0, purchases = 0] = actions.get(scenario) ?? [];
    const [users = 0, revenue = 0] = spending.get(scenario) ?? [];
    const earned = money(revenue);
    return {
      scenario,
      users,
      impressions: impressions.get(scenario)?.[0] ?? 0,
      clicks,
      purchases,
      revenue: earned,
      revenuePerUser: rate(earned, users),
    };
  });
  const samples = slugs.map((scenario) => {
    const [, , count = 0, mean = 0, variance = 0] = spending.get(scenario) ?? [];
    return { count, mean, variance };
  });
  const control = figures[0];
  return {
    variants: figures.map((figure, i) => ({
      ...figure,
      ctr: rate(figure.clicks, figure.impressions),
      conversion: rate(figure.purchases, figure.clicks),
      significance:
        i === 0
          ? null
          : compareRates(
              { successes: control.clicks, trials: control.impressions },
              { successes: figure.clicks, trials: figure.impressions },
            ),
      revenueSignificance: i === 0 ? null : compareMeans(samples[0], samples[i]),
    })),
  };
}
