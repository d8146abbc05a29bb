import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { discoverDmarc, discoverDmarcNow, findOrganizationalDomain, findOrganizationalDomainNow } from '../../src/dmarc/discover.js';
import { parseDmarcRecord } from '../../src/dmarc/parse.js';
import { effectivePolicy, effectivePolicyNow, nameExists, nameExistsNow } from '../../src/dmarc/policy.js';
import { verifyReportDestinations, verifyReportDestinationsNow } from '../../src/dmarc/reports.js';
import type { DmarcRecord } from '../../src/dmarc/types.js';
import { FaultyResolver, type FaultPlan } from '../../src/dns/faults.js';
import { createCheckResolver } from '../../src/dns/limits.js';
import type { DnsAnswer, ImmediateResolver, RecordType, Resolver } from '../../src/dns/types.js';
import type { ZoneResolver } from '../../src/zones/zone-resolver.js';
import type { ResourceRecord } from '../../src/zones/types.js';
import { a, dns, mx, txt } from './helpers.js';

/** Answers like `inner`, always after a turn of the event loop (a cold check), recording each call. */
class WaitingResolver implements Resolver {
  readonly calls: string[] = [];
  constructor(private readonly inner: Resolver) {}

  async resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    this.calls.push(`${type} ${name}`);
    await nextTurn();
    return this.inner.resolve(name, type);
  }
}

/** Answers `inner` at once, except the names in `slow`, which wait a turn: a walk that turns cold midway. */
class MixedResolver implements ImmediateResolver {
  readonly calls: string[] = [];
  constructor(
    private readonly inner: ZoneResolver,
    private readonly slow: ReadonlySet<string>,
  ) {}

  resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    return Promise.resolve(this.resolveNow(name, type));
  }

  resolveNow<T extends RecordType>(name: string, type: T): DnsAnswer<T> | Promise<DnsAnswer<T>> {
    this.calls.push(`${type} ${name}`);
    if (this.slow.has(name)) return nextTurn().then(() => this.inner.resolveSync(name, type));
    return this.inner.resolveSync(name, type);
  }
}

/** Records the calls of the async functions over a resolver that answers at once, for the expected order. */
class RecordingResolver implements Resolver {
  readonly calls: string[] = [];
  constructor(private readonly inner: Resolver) {}

  resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    this.calls.push(`${type} ${name}`);
    return this.inner.resolve(name, type);
  }
}

function record(text: string): DmarcRecord {
  const parsed = parseDmarcRecord(text);
  if (parsed.kind !== 'record') throw new Error(`test record does not parse: ${text}`);
  return parsed.record;
}

const ZONE: ResourceRecord[] = [
  txt('_dmarc.example.com', 'v=DMARC1; p=reject; sp=quarantine; np=none; rua=mailto:a@example.com,mailto:r@reports.example.net,mailto:w@other.wild.example.org'),
  txt('_dmarc.example.com', 'unrelated'),
  txt('_dmarc.sub.example.com', 'v=DMARC1; p=none'),
  a('host.example.com'),
  mx('mailonly.example.com', 'mx.example.com'),
  txt('_dmarc.psd.test', 'v=DMARC1; p=reject; psd=y'),
  txt('example.com._report._dmarc.reports.example.net', 'v=DMARC1;'),
  // The wildcard is shadowed: the exact name exists, with another record (RFC 4592 §2.2).
  txt('*._report._dmarc.other.wild.example.org', 'v=DMARC1;'),
  txt('example.com._report._dmarc.other.wild.example.org', 'not an authorization'),
];

const NAMES = ['example.com', 'sub.example.com', 'a.b.c.d.e.f.g.h.i.mail.example.com', 'host.example.com', 'ghost.example.com', 'mailonly.example.com', 'x.y.psd.test', 'nothing.invalid', '192.0.2.1', ''];

const isPromise = (value: unknown): boolean => value instanceof Promise;

describe('discoverDmarcNow and findOrganizationalDomainNow', () => {
  it.each(NAMES)('"%s": a plain value over held answers, equal to discoverDmarc', async (name) => {
    const now = discoverDmarcNow(name, createCheckResolver(dns(...ZONE)));
    expect(isPromise(now)).toBe(false);
    expect(now).toEqual(await discoverDmarc(name, dns(...ZONE)));
    const org = findOrganizationalDomainNow(name || 'example.com', createCheckResolver(dns(...ZONE)));
    expect(isPromise(org)).toBe(false);
    expect(org).toEqual(await findOrganizationalDomain(name || 'example.com', dns(...ZONE)));
  });

  it.each(NAMES)('"%s": a promise when answers wait, with the same result and the same queries in order', async (name) => {
    const expected = new RecordingResolver(dns(...ZONE));
    const discovery = await discoverDmarc(name, expected);
    const waiting = new WaitingResolver(dns(...ZONE));
    const now = discoverDmarcNow(name, waiting);
    // A name no query can carry is refused before any query, so nothing waits.
    expect(isPromise(now)).toBe(expected.calls.length > 0);
    expect(await now).toEqual(discovery);
    expect(waiting.calls).toEqual(expected.calls);
  });

  it('a walk whose answers stop being held midway goes on from the one that waits, in order', async () => {
    const name = 'a.b.c.example.com';
    const mixed = new MixedResolver(dns(...ZONE), new Set(['_dmarc.b.c.example.com']));
    const now = discoverDmarcNow(name, mixed);
    // The first query was answered at once; the walk waits from the second.
    expect(mixed.calls).toEqual(['TXT _dmarc.a.b.c.example.com', 'TXT _dmarc.b.c.example.com']);
    expect(isPromise(now)).toBe(true);
    const expected = new RecordingResolver(dns(...ZONE));
    expect(await now).toEqual(await discoverDmarc(name, expected));
    // A record without psd does not end the walk (RFC 9989 §4.10): it goes on to com.
    expect(mixed.calls).toEqual(['TXT _dmarc.a.b.c.example.com', 'TXT _dmarc.b.c.example.com', 'TXT _dmarc.c.example.com', 'TXT _dmarc.example.com', 'TXT _dmarc.com']);
    expect(mixed.calls).toEqual(expected.calls);
  });

  it('a DNS failure mid-walk stops the walk: temperror, cold and warm alike', async () => {
    const name = 'a.b.example.com';
    const plan: FaultPlan = [{ name: '_dmarc.b.example.com', type: 'TXT', fault: { kind: 'servfail' } }];
    const expected = await discoverDmarc(name, new FaultyResolver(dns(...ZONE), plan));
    expect(expected).toMatchObject({ status: 'temperror', queries: ['_dmarc.a.b.example.com', '_dmarc.b.example.com'], failedQuery: { name: '_dmarc.b.example.com', reason: 'servfail' } });

    // Cold: the faulty resolver answers through a promise.
    const check = createCheckResolver(new FaultyResolver(dns(...ZONE), plan));
    const cold = discoverDmarcNow(name, check);
    expect(isPromise(cold)).toBe(true);
    expect(await cold).toEqual(expected);
    // Warm: the same check now holds every answer, the failure included.
    const warm = discoverDmarcNow(name, check);
    expect(isPromise(warm)).toBe(false);
    expect(warm).toEqual(expected);
    const org = findOrganizationalDomainNow(name, check);
    expect(isPromise(org)).toBe(false);
    expect(org).toEqual(await findOrganizationalDomain(name, new FaultyResolver(dns(...ZONE), plan)));

    const waiting = new WaitingResolver(new FaultyResolver(dns(...ZONE), plan));
    expect(await discoverDmarcNow(name, waiting)).toEqual(expected);
    expect(waiting.calls).toEqual(['TXT _dmarc.a.b.example.com', 'TXT _dmarc.b.example.com']);
  });
});

describe('effectivePolicyNow and nameExistsNow', () => {
  it.each(NAMES.filter((name) => name !== ''))('"%s": a plain value over held answers, equal to effectivePolicy', async (name) => {
    const check = createCheckResolver(dns(...ZONE));
    const discovery = discoverDmarcNow(name, check);
    if (isPromise(discovery)) throw new Error('discovery waited');
    const now = effectivePolicyNow(name, discovery as Awaited<typeof discovery>, check);
    expect(isPromise(now)).toBe(false);
    const zone = dns(...ZONE);
    expect(now).toEqual(await effectivePolicy(name, await discoverDmarc(name, zone), zone));
  });

  it.each(NAMES.filter((name) => name !== ''))('"%s": a promise when answers wait, with the same result and queries', async (name) => {
    const discovery = await discoverDmarc(name, dns(...ZONE));
    const expected = new RecordingResolver(dns(...ZONE));
    const policy = await effectivePolicy(name, discovery, expected);
    const waiting = new WaitingResolver(dns(...ZONE));
    const now = effectivePolicyNow(name, discovery, waiting);
    expect(isPromise(now)).toBe(expected.calls.length > 0);
    expect(await now).toEqual(policy);
    expect(waiting.calls).toEqual(expected.calls);
  });

  it.each<[string, FaultPlan, boolean | null, string[]]>([
    ['servfail on A: AAAA settles it', [{ name: 'host.example.com', type: 'A', fault: { kind: 'servfail' } }], true, ['A', 'AAAA']],
    ['servfail on A and AAAA: MX settles it', [{ name: 'host.example.com', type: 'A', fault: { kind: 'servfail' } }, { name: 'host.example.com', type: 'AAAA', fault: { kind: 'refused' } }], true, ['A', 'AAAA', 'MX']],
    ['a timeout stops at once', [{ name: 'host.example.com', type: 'A', fault: { kind: 'drop' } }], null, ['A']],
    ['every type fails', [{ name: 'host.example.com', fault: { kind: 'servfail' } }], null, ['A', 'AAAA', 'MX']],
  ])('nameExistsNow: %s, cold and warm alike', async (_case, plan, exists, types) => {
    const expected = await nameExists('host.example.com', new FaultyResolver(dns(...ZONE), plan));
    expect(expected.exists).toBe(exists);
    expect(expected.queries.map((query) => query.type)).toEqual(types);

    const check = createCheckResolver(new FaultyResolver(dns(...ZONE), plan));
    const cold = nameExistsNow('host.example.com', check);
    expect(isPromise(cold)).toBe(true);
    expect(await cold).toEqual(expected);
    const warm = nameExistsNow('host.example.com', check);
    expect(isPromise(warm)).toBe(false);
    expect(warm).toEqual(expected);

    // The policy that rests on it: sp assumed, with a finding, when existence cannot be told.
    const discovery = await discoverDmarc('host.example.com', dns(...ZONE));
    const policy = effectivePolicyNow('host.example.com', discovery, check);
    expect(isPromise(policy)).toBe(false);
    expect(policy).toEqual(await effectivePolicy('host.example.com', discovery, new FaultyResolver(dns(...ZONE), plan)));
  });
});

describe('verifyReportDestinationsNow', () => {
  const RECORD = record(
    'v=DMARC1; p=none; rua=mailto:a@example.com,mailto:r@reports.example.net,mailto:w@other.wild.example.org,mailto:n@nowhere.example.net; ruf=mailto:f@failing.example.net',
  );
  const PLAN: FaultPlan = [{ name: 'example.com._report._dmarc.failing.example.net', fault: { kind: 'servfail' } }];

  it('a plain value over held answers, equal to verifyReportDestinations', async () => {
    const now = verifyReportDestinationsNow('example.com', RECORD, createCheckResolver(dns(...ZONE)));
    expect(isPromise(now)).toBe(false);
    expect(now).toEqual(await verifyReportDestinations('example.com', RECORD, dns(...ZONE)));
  });

  it('a promise when answers wait, with the same result and the same queries in order', async () => {
    const expected = new RecordingResolver(dns(...ZONE));
    const check = await verifyReportDestinations('example.com', RECORD, expected);
    const waiting = new WaitingResolver(dns(...ZONE));
    const now = verifyReportDestinationsNow('example.com', RECORD, waiting);
    expect(isPromise(now)).toBe(true);
    expect(await now).toEqual(check);
    expect(waiting.calls).toEqual(expected.calls);
  });

  it('a failed query between others: error for that destination, cold and warm alike', async () => {
    const expected = await verifyReportDestinations('example.com', RECORD, new FaultyResolver(dns(...ZONE), PLAN));
    expect(expected.destinations.map((destination) => destination.status)).toEqual(['same-organization', 'verified', 'unverified', 'unverified', 'error']);
    expect(expected.destinations[2]?.wildcardShadowed).toBe(true);

    const resolver = createCheckResolver(new FaultyResolver(dns(...ZONE), PLAN));
    const cold = verifyReportDestinationsNow('example.com', RECORD, resolver);
    expect(isPromise(cold)).toBe(true);
    expect(await cold).toEqual(expected);
    const warm = verifyReportDestinationsNow('example.com', RECORD, resolver);
    expect(isPromise(warm)).toBe(false);
    expect(warm).toEqual(expected);

    const mixed = new MixedResolver(dns(...ZONE), new Set(['*._report._dmarc.other.wild.example.org']));
    const recorded = new RecordingResolver(dns(...ZONE));
    await verifyReportDestinations('example.com', RECORD, recorded);
    const partly = verifyReportDestinationsNow('example.com', RECORD, mixed);
    expect(isPromise(partly)).toBe(true);
    expect(await partly).toEqual(await verifyReportDestinations('example.com', RECORD, dns(...ZONE)));
    expect(mixed.calls).toEqual(recorded.calls);
  });
});
