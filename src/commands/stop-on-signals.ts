import type { FastifyBaseLogger } from 'fastify';

/** A client that never lets go of a request must not keep the process alive forever. */
const SHUTDOWN_GRACE_MS = 30_000;

/**
 * On SIGTERM or SIGINT (Ctrl-C): `stop`, then exit with 0, or with 1 when it failed or outlasted the
 * grace period. Later signals change nothing: under `npm start` one Ctrl-C arrives twice, from the
 * terminal and forwarded by npm.
 */
export function stopOnSignals(stop: () => Promise<void>, log: FastifyBaseLogger): void {
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS).unref();
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}
