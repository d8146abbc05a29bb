/**
 * The in-process scheduler on an injected clock (no waiting on wall-clock time): two schedulers on
 * one store run each monitor once per interval, on its own slot (spread by its id); a scheduler
 * that dies mid-check leaves its lease to run out and the same slot is run again and written once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InProcessMonitorScheduler, MONITOR_RUN_LEASE_MS, MonitorService } from '../../src/jobs/monitors/monitors.js';
import type { MonitorCheck } from '../../src/jobs/monitors/monitor-run.js';
import { firstSlot, phaseOf, slotAfter } from '../../src/jobs/monitors/monitor-schedule.js';
import type { MonitorStore } from '../../src/store/monitors.js';
import { memoryBackend, sqliteBackend, type OpenedBackend } from '../store/backends.js';
import { checkOver, MutableResolver, REJECT, TestClock, WATCHED } from './helpers.js';

const MINUTE = 60_000;
const START = Date.parse('2025-06-01T00:00:00.000Z');

/** Every check of every monitor: runId list per monitor. */
async function runsByMonitor(store: MonitorStore, org: string, ids: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const id of ids) {
    const page = await store.history(org, id, { page: 1, limit: 100 });
    out.set(id, page!.items.filter((e) => e.type === 'check').map((e) => (e.type === 'check' ? e.runId : '')).reverse());
  }
  return out;
}

describe('slots', () => {
  it('spread monitors over the interval, deterministically, and never start before the grace', () => {
    const interval = 1440 * MINUTE;
    const phases = Array.from({ length: 1000 }, (_, i) => phaseOf(`mon_${i}`, interval));
    expect(phaseOf('mon_1', interval)).toBe(phases[1]);
    // No thundering herd: each of 24 hours gets some share of 1000 monitors (expected ~42).
    const perHour = new Array(24).fill(0);
    for (const p of phases) perHour[Math.floor(p / (60 * MINUTE))]++;
    expect(Math.min(...perHour)).toBeGreaterThan(10);
    expect(Math.max(...perHour)).toBeLessThan(90);
    const first = firstSlot('mon_1', interval, START);
    expect(first).toBeGreaterThanOrEqual(START + 10 * MINUTE);
    expect(first).toBeLessThan(START + 10 * MINUTE + interval);
    expect((first - phaseOf('mon_1', interval)) % interval).toBe(0);
    expect(slotAfter('mon_1', interval, first)).toBe(first + interval);
  });
});

describe.each([memoryBackend, sqliteBackend])('in-process scheduler on $name', (backend) => {
  let opened: OpenedBackend;
  const schedulers: InProcessMonitorScheduler[] = [];
  afterEach(async () => {
    await Promise.all(schedulers.splice(0).map((s) => s.close()));
    await opened?.dispose();
  });

  it('two schedulers on one store: each monitor runs once per slot, none twice, none skipped', async () => {
    opened = await backend.open();
    const store = opened.stores.monitors;
    const clock = new TestClock(START);
    const resolver = new MutableResolver(REJECT);
    let checks = 0;
    const check: MonitorCheck = (domain, options) => {
      checks++;
      return checkOver(resolver)(WATCHED, options).then((r) => ({ ...r, domain }));
    };
    for (let i = 0; i < 2; i++) schedulers.push(new InProcessMonitorScheduler({ store, check, now: clock.now, tickMs: 0 }));
    const service = new MonitorService({ store, scheduler: schedulers[0]!, serverKey: Buffer.alloc(32), allowPrivateAddresses: true, now: clock.now });
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const created = await service.create('o1', { domain: `d${i}.example`, intervalMinutes: 5 });
      if (!('monitor' in created)) throw new Error('not created');
      ids.push(created.monitor.id);
    }
    const end = START + 60 * MINUTE;
    while (clock.ms < end) {
      clock.advance(MINUTE);
      await Promise.all(schedulers.map((s) => s.tick()));
    }
    const runs = await runsByMonitor(store, 'o1', ids);
    let total = 0;
    for (const id of ids) {
      const expected: string[] = [];
      for (let slot = firstSlot(id, 5 * MINUTE, START); slot <= end; slot += 5 * MINUTE) expected.push(`slot:${slot}`);
      expect(runs.get(id), id).toEqual(expected);
      total += expected.length;
    }
    expect(checks).toBe(total);
  });

  it('a scheduler that dies mid-check: its lease runs out, another runs the slot, which is written once', async () => {
    opened = await backend.open();
    const store = opened.stores.monitors;
    const clock = new TestClock(START);
    const resolver = new MutableResolver(REJECT);
    let release: () => void = () => {};
    const hung = new Promise<void>((resolve) => (release = resolve));
    const dying: MonitorCheck = async (domain, options) => {
      await hung;
      return checkOver(resolver)(domain, options);
    };
    const a = new InProcessMonitorScheduler({ store, check: dying, now: clock.now, tickMs: 0 });
    const b = new InProcessMonitorScheduler({ store, check: checkOver(resolver), now: clock.now, tickMs: 0 });
    schedulers.push(a, b);
    const service = new MonitorService({ store, scheduler: a, serverKey: Buffer.alloc(32), allowPrivateAddresses: true, now: clock.now });
    const created = await service.create('o1', { domain: WATCHED, intervalMinutes: 60 });
    if (!('monitor' in created)) throw new Error('not created');
    const slot = Date.parse(created.monitor.nextRunAt);
    clock.ms = slot;
    const aTick = a.tick(); // takes the lease, then hangs in the check
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await b.tick()).toBe(0); // leased: not run twice
    clock.advance(MONITOR_RUN_LEASE_MS + 1);
    expect(await b.tick()).toBe(1); // the lease ran out: the same slot, taken over
    release(); // the "dead" run comes back: its commit is refused as a duplicate
    await aTick;
    await a.idle();
    const runs = await runsByMonitor(store, 'o1', [created.monitor.id]);
    expect(runs.get(created.monitor.id)).toEqual([`slot:${slot}`]);
    expect((await store.getById(created.monitor.id))?.nextRunAt).toBe(new Date(slot + 60 * MINUTE).toISOString());
  });
});
