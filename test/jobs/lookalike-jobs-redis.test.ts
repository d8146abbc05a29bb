/**
 * Deep lookalike runs through Redis, as deployed: `startService` with Redis (the API only queues the
 * job on the batches' BullMQ queue) and `startWorker` (which runs it) sharing one PostgreSQL store,
 * over the fixture zones. The job completes with the report one engine call gives.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ZoneResolver } from '../../packages/engine/src/dns/zone-resolver.js';
import { findLookalikes } from '../../packages/engine/src/lookalikes/index.js';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';
import { API_DEEP_MAX_CANDIDATES, LOOKALIKE_JOBS_PATH } from '../../src/http/routes/lookalikes.js';
import { startService, startWorker } from '../../src/service/start.js';
import { createTestDatabase, requireRedis } from '../setup/require-services.js';
import { FIXTURE_ZONES, KEY_A } from './helpers.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('deep lookalike jobs on the Redis queue', () => {
  it('the API queues the job, a worker runs it with progress, and GET reads the report', { timeout: 60_000 }, async () => {
    const redis = new URL(requireRedis());
    redis.pathname = '/11'; // a Redis database of its own: this queue meets no other test's jobs
    const redisUrl = redis.toString();
    const database = await createTestDatabase('lookalike_jobs');
    cleanups.push(() => database.drop());
    const resolver = new ZoneResolver(await loadZoneDirectory(FIXTURE_ZONES));
    const common = {
      storage: { kind: 'postgres' as const, url: database.url },
      check: { resolverFor: () => resolver },
      allowPrivateAddresses: false,
      env: {},
      log: () => undefined,
      redisUrl,
    };
    const service = await startService({
      ...common,
      http: { host: '127.0.0.1', port: 0, apiKeys: [{ key: KEY_A, organizationId: 'org_a' }], rateLimit: false, trustProxy: false, publicHistory: false, environment: 'test', logger: false },
    });
    cleanups.push(() => service.stop());
    const base = `http://127.0.0.1:${service.port}`;
    const headers = { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' };

    // Accepted while no worker runs: it waits on the queue, queued.
    const accepted = await fetch(`${base}/api/tools/v1/lookalikes`, { method: 'POST', headers, body: JSON.stringify({ domain: 'acmebank.example', deep: true }) });
    expect(accepted.status).toBe(202);
    const job = (await accepted.json()) as { id: string; status: string };
    const location = accepted.headers.get('location');
    expect(location).toBe(`${LOOKALIKE_JOBS_PATH}/${job.id}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const waiting = (await (await fetch(`${base}${location}`, { headers })).json()) as { status: string };
    expect(waiting.status).toBe('queued');

    const worker = await startWorker({ ...common, concurrency: 4 });
    cleanups.push(() => worker.stop());
    const deadline = Date.now() + 45_000;
    let read: { status: string; progress: { done: number; total: number }; report?: unknown };
    do {
      await new Promise((resolve) => setTimeout(resolve, 20));
      read = (await (await fetch(`${base}${location}`, { headers })).json()) as typeof read;
      if (read.status === 'running') expect(read.progress.done).toBeLessThanOrEqual(read.progress.total);
    } while (read.status !== 'completed' && read.status !== 'failed' && Date.now() < deadline);
    expect(read.status, JSON.stringify(read)).toBe('completed');
    expect(read.progress).toEqual({ done: API_DEEP_MAX_CANDIDATES, total: API_DEEP_MAX_CANDIDATES });
    expect(read.report).toEqual(await findLookalikes('acmebank.example', { resolver, deep: true, maxCandidates: API_DEEP_MAX_CANDIDATES }));
    expect((await worker.stores.lookalikeJobs.getById(job.id))?.runs).toBe(1);
  });
});
