/**
 * The Redis parts of the service, BullMQ and ioredis, are optional peer dependencies: a project that
 * runs `serve` without `--redis` (or uses only the engine) does not install them, and nothing loads
 * them until a Redis feature starts. `loadRedisModules()` loads both by dynamic import and says by
 * name which is missing and how to install it; `serve --redis`, `worker` and `scan --redis` call it
 * before anything else touches Redis. The classes that talk to Redis (the batch queue and worker,
 * the monitor scheduler and worker, the rate limits' client) take the loaded modules from
 * `redisModules()`, which loads them synchronously when a library caller constructs one directly.
 */
import { createRequire } from 'node:module';
import type * as Bullmq from 'bullmq';
import type * as Ioredis from 'ioredis';

/** The optional packages and the versions this release is tested with (package.json's peerDependencies). */
export const REDIS_PACKAGES = { bullmq: '^6.7.0', ioredis: '^6.0.0' } as const;
/** One of the optional Redis packages. */
export type RedisPackage = keyof typeof REDIS_PACKAGES;

/** What the Redis features use of the two packages. */
export interface RedisModules {
  Queue: typeof Bullmq.Queue;
  Worker: typeof Bullmq.Worker;
  /** Thrown by a processor that moved its job to the delayed set itself (the try is not counted). */
  DelayedError: typeof Bullmq.DelayedError;
  Redis: typeof Ioredis.Redis;
}

/** A Redis feature was asked for, and BullMQ or ioredis is not installed. */
export class MissingRedisPackagesError extends Error {
  override readonly name = 'MissingRedisPackagesError';
  constructor(readonly missing: readonly RedisPackage[]) {
    super(
      `${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} not installed: Redis (--redis, spoof-checker worker) needs the optional packages bullmq and ioredis. ` +
        `Install them beside spoof-checker: npm install ${Object.entries(REDIS_PACKAGES).map(([name, range]) => `${name}@${range}`).join(' ')}`,
    );
  }
}

let loaded: RedisModules | undefined;

/** True when `error` says that `name` itself (not something inside it) could not be found. */
function isMissing(error: unknown, name: string): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  const message = error instanceof Error ? error.message : '';
  return message.includes(`'${name}'`) || message.includes(`"${name}"`);
}

function assemble(bullmq: typeof Bullmq, ioredis: typeof Ioredis): RedisModules {
  return { Queue: bullmq.Queue, Worker: bullmq.Worker, DelayedError: bullmq.DelayedError, Redis: ioredis.Redis };
}

/** Loads BullMQ and ioredis (once); throws `MissingRedisPackagesError` naming what is missing. */
export async function loadRedisModules(): Promise<RedisModules> {
  if (loaded) return loaded;
  const missing: RedisPackage[] = [];
  const attempt = async <T>(name: RedisPackage, load: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await load();
    } catch (error) {
      if (!isMissing(error, name)) throw error;
      missing.push(name);
      return undefined;
    }
  };
  const [bullmq, ioredis] = await Promise.all([attempt('bullmq', () => import('bullmq')), attempt('ioredis', () => import('ioredis'))]);
  if (!bullmq || !ioredis) throw new MissingRedisPackagesError(missing.sort());
  loaded = assemble(bullmq, ioredis);
  return loaded;
}

/** The loaded modules; loads them synchronously when no one has yet (a class constructed directly). */
export function redisModules(): RedisModules {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  const missing: RedisPackage[] = [];
  const attempt = <T>(name: RedisPackage): T | undefined => {
    try {
      return require(name) as T;
    } catch (error) {
      if (!isMissing(error, name)) throw error;
      missing.push(name);
      return undefined;
    }
  };
  const bullmq = attempt<typeof Bullmq>('bullmq');
  const ioredis = attempt<typeof Ioredis>('ioredis');
  if (!bullmq || !ioredis) throw new MissingRedisPackagesError(missing);
  loaded = assemble(bullmq, ioredis);
  return loaded;
}
