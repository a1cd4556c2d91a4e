import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ConfigDocuments } from '../../config/config-documents.js';
import type { ConfigDocument } from '../../state/tenant-config.js';
import type { TenantState } from '../../state/tenant-state.js';
import { SCOPE } from '../plugins/auth.js';

// Every tenant credential but the public token may manage configuration (docs/guide.md, "Credentials").
export const CONFIG_ROUTE = { kinds: SCOPE.tenant };

/** The path parameter naming one resource: the resource's key, as its URL shows it. */
export function keyOf(request: FastifyRequest, param: string): string {
  return (request.params as Record<string, string>)[param];
}

/**
 * The five routes every configuration resource has: POST and GET on `path`, and GET, PUT (whole
 * replacement; the key may be omitted from the body) and DELETE on `path/:<param>`.
 */
export function registerConfigResource<K extends string, T extends ConfigDocument & Record<K, string>>(
  app: FastifyInstance,
  path: string,
  resource: ConfigDocuments<K, T>,
  param: string,
  /** Runs after a document of the tenant was created, replaced or removed. */
  changed: (tenant: TenantState) => void = () => undefined,
): void {
  const config = CONFIG_ROUTE;
  const one = `${path}/:${param}`;
  const schema = { body: resource.schema };

  app.post(path, { config, schema }, async (request, reply) => {
    const created = await resource.create(app.runtime, request.tenant, request.body as T);
    changed(request.tenant);
    return reply.code(201).send(created);
  });

  app.get(path, { config }, async (request) => ({ data: resource.list(request.tenant) }));

  app.get(one, { config }, async (request) => resource.get(request.tenant, keyOf(request, param)));

  app.put(
    one,
    {
      config,
      schema,
      preValidation: async (request) => {
        request.body = resource.withPathKey(request.body, keyOf(request, param));
      },
    },
    async (request) => {
      const replaced = await resource.replace(app.runtime, request.tenant, request.body as T);
      changed(request.tenant);
      return replaced;
    },
  );

  app.delete(one, { config }, async (request, reply) => {
    await resource.remove(app.runtime, request.tenant, keyOf(request, param));
    changed(request.tenant);
    return reply.code(204).send();
  });
}
