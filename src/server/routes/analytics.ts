import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  algorithms,
  catalogCoverage,
  interactionVolume,
  interactionsByType,
  scenarioFunnelVolume,
  scenarioSummary,
  scenarioTopItems,
  summary,
  topItems,
  topRecommended,
} from '../../analytics/queries.js';
import { windowOf, type Window } from '../../analytics/window.js';
import { ANALYTICS_QUERY, type AnalyticsQuery } from '../../contract/analytics.js';
import { ApiError } from '../../contract/errors.js';
import { SLUG } from '../../contract/common.js';
import type { AnalyticsReads } from '../../store/api/analytics.js';
import type { TenantState } from '../../state/tenant-state.js';
import { SCOPE } from '../plugins/auth.js';

const SCENARIO_PARAMS = z.strictObject({ slug: SLUG });

/** What an analytics route computes, given the store's analytics, the tenant, the window and the query. */
type Compute = (
  reads: AnalyticsReads,
  tenant: TenantState,
  window: Window,
  query: AnalyticsQuery,
  slug: string,
) => Promise<unknown>;

/** The analytics routes (CONTRACT.md, "Analytics"): tenant credentials but the public token. */
export async function analyticsRoutes(app: FastifyInstance): Promise<void> {
  const route = (path: string, compute: Compute) => {
    const scenario = path.includes(':slug');
    app.get(
      path,
      {
        config: { kinds: SCOPE.tenant },
        schema: { querystring: ANALYTICS_QUERY, ...(scenario && { params: SCENARIO_PARAMS }) },
      },
      async (request: FastifyRequest) => {
        const query = request.query as AnalyticsQuery;
        const window = windowOf(query);
        const { tenant } = request;
        const slug = scenario ? (request.params as { slug: string }).slug : '';
        if (scenario && !tenant.config.scenarios.has(slug))
          throw new ApiError('SCENARIO_NOT_FOUND', `scenario '${slug}' does not exist`);
        return compute(app.runtime.store.analytics, tenant, window, query, slug);
      },
    );
  };
  route('/analytics/summary', (reads, tenant, window) =>
    summary(reads, tenant.tenantId, window, tenant.catalog.itemCount),
  );
  route('/analytics/interaction-volume', (reads, tenant, window) =>
    interactionVolume(reads, tenant.tenantId, window),
  );
  route('/analytics/interactions-by-type', (reads, tenant, window) =>
    interactionsByType(reads, tenant.tenantId, window),
  );
  route('/analytics/top-items', (reads, tenant, window, query) =>
    topItems(reads, tenant.tenantId, window, query.limit),
  );
  route('/analytics/catalog-coverage', (reads, tenant, window) =>
    catalogCoverage(reads, tenant.tenantId, window, tenant.catalog.itemCount),
  );
  route('/analytics/algorithms', (reads, tenant, window) => algorithms(reads, tenant.tenantId, window));
  route('/analytics/top-recommended', (reads, tenant, window, query) =>
    topRecommended(reads, tenant.tenantId, window, query.limit),
  );
  route('/analytics/scenario/:slug/summary', (reads, tenant, window, _query, slug) =>
    scenarioSummary(reads, tenant.tenantId, window, slug),
  );
  route('/analytics/scenario/:slug/funnel-volume', (reads, tenant, window, _query, slug) =>
    scenarioFunnelVolume(reads, tenant.tenantId, window, slug),
  );
  route('/analytics/scenario/:slug/top-items', (reads, tenant, window, query, slug) =>
    scenarioTopItems(reads, tenant.tenantId, window, query.limit, slug),
  );
}
