import type { Experiment } from '../contract/scenarios.js';
import type { AnalyticsReads } from '../store/api/analytics.js';
import { compareMeans, compareRates } from './significance.js';
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
  reads: AnalyticsReads,
  tenantId: string,
  experiment: Experiment,
  window: { fromMs: number; untilMs: number } = { fromMs: 0, untilMs: Number.MAX_SAFE_INTEGER },
) {
  const slugs = experiment.variants.map((variant) => variant.scenario);
  const found = await reads.experimentFigures(tenantId, window, experiment.slug, slugs);
  const impressions = new Map(found.impressions.map((row) => [row.scenario, row.impressions]));
  const actions = new Map(found.actions.map((row) => [row.scenario, row]));
  const spending = new Map(found.spending.map((row) => [row.scenario, row]));
  const figures = slugs.map((scenario) => {
    const { clicks = 0, purchases = 0 } = actions.get(scenario) ?? {};
    const { users = 0, revenue = 0 } = spending.get(scenario) ?? {};
    const earned = money(revenue);
    return {
      scenario,
      users,
      impressions: impressions.get(scenario) ?? 0,
      clicks,
      purchases,
      revenue: earned,
      revenuePerUser: rate(earned, users),
    };
  });
  const samples = slugs.map((scenario) => {
    const { count = 0, mean = 0, variance = 0 } = spending.get(scenario) ?? {};
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
