/**
 * The pass-set walk answers at once when every DNS answer is held (`resolveNow`), and gives the same
 * sets, problems and queries, in the same order, as over a resolver that always makes it wait.
 */
import { describe, expect, it } from 'vitest';
import { createCheckResolver } from '../../src/dns/limits.js';
import type { DnsAnswer, ImmediateResolver, RecordType, Resolver } from '../../src/dns/types.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { computePassSet, passSetSets } from '../../src/spf/pass-set.js';
import type { ResourceRecord } from '../../src/zones/types.js';
import { a, aaaa, mx, TestResolver, txt } from './zones.js';
import type { Faults } from './zones.js';

const DOMAIN = 'example.com';

/** Answers from a zone, every query logged and failures injected, as values too (`resolveNow`). */
class HeldResolver extends TestResolver implements ImmediateResolver {
  resolveNow<T extends RecordType>(name: string, type: T): DnsAnswer<T> {
    return this.resolveSync(name, type);
  }
}

/** The same answers, each after a turn of the event loop (no `resolveNow`): every step must wait. */
class WaitingResolver implements Resolver {
  private readonly held: HeldResolver;

  constructor(records: ResourceRecord[], faults: Faults = {}) {
    this.held = new HeldResolver(records, faults);
  }

  get calls(): string[] {
    return this.held.calls;
  }

  async resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    return this.held.resolveSync(name, type);
  }
}

const ZONE: ResourceRecord[] = [
  txt('chain.example.net', 'v=spf1 ip4:192.0.2.0/24 include:deep.example.net -all'),
  txt('deep.example.net', 'v=spf1 ip6:2001:db8::/48 a:host.example.net ~all'),
  a('host.example.net', '198.51.100.7'),
  aaaa('host.example.net', '2001:db8:1::7'),
  mx(DOMAIN, 10, 'mail1.example.com'),
  mx(DOMAIN, 20, 'mail2.example.com'),
  a('mail1.example.com', '203.0.113.1'),
  aaaa('mail1.example.com', '2001:db8:2::1'),
  a('mail2.example.com', '203.0.113.2'),
  a('yes.example.org', '127.0.0.2'),
  txt('redirected.example.net', 'v=spf1 ip4:198.51.100.0/25 include:chain.example.net ?all'),
  txt('open.example.net', 'v=spf1 +all'),
  txt('loop.example.net', 'v=spf1 include:example.com -all'),
];

const CASES: { name: string; record: string; faults?: Faults }[] = [
  { name: 'an include chain', record: 'v=spf1 include:chain.example.net -all' },
  { name: 'the same include twice (memoised)', record: 'v=spf1 include:chain.example.net -ip4:192.0.2.1 include:chain.example.net +all' },
  { name: 'mx with two hosts, one without AAAA', record: 'v=spf1 mx/28//64 -all' },
  { name: 'a', record: 'v=spf1 a:host.example.net/30 -all' },
  { name: 'exists that matches, after one that does not', record: 'v=spf1 exists:no.example.org exists:yes.example.org -all' },
  { name: 'redirect to a record with an include', record: 'v=spf1 -ip4:198.51.100.1 redirect=redirected.example.net' },
  { name: 'a failed TXT lookup of an include', record: 'v=spf1 include:chain.example.net +all', faults: { 'TXT deep.example.net': 'servfail' } },
  { name: 'a failed A and MX lookup', record: 'v=spf1 a:host.example.net mx -all', faults: { 'A host.example.net': 'timeout', 'MX example.com': 'servfail' } },
  { name: 'void lookups past the limit', record: 'v=spf1 a:v1.example.org a:v2.example.org exists:v3.example.org include:open.example.net -all' },
  { name: 'a loop and a missing record', record: 'v=spf1 include:loop.example.net include:none.example.net +all' },
  { name: 'a runtime term and a forger-chosen one (probes)', record: 'v=spf1 exists:%{i}.example.org +a:%{h} -all' },
];

describe('pass-set walk: held answers, no waiting', () => {
  it('settles in one microtask turn when every answer is held (no await inside the walk)', async () => {
    const resolver = createCheckResolver(new ZoneResolver([{ origin: '', records: ZONE }]));
    let settled = false;
    const pending = passSetSets('v=spf1 include:chain.example.net mx exists:yes.example.org redirect=redirected.example.net', DOMAIN, resolver).then(() => {
      settled = true;
    });
    // The walk ran within the call: its promise is already fulfilled, so `then` runs before this turn ends.
    await null;
    expect(settled).toBe(true);
    await pending;
  });

  it('still waits when an answer must be waited for', async () => {
    let settled = false;
    const pending = passSetSets('v=spf1 include:chain.example.net -all', DOMAIN, new WaitingResolver(ZONE)).then(() => {
      settled = true;
    });
    await null;
    expect(settled).toBe(false);
    await pending;
    expect(settled).toBe(true);
  });

  for (const { name, record, faults } of CASES) {
    it(`${name}: the same sets and queries as over a resolver that waits`, async () => {
      const records = [txt(DOMAIN, record), ...ZONE];
      const held = new HeldResolver(records, faults);
      const waiting = new WaitingResolver(records, faults);
      const heldSets = await passSetSets(record, DOMAIN, held);
      const waitingSets = await passSetSets(record, DOMAIN, waiting);
      expect(heldSets).toEqual(waitingSets);
      // One term after another, A before AAAA of each host: the same queries in the same order.
      expect(held.calls).toEqual(waiting.calls);
      const checked = await computePassSet(record, DOMAIN, createCheckResolver(new HeldResolver(records, faults)));
      expect(checked).toEqual(await computePassSet(record, DOMAIN, new WaitingResolver(records, faults)));
    });
  }
});
