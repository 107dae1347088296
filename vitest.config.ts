import { defineConfig } from 'vitest/config';
import { PROCESS_NODE_FLAGS, ASYNC_CONTEXT_FRAME } from './infra/nodeFlags.js';

export default defineConfig({
  test: {
    // The Temporal native bridge does not mix with worker threads (DESIGN §7).
    pool: 'forks',
    // AsyncLocalStorage as the API and worker processes run it (infra/nodeFlags.ts; Node 24+ by default).
    execArgv: PROCESS_NODE_FLAGS.filter((flag) => flag === ASYNC_CONTEXT_FRAME),
    maxWorkers: Number(process.env.TEST_WORKERS ?? 2),
    globalSetup: ['test/globalSetup.ts'],
    setupFiles: ['test/setup.ts'],
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
