/**
 * How long one wait for something the contract gives no bound to (a daemon's start, a model build, an
 * answer recorded for analytics) lasts before the test fails. Builds and model loads run at the lowest
 * CPU priority (docs/batch-models.md): beside two CPU-bound programs on 2 cores, a daemon's first
 * build of 200 interactions took 6 to 7 minutes to serve, against 2 to 3 seconds on a quiet machine.
 */
export const PATIENCE_MS = 10 * 60_000;

/**
 * How long a test or hook that starts a daemon may run in all (vitest.config.ts): several waits of
 * PATIENCE_MS, each of which fails first, with what it waited for.
 */
export const DAEMON_TEST_TIMEOUT_MS = 3 * PATIENCE_MS;

/**
 * Polls until `check` passes, failing with its last error after `ms`. Where the contract bounds the wait
 * (model effects within 5 s, CONTRACT "Freshness of effects"), `ms` is that bound, counted from the
 * write; otherwise it is left out, and the test waits for the event itself, PATIENCE_MS at most.
 */
export async function eventually(check: () => Promise<void>, ms = PATIENCE_MS): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
