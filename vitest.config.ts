import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The service's imports of the engine package read its sources, as the tests do: one copy of each
  // module (one SpoofCheckError class), and no build of the engine needed to type-check a change.
  resolve: {
    alias: { '@spoof-checker/engine': fileURLToPath(new URL('./packages/engine/src/index.ts', import.meta.url)) },
  },
  test: {
    // The service's tests (test/) and the engine's (packages/engine/test/, also run alone by its workspace).
    include: ['test/**/*.test.ts', 'packages/engine/test/**/*.test.ts'],
    // Real listening servers (DNS, HTTP) are started by some tests: keep a generous budget.
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // The linear-time tests collect garbage before each timed run (test/property/helpers.ts).
    execArgv: ['--expose-gc'],
    // One throw-away PostgreSQL and Redis for the run (URLs via inject('postgresUrl'|'redisUrl')).
    globalSetup: ['test/setup/services.ts'],
  },
});
