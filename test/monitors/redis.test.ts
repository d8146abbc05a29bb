/**
 * Monitors on the real BullMQ queue (the test Redis): one job scheduler per monitor, two workers,
 * schedule minutes scaled down (1 minute = 100 ms) so that intervals pass in a test. Asserted: every
 * monitor ran once per slot (none twice, none skipped between its first and last run), whichever
 * worker took it; and a worker killed mid-check loses nothing (another takes the job over once its
 * lock runs out; the run is written once). No assertion on speed: the loops wait for counts, with
 * generous safety timeouts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisMonitorScheduler, startMonitorWorker, type MonitorWorker } from '../../src/jobs/monitors/monitor-queue.js';
import type { MonitorCheck } from '../../src/jobs/monitors/monitor-run.js';
import { MonitorService } from '../../src/jobs/monitors/monitors.js';
import { phaseOf } from '../../src/jobs/monitors/monitor-schedule.js';
import { openSqliteStores } from '../../src/store/sqlite.js';
import type { SqlStores } from '../../src/store/sql.js';
import { requireRedis } from '../setup/require-services.js';
import { checkOver, MutableResolver, REJECT, WATCHED } from './helpers.js';

const MINUTE_MS = 100;
const INTERVAL_MS = 5 * MINUTE_MS;

async function until(what: string, condition: () => Promise<boolean>, safetyMs = 30_000): Promise<void> {
  const deadline = Date.now() + safetyMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('monitors on the Redis queue', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn().catch(() => {});
  });

  async function setup() {
    const redisUrl = requireRedis();
    const prefix = `montest${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const dir = await mkdtemp(join(tmpdir(), 'monitors-redis-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    // One connection for the API side and both workers: they share this process, and two SQLite
    // connections in one process can deadlock on SQLite's synchronous busy wait (separate processes,
    // as in test/monitors/serve.test.ts, do not).
    const { stores: api } = await openSqliteStores(dir, { pruneAutomatically: false });
    cleanup.push(() => api.close());
    const open = async (): Promise<SqlStores> => api;
    const scheduler = new RedisMonitorScheduler(api.monitors, { redisUrl, prefix, minuteMs: MINUTE_MS });
    cleanup.push(() => scheduler.close());
    const service = new MonitorService({ store: api.monitors, scheduler, serverKey: Buffer.alloc(32), allowPrivateAddresses: true, minuteMs: MINUTE_MS });
    await service.start();
    const startWorker = async (check: MonitorCheck, seen: { runId: string; kind: string }[], lockDurationMs = 30_000): Promise<MonitorWorker> => {
      const store = (await open()).monitors;
      const worker = startMonitorWorker({ redisUrl, prefix, store, check, minuteMs: MINUTE_MS, lockDurationMs, onRun: (job, outcome) => seen.push({ runId: job.runId, kind: outcome.kind }) });
      cleanup.push(() => worker.close());
      await worker.ready();
      return worker;
    };
    return { api, scheduler, service, startWorker };
  }

  it('two workers: each monitor runs once per slot, none twice, none skipped', async () => {
    const { api, scheduler, service, startWorker } = await setup();
    const resolver = new MutableResolver(REJECT);
    const check: MonitorCheck = async (domain, options) => ({ ...(await checkOver(resolver)(WATCHED, options)), domain });
    const seenA: { runId: string; kind: string }[] = [];
    const seenB: { runId: string; kind: string }[] = [];
    await startWorker(check, seenA);
    await startWorker(check, seenB);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const created = await service.create('o1', { domain: `d${i}.example`, intervalMinutes: 5 });
      if (!('monitor' in created)) throw new Error('not created');
      ids.push(created.monitor.id);
    }
    expect(await scheduler.schedulerCount()).toBe(8);
    const checksOf = async (id: string) => (await api.monitors.history('o1', id, { page: 1, limit: 100 }))!.items.filter((e) => e.type === 'check');
    await until('4 runs of every monitor', async () => (await Promise.all(ids.map(checksOf))).every((c) => c.length >= 4));
    for (const id of ids) {
      const slots = (await checksOf(id)).map((e) => Number((e as { runId: string }).runId.replace('slot:', ''))).reverse();
      expect(new Set(slots).size, `${id}: no slot twice`).toBe(slots.length);
      for (let i = 1; i < slots.length; i++) expect(slots[i]! - slots[i - 1]!, `${id}: consecutive slots`).toBe(INTERVAL_MS);
      // BullMQ runs the monitor's own grid (its phase from the id), as the in-process scheduler does.
      expect((slots[0]! - phaseOf(id, INTERVAL_MS)) % INTERVAL_MS, `${id}: on its grid`).toBe(0);
    }
    const committed = [...seenA, ...seenB].filter((s) => s.kind === 'committed').length;
    expect(committed).toBeGreaterThanOrEqual(8 * 4);
    expect(new Set([...seenA, ...seenB].filter((s) => s.kind === 'committed').map((s) => s.runId)).size).toBeGreaterThan(0);
  });

  it('a worker killed mid-check loses nothing: the job is taken over and the run written once', async () => {
    const { api, service, startWorker } = await setup();
    const resolver = new MutableResolver(REJECT);
    let started!: () => void;
    const inCheck = new Promise<void>((resolve) => (started = resolve));
    const hanging: MonitorCheck = () => {
      started();
      return new Promise(() => {}); // never answers: the worker "dies" in the middle
    };
    const seenDead: { runId: string; kind: string }[] = [];
    const dead = await startWorker(hanging, seenDead, 1000);
    // The longest interval: its first scheduled slot is most likely well after the test.
    const created = await service.create('o1', { domain: WATCHED, intervalMinutes: 10_080 });
    if (!('monitor' in created)) throw new Error('not created');
    const runId = await service.runNow('o1', created.monitor.id);
    await inCheck;
    await dead.close(true); // SIGKILL-like: the job stays active, its lock is no longer renewed
    const seen: { runId: string; kind: string }[] = [];
    await startWorker(checkOver(resolver), seen, 1000);
    await until('the job taken over', async () => seen.some((s) => s.runId === runId));
    const history = (await api.monitors.history('o1', created.monitor.id, { page: 1, limit: 10 }))!;
    const runs = history.items.map((e) => (e.type === 'check' ? e.runId : e.type));
    // The manual run is written exactly once. With minutes of 100 ms, a loaded machine can also reach
    // the monitor's first scheduled slot meanwhile: such a run is its own slot, never a copy of this one.
    expect(runs.filter((r) => r === runId)).toEqual([runId]);
    expect(runs.filter((r) => r !== runId).every((r) => r.startsWith('slot:')), runs.join(', ')).toBe(true);
  });
});
