import Fastify, { LogController, type FastifyInstance, type FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import { MODEL_NAMES } from '../../artifacts/layout.js';
import { modelBuiltAt, modelRowsBehind } from '../../models/model-scheduler.js';
import type { Runtime } from '../../runtime.js';
import { Metrics, type MetricSources } from '../metrics.js';
import { isWarmUp } from '../warm-up-request.js';
import { answerClientError, errorsPlugin, frameworkErrorAnswer } from './errors.js';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics;
  }
}

/** What the daemon's metrics read from its runtime and recommender at scrape time. */
export function runtimeSources(
  runtime: Runtime,
  cache: () => { hits: number; misses: number },
): MetricSources {
  return {
    writeQueue: () => runtime.store.writes.depth(),
    resultCache: cache,
    vectorBacklog: () => runtime.vectors.backlog(),
    diskFull: () => runtime.store.disk.isFull,
    runnerClaims: () => runtime.store.runners.claims(),
    *modelBuilds() {
      for (const tenantId of runtime.state.ids()) {
        const tenant = runtime.state.get(tenantId);
        if (!tenant) continue;
        // Only the models the daemon keeps current for the tenant are behind anything.
        const inUse = runtime.models.modelsFor(tenant);
        for (const model of MODEL_NAMES) {
          yield {
            tenantId,
            model,
            builtAt: modelBuiltAt(tenant, model),
            version: runtime.loader.servingVersion(tenantId, model),
            published: runtime.loader.publishedVersion(tenantId, model),
            refused: runtime.loader.refusedVersion(tenantId, model),
            rowsBehind: inUse.includes(model) ? modelRowsBehind(tenant, model) : undefined,
          };
        }
      }
    },
  };
}

async function answerScrape(metrics: Metrics, reply: FastifyReply): Promise<string> {
  const { contentType, text } = await metrics.scrape();
  reply.type(contentType);
  return text;
}

export interface MetricsPluginOptions {
  /** A port of its own for `GET /metrics` without credentials, on `host`. */
  port?: number;
  host?: string;
}

/**
 * Prometheus metrics (docs/configuration.md, "Health and metrics"): every answered request is observed by its route
 * pattern, method and status class; `GET /metrics` takes the operator key, and with a metrics port the
 * same text is also served there without credentials (bound to the daemon's host, opened and closed with
 * the app).
 */
export const metricsPlugin = fp(async (app: FastifyInstance, options: MetricsPluginOptions) => {
  const metrics = new Metrics(runtimeSources(app.runtime, () => app.recommender.cacheStats()));
  app.decorate('metrics', metrics);
  app.runtime.store.writes.observe({
    committed: (seconds) => metrics.observeCommit(seconds),
    refused: () => metrics.refusedWrite(),
    moveFailed: (error) => {
      metrics.failedMove();
      app.log.error({ err: error }, 'moving the interactions log into the store failed; it keeps its rows');
    },
  });
  app.runtime.models.onBuilt((models, seconds, outcome) => metrics.observeBuild(models, seconds, outcome));
  // Callback style: an async hook would cost a promise on every response.
  app.addHook('onResponse', (request, reply, done) => {
    // The daemon's warm-up is no request of a client's.
    if (isWarmUp(request)) return done();
    metrics.observeRequest(
      (!request.is404 && request.routeOptions.url) || 'unmatched',
      request.method,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });
  app.get('/metrics', { config: { access: 'operator' }, schema: { hide: true } }, (_request, reply) =>
    answerScrape(metrics, reply),
  );
  if (options.port === undefined) return;
  const port = options.port;
  const server = await metricsApp(metrics, app);
  const host = options.host ?? '127.0.0.1';
  app.addHook('onReady', async () => {
    try {
      const url = await server.listen({ host, port });
      app.log.info({ url }, 'metrics listening');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
      throw new Error(
        `metrics port ${port} on ${host} is already in use; choose another with --metrics-port (NEXTREC_METRICS_PORT)`,
      );
    }
  });
  app.addHook('onClose', async () => server.close());
});

/** The metrics port's server: `GET /metrics` without credentials, errors in the contract's shape. */
async function metricsApp(metrics: Metrics, parent: FastifyInstance): Promise<FastifyInstance> {
  const server = Fastify({
    loggerInstance: parent.log,
    logController: new LogController({ disableRequestLogging: true }),
    clientErrorHandler: answerClientError,
    frameworkErrors: frameworkErrorAnswer,
    return503OnClosing: false,
  });
  await server.register(errorsPlugin);
  server.get('/metrics', (_request, reply) => answerScrape(metrics, reply));
  return server;
}
