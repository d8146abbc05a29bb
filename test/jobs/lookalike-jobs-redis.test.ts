/**
 * Deep lookalike runs through Redis, as deployed: `startService` with Redis (the API only queues the
 * job on the batches' BullMQ queue) and `startWorker` (which runs it) sharing one PostgreSQL store,
 * over the fixture zones. The job completes with the report one engine call gives.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { findLookalikes } from '../../packages/engine/src/lookalikes/index.js';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';
import { API_DEEP_MAX_CANDIDATES, LOOKALIKE_JOBS_PATH } from '../../src/http/routes/lookalikes.js';
import { LookalikeJobService, type DeepLookalikeRun } from '../../src/jobs/batches/lookalike-jobs.js';
import { BATCH_QUEUE_NAME, RedisBatchQueue } from '../../src/jobs/batches/queue.js';
import { redisModules } from '../../src/jobs/redis-modules.js';
import { startBatchWorker } from '../../src/jobs/batches/worker.js';
import { startService, startWorker } from '../../src/service/start.js';
import { MemoryBatchStore } from '../../src/store/batches-memory.js';
import { MemoryLookalikeJobStore } from '../../src/store/lookalike-jobs-memory.js';
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

  it('a worker that shuts down mid-run puts the job back; another worker runs it to the end', { timeout: 60_000 }, async () => {
    const redisUrl = requireRedis();
    const prefix = `lkjob${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const store = new MemoryLookalikeJobStore();
    const queue = new RedisBatchQueue(redisUrl, { prefix });
    const service = new LookalikeJobService({ store, queue });
    cleanups.push(() => queue.close(), () => service.close());
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    // The first worker's run only ends when it is stopped (the engine then answers what it has).
    const endless: DeepLookalikeRun = (domain, { onProgress, signal }) =>
      new Promise((resolve) => {
        onProgress(1, 10);
        started();
        signal.addEventListener('abort', () => resolve({ domain, generated: 10 } as never));
      });
    const check = async () => Promise.reject(new Error('no batches here'));
    const first = startBatchWorker({ redisUrl, prefix, store: new MemoryBatchStore(), check, lookalikes: { store, run: endless } });
    await first.ready();
    const job = await service.submit('org_a', 'acmebank.example');
    await running;
    expect(await store.getById(job.id)).toMatchObject({ status: 'running', runs: 1 });
    await first.close();
    expect(await store.getById(job.id)).toMatchObject({ status: 'queued', runs: 0, report: null });
    // Put back on the queue (delayed), without spending one of its tries.
    const { Queue, Redis } = redisModules();
    const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const inspect = new Queue(BATCH_QUEUE_NAME, { connection, prefix });
    const queued = await inspect.getJob(job.id);
    expect(queued?.attemptsMade).toBe(0);
    expect(['delayed', 'waiting']).toContain(await queued?.getState());
    await inspect.close();
    connection.disconnect();

    const resolver = new ZoneResolver(await loadZoneDirectory(FIXTURE_ZONES));
    const real: DeepLookalikeRun = (domain, { onProgress, signal }) => findLookalikes(domain, { resolver, deep: true, maxCandidates: 100, onProgress, signal });
    const second = startBatchWorker({ redisUrl, prefix, store: new MemoryBatchStore(), check, lookalikes: { store, run: real } });
    cleanups.push(() => second.close());
    const deadline = Date.now() + 30_000;
    while ((await store.getById(job.id))?.status !== 'completed' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const done = await store.getById(job.id);
    expect(done).toMatchObject({ status: 'completed', runs: 1, done: 100, total: 100 });
    expect(done?.report).toEqual(await findLookalikes('acmebank.example', { resolver, deep: true, maxCandidates: 100 }));
  });
});
