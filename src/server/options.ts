/** How the daemon's HTTP server protects itself and reports (docs/configuration.md). */
export interface ServerOptions {
  /** Seconds a client has to send a whole request, headers and body; 0: no limit. */
  readonly requestTimeoutS: number;
  /** Ingestion records the write queue holds before it answers 503 OVERLOADED. */
  readonly writeQueueLimit: number;
  /** A port of its own serving `GET /metrics` without credentials, on the daemon's host; none: off. */
  readonly metricsPort?: number;
  /**
   * A Redis server where every daemon given the same one counts rate limits together (docs/configuration.md,
   * "Rate limits across daemons"); none: each daemon counts alone.
   */
  readonly rateLimitRedis?: string;
}

/**
 * Five minutes to send a request: a 16 MiB batch (the body limit) then needs only 56 KB/s, so a legitimate
 * client is never cut, while a stalled one does not hold its connection forever.
 */
export const DEFAULT_REQUEST_TIMEOUT_S = 300;
/** Ten maximal ingestion batches (10,000 records each) waiting for one commit. */
export const DEFAULT_WRITE_QUEUE_LIMIT = 100_000;

/** A redis:// or rediss:// URL, or a RangeError whose message never repeats it (it may hold a password). */
function checkRedisUrl(text: string): void {
  let protocol: string;
  try {
    protocol = new URL(text).protocol;
  } catch {
    protocol = '';
  }
  if (protocol !== 'redis:' && protocol !== 'rediss:')
    throw new RangeError(
      "the rate limits' Redis must be a URL redis://[user:password@]host[:port][/db] (or rediss://)",
    );
}

/** Headers must arrive within this (Node's default), or the request timeout when shorter. */
const HEADERS_TIMEOUT_MS = 60_000;

/** The options as given (flags, environment), checked once; the result is frozen. */
export function serverOptions(input: Partial<ServerOptions> = {}): ServerOptions {
  const requestTimeoutS = input.requestTimeoutS ?? DEFAULT_REQUEST_TIMEOUT_S;
  const writeQueueLimit = input.writeQueueLimit ?? DEFAULT_WRITE_QUEUE_LIMIT;
  if (!Number.isInteger(requestTimeoutS) || requestTimeoutS < 0)
    throw new RangeError(
      `the request timeout must be a whole number of seconds, 0 or more (${requestTimeoutS})`,
    );
  if (!Number.isInteger(writeQueueLimit) || writeQueueLimit < 1)
    throw new RangeError(
      `the write queue limit must be a whole number of records, 1 or more (${writeQueueLimit})`,
    );
  const { metricsPort, rateLimitRedis } = input;
  if (rateLimitRedis !== undefined) checkRedisUrl(rateLimitRedis);
  if (metricsPort !== undefined && (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535))
    throw new RangeError(`the metrics port must be a port number (${metricsPort})`);
  return Object.freeze({
    requestTimeoutS,
    writeQueueLimit,
    ...(metricsPort === undefined ? {} : { metricsPort }),
    ...(rateLimitRedis === undefined ? {} : { rateLimitRedis }),
  });
}

/** Node's HTTP server timeouts for `options`: what Fastify takes as `requestTimeout` and `http`. */
export function serverTimeouts(options: ServerOptions): {
  requestTimeout: number;
  http: { headersTimeout: number; connectionsCheckingInterval: number };
} {
  const requestTimeout = options.requestTimeoutS * 1000;
  return {
    requestTimeout,
    http: {
      headersTimeout:
        requestTimeout === 0 ? HEADERS_TIMEOUT_MS : Math.min(HEADERS_TIMEOUT_MS, requestTimeout),
      // Node checks for expired requests this often: a tenth of the timeout, at most its default 30 s.
      connectionsCheckingInterval:
        requestTimeout === 0 ? 30_000 : Math.max(100, Math.min(30_000, Math.floor(requestTimeout / 10))),
    },
  };
}
