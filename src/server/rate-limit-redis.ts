import { Redis } from 'ioredis';

/** How long a daemon waits at its start for the rate limits' Redis before it gives up. */
const CONNECT_TIMEOUT_MS = 5_000;
/** A count that takes longer lets the request through (see RateLimits.check). */
const COMMAND_TIMEOUT_MS = 500;

/** Where a Redis URL points, without its credentials: for messages and logs. */
export function redisAddress(url: string): string {
  const { protocol, hostname, port, pathname } = new URL(url);
  return `${protocol}//${hostname}:${port || '6379'}${pathname === '/' ? '' : pathname}`;
}

/**
 * A client of the Redis where rate limits are counted across daemons (docs/configuration.md, "Rate limits
 * across daemons"), connected. While Redis is away the client does not queue counts: they fail at once and
 * the requests go through uncounted, so that Redis is never a reason to refuse a request.
 */
export async function connectRateLimitRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    commandTimeout: COMMAND_TIMEOUT_MS,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // Reconnects after a loss, every second at most.
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
  });
  // Errors reach the counts that fail; the client's own events would otherwise be unhandled.
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => (lastError = error));
  try {
    await redis.connect();
    return redis;
  } catch (error) {
    redis.disconnect();
    const cause: unknown = lastError ?? error;
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new Error(`cannot reach the rate limits' Redis at ${redisAddress(url)}: ${reason}`);
  }
}
