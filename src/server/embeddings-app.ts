import Fastify, { type FastifyInstance } from 'fastify';
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
 * index. Credentials: the operator key, or the API key of the tenant the body names.
 */
export async function buildEmbeddingsApp(
  runtime: Runtime,
  operatorKey: string,
  logLevel = 'info',
): Promise<FastifyInstance> {
  const app = Fastify({
    bodyLimit: BODY_LIMIT,
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

  app.post('/index', { schema: { body: INDEX_BODY } }, async (request) => {
    const body = request.body as IndexBody;
    const key = request.headers['x-api-key'];
    if (typeof key !== 'string' || key.length === 0)
      throw new ApiError('UNAUTHORIZED', 'the X-Api-Key header is required');
    const tenant = runtime.state.get(body.tenantId);
    if (secretsEqual(key, operatorKey)) {
      if (!tenant) throw new ApiError('NOT_FOUND', `tenant '${body.tenantId}' does not exist`);
    } else {
      const credential = runtime.credentials.verify(key);
      if (!credential || credential.kind !== 'api') throw new ApiError('UNAUTHORIZED', 'invalid credentials');
      // An unknown tenant answers as another tenant's does.
      if (credential.tenantId !== body.tenantId || !tenant)
        throw new ApiError('FORBIDDEN_TENANT', 'the credential is not valid for this tenant');
    }
    return { indexed: await runtime.vectors.indexItems(tenant, body.items) };
  });
  return app;
}
