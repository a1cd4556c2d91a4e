import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { segmentations } from '../../config/resources.js';
import { countSegments } from '../../config/segment-counts.js';
import { validateExpression } from '../../nextql/index.js';
import { CONFIG_ROUTE, keyOf, registerConfigResource } from './config-resource.js';

const VALIDATE_EXPRESSION_BODY = z.strictObject({
  expression: z.string().max(10_000),
  kind: z.enum(['filter', 'booster', 'segmentation']),
});

export async function segmentationRoutes(app: FastifyInstance): Promise<void> {
  registerConfigResource(app, '/segmentations', segmentations, 'id');

  // The router matches static segments before parameters, so this is never read as a segmentation id.
  app.post(
    '/segmentations/validate-expression',
    { config: CONFIG_ROUTE, schema: { body: VALIDATE_EXPRESSION_BODY } },
    async (request) => {
      const { expression, kind } = request.body as z.infer<typeof VALIDATE_EXPRESSION_BODY>;
      return validateExpression(expression, kind);
    },
  );

  app.get('/segmentations/:id/segments', { config: CONFIG_ROUTE }, async (request) => ({
    data: countSegments(segmentations.get(request.tenant, keyOf(request, 'id')), request.tenant.catalog),
  }));
}
