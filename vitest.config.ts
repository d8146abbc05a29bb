import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
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
