import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import { ApiError } from '../../contract/errors.js';
import { LAKE_EXPORT_BODY, LAKE_EXPORT_RESULT } from '../../contract/lake.js';
import { exportNow } from '../../store/lake-export.js';

export async function lakeRoutes(app: FastifyInstance): Promise<void> {
  app.post(
    '/lake/export',
    {
      config: { access: 'operator' as const },
      schema: { body: LAKE_EXPORT_BODY, response: { 200: LAKE_EXPORT_RESULT } },
    },
    async (request) => {
      const { tenantId } = (request.body as z.infer<typeof LAKE_EXPORT_BODY>) ?? {};
      if (tenantId && !app.runtime.state.get(tenantId))
        throw new ApiError('NOT_FOUND', `no tenant '${tenantId}'`);
      return { exported: await exportNow(app.runtime.store, app.runtime.lake, tenantId) };
    },
  );
}
