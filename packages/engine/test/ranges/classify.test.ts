/**
 * Classifying an SPF pass set against the provider data: the severity thresholds, counts per family,
 * the authorising term and record, the maybe set, and that the data is read only when something passes.
 */
import { describe, expect, it } from 'vitest';
import { checkDomain } from '../../src/check.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { classifySharedInfrastructure, CRITICAL_RENTABLE_IPV4 } from '../../src/ranges/classify.js';
import { toCategory } from '../../src/ranges/codec.js';
import { shippedRanges } from '../../src/ranges/snapshot.js';
import type { RangeData } from '../../src/ranges/types.js';
import { analyzeSpf } from '../../src/spf/index.js';
import { parseZone } from '../../src/zones/parse.js';

/** Small made-up data: an EC2 block, a runner pool, an edge, each a documentation-free /16. */
const DATA: RangeData = {
  generatedAt: '2025-07-25T00:00:00.000Z',
  date: '2025-07-21',
  origin: 'test data',
  sources: [],
  categories: [
    toCategory('aws', 'EC2', 'rent', [[ip('3.224.0.0'), ip('3.239.255.255')]], [[0x26001f18n << 96n, (0x26001f18n << 96n) + (1n << 96n) - 1n]]),
    toCategory('github', 'actions', 'runner', [[ip('4.148.0.0'), ip('4.148.255.255')]], []),
    toCategory('cloudflare', 'edge', 'edge', [[ip('173.245.48.0'), ip('173.245.63.255')]], []),
  ],
};

function ip(text: string): bigint {
  return BigInt(text.split('.').reduce((n, part) => n * 256 + Number(part), 0));
}

/** The report for the SPF record `spf` at test.example (and any extra records). */
async function classify(spf: string, extra = '', data: RangeData = DATA, now = new Date('2025-08-01T00:00:00Z')) {
  // RFC 1035 §3.3: a character-string holds at most 255 octets; longer records are split (SPF joins them).
  const strings = spf.match(/.{1,200}/g)!.map((part) => `"${part}"`).join(' ');
  const zone = `$ORIGIN test.example.\n$TTL 300\n@ IN SOA ns hostmaster 1 7200 900 1209600 300\n@ IN NS ns\n@ IN TXT ${strings}\n${extra}\n`;
  const resolver = new ZoneResolver([parseZone(zone, { file: 'test.example.zone' })]);
  const analysis = await analyzeSpf('test.example', resolver);
  return classifySharedInfrastructure([{ checkedDomain: 'test.example', sources: analysis.passSources! }], () => data, now);
}

describe('severity by how reachable the space is', () => {
  it.each([
    ['a /16 of EC2: critical', 'v=spf1 ip4:3.224.0.0/16 -all', 'critical', 65536, 0],
    [`${CRITICAL_RENTABLE_IPV4} EC2 addresses (a /20): critical`, 'v=spf1 ip4:3.224.0.0/20 -all', 'critical', 4096, 0],
    ['4,095 EC2 addresses: a warning (likely the owner’s own)', 'v=spf1 ip4:3.224.0.0/21 ip4:3.224.8.0/22 ip4:3.224.12.0/23 ip4:3.224.14.0/24 ip4:3.224.15.0/25 ip4:3.224.15.128/26 ip4:3.224.15.192/27 ip4:3.224.15.224/28 ip4:3.224.15.240/29 ip4:3.224.15.248/30 ip4:3.224.15.252/31 ip4:3.224.15.254 -all', 'warning', 4095, 0],
    ['one EC2 address: a warning', 'v=spf1 ip4:3.224.10.20 -all', 'warning', 1, 0],
    ['one address of a CI runner pool: critical', 'v=spf1 ip4:4.148.1.1 -all', 'critical', 1, 0],
    ['one address of a CDN edge: critical', 'v=spf1 ip4:173.245.48.1 -all', 'critical', 1, 0],
    ['a /48 of EC2 IPv6: critical', 'v=spf1 ip6:2600:1f18:1::/48 -all', 'critical', 0, 2 ** 80],
    ['a /64 of EC2 IPv6: a warning', 'v=spf1 ip6:2600:1f18:1:2::/64 -all', 'warning', 0, 2 ** 64],
    ['nothing in shared space', 'v=spf1 ip4:192.0.2.0/24 ip6:2001:db8::/32 -all', 'none', 0, 0],
  ])('%s', async (_what, spf, severity, ipv4, ipv6) => {
    const report = (await classify(spf))!;
    expect(report.severity).toBe(severity);
    expect(report.exposures.reduce((n, e) => n + e.ipv4Addresses, 0)).toBe(ipv4);
    expect(report.exposures.reduce((n, e) => n + e.ipv6Addresses, 0)).toBe(ipv6);
  });

  it('adds up the terms of one provider service: sixteen /24s of EC2 are as reachable as a /20, fifteen are not', async () => {
    const terms = (n: number) => Array.from({ length: n }, (_, i) => `ip4:3.230.${2 * i}.0/24`).join(' ');
    const sixteen = (await classify(`v=spf1 ${terms(16)} -all`))!;
    expect(sixteen.exposures).toHaveLength(16);
    expect(sixteen.exposures.every((e) => e.severity === 'critical')).toBe(true);
    const fifteen = (await classify(`v=spf1 ${terms(15)} -all`))!;
    expect(fifteen.exposures.every((e) => e.severity === 'warning')).toBe(true);
  });
});

describe('what each exposure names', () => {
  it('the provider, the attack, the term, the record that holds it, the path through includes, the port-25 policy', async () => {
    const report = (await classify('v=spf1 include:_spf.test.example -all', '_spf IN TXT "v=spf1 ip4:192.0.2.1 ip4:4.148.0.0/24 -all"'))!;
    expect(report.exposures).toEqual([
      {
        provider: 'github',
        providerName: 'GitHub',
        service: 'actions',
        label: 'GitHub Actions runners',
        kind: 'runner',
        checkedDomain: 'test.example',
        recordDomain: '_spf.test.example',
        term: 'ip4:4.148.0.0/24',
        path: 'include:_spf.test.example → ip4:4.148.0.0/24',
        ipv4Addresses: 256,
        ipv6Addresses: 0,
        severity: 'critical',
        port25: { policy: 'not-published', source: expect.stringMatching(/^https:\/\/docs\.github\.com\//) },
      },
    ]);
  });

  it('counts only what passes: a range a -term takes away first is not counted (RFC 7208 §4.6.2)', async () => {
    const report = (await classify('v=spf1 -ip4:3.224.0.0/17 ip4:3.224.0.0/16 -all'))!;
    expect(report.exposures[0]!.ipv4Addresses).toBe(32768);
  });

  it('reports shared space in the maybe set (passes depending on the message) without making it critical', async () => {
    // Whether the include is reached depends on the client address's own DNS name: maybe.
    const maybe = (await classify('v=spf1 ip4:192.0.2.1 -exists:%{i}.deny.test.example include:_m.test.example -all', '_m IN TXT "v=spf1 ip4:3.224.0.0/16 -all"'))!;
    expect(maybe.severity).toBe('none');
    expect(maybe.maybe).toEqual([expect.objectContaining({ provider: 'aws', service: 'EC2', ipv4Addresses: 65536 })]);
  });

  it('names the data date and whether it is stale (older than 90 days)', async () => {
    expect((await classify('v=spf1 ip4:3.224.10.20 -all'))!.data).toEqual({ date: '2025-07-21', ageDays: 11, stale: false, origin: 'test data' });
    expect((await classify('v=spf1 ip4:3.224.10.20 -all', '', DATA, new Date('2025-10-20T12:00:00Z')))!.data).toMatchObject({ ageDays: 91, stale: true });
  });
});

describe('the data is read only when some address passes', () => {
  it('never calls for the data when the pass set is empty (v=spf1 -all)', async () => {
    const zone = '$ORIGIN test.example.\n$TTL 300\n@ IN SOA ns hostmaster 1 7200 900 1209600 300\n@ IN NS ns\n@ IN TXT "v=spf1 -all"\n';
    const analysis = await analyzeSpf('test.example', new ZoneResolver([parseZone(zone, { file: 'z' })]));
    let asked = 0;
    const report = classifySharedInfrastructure([{ checkedDomain: 'test.example', sources: analysis.passSources! }], () => {
      asked++;
      return DATA;
    }, new Date());
    expect(report).toBeNull();
    expect(asked).toBe(0);
  });

  it('checkDomain takes the data as an option, and `ranges: false` turns the classification off', async () => {
    const zone = `$ORIGIN test.example.\n$TTL 300\n@ IN SOA ns hostmaster 1 7200 900 1209600 300\n@ IN NS ns\n@ IN TXT "v=spf1 ip4:4.148.0.0/16 -all"\n_dmarc IN TXT "v=DMARC1; p=reject"\n`;
    const resolver = new ZoneResolver([parseZone(zone, { file: 'z' })]);
    const withData = await checkDomain('test.example', { resolver, ranges: DATA });
    expect(withData).toMatchObject({ verdict: 'spoofable', inboxOutcome: 'delivered', details: { rule: 'spf-shared-infrastructure' } });
    expect(withData.details.spf.sharedInfrastructure!.data.origin).toBe('test data');
    const off = await checkDomain('test.example', { resolver, ranges: false });
    expect(off).toMatchObject({ verdict: 'protected', details: { rule: 'dmarc-reject' } });
    expect(off.details.spf.sharedInfrastructure).toBeNull();
  });

  it('the shipped snapshot loads and is the same object each time', () => {
    expect(shippedRanges()).toBe(shippedRanges());
    expect(shippedRanges().categories.length).toBeGreaterThan(5);
  });
});

describe('a re-check of a kept SPF analysis reuses its report, while nothing it depends on has changed', () => {
  const zoneWith = (spf: string) =>
    new ZoneResolver([parseZone(`$ORIGIN kept.example.\n$TTL 300\n@ IN SOA ns hostmaster 1 7200 900 1209600 300\n@ IN NS ns\n@ IN TXT "${spf}"\n_dmarc IN TXT "v=DMARC1; p=reject"\n`, { file: 'z' })]);
  const at = (iso: string) => () => new Date(iso);
  const json = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

  it('gives the same report each time, frozen, and a new one when the data, its age or the record changes', async () => {
    const resolver = zoneWith('v=spf1 ip4:4.148.0.0/16 -all');
    const check = (options: { now?: () => Date; ranges?: RangeData; resolver?: ZoneResolver } = {}) =>
      checkDomain('kept.example', { resolver: options.resolver ?? resolver, ranges: options.ranges ?? DATA, now: options.now ?? at('2025-08-01T00:00:00Z') });
    const first = await check();
    await check();
    const third = await check();
    expect(json(third.details.spf.sharedInfrastructure)).toEqual(json(first.details.spf.sharedInfrastructure));
    expect(third).toMatchObject({ verdict: 'spoofable', details: { rule: 'spf-shared-infrastructure' } });
    expect(Object.isFrozen(third.details.spf.sharedInfrastructure)).toBe(true);
    expect(third.details.spf.sharedInfrastructure!.data.ageDays).toBe(11);

    // Thirty days on: the same exposures, the data's age moves.
    const later = await check({ now: at('2025-08-31T00:00:00Z') });
    expect(later.details.spf.sharedInfrastructure!.data.ageDays).toBe(41);
    // Other data, in which the block is nobody's: nothing exposed, DMARC protects.
    const noRunners: RangeData = { ...DATA, origin: 'other data', categories: DATA.categories.filter((c) => c.kind !== 'runner') };
    const other = await check({ ranges: noRunners });
    expect(other).toMatchObject({ verdict: 'protected' });
    expect(other.details.spf.sharedInfrastructure!.data.origin).toBe('other data');
    // The record changed: an EC2 /20 instead.
    const changed = await check({ resolver: zoneWith('v=spf1 ip4:3.224.0.0/20 -all') });
    expect(changed.details.spf.sharedInfrastructure!.exposures.map((e) => [e.provider, e.ipv4Addresses])).toEqual([['aws', 4096]]);
    // And back: the first answer again.
    expect(json((await check()).details.spf.sharedInfrastructure)).toEqual(json(first.details.spf.sharedInfrastructure));
  });
});
