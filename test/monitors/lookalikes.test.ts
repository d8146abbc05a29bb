/**
 * Monitors that ask for `lookalikes`: the graded lookalikes join the snapshot; a webhook goes out when
 * a lookalike appears or its grade rises (confirmed like every change), not when one stops resolving
 * or is parked; `unknown` (a failed lookup) is never a rise.
 */
import { describe, expect, it } from 'vitest';
import { checkDomain } from '../../packages/engine/src/check.js';
import type { DnsAnswer, RecordType, Resolver } from '../../packages/engine/src/dns/types.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { findLookalikes } from '../../packages/engine/src/lookalikes/index.js';
import { parseZone } from '../../packages/engine/src/zones/parse.js';
import { lookalikeAlerts } from '../../src/jobs/monitors/monitor-changes.js';
import { runMonitor, withLookalikeSearch, type MonitorChangedEvent } from '../../src/jobs/monitors/monitor-run.js';
import { MemoryMonitorStore } from '../../src/store/monitors-memory.js';
import type { MonitorSnapshot } from '../../src/store/monitors.js';

const snap = (lookalikes?: string[]): MonitorSnapshot => ({
  kind: 'checked', verdict: 'protected', inboxOutcome: 'rejected', dmarc: { status: 'found', record: null }, spf: { status: 'found', record: null },
  dkim: { status: 'not-found', keys: [] }, mx: { status: 'found', hosts: [] }, findings: [], ...(lookalikes ? { lookalikes } : {}),
});

describe('lookalikeAlerts', () => {
  it.each<[string, string[] | undefined, string[], { domain: string; before: string | null; after: string }[]]>([
    ['a new lookalike', ['a.example high'], ['a.example high', 'b.example medium'], [{ domain: 'b.example', before: null, after: 'medium' }]],
    ['a grade rise', ['a.example medium'], ['a.example critical'], [{ domain: 'a.example', before: 'medium', after: 'critical' }]],
    ['a grade fall is no alert', ['a.example critical'], ['a.example protected'], []],
    ['one that stopped resolving is no alert', ['a.example high'], [], []],
    ['unknown before is not a rise', ['a.example unknown'], ['a.example critical'], []],
    ['a new unknown is no alert', [], ['a.example unknown'], []],
    ['the first search after opting in alerts nothing', undefined, ['a.example critical'], []],
  ])('%s', (_name, before, after, expected) => {
    expect(lookalikeAlerts(snap(before), snap(after))).toEqual(expected);
  });
});

const ORIGINAL = '$ORIGIN brand.example.\n$TTL 1\n@ IN SOA ns1 h 1 1 1 1 1\n@ IN NS ns1.dns.example.\n@ IN MX 10 mx\n@ IN TXT "v=spf1 -all"\n_dmarc IN TXT "v=DMARC1; p=reject"\nmx IN A 198.51.100.1\n';
const zone = (origin: string, body: string) => parseZone(`$ORIGIN ${origin}.\n$TTL 1\n@ IN SOA ns1 h 1 1 1 1 1\n@ IN NS ns1.other.example.\n${body}`);

/** The DNS of the test: the original, plus lookalike zones that come and go. */
class World implements Resolver {
  extra = new Map<string, string>();
  async resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    const zones = [parseZone(ORIGINAL), ...[...this.extra].map(([origin, body]) => zone(origin, body))];
    return new ZoneResolver(zones).resolve(name, type);
  }
}

describe('a monitor with the lookalike search', () => {
  it('sends a webhook when a lookalike appears (after confirmation), and not when one goes away', async () => {
    const world = new World();
    const check = withLookalikeSearch((domain) => checkDomain(domain, { resolver: world }), (domain) => findLookalikes(domain, { resolver: world }));
    const store = new MemoryMonitorStore();
    const at = '2025-01-01T00:00:00.000Z';
    await store.create({
      id: 'm1', organizationId: 'o1', domain: 'brand.example', intervalMinutes: 5, webhookUrl: 'https://hooks.test/x', checks: ['lookalikes'], sealedSecret: '',
      machine: { confirmed: null, candidate: null, consecutiveFailures: 0 }, lastResult: null, nextRunAt: at, leaseUntil: null, version: 0, createdAt: at, updatedAt: at,
    });
    let n = 0;
    const run = () => runMonitor({ store, check, now: () => new Date(Date.parse(at) + ++n * 60_000) }, 'm1', `manual:${n}`);
    const events = async () => ((await store.deliveries('o1', 'm1', { page: 1, limit: 10 }))!.items.map((d) => JSON.parse(d.body) as MonitorChangedEvent));

    expect(await run()).toMatchObject({ kind: 'committed', changed: false }); // the baseline
    world.extra.set('brand1.example', '@ IN MX 10 mx.brand1.example.\n@ IN TXT "v=spf1 ip4:203.0.113.0/24 -all"\nmx IN A 203.0.113.5\n');
    expect(await run()).toMatchObject({ changed: false }); // seen once: not yet believed
    expect(await run()).toMatchObject({ changed: true, deliveries: 1 });
    const [event] = await events();
    expect(event!.lookalikes).toEqual([{ domain: 'brand1.example', before: null, after: 'critical' }]);
    expect(event!.changes).toEqual([{ field: 'lookalikes', before: [], after: ['brand1.example critical'] }]);

    world.extra.clear();
    await run();
    expect(await run()).toMatchObject({ changed: true, deliveries: 0 }); // history, not an alarm
    expect(await events()).toHaveLength(1);
  });
});
