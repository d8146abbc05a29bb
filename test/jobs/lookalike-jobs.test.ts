/**
 * Running a deep lookalike job (src/jobs/batches/lookalike-jobs.ts) on the memory store: progress written
 * at most every interval, a run that failed recorded (never retried), the engine's refusal by its
 * code, a job taken too often failed as INTERRUPTED, a run stopped by shutdown released (its
 * partial report never written), the in-process recovery at start, and the stale sweep.
 */
import { describe, expect, it } from 'vitest';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { SpoofCheckError } from '../../packages/engine/src/errors.js';
import { findLookalikes } from '../../packages/engine/src/lookalikes/index.js';
import type { LookalikeReport } from '../../packages/engine/src/lookalikes/types.js';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';
import {
  LOOKALIKE_JOB_STALE_MS,
  LOOKALIKE_PROGRESS_INTERVAL_MS,
  LookalikeJobService,
  MAX_LOOKALIKE_JOB_RUNS,
  processLookalikeJob,
  type DeepLookalikeRun,
} from '../../src/jobs/batches/lookalike-jobs.js';
import { InProcessBatchRunner } from '../../src/jobs/batches/runner.js';
import { MemoryBatchStore } from '../../src/store/batches-memory.js';
import { MEMORY_LOOKALIKE_JOB_CAPACITY, MemoryLookalikeJobStore } from '../../src/store/lookalike-jobs-memory.js';
import { FIXTURE_ZONES } from './helpers.js';

const T0 = '2026-01-01T00:00:00.000Z';

async function storeWith(id = 'j1'): Promise<MemoryLookalikeJobStore> {
  const store = new MemoryLookalikeJobStore();
  await store.create({ id, organizationId: 'o1', domain: 'acmebank.example', createdAt: T0 });
  return store;
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
const REPORT = { generated: 100 } as LookalikeReport;

describe('processLookalikeJob', () => {
  it('writes progress at most every interval while it runs, then the report', async () => {
    const store = await storeWith();
    const writes: [number, number][] = [];
    const progress = store.progress.bind(store);
    store.progress = async (id, done, total, at) => {
      writes.push([done, total]);
      await progress(id, done, total, at);
    };
    let clock = Date.parse(T0);
    const run: DeepLookalikeRun = async (_domain, { onProgress }) => {
      for (let done = 1; done <= 100; done++) {
        clock += 10;
        onProgress(done, 100);
        await tick();
      }
      return REPORT;
    };
    expect(await processLookalikeJob('j1', { store, run, now: () => new Date(clock) })).toEqual({ kind: 'completed' });
    // 1,000 ms of run at one report per 10 ms: the first at once, then one per 250 ms.
    expect(LOOKALIKE_PROGRESS_INTERVAL_MS).toBe(250);
    expect(writes).toEqual([
      [1, 100],
      [26, 100],
      [51, 100],
      [76, 100],
    ]);
    expect(await store.getById('j1')).toMatchObject({ status: 'completed', done: 100, total: 100, runs: 1, report: REPORT });
  });

  it('a run that throws fails the job (INTERNAL), the engine refusal keeps its code; neither is retried', async () => {
    const store = await storeWith();
    await store.create({ id: 'j2', organizationId: 'o1', domain: 'co.uk', createdAt: T0 });
    const run: DeepLookalikeRun = async (domain) => {
      if (domain === 'co.uk') throw new SpoofCheckError('invalid_domain', '"co.uk" is a public suffix.', { why: 'Lookalikes are made from a registrable domain.', fix: 'Give a registrable domain.' });
      throw new Error('bug');
    };
    expect(await processLookalikeJob('j1', { store, run })).toEqual({ kind: 'failed', code: 'INTERNAL' });
    expect(await processLookalikeJob('j2', { store, run })).toEqual({ kind: 'failed', code: 'INVALID_DOMAIN' });
    expect((await store.getById('j1'))?.error).toEqual({ code: 'INTERNAL', message: 'The lookalike search failed on our side.' });
    expect((await store.getById('j2'))?.error).toEqual({ code: 'INVALID_DOMAIN', message: '"co.uk" is a public suffix. Give a registrable domain.' });
    expect(await processLookalikeJob('j1', { store, run })).toEqual({ kind: 'skipped', reason: 'finished' });
    expect(await processLookalikeJob('nope', { store, run })).toEqual({ kind: 'skipped', reason: 'missing' });
  });

  it(`a job taken more than ${MAX_LOOKALIKE_JOB_RUNS} times (its runners died) fails as INTERRUPTED without running`, async () => {
    const store = await storeWith();
    for (let i = 0; i < MAX_LOOKALIKE_JOB_RUNS; i++) await store.claim('j1', T0);
    let ran = false;
    const outcome = await processLookalikeJob('j1', { store, run: async () => ((ran = true), REPORT) });
    expect(outcome).toEqual({ kind: 'failed', code: 'INTERRUPTED' });
    expect(ran).toBe(false);
    expect((await store.getById('j1'))?.error?.message).toContain(`interrupted ${MAX_LOOKALIKE_JOB_RUNS} times`);
  });

  it('a run stopped by shutdown goes back to queued, uncounted, and its partial report is not written', async () => {
    const store = await storeWith();
    const shutdown = new AbortController();
    // The engine answers an aborted run (what is left is graded unknown): that answer is dropped.
    const run: DeepLookalikeRun = async (_domain, { signal }) => {
      shutdown.abort();
      expect(signal.aborted).toBe(true);
      return REPORT;
    };
    expect(await processLookalikeJob('j1', { store, run, signal: shutdown.signal })).toEqual({ kind: 'released' });
    expect(await store.getById('j1')).toMatchObject({ status: 'queued', runs: 0, report: null });
  });

  it('a store that fails throws (the queue tries again)', async () => {
    const store = await storeWith();
    store.claim = async () => Promise.reject(new Error('database is down'));
    await expect(processLookalikeJob('j1', { store, run: async () => REPORT })).rejects.toThrow('database is down');
  });
});

describe('LookalikeJobService in process', () => {
  it('at start, queues again every unfinished job (one left running by a process that died) and runs it to the engine report', async () => {
    const resolver = new ZoneResolver(await loadZoneDirectory(FIXTURE_ZONES));
    const run: DeepLookalikeRun = (domain, { onProgress, signal }) => findLookalikes(domain, { resolver, deep: true, maxCandidates: 200, onProgress, signal });
    const store = await storeWith('died');
    await store.create({ id: 'waiting', organizationId: 'o2', domain: 'acmebank.example', createdAt: T0 });
    await store.claim('died', T0);
    const runner = new InProcessBatchRunner({ store: new MemoryBatchStore(), check: async () => Promise.reject(new Error('unused')), lookalikes: { store, run } });
    const service = new LookalikeJobService({ store, queue: runner });
    await service.start();
    await runner.idle();
    const direct = await findLookalikes('acmebank.example', { resolver, deep: true, maxCandidates: 200 });
    expect(await store.getById('died')).toMatchObject({ status: 'completed', runs: 2, done: 200, total: 200, report: direct });
    expect(await store.getById('waiting')).toMatchObject({ status: 'completed', runs: 1, report: direct });
    await service.close();
    await runner.close();
  });

  it('closing the runner stops the runs in hand; the next start takes them back', async () => {
    const store = await storeWith();
    const started: string[] = [];
    const run: DeepLookalikeRun = (domain, { signal }) =>
      new Promise((resolve) => {
        started.push(domain);
        signal.addEventListener('abort', () => resolve(REPORT));
      });
    const first = new InProcessBatchRunner({ store: new MemoryBatchStore(), check: async () => Promise.reject(new Error('unused')), lookalikes: { store, run } });
    const service = new LookalikeJobService({ store, queue: first });
    await service.start();
    while (started.length === 0) await tick();
    await service.close();
    await first.close();
    expect(await store.getById('j1')).toMatchObject({ status: 'queued', runs: 0, report: null });
    await expect(first.enqueueLookalikeJob('j1')).rejects.toThrow('stopping');

    const second = new InProcessBatchRunner({ store: new MemoryBatchStore(), check: async () => Promise.reject(new Error('unused')), lookalikes: { store, run: async () => REPORT } });
    const again = new LookalikeJobService({ store, queue: second });
    await again.start();
    await second.idle();
    expect(await store.getById('j1')).toMatchObject({ status: 'completed', runs: 1 });
    await again.close();
    await second.close();
  });

  it(`fails a running job with no sign of life for ${LOOKALIKE_JOB_STALE_MS / 60_000} minutes at a sweep: never running for ever`, async () => {
    const store = await storeWith();
    await store.claim('j1', T0);
    const lines: string[] = [];
    let now = Date.parse(T0) + LOOKALIKE_JOB_STALE_MS - 1;
    const queue = { kind: 'redis' as const, ready: async () => ({ ok: true as const }), enqueueLookalikeJob: async () => {} };
    const service = new LookalikeJobService({ store, queue, now: () => new Date(now), log: (line) => void lines.push(line) });
    await service.sweep();
    expect((await store.getById('j1'))?.status).toBe('running');
    now += 2;
    await service.sweep();
    expect(await store.getById('j1')).toMatchObject({ status: 'failed', error: { code: 'INTERRUPTED' } });
    expect(lines).toEqual([expect.stringContaining('1 lookalike job(s) had no sign of life')]);
  });
});

describe('the memory store', () => {
  it(`keeps at most ${MEMORY_LOOKALIKE_JOB_CAPACITY} jobs: a new one drops the oldest finished one, never an unfinished one`, async () => {
    const store = new MemoryLookalikeJobStore();
    await store.create({ id: 'waiting', organizationId: 'o1', domain: 'a.example', createdAt: T0 });
    for (let i = 1; i < MEMORY_LOOKALIKE_JOB_CAPACITY; i++) {
      await store.create({ id: `j${i}`, organizationId: 'o1', domain: 'a.example', createdAt: T0 });
      await store.fail(`j${i}`, { code: 'INTERNAL', message: 'x' }, T0);
    }
    await store.create({ id: 'new', organizationId: 'o1', domain: 'a.example', createdAt: T0 });
    expect(await store.getById('waiting')).toBeDefined();
    expect(await store.getById('j1')).toBeUndefined();
    expect(await store.getById('j2')).toBeDefined();
    expect(await store.getById('new')).toBeDefined();
  });
});
