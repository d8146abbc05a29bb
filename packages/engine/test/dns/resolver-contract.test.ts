/**
 * One set of expectations, run against the zone resolver in memory and against the embedded server
 * through the network resolver: the engine must see the same answers over the network as in memory.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetworkResolver } from '../../src/dns/network-resolver.js';
import { startDnsServer, type RunningDnsServer } from '../../src/zones/server.js';
import type { DnsAnswer, RecordType, Resolver } from '../../src/dns/types.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { LONG_TXT, UTF8_TXT, ZONES } from './helpers.js';

type Expected = { kind: 'records'; records: unknown[] } | { kind: 'nodata' } | { kind: 'nxdomain' };

/** name, type, expected answer (kind and records; TTLs and aliases are checked elsewhere), why. */
const EXPECTATIONS: [string, RecordType, Expected, string][] = [
  ['example.com', 'TXT', { kind: 'records', records: [['v=spf1 ', 'include:_spf.example.org -all'], ['google-site-verification=abc']] }, 'two TXT records, the strings of each kept apart'],
  ['long.example.com', 'TXT', { kind: 'records', records: [LONG_TXT] }, 'a 600-octet TXT comes back as 3 strings of at most 255'],
  ['utf8.example.com', 'TXT', { kind: 'records', records: [[UTF8_TXT]] }, 'UTF-8 text survives the wire'],
  ['example.com', 'MX', { kind: 'records', records: [{ preference: 10, exchange: 'mx1.example.com' }, { preference: 20, exchange: 'mx2.example.org' }] }, 'MX preference and exchange'],
  ['nullmx.example.com', 'MX', { kind: 'records', records: [{ preference: 0, exchange: '' }] }, 'null MX (RFC 7505): the exchange is the root'],
  ['mx1.example.com', 'A', { kind: 'records', records: ['192.0.2.1'] }, 'A record'],
  ['mx1.example.com', 'AAAA', { kind: 'records', records: ['2001:db8::1'] }, 'AAAA record'],
  ['example.com', 'NS', { kind: 'records', records: ['ns1.example.com'] }, 'NS record'],
  ['example.com', 'SOA', { kind: 'records', records: [ZONES[0]!.records[0]!.data] }, 'SOA record, every field'],
  ['1.2.0.192.in-addr.arpa', 'PTR', { kind: 'records', records: ['mx1.example.com'] }, 'PTR record'],
  ['MX1.Example.COM.', 'A', { kind: 'records', records: ['192.0.2.1'] }, 'names are case-insensitive, the trailing dot optional'],
  ['example.com', 'A', { kind: 'nodata' }, 'the name exists without that type: NODATA'],
  ['sub.example.com', 'A', { kind: 'nodata' }, 'an empty non-terminal exists: NODATA, not NXDOMAIN'],
  ['missing.example.com', 'TXT', { kind: 'nxdomain' }, 'no such name in the zone: NXDOMAIN'],
  ['x.wild.example.com', 'TXT', { kind: 'records', records: [['wildcard']] }, 'wildcard synthesis (RFC 4592)'],
  ['a.b.wild.example.com', 'TXT', { kind: 'records', records: [['wildcard']] }, 'a wildcard covers deeper names too'],
  ['x.wild.example.com', 'MX', { kind: 'nodata' }, 'a wildcard without that type: NODATA'],
  ['alias.example.com', 'A', { kind: 'records', records: ['198.51.100.7'] }, 'CNAME into another zone is followed'],
  ['alias.example.com', 'TXT', { kind: 'records', records: [['at the end of the chain']] }, 'CNAME followed for TXT too'],
  ['alias.example.com', 'CNAME', { kind: 'records', records: ['target.example.org'] }, 'asking for the CNAME itself does not follow it'],
  ['alias.example.com', 'MX', { kind: 'nodata' }, 'the target lacks the type: NODATA'],
  ['dangling.example.com', 'A', { kind: 'nxdomain' }, 'CNAME to a missing name: NXDOMAIN (RFC 6604 §2)'],
  ['elsewhere.test', 'A', { kind: 'nxdomain' }, 'outside every loaded zone: NXDOMAIN'],
  ['example.net', 'TXT', { kind: 'nxdomain' }, 'a sibling TLD that is not loaded: NXDOMAIN'],
];

const INVALID_NAMES: [string, string][] = [
  ['a..example.com', 'empty label'],
  [`${'a'.repeat(64)}.example.com`, 'a 64-octet label'],
  [`${'abcdefghi.'.repeat(26)}com`, 'a name over 253 octets'],
];

function essentials(answer: DnsAnswer): unknown {
  return answer.kind === 'records' ? { kind: answer.kind, records: answer.records } : answer.kind === 'error' ? answer : { kind: answer.kind };
}

/** The same assertions for any resolver; `queriesSent` tells whether anything reached the server. */
function expectations(setup: () => { resolver: Resolver; queriesSent: () => number }): void {
  it.each(EXPECTATIONS)('%s %s', async (name, type, expected) => {
    const { resolver } = setup();
    expect(essentials(await resolver.resolve(name, type))).toEqual(expected);
  });

  it.each(INVALID_NAMES)('refuses %s (%s) before any query', async (name) => {
    const { resolver, queriesSent } = setup();
    const before = queriesSent();
    const answer = await resolver.resolve(name, 'TXT');
    expect(answer).toMatchObject({ kind: 'error', reason: 'invalid-name' });
    expect(queriesSent()).toBe(before);
  });
}

describe('resolver expectations: ZoneResolver in memory', () => {
  const resolver = new ZoneResolver(ZONES);
  expectations(() => ({ resolver, queriesSent: () => 0 }));
});

describe('resolver expectations: NetworkResolver over the embedded DNS server', () => {
  let server: RunningDnsServer;
  let resolver: NetworkResolver;
  beforeAll(async () => {
    // The zones stand for the whole DNS here, as they do in memory: names outside them are NXDOMAIN.
    server = await startDnsServer({ resolver: new ZoneResolver(ZONES), outsideZones: 'nxdomain' });
    resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.address.port}`], timeoutMs: 2000 });
  });
  afterAll(async () => {
    await server.close();
  });
  expectations(() => ({
    resolver,
    queriesSent: () => server.stats().udp + server.stats().tcp,
  }));

  it.each([
    ['mx1.example.com', 'A', 'records', 120, 'A'],
    ['mx1.example.com', 'AAAA', 'records', 120, 'AAAA'],
    ['example.com', 'TXT', 'records', 300, 'TXT (c-ares gave none)'],
    ['example.com', 'MX', 'records', 300, 'MX (c-ares gave none)'],
    ['example.com', 'NS', 'records', 3600, 'NS'],
    ['example.com', 'SOA', 'records', 3600, 'SOA'],
    ['alias.example.com', 'CNAME', 'records', 300, 'CNAME'],
    ['1.2.0.192.in-addr.arpa', 'PTR', 'records', 300, 'PTR'],
    ['alias.example.com', 'TXT', 'records', 60, 'through a CNAME: the smallest TTL on the chain'],
    ['missing.example.com', 'TXT', 'nxdomain', 60, 'NXDOMAIN: min(SOA TTL 3600, MINIMUM 60) (RFC 2308 §5)'],
    ['example.com', 'A', 'nodata', 60, 'NODATA: the same'],
    ['nosuch.example.org', 'A', 'nxdomain', 120, 'another zone: its own MINIMUM'],
    ['9.2.0.192.in-addr.arpa', 'PTR', 'nxdomain', 30, 'MINIMUM 30'],
    ['alias.example.com', 'MX', 'nodata', 120, 'NODATA at the end of a chain: min(CNAME 300, example.org negative TTL 120)'],
  ] as [string, RecordType, string, number, string][])('%s %s → %s with TTL %i (%s)', async (name, type, kind, ttl) => {
    expect(await resolver.resolve(name, type)).toMatchObject({ kind, ttl });
  });
});
