import type {} from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../contract/errors.js';

const WINDOW_MS = 60_000;
/** At most one warning this often while counts fail. */
const FAILURE_LOG_MS = 10_000;

/**
 * Per-credential request budgets (requests per minute) that a tenant's operator may set, off by default
 * (docs/guide.md, "Rate limits"). One budget per tenant and credential kind: every JWT of a tenant shares one.
 * Counting is @fastify/rate-limit's (registered by the app with `global: false`); it runs only for
 * callers whose tenant set a budget for their kind, so unlimited tenants pay nothing for it. Given a Redis,
 * daemons count together (docs/configuration.md, "Rate limits across daemons").
 */
export class RateLimits {
  private readonly count;
  private lastFailureLog = 0;

  constructor(private readonly app: FastifyInstance) {
    this.count = app.createRateLimit({
      timeWindow: WINDOW_MS,
      keyGenerator: (request) => `${request.caller.tenantId}\u0000${request.caller.kind}`,
      max: (request) => request.tenant.rateLimits[request.caller.kind] ?? Number.MAX_SAFE_INTEGER,
    });
  }

  async check(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    let outcome;
    try {
      outcome = await this.count(request);
    } catch (error) {
      // Only a shared counter (Redis) fails: the request goes through uncounted rather than refused.
      this.app.metrics.rateLimitCountFailed();
      const now = Date.now();
      if (now - this.lastFailureLog >= FAILURE_LOG_MS) {
        this.lastFailureLog = now;
        request.log.warn(
          { err: error },
          'rate limits could not be counted in Redis; requests go through uncounted',
        );
      }
      return;
    }
    if (outcome.isAllowed) return;
    reply.header('x-ratelimit-limit', outcome.max);
    reply.header('x-ratelimit-remaining', outcome.remaining);
    if (!outcome.isExceeded) return;
    const retryS = Math.max(1, outcome.ttlInSeconds);
    throw new ApiError(
      'RATE_LIMITED',
      `more than ${outcome.max} requests per minute with this credential; retry in ${retryS} s`,
      undefined,
      { 'retry-after': String(retryS) },
    );
  }
}
