/**
 * Lookalikes remembered (issue 41): the memory's transitions, table-driven (a new state believed
 * after two searches, the baseline never alerted, `unknown` no observation, a capped search's
 * absences no news, "ours" never alerted), and a monitor run end to end over zones that change:
 * a name newly registered, then gaining mail, then its grade rising, each a `lookalike.changed`
 * alert to an alert channel's receiver; the same after marking it ours sends nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LookalikeReport } from '../../packages/engine/src/lookalikes/types.js';
import { checkDomain } from '../../packages/engine/src/check.js';
import type { DnsAnswer, RecordType, Resolver } from '../../packages/engine/src/dns/types.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { findLookalikes } from '../../packages/engine/src/lookalikes/index.js';
import { parseZone } from '../../packages/engine/src/zones/parse.js';
import { AlertService } from '../../src/jobs/monitors/alerts.js';
import { lookalikeMemory, rememberSearch, type LookalikeEvent } from '../../src/jobs/monitors/lookalike-memory.js';
import { runMonitor, withLookalikeSearch } from '../../src/jobs/monitors/monitor-run.js';
import { DeliveryPump } from '../../src/jobs/monitors/webhooks.js';
import { MemoryAlertStore } from '../../src/store/alerts-memory.js';
import { MemoryMonitorStore } from '../../src/store/monitors-memory.js';
import { MemoryRememberedLookalikeStore } from '../../src/store/remembered-lookalikes-memory.js';
import type { RememberedLookalike } from '../../src/store/remembered-lookalikes.js';
import { loopbackLookup, startReceiver } from './helpers.js';

type Seen = { grade: 'critical' | 'high' | 'medium' | 'protected' | 'unknown'; mx?: boolean; spf?: boolean };
const report = (names: Record<string, Seen>, capped = false): LookalikeReport =>
  ({
    domain: 'brand.example',
    unicode: 'brand.example',
    deep: false,
    generated: 10,
    probed: 10,
    queries: 10,
    candidatesBeforeCap: 10,
    capped,
    counts: { critical: 0, high: 0, medium: 0, unknown: 0, protected: 0, none: 0 },
    lookalikes: Object.entries(names).map(([domain, s]) => ({
      domain,
      unicode: domain,
      fuzzers: [],
      distance: 1,
      grade: s.grade,
      mx: { status: s.mx ? 'receives' : 'none', hosts: [] },
      spf: { status: s.spf ? 'authorises' : 'none', record: null },
      dmarc: { status: 'absent', record: null },
      sharedWithOriginal: false,
      note: '',
    })),
    looksLike: null,
    wildcardSuffixes: [],
    nextSteps: [],
  }) as unknown as LookalikeReport;

const monitor = { id: 'm1', organizationId: 'o1' };
/** Runs the searches one after the other from an empty memory; the events of each, and the memory at the end. */
function replay(searches: LookalikeReport[], ours: string[] = []): { events: LookalikeEvent[][]; memory: Map<string, RememberedLookalike> } {
  const memory = new Map<string, RememberedLookalike>();
  const events: LookalikeEvent[][] = [];
  searches.forEach((search, i) => {
    const result = rememberSearch([...memory.values()], search, monitor, `2026-01-0${i + 1}T00:00:00.000Z`);
    for (const entry of result.changed) memory.set(entry.domain, { ...entry, ours: ours.includes(entry.domain) });
    events.push(result.events);
  });
  return { events, memory };
}

describe('rememberSearch', () => {
  const medium = { grade: 'medium' } as const;
  const mail = { grade: 'high', mx: true } as const;
  it.each<[string, LookalikeReport[], string[], (LookalikeEvent['change'] | null)[]]>([
    ['the baseline alerts nothing', [report({ 'a.example': mail })], [], [null]],
    ['a new name, seen twice: registered', [report({}), report({ 'a.example': medium }), report({ 'a.example': medium })], [], [null, null, 'registered']],
    ['a new name seen once, then gone: nothing', [report({}), report({ 'a.example': medium }), report({}), report({})], [], [null, null, null, null]],
    ['gaining mail (MX), confirmed', [report({ 'a.example': medium }), report({ 'a.example': mail }), report({ 'a.example': mail })], [], [null, null, 'mail']],
    ['gaining an SPF that authorises', [report({ 'a.example': medium }), report({ 'a.example': { grade: 'high', spf: true } }), report({ 'a.example': { grade: 'high', spf: true } })], [], [null, null, 'mail']],
    ['a grade rise with mail already', [report({ 'a.example': mail }), report({ 'a.example': { grade: 'critical', mx: true } }), report({ 'a.example': { grade: 'critical', mx: true } })], [], [null, null, 'grade-rose']],
    ['a grade fall is no alert', [report({ 'a.example': mail }), report({ 'a.example': { grade: 'protected' } }), report({ 'a.example': { grade: 'protected' } })], [], [null, null, null]],
    ['unknown is no observation (never "gone")', [report({ 'a.example': mail }), report({ 'a.example': { grade: 'unknown' } }), report({ 'a.example': { grade: 'unknown' } })], [], [null, null, null]],
    ['a capped search\'s absences say nothing', [report({ 'a.example': mail }), report({}, true), report({}, true)], [], [null, null, null]],
    ['ours is never alerted', [report({ 'b.example': medium }), report({ 'b.example': medium, 'a.example': medium }), report({ 'b.example': medium, 'a.example': mail }), report({ 'b.example': medium, 'a.example': mail })], ['a.example'], [null, null, null, null]],
  ])('%s', (_name, searches, ours, expected) => {
    const { events } = replay(searches, ours);
    expect(events.map((e) => e[0]?.change ?? null)).toEqual(expected);
  });

  it('remembers first and last seen, the state, and every confirmed change', () => {
    const { memory } = replay([
      report({ 'x.example': { grade: 'protected' } }),
      report({ 'x.example': { grade: 'protected' }, 'a.example': medium }),
      report({ 'x.example': { grade: 'protected' }, 'a.example': medium }),
      report({ 'x.example': { grade: 'protected' }, 'a.example': mail }),
      report({ 'x.example': { grade: 'protected' }, 'a.example': mail }),
      report({ 'x.example': { grade: 'protected' } }),
      report({ 'x.example': { grade: 'protected' } }),
    ]);
    const a = memory.get('a.example')!;
    expect(a).toMatchObject({ firstSeen: '2026-01-02T00:00:00.000Z', lastSeen: '2026-01-05T00:00:00.000Z', state: { registered: false, grade: 'none' }, pending: null });
    expect(a.history.map((h) => h.change)).toEqual(['registered', 'mx-published', 'grade-up', 'unregistered', 'mx-removed']);
    expect(a.history[2]).toEqual({ at: '2026-01-05T00:00:00.000Z', change: 'grade-up', before: 'medium', after: 'high' });
  });
});

const ORIGINAL = '$ORIGIN brand.example.\n$TTL 1\n@ IN SOA ns1 h 1 1 1 1 1\n@ IN NS ns1.dns.example.\n@ IN MX 10 mx\n@ IN TXT "v=spf1 -all"\n_dmarc IN TXT "v=DMARC1; p=reject"\nmx IN A 198.51.100.1\n';
const zone = (origin: string, body: string) => parseZone(`$ORIGIN ${origin}.\n$TTL 1\n@ IN SOA ns1 h 1 1 1 1 1\n@ IN NS ns1.other.example.\n${body}`);
class World implements Resolver {
  extra = new Map<string, string>();
  async resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    return new ZoneResolver([parseZone(ORIGINAL), ...[...this.extra].map(([origin, body]) => zone(origin, body))]).resolve(name, type);
  }
}

describe('a monitor that remembers its lookalikes', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeEach(async () => {
    receiver = await startReceiver();
  });
  afterEach(async () => {
    await receiver.close();
  });

  it('alerts a channel when a name is registered, gains mail, and rises; never once it is marked ours', async () => {
    const world = new World();
    const check = withLookalikeSearch((domain) => checkDomain(domain, { resolver: world }), (domain) => findLookalikes(domain, { resolver: world }));
    const store = new MemoryMonitorStore();
    const remembered = new MemoryRememberedLookalikeStore();
    const alerts = new AlertService({ store: new MemoryAlertStore(), serverKey: Buffer.alloc(32, 1), allowPrivateAddresses: true, lookup: loopbackLookup });
    await alerts.create('o1', { name: 'slack', kind: 'slack', url: receiver.url, events: ['lookalikes'] });
    const pump = new DeliveryPump({ store, secretFor: async () => undefined, allowPrivateAddresses: true, sendToChannel: (d) => alerts.sendDelivery(d) });
    const at = '2025-01-01T00:00:00.000Z';
    await store.create({
      id: 'm1', organizationId: 'o1', domain: 'brand.example', intervalMinutes: 5, webhookUrl: null, checks: ['lookalikes'], sealedSecret: '',
      machine: { confirmed: null, candidate: null, consecutiveFailures: 0 }, lastResult: null, nextRunAt: at, leaseUntil: null, version: 0, createdAt: at, updatedAt: at,
    });
    let n = 0;
    const deps = { store, check, now: () => new Date(Date.parse(at) + ++n * 60_000), lookalikeMemory: lookalikeMemory(remembered), alertDeliveries: alerts.deliveriesFor.bind(alerts) };
    const twice = async () => {
      await runMonitor(deps, 'm1', `manual:${n}:a`);
      return runMonitor(deps, 'm1', `manual:${n}:b`);
    };
    const alerted = async () => {
      await pump.drain();
      return receiver.received.map((r) => JSON.parse(r.body).blocks[1].text.text as string);
    };

    await runMonitor(deps, 'm1', 'baseline');
    world.extra.set('brand1.example', '@ IN A 203.0.113.5\n@ IN MX 0 .\n');
    await twice();
    expect(await alerted()).toEqual([expect.stringContaining('Lookalike brand1.example: newly registered, graded')]);
    world.extra.set('brand1.example', '@ IN MX 10 mx.brand1.example.\nmx IN A 203.0.113.5\n');
    await twice();
    expect((await alerted()).at(-1)).toContain('Lookalike brand1.example: can now handle mail (MX or SPF published), graded high');
    world.extra.set('brand1.example', '@ IN MX 10 mx.brand1.example.\n@ IN TXT "v=spf1 ip4:203.0.113.0/24 -all"\nmx IN A 203.0.113.5\n');
    await twice();
    expect((await alerted()).at(-1)).toContain('Lookalike brand1.example: grade rose from high to critical');
    expect(receiver.received).toHaveLength(3);
    const [entry] = (await remembered.list('o1', 'm1', { page: 1, limit: 10 })).items;
    expect(entry!.history.map((h) => h.change)).toEqual(['registered', 'mx-published', 'grade-up', 'spf-published', 'grade-up']);
    // Another name, marked ours before it is confirmed: remembered, never alerted.
    world.extra.set('brand2.example', '@ IN MX 10 mx.brand2.example.\nmx IN A 203.0.113.6\n');
    await runMonitor(deps, 'm1', 'seen-once');
    expect(await remembered.setOurs('o1', 'm1', 'brand2.example', true)).toMatchObject({ ours: true });
    await runMonitor(deps, 'm1', 'seen-twice');
    expect(await alerted()).toHaveLength(3);
    const second = (await remembered.list('o1', 'm1', { page: 1, limit: 10 })).items.find((e) => e.domain === 'brand2.example')!;
    expect(second).toMatchObject({ ours: true, state: { registered: true, mx: true } });
  });
});
