import rateLimit from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { serializerCompiler } from 'fastify-type-provider-zod';
import type { Ranker } from '../engine/ranker.js';
import { RecommPages } from '../engine/recomm-pages.js';
import { Recommender } from '../engine/recommender.js';
import type { Runtime } from '../runtime.js';
import { SWAGGER_OPTIONS } from './openapi/document.js';
import { authPlugin } from './plugins/auth.js';
import { connectionDrainingPlugin } from './plugins/connection-draining.js';
import { answerClientError, errorsPlugin, frameworkErrorAnswer } from './plugins/errors.js';
import { jsonBodyPlugin } from './plugins/json-body.js';
import { metricsPlugin } from './plugins/metrics.js';
import { nodeHeaderPlugin } from './plugins/node-header.js';
import { readinessPlugin } from './plugins/readiness.js';
import { turnBatchedResponsesPlugin } from './plugins/turn-batched-responses.js';
import { RepeatedBodies } from './repeated-bodies.js';
import { analyticsRoutes } from './routes/analytics.js';
import { authRoutes } from './routes/auth.js';
import { batchRoutes } from './routes/batch.js';
import { catalogRoutes } from './routes/catalog.js';
import { experimentRoutes } from './routes/experiments.js';
import { feedRoutes } from './routes/feeds.js';
import { dashboardRoutes } from './routes/dashboard.js';
import { healthRoutes } from './routes/health.js';
import { identityRoutes } from './routes/identity.js';
import { ingestionRoutes } from './routes/ingestion.js';
import { lakeRoutes } from './routes/lake.js';
import { memoryRoutes } from './routes/memory.js';
import { nextPageRoutes } from './routes/next-page.js';
import { recommendationRoutes } from './routes/recommendations.js';
import { ruleRoutes } from './routes/rules.js';
import { scenarioRoutes } from './routes/scenarios.js';
import { segmentationRoutes } from './routes/segmentations.js';
import { tenantRoutes } from './routes/tenants.js';
import { vectorRoutes } from './routes/vectors.js';
import { serverOptions, serverTimeouts, type ServerOptions } from './options.js';
import { zodValidatorCompiler } from './validation.js';
import type { StaleAnswers } from '../following/follow-changes.js';

declare module 'fastify' {
  interface FastifyInstance {
    runtime: Runtime;
    recommender: Recommender;
    /** Request bodies remembered by their text (json-body plugin). */
    repeatedBodies: RepeatedBodies;
    /** Drops what a deletion made stale: answers, pages and remembered bodies (docs/guide.md, "Deleting items"). */
    staleAnswers: StaleAnswers;
    startedAt: number;
  }
}

export const BODY_LIMIT = 16 * 1024 * 1024;

/** How often the answer cache and the remembered bodies drop their stale entries. */
const PURGE_INTERVAL_MS = 10_000;

export interface AppOptions {
  runtime: Runtime;
  /** Ranks the requests the cache does not answer. */
  ranker: Ranker;
  operatorKey: string;
  logLevel?: string;
  /** Timeouts, the write queue's bound, the metrics port (default: serverOptions()). */
  server?: ServerOptions;
  /** The address the daemon binds, where a metrics port is bound too. */
  host?: string;
  /** Where rate limits are counted with the other daemons' (see rate-limit-redis.ts); none: in process. */
  rateLimitRedis?: Redis;
}

/** The prefix of the rate limits' keys in a shared Redis (each key expires with its minute). */
const RATE_LIMIT_KEYS = 'nextrec:rate-limit:';

/** Query values that are credentials; they never reach the logs. */
const SECRET_QUERY = /([?&](?:publicToken|hmac_sign|apiKey|token)=)[^&]*/gi;

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const server = options.server ?? serverOptions();
  const app = Fastify({
    bodyLimit: BODY_LIMIT,
    // A client has this long to send its request; processing is not limited (docs/configuration.md).
    ...serverTimeouts(server),
    // Requests Node's HTTP parser or the router refuses get the contract's error body too.
    clientErrorHandler: answerClientError,
    frameworkErrors: frameworkErrorAnswer,
    // While closing, the readiness plugin answers 503 NOT_READY in the contract's shape.
    return503OnClosing: false,
    // Ids travel in paths (legacy routes, catalog items); the request-target limit is checked per route.
    routerOptions: { maxParamLength: 2048 },
    // Per-request lines would cost more than an ingestion batch; errors are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    logger: {
      level: options.logLevel ?? 'info',
      redact: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers["x-hmac-sign"]'],
      serializers: {
        req: (req: { method: string; url: string }) => ({
          method: req.method,
          url: req.url.replace(SECRET_QUERY, '$1[redacted]'),
        }),
      },
    },
  });
  app.decorate('runtime', options.runtime);
  app.decorate(
    'recommender',
    new Recommender(options.ranker, undefined, options.runtime.answers, new RecommPages()),
  );
  app.decorate('startedAt', Date.now());
  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  await app.register(swagger, SWAGGER_OPTIONS);
  // Swagger UI at /docs from the package's own assets, open to everyone like /openapi.json.
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.config = { ...route.config, access: 'public' };
    });
    await docs.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } });
  });
  await app.register(nodeHeaderPlugin);
  await app.register(connectionDrainingPlugin);
  await app.register(turnBatchedResponsesPlugin);
  await app.register(errorsPlugin);
  options.runtime.store.writes.setLimit(server.writeQueueLimit);
  await app.register(metricsPlugin, { port: server.metricsPort, host: options.host });
  await app.register(readinessPlugin, { catchingUp: options.runtime.loadedAt !== undefined });
  app.decorate('repeatedBodies', new RepeatedBodies());
  app.decorate('staleAnswers', {
    itemsRemoved: (tenantId: string) => {
      app.recommender.forgetItems(tenantId);
      app.repeatedBodies.clear();
    },
    identitiesForgotten: (tenantId: string, identities: string[]) => {
      app.recommender.forget(tenantId, identities);
      app.repeatedBodies.clear();
    },
  } satisfies StaleAnswers);
  // Both caches (and the pages the recommender keeps) drop what outlived its TTL on this timer rather than when evicted (docs/memory.md).
  const purging = setInterval(() => {
    app.recommender.purgeStale();
    app.repeatedBodies.purgeStale();
  }, PURGE_INTERVAL_MS).unref();
  app.addHook('onClose', async () => clearInterval(purging));
  await app.register(jsonBodyPlugin, { bodies: app.repeatedBodies });
  // Counting only: the auth plugin applies each tenant's budgets (docs/guide.md, "Rate limits").
  const { rateLimitRedis: redis } = options;
  await app.register(rateLimit, {
    global: false,
    ...(redis && { redis, nameSpace: RATE_LIMIT_KEYS }),
  });
  if (redis) app.addHook('onClose', async () => void (await redis.quit().catch(() => redis.disconnect())));
  await app.register(authPlugin, { operatorKey: options.operatorKey });
  await app.register(healthRoutes);
  await app.register(tenantRoutes);
  await app.register(lakeRoutes);
  await app.register(memoryRoutes, { ranker: options.ranker });
  await app.register(ingestionRoutes);
  await app.register(catalogRoutes);
  await app.register(feedRoutes);
  await app.register(recommendationRoutes);
  await app.register(nextPageRoutes);
  await app.register(batchRoutes);
  await app.register(scenarioRoutes);
  await app.register(ruleRoutes);
  await app.register(segmentationRoutes);
  await app.register(identityRoutes);
  await app.register(vectorRoutes);
  await app.register(analyticsRoutes);
  await app.register(experimentRoutes);
  await app.register(authRoutes);
  await app.register(dashboardRoutes);
  return app;
}
