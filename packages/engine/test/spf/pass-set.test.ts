import { describe, expect, it } from 'vitest';
import { IPV4_PROBES, IPV6_PROBES, computePassSet, isOpen, probeAddresses } from '../../src/spf/pass-set.js';
import type { SpfPassSet } from '../../src/spf/pass-set.js';
import { NO_ADDRESSES, RangeSet } from '../../src/spf/ranges.js';
import { checkHost } from '../../src/spf/index.js';
import type { ResourceRecord } from '../../src/zones/types.js';
import { TestResolver, a, aaaa, mx, ptr, txt } from './zones.js';
import type { Faults } from './zones.js';

const DOMAIN = 'example.com';

async function passSetOf(record: string, others: ResourceRecord[] = [], faults: Faults = {}): Promise<SpfPassSet> {
  return computePassSet(record, DOMAIN, new TestResolver([txt(DOMAIN, record), ...others], faults));
}

describe('RangeSet', () => {
  const v4 = (start: number, end: number) => RangeSet.cidr(4, BigInt(start), 32).union(start === end ? RangeSet.EMPTY : RangeSet.cidr(4, BigInt(end), 32));
  it('merges adjacent and overlapping blocks', () => {
    const set = RangeSet.cidr(4, 0n, 25).union(RangeSet.cidr(4, 128n, 25));
    expect(set.ranges).toEqual([[0n, 255n]]);
    expect(set.size()).toBe(256n);
    expect(set.widestPrefix(4)).toBe(24);
  });
  it('subtracts a hole from the middle and intersects', () => {
    const set = RangeSet.cidr(4, 0n, 24).subtract(RangeSet.cidr(4, 64n, 26));
    expect(set.ranges).toEqual([[0n, 63n], [128n, 255n]]);
    expect(set.intersect(RangeSet.cidr(4, 96n, 27).union(RangeSet.cidr(4, 128n, 31))).ranges).toEqual([[128n, 129n]]);
    expect(set.has(64n)).toBe(false);
    expect(set.has(200n)).toBe(true);
    expect(v4(5, 9).size()).toBe(2n);
  });
  it('finds the first address outside the set', () => {
    const set = RangeSet.cidr(4, 0n, 24);
    expect(set.firstOutside(10n, 1000n)).toBe(256n);
    expect(set.firstOutside(300n, 1000n)).toBe(300n);
    expect(set.firstOutside(10n, 100n)).toBeNull();
  });
  it('calls 1/8 of IPv4 or an IPv6 /8 open, and a little less not', () => {
    expect(isOpen({ v4: RangeSet.cidr(4, 0n, 3), v6: RangeSet.EMPTY })).toBe(true);
    expect(isOpen({ v4: RangeSet.cidr(4, 0n, 4), v6: RangeSet.EMPTY })).toBe(false);
    expect(isOpen({ v4: RangeSet.EMPTY, v6: RangeSet.cidr(6, 0n, 8) })).toBe(true);
    expect(isOpen({ v4: RangeSet.EMPTY, v6: RangeSet.cidr(6, 0n, 9) })).toBe(false);
  });
});

describe('computePassSet: what passes, in evaluation order', () => {
  const rows: { name: string; record: string; others?: ResourceRecord[]; open: boolean; term?: string | null; v4Share?: number; wide?: boolean }[] = [
    { name: 'ranges and -all: closed', record: 'v=spf1 ip4:198.51.100.0/24 ip6:2001:db8::/32 -all', open: false, v4Share: 256 / 2 ** 32 },
    { name: '+all', record: 'v=spf1 +all', open: true, term: '+all', v4Share: 1 },
    { name: 'a bare all', record: 'v=spf1 all', open: true, term: 'all' },
    { name: 'a few ranges taken out, then +all', record: 'v=spf1 -ip4:192.0.2.0/24 -ip4:203.0.113.0/24 -ip6:2001:db8::/32 +all', open: true, term: '+all' },
    { name: '~all after ranges: only the ranges pass', record: 'v=spf1 ip4:10.0.0.0/8 ~all', open: false, wide: false, v4Share: 2 ** 24 / 2 ** 32 },
    { name: 'more than a /8 is wide, not open', record: 'v=spf1 ip4:10.0.0.0/7 -all', open: false, wide: true },
    { name: 'huge ranges: 0.0.0.0/1 + 128.0.0.0/2', record: 'v=spf1 ip4:0.0.0.0/1 ip4:128.0.0.0/2 -all', open: true, term: 'ip4:0.0.0.0/1', v4Share: 0.75 },
    { name: 'the two halves of IPv4', record: 'v=spf1 ip4:0.0.0.0/1 ip4:128.0.0.0/1 -all', open: true },
    { name: 'an IPv6 /8', record: 'v=spf1 ip6:2000::/8 -all', open: true, term: 'ip6:2000::/8' },
    { name: 'an IPv6 /9 is not', record: 'v=spf1 ip6:2000::/9 -all', open: false },
    { name: '-all first: nothing after it counts', record: 'v=spf1 -all +all', open: false, v4Share: 0 },
    { name: 'a /0 taken out first wins over a later /0', record: 'v=spf1 -ip4:0.0.0.0/0 ip4:0.0.0.0/0 -all', open: false, v4Share: 0 },
    { name: 'an include whose target is open', record: 'v=spf1 include:open.example.net -all', others: [txt('open.example.net', 'v=spf1 +all')], open: true, term: 'include:open.example.net → +all' },
    { name: 'an include whose target fails everyone does not match', record: 'v=spf1 include:closed.example.net -all', others: [txt('closed.example.net', 'v=spf1 -all')], open: false, v4Share: 0 },
    { name: '-include of an open record takes everything away', record: 'v=spf1 -include:open.example.net +all', others: [txt('open.example.net', 'v=spf1 +all')], open: false, v4Share: 0 },
    { name: 'redirect to an open record', record: 'v=spf1 ip4:198.51.100.1 redirect=open.example.net', others: [txt('open.example.net', 'v=spf1 +all')], open: true, term: 'redirect=open.example.net → +all' },
    { name: 'redirect is ignored when the record has all', record: 'v=spf1 -all redirect=open.example.net', others: [txt('open.example.net', 'v=spf1 +all')], open: false },
    { name: 'a:/0 opens IPv4 through the host', record: 'v=spf1 a:mail.example.com/0 -all', others: [a('mail.example.com', '198.51.100.5')], open: true, term: 'a:mail.example.com/0' },
    { name: 'mx hosts with their CIDR', record: 'v=spf1 mx/24 -all', others: [mx(DOMAIN, 10, 'mx.example.com'), a('mx.example.com', '198.51.100.5'), aaaa('mx.example.com', '2001:db8::5')], open: false, v4Share: 256 / 2 ** 32 },
    { name: 'ten lookups, then +all: open', record: `v=spf1 ${'a:h.example.com '.repeat(10)}+all`, others: [a('h.example.com', '198.51.100.1')], open: true, term: '+all' },
    { name: 'an 11th lookup is a permerror (RFC 7208 §4.6.4), so the exists never matches', record: `v=spf1 ${'a:h.example.com '.repeat(10)}exists:always.example.com -all`, others: [a('h.example.com', '198.51.100.1'), a('always.example.com', '127.0.0.2')], open: false, v4Share: 1 / 2 ** 32 },
    { name: 'lookups inside includes count too', record: `v=spf1 include:ten.example.net exists:always.example.com -all`, others: [txt('ten.example.net', `v=spf1 ${'a:h.example.com '.repeat(9)}-all`), a('h.example.com', '198.51.100.1'), a('always.example.com', '127.0.0.2')], open: false },
    { name: 'a third void lookup is a permerror (RFC 7208 §4.6.4): +all after it is never reached', record: 'v=spf1 a:gone1.example.com mx:gone2.example.com exists:gone3.example.com +all', open: false, v4Share: 0 },
    { name: 'two void lookups are allowed', record: 'v=spf1 a:gone1.example.com exists:gone2.example.com +all', open: true, term: '+all' },
    { name: 'void lookups count per family: an IPv6-only host is void for IPv4 clients only', record: 'v=spf1 a:v6.example.com a:v6.example.com a:v6.example.com +all', others: [aaaa('v6.example.com', '2001:db8::1')], open: true, v4Share: 0 },
    { name: 'a literal exists that resolves matches everyone', record: 'v=spf1 exists:always.example.com -all', others: [a('always.example.com', '127.0.0.2')], open: true, term: 'exists:always.example.com' },
  ];
  for (const row of rows) {
    it(row.name, async () => {
      const set = await passSetOf(row.record, row.others);
      expect(set.open !== null).toBe(row.open);
      if (row.term !== undefined) expect(set.open?.term ?? null).toBe(row.term);
      if (row.v4Share !== undefined) expect(set.pass.ipv4Share).toBeCloseTo(row.v4Share, 12);
      if (row.wide !== undefined) expect(set.wide).toBe(row.wide);
    });
  }
});

describe('computePassSet: terms only known at delivery are probed outside every named range', () => {
  it('exists:%{i} under a wildcard lets every probe pass', async () => {
    const set = await passSetOf('v=spf1 exists:%{i}._spf.example.com -all', [a('*._spf.example.com', '127.0.0.2')]);
    expect(set.runtimeTerms).toEqual(['exists:%{i}._spf.example.com']);
    expect(set.open).toEqual({ term: 'exists:%{i}._spf.example.com', evidence: { kind: 'probe', ip: set.probes[0]!.ip } });
    expect(set.maybe.ipv4Share).toBe(1);
  });
  it('exists:%{i} without a wildcard passes no probe', async () => {
    const set = await passSetOf('v=spf1 exists:%{i}._spf.example.com -all', [a('198.51.100.7._spf.example.com', '127.0.0.2')]);
    expect(set.open).toBeNull();
    expect(set.probes).toHaveLength(IPV4_PROBES + IPV6_PROBES);
    expect(set.probes.every((probe) => probe.result === 'fail')).toBe(true);
  });
  it('a blocklist before +all: probes that the blocklist does not list pass', async () => {
    const set = await passSetOf('v=spf1 -exists:%{ir}.bl.example.com +all');
    expect(set.open?.evidence.kind).toBe('probe');
  });
  it('a blocklist that lists everyone before +all: closed', async () => {
    const set = await passSetOf('v=spf1 -exists:%{ir}.bl.example.com +all', [a('*.bl.example.com', '127.0.0.2')]);
    expect(set.open).toBeNull();
    expect(set.pass.ipv4Share).toBe(0);
  });
  it('ptr only: no probe has reverse DNS into the domain, so closed', async () => {
    const set = await passSetOf('v=spf1 ptr -all', [ptr('7.100.51.198.in-addr.arpa', 'mail.example.com'), a('mail.example.com', '198.51.100.7')]);
    expect(set.runtimeTerms).toEqual(['ptr']);
    expect(set.open).toBeNull();
  });
  it('probes avoid every range the tree names, and are spread over both families', () => {
    const named = { v4: RangeSet.cidr(4, 0n, 2), v6: RangeSet.EMPTY };
    const probes = probeAddresses(named);
    expect(probes.filter((ip) => ip.includes('.'))).toHaveLength(IPV4_PROBES - 2); // the first two /3s are all named
    expect(probes.filter((ip) => ip.includes(':'))).toHaveLength(IPV6_PROBES);
    expect(probeAddresses(NO_ADDRESSES)).toHaveLength(IPV4_PROBES + IPV6_PROBES);
  });
  it('agrees with check_host() at its own probe addresses', async () => {
    const record = 'v=spf1 -ip4:64.0.0.0/2 include:inc.example.net ~all';
    const others = [txt('inc.example.net', 'v=spf1 ip4:0.0.0.0/1 ip6:2000::/4 -all')];
    const resolver = new TestResolver([txt(DOMAIN, record), ...others]);
    const set = await computePassSet(record, DOMAIN, resolver);
    expect(set.pass.ipv4Share).toBe(0.25);
    for (const ip of probeAddresses(NO_ADDRESSES)) {
      const result = await checkHost({ ip, domain: DOMAIN, sender: `x@${DOMAIN}` }, { resolver });
      const first = ip.includes('.') ? Number(ip.split('.')[0]) : null;
      const expected = first !== null ? first < 64 : ip.startsWith('2');
      expect(result.result === 'pass', ip).toBe(expected);
    }
  });
});

describe('computePassSet: a name the forger chooses (%{h}, %{l}, %{p} at its end) lets anyone pass', () => {
  it('through an include: the path names the term', async () => {
    const set = await passSetOf('v=spf1 include:inc.example.net -all', [txt('inc.example.net', 'v=spf1 ip4:198.51.100.0/24 a:%{h} -all')]);
    expect(set.open?.term).toBe('include:inc.example.net → a:%{h}');
  });

  it.each([
    ['v=spf1 a:%{h} -all', 'a:%{h}', 'HELO name: the forger HELOs as a host of their own domain'],
    ['v=spf1 mx:%{h2} -all', 'mx:%{h2}', 'the last two labels of the HELO name are still the forger\'s'],
    ['v=spf1 include:%{H} -all', 'include:%{H}', 'the forger publishes v=spf1 +all (upper case: URL-escaped, still theirs)'],
    ['v=spf1 exists:%{l} -all', 'exists:%{l}', 'a local part may hold dots: evil.example@…'],
    ['v=spf1 a:%{p} -all', 'a:%{p}', 'the forger runs the reverse DNS of their own address'],
    ['v=spf1 ptr:%{h} -all', 'ptr:%{h}', 'ptr against the forger\'s own domain'],
    ['v=spf1 ip4:198.51.100.0/24 redirect=%{h}', 'redirect=%{h}', 'a redirect to where the forger says'],
  ])('%s is open through %s (%s)', async (record, term) => {
    const set = await passSetOf(record);
    expect(set.open).toMatchObject({ term, evidence: { kind: 'pass-set', ipv6WidestPrefix: 0 } });
    expect(set.open?.evidence.kind === 'pass-set' && set.open.evidence.ipv4Share).toBeGreaterThan(0.99);
    // For one message (a given HELO name and local part) the term is an ordinary runtime term.
    expect(set.pass.ipv4Share).toBeLessThan(0.001);
    expect(set.runtimeTerms).toContain(term);
  });

  it.each([
    ['v=spf1 a:%{h}.example.com -all', 'the name ends in the owner\'s zone: the forger cannot create names there'],
    ['v=spf1 exists:%{l}.users.example.com -all', 'the same for the local part'],
    ['v=spf1 -a:%{h} ip4:198.51.100.0/24 -all', 'with -, the forger just avoids matching it'],
    ['v=spf1 ?exists:%{h} -all', 'neutral gives no pass'],
    ['v=spf1 exists:%{d} -all', 'not the forger\'s choice, and example.com publishes no address here'],
  ])('%s is not open (%s)', async (record) => {
    const set = await passSetOf(record);
    expect(set.open).toBeNull();
  });
});

describe('computePassSet: errors make parts unknown, never closed', () => {
  it('an include whose lookup fails: the rest of the space is unknown, with the query', async () => {
    const set = await passSetOf('v=spf1 ip4:198.51.100.0/24 include:slow.example.net -all', [], { 'TXT slow.example.net': 'timeout' });
    expect(set.open).toBeNull();
    expect(set.temperror.ipv4Share).toBeGreaterThan(0.99);
    expect(set.unknown?.failedQuery).toEqual({ name: 'slow.example.net', type: 'TXT', reason: 'timeout', detail: 'injected by the test' });
  });
  it('an include without SPF is a permerror for what reaches it, not unknown', async () => {
    const set = await passSetOf('v=spf1 include:nospf.example.net -all', [a('nospf.example.net', '198.51.100.9')]);
    expect(set.permerror.ipv4Share).toBe(1);
    expect(set.unknown).toBeNull();
  });
  it('a loop is a permerror', async () => {
    const set = await passSetOf('v=spf1 include:example.com +all');
    expect(set.permerror.ipv4Share).toBe(1);
    expect(set.open).toBeNull();
  });
  it('an A failure only makes IPv4 unknown', async () => {
    const set = await passSetOf('v=spf1 a:mail.example.com -all', [aaaa('mail.example.com', '2001:db8::1')], { 'A mail.example.com': 'servfail' });
    expect(set.temperror.ipv4Share).toBe(1);
    expect(set.temperror.ipv6Share).toBe(0);
  });
});

describe('computePassSet: the opening term is the one of the family that opens it', () => {
  it('names the IPv6 /8, not a small IPv4 range before it', async () => {
    const set = await passSetOf('v=spf1 ip4:198.51.100.24/29 ip6:2000::/8 -all');
    expect(set.open?.term).toBe('ip6:2000::/8');
    expect(set.pass.ipv6WidestPrefix).toBe(8);
  });
});

describe('the pass set agrees with check_host() on the OpenSPF suites', () => {
  it('every suite address the pass set classifies for certain gets the same answer from check_host()', async () => {
    const { loadSuite, argumentsOf } = await import('./suite.js');
    const { passSetSets } = await import('../../src/spf/pass-set.js');
    const { lookupSpfRecord } = await import('../../src/spf/index.js');
    const { parseClientAddress } = await import('../../src/spf/address.js');
    const { ip6ToBigInt } = await import('../../src/spf/ranges.js');
    let compared = 0;
    for (const scenario of [...loadSuite('rfc7208'), ...loadSuite('rfc4408')]) {
      for (const test of scenario.tests) {
        const args = argumentsOf(test);
        const found = await lookupSpfRecord(scenario.resolver, args.domain);
        if (found.status !== 'found') continue;
        const sets = await passSetSets(found.text, args.domain, scenario.resolver);
        const client = parseClientAddress(args.ip);
        if (client === null) continue;
        const [family, value] = client.version === 4 ? (['v4', BigInt(client.value)] as const) : (['v6', ip6ToBigInt(client.words)] as const);
        const uncertain = sets.maybe[family].has(value) || sets.temperror[family].has(value) || sets.permerror[family].has(value);
        if (uncertain && !sets.pass[family].has(value)) continue;
        const result = await checkHost({ ip: args.ip, domain: args.domain, sender: args.sender, helo: args.helo }, { resolver: scenario.resolver });
        expect({ domain: args.domain, ip: args.ip, pass: result.result === 'pass' }).toEqual({ domain: args.domain, ip: args.ip, pass: sets.pass[family].has(value) });
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(80);
  });
});
