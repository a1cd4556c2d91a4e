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
import type { DuckDBConnection } from '@duckdb/node-api';
import type { TenantState } from '../../state/tenant-state.js';
import { SCOPE } from '../plugins/auth.js';

const SCENARIO_PARAMS = z.strictObject({ slug: SLUG });

/** What an analytics route computes, given the store, the tenant, the window and the query. */
type Compute = (
  db: DuckDBConnection,
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
        return app.runtime.store.read((db) => compute(db, tenant, window, query, slug));
      },
    );
  };
  route('/analytics/summary', (db, tenant, window) =>
    summary(db, tenant.tenantId, window, tenant.catalog.itemCount),
  );
  route('/analytics/interaction-volume', (db, tenant, window) =>
    interactionVolume(db, tenant.tenantId, window),
  );
  route('/analytics/interactions-by-type', (db, tenant, window) =>
    interactionsByType(db, tenant.tenantId, window),
  );
  route('/analytics/top-items', (db, tenant, window, query) =>
    topItems(db, tenant.tenantId, window, query.limit),
  );
  route('/analytics/catalog-coverage', (db, tenant, window) =>
    catalogCoverage(db, tenant.tenantId, window, tenant.catalog.itemCount),
  );
  route('/analytics/algorithms', (db, tenant, window) => algorithms(db, tenant.tenantId, window));
  route('/analytics/top-recommended', (db, tenant, window, query) =>
    topRecommended(db, tenant.tenantId, window, query.limit),
  );
  route('/analytics/scenario/:slug/summary', (db, tenant, window, _query, slug) =>
    scenarioSummary(db, tenant.tenantId, window, slug),
  );
  route('/analytics/scenario/:slug/funnel-volume', (db, tenant, window, _query, slug) =>
    scenarioFunnelVolume(db, tenant.tenantId, window, slug),
  );
  route('/analytics/scenario/:slug/top-items', (db, tenant, window, query, slug) =>
    scenarioTopItems(db, tenant.tenantId, window, query.limit, slug),
  );
}
