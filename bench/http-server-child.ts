/**
 * The HTTP service in a process of its own, for the HTTP benchmark (autocannon must not share its
 * event loop). Speaks JSON lines (bench/stats.ts `serveLines`):
 *   → { "start": { "domains": N, "keys": KeyPool, "apiKey": K, "store": "sqlite" | "memory" } }   ← { "port": P, "store": description }
 * The app is `buildApp` with the store `serve` uses by default, SQLite (WAL, synchronous=NORMAL) in
 * a fresh temp directory, so every request pays for its durable record log as in production (group
 * commit: a request is answered once its record's group has committed), or the memory store, the
 * same app with no disk at all (the yardstick for what the record log costs); rate
 * limits off, no logger, and the check bound to a `CachingResolver` over the synthetic zones, warmed
 * by checking every domain once before answering. Stops when its stdin closes, removing the directory.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { engineFromArgs } from './engine.js';
import { serveLines } from './stats.js';
import { syntheticDomainName, syntheticZones, type KeyPool } from './synthetic.js';

/** The organisation the benchmark's API key belongs to. */
export const BENCH_ORGANIZATION = 'org_bench';

interface Start {
  start: { domains: number; keys: KeyPool; apiKey: string; store?: 'sqlite' | 'memory' };
}

const { api, service } = await engineFromArgs(process.argv.slice(2));
let close: (() => Promise<unknown>) | undefined;
let closeStores: (() => Promise<unknown>) | undefined;
let dataDir: string | undefined;

await serveLines(async (raw) => {
  const { domains, keys, apiKey, store = 'sqlite' } = (raw as Start).start;
  const zones = new api.ZoneResolver(syntheticZones(domains, keys));
  const resolver = new api.CachingResolver(zones, { maxEntries: 200_000, defaultTtlSeconds: 3600, maxTtlSeconds: 24 * 3600 });
  const check = (domain: string) => api.checkDomain(domain, { resolver });
  for (let index = 0; index < domains; index++) await check(syntheticDomainName(index)).catch(() => {});
  let stores: Awaited<ReturnType<typeof service.openSqliteStores>>['stores'] | ReturnType<typeof service.createMemoryStores>;
  let description: string;
  if (store === 'memory') {
    stores = service.createMemoryStores();
    description = 'memory store';
  } else {
    dataDir = await mkdtemp(join(tmpdir(), 'spoof-checker-bench-http-'));
    const opened = await service.openSqliteStores(dataDir);
    stores = opened.stores;
    description = `SQLite ${opened.file} (WAL, synchronous=NORMAL)`;
  }
  closeStores = () => stores.close();
  const app = await service.buildApp({
    stores,
    check,
    apiKeys: [{ key: apiKey, organizationId: BENCH_ORGANIZATION }],
    rateLimits: false,
    logger: false,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  close = () => app.close();
  const address = app.server.address();
  return { port: typeof address === 'object' && address ? address.port : 0, store: description };
});
await close?.();
await closeStores?.();
if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
