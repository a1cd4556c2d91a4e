import type { FastifyInstance, FastifyRequest } from 'fastify';
import { rules } from '../../config/resources.js';
import { RULE, type Rule } from '../../contract/scenarios.js';

// The private token may manage configuration too (CONTRACT.md: everything but user export/delete and settings).
const config = { kinds: ['api' as const, 'private' as const] };

function slugOf(request: FastifyRequest): string {
  return (request.params as { slug: string }).slug;
}

export async function ruleRoutes(app: FastifyInstance): Promise<void> {
  app.post('/rules', { config, schema: { body: RULE } }, async (request, reply) =>
    reply.code(201).send(await rules.create(app.runtime, request.tenant, request.body as Rule)),
  );

  app.get('/rules', { config }, async (request) => ({ data: rules.list(request.tenant) }));

  app.get('/rules/:slug', { config }, async (request) => rules.get(request.tenant, slugOf(request)));

  app.put(
    '/rules/:slug',
    {
      config,
      schema: { body: RULE },
      preValidation: async (request) => {
        request.body = rules.withPathKey(request.body, slugOf(request));
      },
    },
    async (request) => rules.replace(app.runtime, request.tenant, request.body as Rule),
  );

  app.delete('/rules/:slug', { config }, async (request, reply) => {
    await rules.remove(app.runtime, request.tenant, slugOf(request));
    return reply.code(204).send();
  });
}
