import { resource } from '../openapi/examples.js';
import * as R from '../openapi/responses.js';
import type { Operations } from '../openapi/operation.js';

/**
 * What the OpenAPI document says of the routes of experiments.ts beyond their schemas (docs/guide.md,
 * "The HTTP API"); src/server/openapi/document.ts gathers the entries of every module into the document.
 */
export const openapi: Operations = {
  'GET /experiments/:slug/results': {
    id: 'experimentResults',
    tag: 'Experiments',
    summary: "An experiment's results",
    description:
      "Per variant: users served, impressions, clicks, purchases, CTR, conversion, and the lift over the first variant with a two-proportion z-test's p-value and 95% interval; revenue, revenue per user, and for later variants Welch's t-test of revenue per user against the first (`revenueSignificance`).",
    body: R.EXPERIMENT_RESULTS,
    answer: {
      variants: [
        {
          scenario: 'home',
          users: 135,
          impressions: 6928,
          clicks: 1144,
          purchases: 22,
          ctr: 0.1651,
          conversion: 0.0192,
          significance: null,
          revenue: 1318.5,
          revenuePerUser: 9.7667,
          revenueSignificance: null,
        },
        {
          scenario: 'home-b',
          users: 165,
          impressions: 7769,
          clicks: 1256,
          purchases: 15,
          ctr: 0.1617,
          conversion: 0.0119,
          significance: { metric: 'ctr', lift: -0.0209, pValue: 0.5712, difference95: [-0.0154, 0.0085] },
          revenue: 904.2,
          revenuePerUser: 5.48,
          revenueSignificance: { lift: -0.4389, pValue: 0.0831, difference95: [-9.1, 0.5734] },
        },
      ],
    },
  },
  ...resource(
    '/experiments',
    'slug',
    'experiment',
    'Experiments',
    'Serves the variants of a base scenario to users by weight, the same variant to a user every time.',
    {
      slug: 'home-test',
      baseScenario: 'home',
      variants: [
        { scenario: 'home', weight: 1 },
        { scenario: 'home-b', weight: 1 },
      ],
      status: 'running',
    },
  ),
};
