import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { segmentations } from '../../config/resources.js';
import { countSegments } from '../../config/segment-counts.js';
import { SEGMENTATION, type Segmentation } from '../../contract/scenarios.js';
import { validateExpression } from '../../nextql/index.js';

// The private token may manage configuration too (CONTRACT.md: everything but user export/delete and settings).
const config = { kinds: ['api' as const, 'private' as const] };

const VALIDATE_EXPRESSION_BODY = z.strictObject({
  expression: z.string().max(10_000),
  kind: z.enum(['filter', 'booster', 'segmentation']),
});

function idOf(request: FastifyRequest): string {
  return (request.params as { id: string }).id;
}

export async function segmentationRoutes(app: FastifyInstance): Promise<void> {
  app.post('/segmentations', { config, schema: { body: SEGMENTATION } }, async (request, reply) =>
    reply
      .code(201)
      .send(await segmentations.create(app.runtime, request.tenant, request.body as Segmentation)),
  );

  app.get('/segmentations', { config }, async (request) => ({ data: segmentations.list(request.tenant) }));

  // The router matches static segments before parameters, so this is never read as a segmentation id.
  app.post(
    '/segmentations/validate-expression',
    { config, schema: { body: VALIDATE_EXPRESSION_BODY } },
    async (request) => {
      const { expression, kind } = request.body as z.infer<typeof VALIDATE_EXPRESSION_BODY>;
      return validateExpression(expression, kind);
    },
  );

  app.get('/segmentations/:id', { config }, async (request) =>
    segmentations.get(request.tenant, idOf(request)),
  );

  app.get('/segmentations/:id/segments', { config }, async (request) => ({
    data: countSegments(segmentations.get(request.tenant, idOf(request)), request.tenant.catalog),
  }));

  app.put(
    '/segmentations/:id',
    {
      config,
      schema: { body: SEGMENTATION },
      preValidation: async (request) => {
        request.body = segmentations.withPathKey(request.body, idOf(request));
      },
    },
    async (request) => segmentations.replace(app.runtime, request.tenant, request.body as Segmentation),
  );

  app.delete('/segmentations/:id', { config }, async (request, reply) => {
    await segmentations.remove(app.runtime, request.tenant, idOf(request));
    return reply.code(204).send();
  });
}
