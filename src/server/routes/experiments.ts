import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { experimentResults } from '../../analytics/experiment-results.js';
import { windowOf } from '../../analytics/window.js';
import { ANALYTICS_QUERY, type AnalyticsQuery } from '../../contract/analytics.js';
import { experiments } from '../../config/resources.js';
import { SLUG } from '../../contract/common.js';
import { registerConfigResource } from './config-resource.js';
import { SCOPE } from '../plugins/auth.js';

/** Experiments (CONTRACT.md, "Configuration resources"), and their results. */
export async function experimentRoutes(app: FastifyInstance): Promise<void> {
  registerConfigResource(app, '/experiments', experiments, 'slug');
  app.get(
    '/experiments/:slug/results',
    {
      config: { kinds: SCOPE.tenant },
      schema: { params: z.strictObject({ slug: SLUG }), querystring: ANALYTICS_QUERY },
    },
    async (request) => {
      const experiment = experiments.get(request.tenant, (request.params as { slug: string }).slug);
      // Every event of the variants by default; `from` and `to` (UTC days) narrow it as on analytics routes.
      const query = request.query as AnalyticsQuery;
      const window = query.from || query.to ? windowOf(query) : undefined;
      return experimentResults(app.runtime.store.analytics, request.tenant.tenantId, experiment, window);
    },
  );
}
