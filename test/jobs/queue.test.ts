/**
 * Batches on the real Redis queue (BullMQ) of the test setup: workers in this process, then real
 * `spoof-checker worker` child processes on a shared PostgreSQL store and a real DNS server, one of
 * them killed with SIGKILL mid-batch. Every name must come back exactly once with the verdict a
 * single check gives.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { checkDomain } from '../../packages/engine/src/check.js';
import { startDnsServer, type RunningDnsServer } from '../../packages/engine/src/zones/server.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { buildApp } from '../../src/service/compose.js';
import { RedisBatchQueue } from '../../src/jobs/batches/queue.js';
import { BatchService } from '../../src/jobs/batches/service.js';
import { startBatchWorker, type BatchWorker } from '../../src/jobs/batches/worker.js';
import { MemoryBatchStore } from '../../src/store/batches-memory.js';
import { openStores } from '../../src/store/open.js';
import { applySeed, parseSeed } from '../../src/store/seed.js';
import type { Stores } from '../../src/store/types.js';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';
import { SAMPLE_RESULT, TEST_SEED } from '../http/helpers.js';
import { freePort } from '../setup/postgres.js';
import { createTestDatabase, requireRedis } from '../setup/require-services.js';
import { BATCHES, batchApp, bearerA, bearerB, expectError, fixtureCheck, FIXTURE_ZONES, ndjson, VERDICT_NAMES } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = `${ROOT}bin/spoof-checker.js`;

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** A Redis URL on its own database number, so that this file's queue never meets another file's keys. */
function redisDatabase(db: number): string {
  const url = new URL(requireRedis());
  url.pathname = `/${db}`;
  return url.toString();
}

/** Polls `read` until `done` holds, or fails after `timeoutMs` with the last value. */
async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await read();
  }
  return value;
}

const statusOf = async (app: FastifyInstance, id: string) => (await app.inject({ method: 'GET', url: `${BATCHES}/${id}`, headers: bearerA })).json();

describe('batches on the Redis queue, workers in this process', () => {
  it('spreads chunks over two workers and every name comes back once with its single-check verdict', async () => {
    const url = requireRedis();
    const prefix = `test-${process.pid}-${Date.now()}`;
    const store = new MemoryBatchStore();
    const queue = new RedisBatchQueue(url, { prefix });
    const { app } = await batchApp({ queue, store });
    cleanups.push(() => app.close(), () => queue.close());
    const check = await fixtureCheck();
    const perWorker = [0, 0];
    const workers: BatchWorker[] = [0, 1].map((i) =>
      startBatchWorker({ redisUrl: url, store, check, prefix, concurrency: 8, onChunk: (_job, outcome) => void (outcome.kind === 'checked' && (perWorker[i]! += outcome.names)) }),
    );
    cleanups.push(...workers.map((w) => () => w.close()));
    await Promise.all(workers.map((w) => w.ready()));

    const names = Array.from({ length: 600 }, (_, i) => VERDICT_NAMES[i % VERDICT_NAMES.length]!);
    const accepted = await app.inject({ method: 'POST', url: BATCHES, headers: bearerA, payload: { domains: names } });
    expect(accepted.statusCode, accepted.body).toBe(202);
    const { id } = accepted.json();
    const status = await waitFor(() => statusOf(app, id), (s) => s.status === 'done', 15_000, 'the batch to finish');
    expect(status).toMatchObject({ total: 600, done: 600, failed: 0 });
    expect(perWorker[0]! + perWorker[1]!).toBe(600);

    const lines = ndjson((await app.inject({ method: 'GET', url: `${BATCHES}/${id}/results`, headers: bearerA })).body);
    expect(lines.map((l) => l['cursor'])).toEqual(names.map((_, i) => String(i)));
    const verdicts = new Map<string, string>();
    for (const name of VERDICT_NAMES) verdicts.set(name, (await check(name)).verdict);
    for (const [i, line] of lines.entries()) expect(line, `line ${i}`).toMatchObject({ input: names[i], verdict: verdicts.get(names[i]!) });
  });

  it('answers 503 at once while Redis is down (storing nothing), and accepts again once Redis is back', { timeout: 40_000 }, async () => {
    const port = await freePort();
    const startServer = async (): Promise<ChildProcess> => {
      const server = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'], { stdio: ['ignore', 'pipe', 'ignore'] });
      await new Promise<void>((resolve, reject) => {
        let output = '';
        server.once('error', (error) => reject(new Error(`redis-server could not start (apt-get install redis-server): ${error.message}`)));
        server.stdout!.on('data', (chunk: Buffer) => ((output += chunk.toString()), output.includes('Ready to accept connections') && resolve()));
      });
      return server;
    };
    let server = await startServer();
    cleanups.push(() => server.kill('SIGKILL'));
    const queue = new RedisBatchQueue(`redis://127.0.0.1:${port}`);
    const { app, store } = await batchApp({ queue });
    cleanups.push(() => app.close(), () => queue.close());
    const submit = () => app.inject({ method: 'POST', url: BATCHES, headers: bearerA, payload: { domains: ['p-reject.example'] } });
    await waitFor(() => queue.ready(), (r) => r.ok, 10_000, 'the queue to connect');
    expect((await submit()).statusCode).toBe(202);

    server.kill('SIGKILL');
    await waitFor(() => queue.ready(), (r) => !r.ok, 10_000, 'the queue to notice Redis is gone');
    const started = Date.now();
    const refused = await submit();
    expect(Date.now() - started).toBeLessThan(3000);
    const body = expectError(refused, 503, 'SERVICE_UNAVAILABLE');
    expect(body['message']).toBe('Batches cannot be accepted right now: the job queue is unreachable.');
    expect(body['why']).toMatch(/Redis is not connected .*Nothing was stored/);
    expect(await store.unfinished(false, 10)).toHaveLength(1); // only the batch accepted before

    server = await startServer();
    await waitFor(() => queue.ready(), (r) => r.ok, 15_000, 'the queue to reconnect');
    expect((await submit()).statusCode).toBe(202);
    expect(await queue.counts()).toMatchObject({ wait: 1 }); // a fresh Redis: only the new batch's chunk
  });
});

describe('spoof-checker worker processes on a shared PostgreSQL store', () => {
  const children = new Set<ChildProcess>();
  cleanups.push(() => {
    for (const child of children) child.kill('SIGKILL');
  });

  /** Starts `spoof-checker worker` and resolves once it says it is ready. */
  function startWorker(args: string[]): Promise<ChildProcess> {
    if (!existsSync(`${ROOT}dist/cli/worker.js`)) throw new Error('dist/ is missing the worker: run `npm run build` first (npm test does)');
    const child = spawn(process.execPath, [BIN, 'worker', ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NODE_ENV: 'test' } });
    children.add(child);
    child.on('exit', () => children.delete(child));
    let stderr = '';
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`worker did not start: ${stderr}`)), 15_000);
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('worker: ready')) {
          clearTimeout(timer);
          resolve(child);
        }
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`worker exited with ${code}: ${stderr}`));
      });
    });
  }

  it('a worker killed with SIGKILL mid-batch loses nothing: every name exactly once, verdicts equal single checks', { timeout: 90_000 }, async () => {
    const redisUrl = redisDatabase(5);
    const database = await createTestDatabase('batch_workers');
    cleanups.push(() => database.drop());
    const opened = await openStores({ kind: 'postgres', url: database.url }, { pruneAutomatically: false });
    const stores: Stores = opened.stores;
    cleanups.push(() => stores.close());
    await applySeed(stores, parseSeed(structuredClone(TEST_SEED), 'test seed'));

    const zones = new ZoneResolver(await loadZoneDirectory(FIXTURE_ZONES));
    const dns: RunningDnsServer = await startDnsServer({ resolver: zones, outsideZones: 'nxdomain' });
    cleanups.push(() => dns.close());

    const queue = new RedisBatchQueue(redisUrl);
    const service = new BatchService({ store: stores.batches, queue });
    const app = await buildApp({ stores, batches: service, check: async (domain) => ({ ...SAMPLE_RESULT, domain }), rateLimits: false });
    cleanups.push(() => app.close(), () => service.close());

    const workerArgs = ['--redis', redisUrl, '--database', database.url, '--resolver', `127.0.0.1:${dns.address.port}`, '--concurrency', '4', '--lock-duration', '2000'];
    const first = await startWorker(workerArgs);
    await startWorker(workerArgs);

    // Distinct names (no answer cache shortcut): subdomains of the fixture domains, plus the domains.
    const names = Array.from({ length: 800 }, (_, i) => {
      const base = VERDICT_NAMES[i % VERDICT_NAMES.length]!;
      return i < VERDICT_NAMES.length ? base : `host${i}.${base}`;
    });
    const accepted = await app.inject({ method: 'POST', url: BATCHES, headers: bearerA, payload: { domains: names } });
    expect(accepted.statusCode, accepted.body).toBe(202);
    const { id } = accepted.json();

    const atKill = await waitFor(() => statusOf(app, id), (s) => s.done >= 200, 30_000, 'a quarter of the batch');
    expect(atKill.done, 'the batch finished before a worker could be killed mid-way: make it larger').toBeLessThan(names.length);
    first.kill('SIGKILL');
    await startWorker(workerArgs);

    const final = await waitFor(() => statusOf(app, id), (s) => s.status === 'done', 60_000, 'the batch to finish after the kill');
    expect(final).toMatchObject({ total: names.length, done: names.length });
    expect(final.namesPerSecond).toBeGreaterThan(0);

    const response = await app.inject({ method: 'GET', url: `${BATCHES}/${id}/results`, headers: bearerA });
    const lines = ndjson(response.body);
    expect(lines.map((l) => l['cursor'])).toEqual(names.map((_, i) => String(i)));
    const rows = await stores.batches.readResults('org_a', id, -1, names.length + 10);
    expect(rows).toHaveLength(names.length);
    for (const [i, line] of lines.entries()) {
      const single = await checkDomain(names[i]!, { resolver: zones });
      expect(line, `line ${i} (${names[i]})`).toMatchObject({ input: names[i], domain: single.domain, verdict: single.verdict, inboxOutcome: single.inboxOutcome });
    }

    // Another organisation sees nothing of it.
    expectError(await app.inject({ method: 'GET', url: `${BATCHES}/${id}`, headers: bearerB }), 404, 'NOT_FOUND');
    expectError(await app.inject({ method: 'GET', url: `${BATCHES}/${id}/results`, headers: bearerB }), 404, 'NOT_FOUND');
  });
});
