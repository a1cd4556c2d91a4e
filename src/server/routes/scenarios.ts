import type { FastifyInstance, FastifyRequest } from 'fastify';
import { scenarios } from '../../config/resources.js';
import { SCENARIO, type Scenario } from '../../contract/scenarios.js';

// The private token may manage configuration too (CONTRACT.md: everything but user export/delete and settings).
const config = { kinds: ['api' as const, 'private' as const] };

function slugOf(request: FastifyRequest): string {
  return (request.params as { slug: string }).slug;
}

export async function scenarioRoutes(app: FastifyInstance): Promise<void> {
  app.post('/scenarios', { config, schema: { body: SCENARIO } }, async (request, reply) =>
    reply.code(201).send(await scenarios.create(app.runtime, request.tenant, request.body as Scenario)),
  );

  app.get('/scenarios', { config }, async (request) => ({ data: scenarios.list(request.tenant) }));

  app.get('/scenarios/:slug', { config }, async (request) => scenarios.get(request.tenant, slugOf(request)));

  app.put(
    '/scenarios/:slug',
    {
      config,
      schema: { body: SCENARIO },
      preValidation: async (request) => {
        request.body = scenarios.withPathKey(request.body, slugOf(request));
      },
    },
    async (request) => scenarios.replace(app.runtime, request.tenant, request.body as Scenario),
  );

  app.delete('/scenarios/:slug', { config }, async (request, reply) => {
    await scenarios.remove(app.runtime, request.tenant, slugOf(request));
    return reply.code(204).send();
  });
}
