import { defineConfig } from 'vitest/config';
import { DAEMON_TEST_TIMEOUT_MS, PATIENCE_MS } from './test/support/eventually.js';

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
    ],
  },
});
