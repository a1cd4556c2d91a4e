import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { TENANT_ID } from '../../contract/common.js';
import { ApiError } from '../../contract/errors.js';
import { FEED_BODY, FEED_ID_PARAMS, type FeedBody } from '../../contract/feeds.js';
import { CONFIG_ROUTE } from './config-resource.js';

function idOf(params: unknown): string {
  return (params as { id: string }).id;
}

/**
 * A PUT body may omit the id, which the path gives; an id it does send must be the path's (CONTRACT.md,
 * "Precise rules", **Resources.**).
 */
function checkPathId(body: unknown, id: string): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return;
  const sent = (body as Record<string, unknown>).id;
  if (sent === undefined || sent === id) return;
  const message = `id must match the path's '${id}' or be omitted`;
  throw new ApiError('INVALID_BODY', `invalid body at id: ${message}`, [
    { path: 'id', message, code: 'custom' },
  ]);
}

/** Catalog feeds (docs/guide.md, "Catalog feeds"). */
export async function feedRoutes(app: FastifyInstance): Promise<void> {
  const feeds = app.runtime.feeds;
  const config = CONFIG_ROUTE;
  const params = FEED_ID_PARAMS;

  // A sync that is running ends (and changes nothing) when the daemon stops, rather than hold it up.
  app.addHook('preClose', async () => feeds.stop());

  app.post('/catalog/feeds', { config, schema: { body: FEED_BODY } }, async (request, reply) =>
    reply.code(201).send(await feeds.create(request.tenant, request.body as FeedBody)),
  );

  app.get('/catalog/feeds', { config }, async (request) => ({ data: feeds.list(request.tenant) }));

  app.get('/catalog/feeds/:id', { config, schema: { params } }, async (request) =>
    feeds.get(request.tenant, idOf(request.params)),
  );

  app.put(
    '/catalog/feeds/:id',
    {
      config,
      schema: { params, body: FEED_BODY },
      preValidation: async (request) => checkPathId(request.body, idOf(request.params)),
    },
    async (request) => feeds.replace(request.tenant, idOf(request.params), request.body as FeedBody),
  );

  app.delete('/catalog/feeds/:id', { config, schema: { params } }, async (request, reply) => {
    await feeds.remove(request.tenant, idOf(request.params));
    return reply.code(204).send();
  });

  app.post('/catalog/feeds/:id/preview', { config, schema: { params } }, async (request) =>
    feeds.preview(request.tenant, idOf(request.params)),
  );

  app.post('/catalog/feeds/:id/activate', { config, schema: { params } }, async (request) =>
    feeds.activate(request.tenant, idOf(request.params)),
  );

  app.post('/catalog/feeds/:id/disable', { config, schema: { params } }, async (request) =>
    feeds.disable(request.tenant, idOf(request.params)),
  );

  app.post('/catalog/feeds/:id/sync', { config, schema: { params } }, async (request) =>
    feeds.sync(request.tenant, idOf(request.params)),
  );

  // The operator's (`nextrec feed sync` through a running daemon): the tenant's active feed.
  const operator = { access: 'operator' as const };
  const tenantParams = z.strictObject({ tenantId: TENANT_ID });
  const tenantOf = (request: { params: unknown }) => {
    const { tenantId } = request.params as { tenantId: string };
    const tenant = app.runtime.state.get(tenantId);
    if (!tenant) throw new ApiError('NOT_FOUND', `tenant '${tenantId}' does not exist`);
    return tenant;
  };
  app.post(
    '/tenants/:tenantId/feeds/sync',
    { config: operator, schema: { params: tenantParams } },
    async (request) => feeds.syncActive(tenantOf(request)),
  );
  app.get(
    '/tenants/:tenantId/feeds/sync',
    { config: operator, schema: { params: tenantParams } },
    async (request) => feeds.status(tenantOf(request)),
  );
}
