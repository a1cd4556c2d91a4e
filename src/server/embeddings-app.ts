import type { IncomingHttpHeaders } from 'node:http';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { ApiError } from '../contract/errors.js';
import { INDEX_BODY, type IndexBody } from '../contract/vectors.js';
import type { Runtime } from '../runtime.js';
import { secretsEqual } from '../tenants/secrets.js';
import { answerClientError, errorsPlugin, frameworkErrorAnswer } from './plugins/errors.js';
import { plainJsonBodyPlugin } from './plugins/json-body.js';
import { BODY_LIMIT } from './app.js';
import { zodValidatorCompiler } from './validation.js';

/** The collection `GET /health` names: the one vector index per tenant this process keeps. */
const COLLECTION = 'items';

/**
 * The embeddings helper service (spec "Embeddings helper service", CONTRACT.md): `GET /health` and
 * `POST /index`, on a port of its own, embedding with the daemon's embedder into the daemon's vector
 * index. `POST /index` takes `X-Tenant-Id` and the operator key or that tenant's API key; its body names
 * the same tenant.
 */
export async function buildEmbeddingsApp(
  runtime: Runtime,
  operatorKey: string,
  logLevel = 'info',
): Promise<FastifyInstance> {
  const app = Fastify({
    bodyLimit: BODY_LIMIT,
    // As the daemon's API: requests are not logged one by one (a load balancer's health checks come
    // every second; docs/configuration.md, "Flags and environment"), errors are.
    logController: new LogController({ disableRequestLogging: true }),
    logger: { level: logLevel },
    // Requests Node's HTTP parser or the router refuses get the contract's error body too.
    clientErrorHandler: answerClientError,
    frameworkErrors: frameworkErrorAnswer,
  });
  app.setValidatorCompiler(zodValidatorCompiler);
  await app.register(errorsPlugin);
  await app.register(plainJsonBodyPlugin);
  const { embedder } = runtime.vectors;

  app.get('/health', async () => ({ status: 'ok', model: embedder.model, collection: COLLECTION }));

  // The request handling order of CONTRACT.md: the tenant header, then the credential, before the body.
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.url === '/index') authorize(runtime, operatorKey, request.headers);
  });

  app.post('/index', { schema: { body: INDEX_BODY } }, async (request) => {
    const body = request.body as IndexBody;
    const tenantId = String(request.headers['x-tenant-id']);
    if (body.tenantId !== tenantId)
      throw new ApiError('INVALID_BODY', 'tenantId must name the tenant of X-Tenant-Id', [
        { path: 'tenantId', message: `expected '${tenantId}'` },
      ]);
    const tenant = runtime.state.get(tenantId);
    // Only the operator key gets this far for a tenant that does not exist.
    if (!tenant) throw new ApiError('NOT_FOUND', `tenant '${tenantId}' does not exist`);
    return { indexed: await runtime.vectors.indexItems(tenant, body.items) };
  });
  return app;
}

/**
 * Checks that a request names its tenant (`X-Tenant-Id`, 400 `TENANT_REQUIRED`) and carries the operator
 * key or that tenant's API key (401 `UNAUTHORIZED`; another tenant's, or an unknown tenant's, 403
 * `FORBIDDEN_TENANT`), as every route of the daemon does.
 */
function authorize(runtime: Runtime, operatorKey: string, headers: IncomingHttpHeaders): void {
  const tenantId = headers['x-tenant-id'];
  if (typeof tenantId !== 'string' || tenantId.length === 0)
    throw new ApiError('TENANT_REQUIRED', 'the X-Tenant-Id header is required');
  const key = headers['x-api-key'];
  if (typeof key !== 'string' || key.length === 0)
    throw new ApiError('UNAUTHORIZED', 'the X-Api-Key header is required');
  if (secretsEqual(key, operatorKey)) return;
  const credential = runtime.credentials.verify(key);
  if (!credential || credential.kind !== 'api') throw new ApiError('UNAUTHORIZED', 'invalid credentials');
  // An unknown tenant answers as another tenant's does.
  if (credential.tenantId !== tenantId || !runtime.state.get(tenantId))
    throw new ApiError('FORBIDDEN_TENANT', 'the credential is not valid for this tenant');
}
