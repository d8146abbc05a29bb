import { describe, expect, it } from 'vitest';
import type { Resolver } from '../../src/dns/types.js';
import { checkHost } from '../../src/spf/index.js';
import type { CheckHostResult, SpfResult } from '../../src/spf/index.js';
import type { ResourceRecord } from '../../src/zones/types.js';
import { TestResolver, a, aaaa, cname, mx, ptr, txt } from './zones.js';
import type { Faults } from './zones.js';

/** Names every lookup below can reach; each row adds the record under test at example.com. */
const WORLD: ResourceRecord[] = [
  a('host.example.com', '192.0.2.10'),
  aaaa('host.example.com', '2001:db8::10'),
  aaaa('v6only.example.com', '2001:db8::20'),
  txt('txtonly.example.com', 'hello'),
  a('mxhost.example.com', '192.0.2.30'),
  mx('mx.example.com', 10, 'mxhost.example.com'),
  mx('nullmx.example.com', 0, ''),
  mx('mixmx.example.com', 10, 'mxhost.example.com'),
  mx('mixmx.example.com', 20, 'host.example.com'),
  a('nomx.example.com', '192.0.2.40'),
  txt('inc.example.com', 'v=spf1 ip4:192.0.2.50 -all'),
  a('noinc.example.com', '192.0.2.51'),
  ptr('60.2.0.192.in-addr.arpa', 'host60.example.com'),
  a('host60.example.com', '192.0.2.60'),
  ptr('61.2.0.192.in-addr.arpa', 'liar.example.com'),
  a('liar.example.com', '192.0.2.99'),
  a('exists.example.com', '127.0.0.2'),
  txt('target.example.com', 'v=spf1 ip4:192.0.2.70 -all'),
  txt('why.example.com', 'Mail from %{i} is not allowed by %{d}'),
  txt('two.example.com', 'one'),
  txt('two.example.com', 'two'),
  txt('pwhy.example.com', 'connect from %{p}'),
];

async function check(record: string, ip: string, faults: Faults = {}, extra: ResourceRecord[] = []): Promise<CheckHostResult & { calls: string[] }> {
  const resolver = new TestResolver([txt('example.com', record), ...WORLD, ...extra], faults);
  const result = await checkHost({ ip, domain: 'example.com', sender: 'user@example.com', helo: 'mail.example.org' }, { resolver, explanationDefault: 'DEFAULT' });
  return { ...result, calls: resolver.calls };
}

interface Row {
  lookup: string;
  outcome: string;
  record: string;
  ip: string;
  faults?: Faults;
  result: SpfResult;
  voids?: number;
}

describe('checkHost: every lookup, every DNS outcome', () => {
  const rows: Row[] = [
    // The record itself (RFC 7208 §4.4, §4.5).
    { lookup: 'TXT at the domain', outcome: 'records', record: 'v=spf1 -all', ip: '192.0.2.1', result: 'fail' },
    { lookup: 'TXT at the domain', outcome: 'SERVFAIL', record: 'v=spf1 -all', ip: '192.0.2.1', faults: { 'TXT example.com': 'servfail' }, result: 'temperror' },
    { lookup: 'TXT at the domain', outcome: 'timeout', record: 'v=spf1 -all', ip: '192.0.2.1', faults: { 'TXT example.com': 'timeout' }, result: 'temperror' },
    { lookup: 'TXT at the domain', outcome: 'REFUSED', record: 'v=spf1 -all', ip: '192.0.2.1', faults: { 'TXT example.com': 'refused' }, result: 'temperror' },
    // include (RFC 7208 §5.2).
    { lookup: 'include', outcome: 'records, pass', record: 'v=spf1 include:inc.example.com -all', ip: '192.0.2.50', result: 'pass' },
    { lookup: 'include', outcome: 'records, fail is no match', record: 'v=spf1 include:inc.example.com ~all', ip: '192.0.2.1', result: 'softfail' },
    { lookup: 'include', outcome: 'NODATA is permerror', record: 'v=spf1 include:noinc.example.com -all', ip: '192.0.2.1', result: 'permerror' },
    { lookup: 'include', outcome: 'NXDOMAIN is permerror', record: 'v=spf1 include:absent.example.com -all', ip: '192.0.2.1', result: 'permerror' },
    { lookup: 'include', outcome: 'SERVFAIL', record: 'v=spf1 include:inc.example.com -all', ip: '192.0.2.1', faults: { 'TXT inc.example.com': 'servfail' }, result: 'temperror' },
    { lookup: 'include', outcome: 'timeout', record: 'v=spf1 include:inc.example.com -all', ip: '192.0.2.1', faults: { 'TXT inc.example.com': 'timeout' }, result: 'temperror' },
    // a (RFC 7208 §5.3).
    { lookup: 'a', outcome: 'records, match', record: 'v=spf1 a:host.example.com -all', ip: '192.0.2.10', result: 'pass', voids: 0 },
    { lookup: 'a', outcome: 'records, no match', record: 'v=spf1 a:host.example.com -all', ip: '192.0.2.11', result: 'fail', voids: 0 },
    { lookup: 'a', outcome: 'AAAA match for an IPv6 client', record: 'v=spf1 a:host.example.com -all', ip: '2001:db8::10', result: 'pass', voids: 0 },
    // RFC 7208 §4.6.4: the term's own query (A for IPv4, AAAA for IPv6) coming back empty is void,
    // whatever the other family holds.
    { lookup: 'a', outcome: 'NODATA for A, though AAAA exists: void', record: 'v=spf1 a:v6only.example.com -all', ip: '192.0.2.10', result: 'fail', voids: 1 },
    { lookup: 'a', outcome: 'NODATA for AAAA (IPv6 client), though A exists: void', record: 'v=spf1 a:nomx.example.com -all', ip: '2001:db8::99', result: 'fail', voids: 1 },
    { lookup: 'a', outcome: 'NXDOMAIN for AAAA (IPv6 client): void', record: 'v=spf1 a:absent.example.com -all', ip: '2001:db8::99', result: 'fail', voids: 1 },
    { lookup: 'a', outcome: 'three empty AAAA answers: permerror', record: 'v=spf1 a:nomx.example.com a:mxhost.example.com a:liar.example.com -all', ip: '2001:db8::99', result: 'permerror', voids: 3 },
    { lookup: 'a', outcome: 'NODATA for both families: void', record: 'v=spf1 a:txtonly.example.com -all', ip: '192.0.2.10', result: 'fail', voids: 1 },
    { lookup: 'a', outcome: 'NXDOMAIN: void', record: 'v=spf1 a:absent.example.com -all', ip: '192.0.2.10', result: 'fail', voids: 1 },
    { lookup: 'a', outcome: 'SERVFAIL', record: 'v=spf1 a:host.example.com -all', ip: '192.0.2.10', faults: { 'A host.example.com': 'servfail' }, result: 'temperror' },
    { lookup: 'a', outcome: 'timeout', record: 'v=spf1 a:host.example.com -all', ip: '192.0.2.10', faults: { 'A host.example.com': 'timeout' }, result: 'temperror' },
    { lookup: 'a', outcome: 'the other family is never asked', record: 'v=spf1 a:v6only.example.com -all', ip: '192.0.2.10', faults: { 'AAAA v6only.example.com': 'timeout' }, result: 'fail', voids: 1 },
    // mx (RFC 7208 §5.4).
    { lookup: 'mx', outcome: 'records, match', record: 'v=spf1 mx:mx.example.com -all', ip: '192.0.2.30', result: 'pass', voids: 0 },
    { lookup: 'mx', outcome: 'NODATA: void, and no fallback to the A record', record: 'v=spf1 mx:nomx.example.com -all', ip: '192.0.2.40', result: 'fail', voids: 1 },
    { lookup: 'mx', outcome: 'NXDOMAIN: void', record: 'v=spf1 mx:absent.example.com -all', ip: '192.0.2.30', result: 'fail', voids: 1 },
    { lookup: 'mx', outcome: 'null MX names no host', record: 'v=spf1 mx:nullmx.example.com -all', ip: '192.0.2.30', result: 'fail', voids: 0 },
    { lookup: 'mx', outcome: 'no exchange has AAAA (IPv6 client): void once', record: 'v=spf1 mx:mx.example.com -all', ip: '2001:db8::99', result: 'fail', voids: 1 },
    { lookup: 'mx', outcome: 'one exchange has AAAA (IPv6 client): not void', record: 'v=spf1 mx:mixmx.example.com -all', ip: '2001:db8::99', result: 'fail', voids: 0 },
    { lookup: 'mx', outcome: 'SERVFAIL', record: 'v=spf1 mx:mx.example.com -all', ip: '192.0.2.30', faults: { 'MX mx.example.com': 'servfail' }, result: 'temperror' },
    { lookup: 'mx', outcome: 'timeout', record: 'v=spf1 mx:mx.example.com -all', ip: '192.0.2.30', faults: { 'MX mx.example.com': 'timeout' }, result: 'temperror' },
    { lookup: 'mx host address', outcome: 'timeout', record: 'v=spf1 mx:mx.example.com -all', ip: '192.0.2.30', faults: { 'A mxhost.example.com': 'timeout' }, result: 'temperror' },
    // ptr (RFC 7208 §5.5): errors skip, never temperror.
    { lookup: 'ptr', outcome: 'records, validated', record: 'v=spf1 ptr -all', ip: '192.0.2.60', result: 'pass', voids: 0 },
    { lookup: 'ptr', outcome: 'records, name does not validate', record: 'v=spf1 ptr -all', ip: '192.0.2.61', result: 'fail', voids: 0 },
    { lookup: 'ptr', outcome: 'validated name outside the target', record: 'v=spf1 ptr:example.org -all', ip: '192.0.2.60', result: 'fail', voids: 0 },
    { lookup: 'ptr', outcome: 'NXDOMAIN: void', record: 'v=spf1 ptr -all', ip: '192.0.2.62', result: 'fail', voids: 1 },
    { lookup: 'ptr', outcome: 'SERVFAIL: no match', record: 'v=spf1 ptr -all', ip: '192.0.2.60', faults: { 'PTR 60.2.0.192.in-addr.arpa': 'servfail' }, result: 'fail', voids: 0 },
    { lookup: 'ptr', outcome: 'timeout: no match', record: 'v=spf1 ptr -all', ip: '192.0.2.60', faults: { 'PTR 60.2.0.192.in-addr.arpa': 'timeout' }, result: 'fail', voids: 0 },
    { lookup: 'ptr validation', outcome: 'timeout skips the name', record: 'v=spf1 ptr -all', ip: '192.0.2.60', faults: { 'A host60.example.com': 'timeout' }, result: 'fail', voids: 0 },
    // exists (RFC 7208 §5.7).
    { lookup: 'exists', outcome: 'records', record: 'v=spf1 exists:exists.example.com -all', ip: '192.0.2.1', result: 'pass', voids: 0 },
    { lookup: 'exists', outcome: 'A even for an IPv6 client', record: 'v=spf1 exists:exists.example.com -all', ip: '2001:db8::1', result: 'pass', voids: 0 },
    { lookup: 'exists', outcome: 'NODATA: void', record: 'v=spf1 exists:v6only.example.com -all', ip: '192.0.2.1', result: 'fail', voids: 1 },
    { lookup: 'exists', outcome: 'NXDOMAIN: void', record: 'v=spf1 exists:absent.example.com -all', ip: '192.0.2.1', result: 'fail', voids: 1 },
    { lookup: 'exists', outcome: 'SERVFAIL', record: 'v=spf1 exists:exists.example.com -all', ip: '192.0.2.1', faults: { 'A exists.example.com': 'servfail' }, result: 'temperror' },
    { lookup: 'exists', outcome: 'timeout', record: 'v=spf1 exists:exists.example.com -all', ip: '192.0.2.1', faults: { 'A exists.example.com': 'timeout' }, result: 'temperror' },
    // redirect (RFC 7208 §6.1).
    { lookup: 'redirect', outcome: 'records', record: 'v=spf1 redirect=target.example.com', ip: '192.0.2.70', result: 'pass' },
    { lookup: 'redirect', outcome: 'NODATA is permerror', record: 'v=spf1 redirect=noinc.example.com', ip: '192.0.2.1', result: 'permerror' },
    { lookup: 'redirect', outcome: 'NXDOMAIN is permerror', record: 'v=spf1 redirect=absent.example.com', ip: '192.0.2.1', result: 'permerror' },
    { lookup: 'redirect', outcome: 'SERVFAIL', record: 'v=spf1 redirect=target.example.com', ip: '192.0.2.1', faults: { 'TXT target.example.com': 'servfail' }, result: 'temperror' },
    { lookup: 'redirect', outcome: 'timeout', record: 'v=spf1 redirect=target.example.com', ip: '192.0.2.1', faults: { 'TXT target.example.com': 'timeout' }, result: 'temperror' },
  ];
  it.each(rows)('$lookup, $outcome → $result', async (row) => {
    const outcome = await check(row.record, row.ip, row.faults);
    expect(outcome.result, outcome.problem).toBe(row.result);
    if (row.voids !== undefined) expect(outcome.lookups.void).toBe(row.voids);
  });

  it('reports the NXDOMAIN and NODATA of the domain itself as none', async () => {
    const resolver = new TestResolver(WORLD);
    for (const domain of ['absent.example.com', 'host.example.com', 'txtonly.example.com']) {
      const outcome = await checkHost({ ip: '192.0.2.1', domain, sender: `x@${domain}` }, { resolver });
      expect(outcome.result).toBe('none');
      expect(outcome.problem).toContain(domain);
    }
  });

  it('names the failed query in the problem of a temperror', async () => {
    const outcome = await check('v=spf1 include:inc.example.com -all', '192.0.2.1', { 'TXT inc.example.com': 'timeout' });
    expect(outcome.problem).toContain('include:inc.example.com');
    expect(outcome.problem).toContain('timed out');
  });
});

describe('checkHost: explanations (RFC 7208 §6.2)', () => {
  it.each([
    ['records: the expanded TXT text', {}, 'Mail from 192.0.2.1 is not allowed by example.com'],
    ['SERVFAIL: the default', { 'TXT why.example.com': 'servfail' }, 'DEFAULT'],
    ['REFUSED: the default', { 'TXT why.example.com': 'refused' }, 'DEFAULT'],
    ['timeout: the default', { 'TXT why.example.com': 'timeout' }, 'DEFAULT'],
  ] satisfies [string, Faults, string][])('%s', async (_name, faults, expected) => {
    const outcome = await check('v=spf1 -all exp=why.example.com', '192.0.2.1', faults);
    expect(outcome.result).toBe('fail');
    expect(outcome.explanation).toBe(expected);
  });

  it.each([
    ['a target without TXT', 'v=spf1 -all exp=host.example.com'],
    ['a target that does not exist', 'v=spf1 -all exp=absent.example.com'],
    ['a target with two TXT records', 'v=spf1 -all exp=two.example.com'],
  ])('ignores the exp of %s', async (_name, record) => {
    const outcome = await check(record, '192.0.2.1');
    expect(outcome).toMatchObject({ result: 'fail', explanation: 'DEFAULT' });
  });

  it('does not count the exp lookup, and makes it once, after the result', async () => {
    const outcome = await check('v=spf1 a:absent1.example.com a:absent2.example.com -all exp=absent3.example.com', '192.0.2.1');
    expect(outcome).toMatchObject({ result: 'fail', lookups: { dns: 2, void: 2 } });
    expect(outcome.calls.at(-1)).toBe('TXT absent3.example.com');
    expect(outcome.calls.filter((call) => call === 'TXT absent3.example.com')).toHaveLength(1);
  });

  it('gives no explanation for results other than fail', async () => {
    expect((await check('v=spf1 ~all exp=why.example.com', '192.0.2.1')).explanation).toBeUndefined();
    expect((await check('v=spf1 +all exp=why.example.com', '192.0.2.1')).explanation).toBeUndefined();
  });

  it('expands %{p} to "unknown" when the PTR lookup fails', async () => {
    const outcome = await check('v=spf1 -all exp=pwhy.example.com', '192.0.2.60', { 'PTR 60.2.0.192.in-addr.arpa': 'timeout' });
    expect(outcome.explanation).toBe('connect from unknown');
    const validated = await check('v=spf1 -all exp=pwhy.example.com', '192.0.2.60');
    expect(validated.explanation).toBe('connect from host60.example.com');
  });

  it('omits the explanation when there is none and no default', async () => {
    const resolver = new TestResolver([txt('example.com', 'v=spf1 -all')]);
    const outcome = await checkHost({ ip: '192.0.2.1', domain: 'example.com', sender: 'a@example.com' }, { resolver });
    expect(outcome).toEqual({ result: 'fail', matchedTerm: '-all', lookups: { dns: 0, void: 0 } });
  });
});

describe('checkHost: limits (RFC 7208 §4.6.4)', () => {
  const hosts = Array.from({ length: 12 }, (_, index) => a(`h${index}.example.com`, `198.51.100.${index}`));

  it.each([
    [10, '198.51.100.9', 'pass', 'ten DNS-querying terms are allowed'],
    [11, '198.51.100.10', 'permerror', 'the eleventh is a permerror'],
  ] as const)('%i a terms, client matches the last → %s (%s)', async (count, ip, expected, _reason) => {
    const record = `v=spf1 ${hosts.slice(0, count).map((_, index) => `a:h${index}.example.com`).join(' ')} -all`;
    const outcome = await check(record, ip, {}, hosts);
    expect(outcome.result).toBe(expected);
    expect(outcome.lookups.dns).toBe(count);
  });

  it('counts terms inside includes and the redirect', async () => {
    const extra = [txt('one.example.com', 'v=spf1 a:h1.example.com a:h2.example.com'), txt('two.example.com', 'v=spf1 include:one.example.com -all'), ...hosts];
    const outcome = await check('v=spf1 include:two.example.com redirect=two.example.com', '192.0.2.1', {}, extra);
    // include two (1) → include one (2) → a, a (4); -all in two is a fail, so no match; redirect (5) → include one (6) → a, a (8).
    expect(outcome).toMatchObject({ result: 'fail', lookups: { dns: 8, void: 0 } });
  });

  it('does not count all, ip4, ip6 or exp', async () => {
    const outcome = await check('v=spf1 ip4:192.0.2.1 ip6:2001:db8::1 -all exp=why.example.com', '192.0.2.2');
    expect(outcome.lookups).toEqual({ dns: 0, void: 0 });
  });

  it('counts each %{p} expansion as a DNS-querying term', async () => {
    const outcome = await check('v=spf1 exists:%{p}.ok.example.com -all', '192.0.2.60');
    expect(outcome.lookups.dns).toBe(2);
  });

  it.each([
    [2, 'neutral', 'two void lookups are allowed'],
    [3, 'permerror', 'the third is a permerror'],
  ] as const)('%i void lookups → %s (%s)', async (count, expected, _reason) => {
    const record = `v=spf1 ${Array.from({ length: count }, (_, index) => `a:void${index}.example.com`).join(' ')} ?all`;
    const outcome = await check(record, '192.0.2.1');
    expect(outcome.result).toBe(expected);
  });

  it.each([
    [10, 'pass', 'ten MX names are allowed'],
    [11, 'permerror', 'eleven is a permerror, even though the first host matches'],
  ] as const)('%i MX names → %s (%s)', async (count, expected, _reason) => {
    const exchanges = Array.from({ length: count }, (_, index) => mx('many.example.com', index, `mx${index}.example.com`));
    const outcome = await check('v=spf1 mx:many.example.com -all', '192.0.2.80', {}, [...exchanges, a('mx0.example.com', '192.0.2.80')]);
    expect(outcome.result).toBe(expected);
  });

  it('looks only at the first 10 PTR names', async () => {
    const names = Array.from({ length: 11 }, (_, index) => ptr('90.2.0.192.in-addr.arpa', `n${index}.other.example`));
    const outcome = await check('v=spf1 ptr:n10.other.example -all', '192.0.2.90', {}, [...names, a('n10.other.example', '192.0.2.90')]);
    expect(outcome.result).toBe('fail');
    const within = await check('v=spf1 ptr:n9.other.example -all', '192.0.2.90', {}, [...names, a('n9.other.example', '192.0.2.90')]);
    expect(within.result).toBe('pass');
  });

  it('has no limit on the A records of one name', async () => {
    const many = Array.from({ length: 40 }, (_, index) => a('wide.example.com', `203.0.113.${index}`));
    expect((await check('v=spf1 a:wide.example.com -all', '203.0.113.39', {}, many)).result).toBe('pass');
  });

  it('takes other limits from the options', async () => {
    const resolver = new TestResolver([txt('example.com', 'v=spf1 a:h0.example.com a:h1.example.com -all'), ...hosts]);
    const args = { ip: '198.51.100.1', domain: 'example.com', sender: 'a@example.com' };
    expect((await checkHost(args, { resolver, limits: { dnsTerms: 1 } })).result).toBe('permerror');
    expect((await checkHost(args, { resolver, limits: { dnsTerms: 2 } })).result).toBe('pass');
  });
});

describe('checkHost: evaluation rules', () => {
  it.each([
    ['v=spf1 redirect=target.example.com ~all', '192.0.2.70', 'softfail', 'redirect is ignored when the record has all (RFC 7208 §6.1)'],
    ['v=spf1 ip4:192.0.2.1', '192.0.2.2', 'neutral', 'no match and no redirect is neutral (RFC 7208 §4.7)'],
    ['v=spf1', '192.0.2.2', 'neutral', 'an empty record is neutral'],
    ['v=spf1 all -all', '192.0.2.2', 'pass', 'the first matching directive wins'],
    ['v=spf1 -ip4:192.0.2.0/24 +all', '192.0.2.9', 'fail', 'qualifier of the matching directive'],
    ['v=spf1 ?ip4:192.0.2.9 -all', '192.0.2.9', 'neutral', '"?" qualifier'],
    ['v=spf1 ip4:192.0.2.1 -all moo', '192.0.2.1', 'permerror', 'a syntax error after the match still fails the record (RFC 7208 §4.6)'],
    ['v=spf1 -ip4:1.2.3.4 ip6:::FFFF:1.2.3.4', '::ffff:1.2.3.4', 'fail', 'an IPv4-mapped client is checked as IPv4'],
    ['v=spf1 ip6:::0/0', '192.0.2.1', 'neutral', 'ip6 never matches an IPv4 client'],
    ['v=spf1 a:host.example.com/24 -all', '192.0.2.200', 'pass', 'a with an IPv4 prefix'],
    ['v=spf1 a:host.example.com//64 -all', '2001:db8::ffff', 'pass', 'a with an IPv6 prefix'],
    ['v=spf1 include:cname.example.com -all', '192.0.2.50', 'pass', 'an include target reached through a CNAME'],
  ])('%s from %s → %s (%s)', async (record, ip, expected, _reason) => {
    const outcome = await check(record, ip, {}, [cname('cname.example.com', 'inc.example.com')]);
    expect(outcome.result, outcome.problem).toBe(expected);
  });

  it('joins the character-strings of one record with nothing between them (RFC 7208 §3.3)', async () => {
    const resolver = new TestResolver([txt('example.com', 'v=spf1 ip4:192.0.2', '.1 -all')]);
    expect((await checkHost({ ip: '192.0.2.1', domain: 'example.com', sender: 'a@example.com' }, { resolver })).result).toBe('pass');
  });

  it('returns permerror for two SPF records and ignores other TXT records (RFC 7208 §4.5)', async () => {
    const two = new TestResolver([txt('example.com', 'v=spf1 -all'), txt('example.com', 'v=spf1 +all')]);
    expect((await checkHost({ ip: '192.0.2.1', domain: 'example.com', sender: '' }, { resolver: two })).result).toBe('permerror');
    const other = new TestResolver([txt('example.com', 'v=spf1 -all'), txt('example.com', 'google-site-verification=abc')]);
    expect((await checkHost({ ip: '192.0.2.1', domain: 'example.com', sender: '' }, { resolver: other })).result).toBe('fail');
  });

  it('names the deciding top-level term', async () => {
    expect((await check('v=spf1 include:inc.example.com -all', '192.0.2.50')).matchedTerm).toBe('include:inc.example.com');
    expect((await check('v=spf1 include:inc.example.com -all', '192.0.2.1')).matchedTerm).toBe('-all');
  });

  it('uses the redirect target as the new current domain (%{d}) and its own exp', async () => {
    const extra = [txt('r.example.com', 'v=spf1 exists:%{d}.ok.example.com -all exp=why.example.com'), a('r.example.com.ok.example.com', '127.0.0.2')];
    expect((await check('v=spf1 redirect=r.example.com', '192.0.2.1', {}, extra)).result).toBe('pass');
    const failing = [txt('r.example.com', 'v=spf1 -all exp=why.example.com')];
    expect((await check('v=spf1 redirect=r.example.com exp=two.example.com', '192.0.2.1', {}, failing)).explanation).toBe('Mail from 192.0.2.1 is not allowed by r.example.com');
  });

  it('substitutes postmaster for a missing local part (RFC 7208 §4.3)', async () => {
    const resolver = new TestResolver([txt('example.com', 'v=spf1 exists:%{l}.users.example.com -all'), a('postmaster.users.example.com', '127.0.0.2')]);
    for (const sender of ['', '@example.com', 'example.com']) {
      expect((await checkHost({ ip: '192.0.2.1', domain: 'example.com', sender }, { resolver })).result).toBe('pass');
    }
  });

  it.each([
    ['a', 'single label'],
    ['a..example.com', 'empty label'],
    [`${'a'.repeat(64)}.example.com`, 'label over 63 octets'],
    ['[192.0.2.1]', 'address literal'],
    ['example.123', 'numeric top label'],
    ['', 'empty'],
  ])('returns none without any query for the malformed domain %j (%s, RFC 7208 §4.3)', async (domain, _reason) => {
    const resolver = new TestResolver([]);
    const outcome = await checkHost({ ip: '192.0.2.1', domain, sender: `a@${domain}` }, { resolver });
    expect(outcome.result).toBe('none');
    expect(resolver.calls).toEqual([]);
  });
});

describe('checkHost: bad input never throws and finishes quickly', () => {
  const run = async (records: ResourceRecord[], ip = '192.0.2.1', resolver?: Resolver) => {
    const started = performance.now();
    const outcome = await checkHost({ ip, domain: 'example.com', sender: 'a@example.com' }, { resolver: resolver ?? new TestResolver(records) });
    return { outcome, ms: performance.now() - started };
  };

  it('a 10,000-character garbage record: permerror naming the term', async () => {
    const { outcome, ms } = await run([txt('example.com', `v=spf1 ${'%'.repeat(10_000)}`)]);
    expect(outcome.result).toBe('permerror');
    expect(outcome.problem).toContain('%%%%');
    expect(outcome.problem!.length).toBeLessThan(300);
    expect(ms).toBeLessThan(500);
  });

  it('a 10,000-character record of valid terms: evaluated to the limit', async () => {
    const { outcome, ms } = await run([txt('example.com', `v=spf1 ${'a:x.example.com '.repeat(625)}-all`)]);
    expect(outcome.result).toBe('permerror');
    expect(outcome.lookups.void).toBe(3);
    expect(ms).toBeLessThan(500);
  });

  it('an include chain 50 deep: permerror at the 11th lookup', async () => {
    const chain = Array.from({ length: 50 }, (_, index) => txt(index === 0 ? 'example.com' : `c${index}.example.com`, `v=spf1 include:c${index + 1}.example.com -all`));
    const { outcome, ms } = await run(chain);
    expect(outcome).toMatchObject({ result: 'permerror', lookups: { dns: 11 } });
    expect(outcome.problem).toContain('more than 10 terms');
    expect(ms).toBeLessThan(500);
  });

  it.each([
    ['an include loop', [txt('example.com', 'v=spf1 include:b.example.com'), txt('b.example.com', 'v=spf1 include:example.com')]],
    ['a redirect to itself', [txt('example.com', 'v=spf1 redirect=example.com')]],
  ])('%s: permerror through the limit', async (_name, records) => {
    const { outcome } = await run(records);
    expect(outcome).toMatchObject({ result: 'permerror', lookups: { dns: 11 } });
  });

  it('a macro that expands past 253 octets is truncated from the left and still looked up', async () => {
    // Five 60-octet labels and ok.example.com make 319 octets; dropping two labels leaves 197.
    const local = 'x'.repeat(60);
    const truncated = `${`${local}.`.repeat(3)}ok.example.com`;
    const resolver = new TestResolver([txt('example.com', 'v=spf1 exists:%{l}.%{l}.%{l}.%{l}.%{l}.ok.example.com -all'), a(truncated, '127.0.0.2')]);
    const outcome = await checkHost({ ip: '192.0.2.1', domain: 'example.com', sender: `${local}@example.com` }, { resolver });
    expect(resolver.calls).toEqual(['TXT example.com', `A ${truncated}`]);
    expect(outcome.result).toBe('pass');
  });

  it('a macro label over 63 octets is a name that does not exist: no match, one void', async () => {
    const resolver = new TestResolver([txt('example.com', 'v=spf1 a:%{l}.example.com -all')]);
    const outcome = await checkHost({ ip: '192.0.2.1', domain: 'example.com', sender: `${'y'.repeat(70)}@example.com` }, { resolver });
    expect(outcome).toMatchObject({ result: 'fail', lookups: { dns: 1, void: 1 } });
    expect(resolver.calls).toEqual(['TXT example.com']);
  });

  it('a resolver that throws: temperror, not an exception', async () => {
    const throwing: Resolver = {
      resolve: () => {
        throw new Error('socket closed');
      },
    };
    const { outcome } = await run([], '192.0.2.1', throwing);
    expect(outcome.result).toBe('temperror');
    expect(outcome.problem).toContain('socket closed');
  });

  it('a resolver that rejects: temperror, not an exception', async () => {
    const rejecting: Resolver = { resolve: () => Promise.reject(new Error('boom')) };
    expect((await run([], '192.0.2.1', rejecting)).outcome.result).toBe('temperror');
  });

  it('a client address that is not an IP: permerror with a message', async () => {
    const { outcome } = await run([txt('example.com', 'v=spf1 -all')], 'not-an-ip');
    expect(outcome.result).toBe('permerror');
    expect(outcome.problem).toContain('not an IP address');
  });

  it('missing options: permerror with a message, not an exception', async () => {
    const outcome = await checkHost({ ip: '192.0.2.1', domain: 'example.com', sender: '' }, undefined as never);
    expect(outcome.result).toBe('permerror');
    expect(outcome.problem).toContain('resolver');
  });
});
