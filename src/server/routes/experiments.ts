import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { experimentResults } from '../../analytics/experiment-results.js';
import { experiments } from '../../config/resources.js';
import { SLUG } from '../../contract/common.js';
import { registerConfigResource } from './config-resource.js';
import { SCOPE } from '../plugins/auth.js';

/** Experiments (CONTRACT.md, "Configuration resources"), and their results. */
export async function experimentRoutes(app: FastifyInstance): Promise<void> {
  registerConfigResource(app, '/experiments', experiments, 'slug');
  app.get(
    '/experiments/:slug/results',
    { config: { kinds: SCOPE.tenant }, schema: { params: z.strictObject({ slug: SLUG }) } },
    async (request) => {
      const experiment = experiments.get(request.tenant, (request.params as { slug: string }).slug);
      return app.runtime.store.read((db) => experimentResults(db, request.tenant.tenantId, experiment));
    },
  );
}
