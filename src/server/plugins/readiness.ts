import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../contract/errors.js';
import { isWarmUp } from '../warm-up-request.js';

/**
 * What must be done before the daemon serves: its state loaded from the store (and, from a store other
 * daemons share, caught up with their writes since: src/following/), its built models loaded, and ranking
 * warmed up (docs/configuration.md, "Health and metrics").
 */
export type ReadinessCheck = 'state' | 'models' | 'warmup';

/** Seconds a client refused while the daemon is not ready waits before it asks again. */
export const NOT_READY_RETRY_AFTER_S = 1;

/**
 * Whether the daemon serves: every check done, and not stopping. `GET /health/ready` reports it; while
 * not ready, every route but the public ones answers 503 NOT_READY.
 */
export class Readiness {
  private readonly pending = new Set<ReadinessCheck>(['state', 'models', 'warmup']);
  private stopping = false;
  /** True exactly when every check is done and the daemon is not stopping (read on every request). */
  ready = false;

  done(check: ReadinessCheck): void {
    this.pending.delete(check);
    this.ready = this.pending.size === 0 && !this.stopping;
  }

  stop(): void {
    this.stopping = true;
    this.ready = false;
  }

  /** Each check and whether it is done, and whether the daemon is stopping. */
  report(): { ready: boolean; stopping: boolean; checks: Record<ReadinessCheck, 'done' | 'pending'> } {
    const status = (check: ReadinessCheck) => (this.pending.has(check) ? 'pending' : 'done');
    return {
      ready: this.ready,
      stopping: this.stopping,
      checks: { state: status('state'), models: status('models'), warmup: status('warmup') },
    };
  }

  /** The answer while not ready: what is not. */
  notReady(): ApiError {
    const report = this.report();
    const waiting = Object.entries(report.checks)
      .filter(([, status]) => status === 'pending')
      .map(([check]) => check);
    const message = report.stopping
      ? 'the daemon is shutting down'
      : `the daemon is starting: ${waiting.map((check) => DESCRIBED[check as ReadinessCheck]).join('; ')}`;
    return new ApiError('NOT_READY', message, [{ stopping: report.stopping, checks: report.checks }], {
      'retry-after': String(NOT_READY_RETRY_AFTER_S),
    });
  }
}

const DESCRIBED: Record<ReadinessCheck, string> = {
  state: "the serving state is not loaded yet, or has not caught up with the other daemons' writes",
  models: 'the built models are not loaded yet',
  warmup: 'ranking is not warmed up yet',
};

declare module 'fastify' {
  interface FastifyInstance {
    readiness: Readiness;
  }
}

/**
 * Holds requests to everything but the public routes (health, OpenAPI) until the daemon is ready, and
 * again once it stops: 503 NOT_READY with Retry-After. `catchingUp`: the state is to catch up with other
 * daemons' writes before it serves (the daemon marks `state` done then). Registered before authentication, so that a
 * daemon that is not ready says so rather than judging credentials it has not loaded.
 */
export const readinessPlugin = fp(async (app: FastifyInstance, options: { catchingUp?: boolean }) => {
  const readiness = new Readiness();
  // The app is built on a runtime whose state the store has loaded; from a store other daemons share,
  // the daemon says when it has caught up with their writes (src/following/).
  if (!options.catchingUp) readiness.done('state');
  app.decorate('readiness', readiness);
  app.addHook('preClose', async () => readiness.stop());
  // Callback style: an async hook would cost a promise on every request.
  // The daemon's warm-up is sent before it is ready.
  app.addHook('onRequest', (request, _reply, done) => {
    if (
      readiness.ready ||
      request.is404 ||
      request.routeOptions.config.access === 'public' ||
      isWarmUp(request)
    )
      return done();
    done(readiness.notReady());
  });
});
