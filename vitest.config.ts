import { defineConfig } from 'vitest/config';
import { DAEMON_TEST_TIMEOUT_MS, PATIENCE_MS } from './test/support/eventually.js';

/** The integration tests run on both stores (docs/scaling.md). */
const POSTGRES_TESTS = ['ingestion', 'catalog', 'identity', 'config-resources', 'recommendations'];

export default defineConfig({
  test: {
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // Some start processes (builds at the lowest CPU priority) or work the CPU for seconds.
          testTimeout: PATIENCE_MS,
          hookTimeout: PATIENCE_MS,
        },
      },
      {
        // Tests of the daemon's process (and the CLI's) wait for what it does, however busy the machine:
        // the timeouts only end a test that waits for something that never comes.
        extends: true,
        test: {
          name: 'daemon',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          testTimeout: DAEMON_TEST_TIMEOUT_MS,
          hookTimeout: DAEMON_TEST_TIMEOUT_MS,
        },
      },
      {
        // The same tests of the HTTP API on PostgreSQL as the store of record (test/support/test-store.ts).
        extends: true,
        test: {
          name: 'daemon-postgres',
          include: POSTGRES_TESTS.map((name) => `test/integration/${name}.test.ts`),
          env: { NEXTREC_TEST_STORE: 'postgres' },
          testTimeout: DAEMON_TEST_TIMEOUT_MS,
          hookTimeout: DAEMON_TEST_TIMEOUT_MS,
        },
      },
    ],
  },
});
