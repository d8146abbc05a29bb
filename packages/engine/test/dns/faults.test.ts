/**
 * Every injected fault gives the same answer kind through the network resolver (against the
 * embedded server) as through `FaultyResolver` in memory.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { faultFor, FaultyResolver, type Fault, type FaultPlan } from '../../src/dns/faults.js';
import { NetworkResolver } from '../../src/dns/network-resolver.js';
import { startDnsServer, type RunningDnsServer } from '../../src/zones/server.js';
import type { DnsAnswer, RecordType, Resolver } from '../../src/dns/types.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { ZONES } from './helpers.js';

/** The network resolver's wait per attempt in these tests. */
const TIMEOUT_MS = 200;
/** Attempts per query: a dropped query costs TIMEOUT_MS × ATTEMPTS. */
const ATTEMPTS = 2;
/** Scheduling slack on a loaded CI machine. */
const SLACK_MS = 300;

const TXT_ANSWER = { kind: 'records', records: [['v=spf1 ', 'include:_spf.example.org -all'], ['google-site-verification=abc']] };

/** fault, what the client must see, why. Each row is applied to example.com TXT. */
const FAULTS: [string, Fault, object][] = [
  ['servfail', { kind: 'servfail' }, { kind: 'error', reason: 'servfail' }],
  ['refused', { kind: 'refused' }, { kind: 'error', reason: 'refused' }],
  ['drop', { kind: 'drop' }, { kind: 'error', reason: 'timeout' }],
  ['delay shorter than the timeout', { kind: 'delay', ms: 50 }, TXT_ANSWER],
  ['truncated over UDP only: the TCP retry answers', { kind: 'truncate' }, TXT_ANSWER],
  ['truncated over TCP too: an error, never an empty answer', { kind: 'truncate', tcp: true }, { kind: 'error', reason: 'malformed' }],
  ['malformed bytes', { kind: 'malformed' }, { kind: 'error', reason: 'malformed' }],
];

function rule(fault: Fault): FaultPlan {
  return [{ name: 'example.com', type: 'TXT', fault }];
}

function essentials(answer: DnsAnswer): object {
  if (answer.kind === 'records') return { kind: 'records', records: answer.records };
  if (answer.kind === 'error') return { kind: 'error', reason: answer.reason };
  return { kind: answer.kind };
}

describe('faultFor', () => {
  const plan: FaultPlan = [
    { name: 'Example.COM.', type: 'TXT', fault: { kind: 'servfail' } },
    { name: 'example.com', fault: { kind: 'refused' } },
  ];
  it.each([
    ['example.com', 'TXT', 'servfail', 'the first matching rule wins; names compare canonically'],
    ['EXAMPLE.com', 'A', 'refused', 'a rule without a type matches every type'],
    ['www.example.com', 'TXT', undefined, 'names match exactly, not by suffix'],
  ] as [string, RecordType, Fault['kind'] | undefined, string][])('%s %s → %s (%s)', (name, type, kind) => {
    expect(faultFor(plan, name, type)?.kind).toBe(kind);
  });
});

describe('faults through FaultyResolver (in memory)', () => {
  const zones = new ZoneResolver(ZONES);
  it.each(FAULTS)('%s', async (_label, fault, expected) => {
    const resolver = new FaultyResolver(zones, rule(fault));
    expect(essentials(await resolver.resolve('example.com', 'TXT'))).toEqual(expected);
  });

  it('reports a truncation that persists over TCP as malformed, never as an empty answer', async () => {
    const resolver = new FaultyResolver(zones, rule({ kind: 'truncate', tcp: true }));
    expect(await resolver.resolve('example.com', 'TXT')).toMatchObject({ kind: 'error', reason: 'malformed' });
  });

  it('leaves other names and types alone', async () => {
    const resolver = new FaultyResolver(zones, rule({ kind: 'servfail' }));
    expect(await resolver.resolve('mx1.example.com', 'A')).toMatchObject({ kind: 'records' });
    expect(await resolver.resolve('example.com', 'MX')).toMatchObject({ kind: 'records' });
  });

  it('waits the delay before answering, and dropAfterMs before timing out', async () => {
    const delayed = new FaultyResolver(zones, rule({ kind: 'delay', ms: 80 }));
    let started = Date.now();
    await delayed.resolve('example.com', 'TXT');
    expect(Date.now() - started).toBeGreaterThanOrEqual(75);
    const dropped = new FaultyResolver(zones, rule({ kind: 'drop' }), { dropAfterMs: 80 });
    started = Date.now();
    expect(await dropped.resolve('example.com', 'TXT')).toMatchObject({ kind: 'error', reason: 'timeout' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(75);
  });

  it('applies a new plan after setFaults', async () => {
    const resolver = new FaultyResolver(zones, []);
    expect((await resolver.resolve('example.com', 'TXT')).kind).toBe('records');
    resolver.setFaults(rule({ kind: 'refused' }));
    expect(await resolver.resolve('example.com', 'TXT')).toMatchObject({ kind: 'error', reason: 'refused' });
  });
});

describe('faults through NetworkResolver (embedded server)', () => {
  let server: RunningDnsServer;
  let resolver: Resolver;
  beforeAll(async () => {
    server = await startDnsServer({ resolver: new ZoneResolver(ZONES) });
    resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.address.port}`], timeoutMs: TIMEOUT_MS, attempts: ATTEMPTS });
  });
  afterAll(async () => {
    await server.close();
  });

  it.each(FAULTS)('%s', async (_label, fault, expected) => {
    server.setFaults(rule(fault));
    const started = Date.now();
    const answer = await resolver.resolve('example.com', 'TXT');
    expect(essentials(answer)).toEqual(expected);
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS * ATTEMPTS + SLACK_MS);
  });

  it('times a dropped query out after timeout × attempts, not before', async () => {
    server.setFaults(rule({ kind: 'drop' }));
    const before = server.stats().udp;
    const started = Date.now();
    expect(await resolver.resolve('example.com', 'TXT')).toMatchObject({ kind: 'error', reason: 'timeout' });
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS * ATTEMPTS - 5);
    expect(elapsed).toBeLessThan(TIMEOUT_MS * ATTEMPTS + SLACK_MS);
    expect(server.stats().udp - before).toBe(ATTEMPTS);
  });

  it('times out when every attempt is answered later than the timeout', async () => {
    server.setFaults(rule({ kind: 'delay', ms: TIMEOUT_MS + 100 }));
    expect(await resolver.resolve('example.com', 'TXT')).toMatchObject({ kind: 'error', reason: 'timeout' });
  });

  it('retries a truncated UDP answer over TCP', async () => {
    server.setFaults(rule({ kind: 'truncate' }));
    const before = server.stats();
    expect((await resolver.resolve('example.com', 'TXT')).kind).toBe('records');
    const after = server.stats();
    expect(after.udp).toBeGreaterThan(before.udp);
    expect(after.tcp).toBeGreaterThan(before.tcp);
  });

  it('reports a truncation that persists over TCP as malformed after one UDP and one TCP query', async () => {
    server.setFaults(rule({ kind: 'truncate', tcp: true }));
    const before = server.stats();
    expect(await resolver.resolve('example.com', 'TXT')).toMatchObject({ kind: 'error', reason: 'malformed' });
    const after = server.stats();
    expect([after.udp - before.udp, after.tcp - before.tcp]).toEqual([1, 1]);
  });

  it('applies a fault to one type only when the rule names a type', async () => {
    server.setFaults(rule({ kind: 'servfail' }));
    expect((await resolver.resolve('example.com', 'TXT')).kind).toBe('error');
    expect((await resolver.resolve('example.com', 'MX')).kind).toBe('records');
  });
});
