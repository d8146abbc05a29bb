/**
 * spoof-checker: the engine, re-exported so that `import { checkDomain } from 'spoof-checker'` keeps
 * working, and the fixture zones this package ships (`FIXTURE_ZONES_DIR`). The engine itself is
 * the package `@spoof-checker/engine` (packages/engine), which installs without the service; the
 * service is `spoof-checker/service`.
 */
export * from '@spoof-checker/engine';
export { FIXTURE_ZONES_DIR } from './fixtures.js';
