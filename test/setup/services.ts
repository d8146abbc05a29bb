/**
 * Vitest global setup: starts one throw-away PostgreSQL and one Redis for the whole run, hands
 * their URLs to the test files (`inject('postgresUrl')`, `inject('redisUrl')`) and stops both at
 * the end. A service that cannot start is handed over as its error message instead, so that the
 * test files needing it FAIL naming the Debian package to install (never skip); the test files
 * that do not need it run as usual. Use `requirePostgres()` / `requireRedis()` from
 * test/setup/require-services.ts in a test file.
 */
import type { TestProject } from 'vitest/node';
import { startPostgres, startRedis, type TestPostgres, type TestRedis } from './postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The maintenance database of the test PostgreSQL, or null when it did not start. */
    postgresUrl: string | null;
    /** Why PostgreSQL did not start (with the package to install), or null. */
    postgresError: string | null;
    redisUrl: string | null;
    redisError: string | null;
  }
}

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Starts both services in parallel; the returned function stops them. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [postgres, redis] = await Promise.allSettled([startPostgres(), startRedis()]);
  let pg: TestPostgres | undefined;
  let rd: TestRedis | undefined;
  if (postgres.status === 'fulfilled') {
    pg = postgres.value;
    project.provide('postgresUrl', pg.url);
    project.provide('postgresError', null);
  } else {
    project.provide('postgresUrl', null);
    project.provide('postgresError', message(postgres.reason));
  }
  if (redis.status === 'fulfilled') {
    rd = redis.value;
    project.provide('redisUrl', rd.url);
    project.provide('redisError', null);
  } else {
    project.provide('redisUrl', null);
    project.provide('redisError', message(redis.reason));
  }
  return async () => {
    await Promise.all([pg?.stop(), rd?.stop()]);
  };
}
