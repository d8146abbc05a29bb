import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The engine's own tests (packages/engine/test/), run alone by `npm test --workspace
 * @spoof-checker/engine` and with the service's by the root `npm test` (the root vitest.config.ts
 * includes this tree too). No PostgreSQL or Redis: the engine needs neither. Tests that start a
 * DNS server (NSD, unbound) or a mail server start their own on loopback.
 */
export default defineConfig({
  // The package's own name resolves to its sources, as in the root config: one copy of each module.
  resolve: {
    alias: { '@spoof-checker/engine': fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
  },
  test: {
    root: fileURLToPath(new URL('.', import.meta.url)),
    include: ['test/**/*.test.ts'],
    // Real listening servers (DNS) are started by some tests: the same budget as the root config.
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // The linear-time tests collect garbage before each timed run (test/property/helpers.ts).
    execArgv: ['--expose-gc'],
  },
});
