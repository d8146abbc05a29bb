import { describe, expect, it } from 'vitest';
import { MAX_ANALYSIS_DEPTH, MAX_ANALYSIS_QUERIES, analyzeSpf, checkHost } from '../../src/spf/index.js';
import type { SpfAnalysis, SpfTermNode, TerminalAll } from '../../src/spf/index.js';
import type { ResourceRecord } from '../../src/zones/types.js';
import { argumentsOf, loadSuite } from './suite.js';
import { TestResolver, a, aaaa, mx, txt } from './zones.js';
import type { Faults } from './zones.js';

async function analyze(records: ResourceRecord[], faults: Faults = {}): Promise<SpfAnalysis & { calls: string[] }> {
  const resolver = new TestResolver(records, faults);
  const analysis = await analyzeSpf('example.com', resolver);
  return { ...analysis, calls: resolver.calls };
}

const ids = (analysis: SpfAnalysis) => analysis.findings.map((finding) => finding.id);
const node = (analysis: SpfAnalysis, raw: string): SpfTermNode => {
  const found = analysis.tree.find((term) => term.raw === raw);
  if (!found) throw new Error(`no term ${raw}`);
  return found;
};

interface Row {
  name: string;
  records: ResourceRecord[];
  lookups: number;
  voids: number;
  terminal: TerminalAll | null;
  findings: string[];
}

const PROVIDER = [
  txt('_spf.provider.example', 'v=spf1 include:_netblocks.provider.example include:_netblocks2.provider.example ~all'),
  txt('_netblocks.provider.example', 'v=spf1 ip4:198.51.100.0/24 ~all'),
  txt('_netblocks2.provider.example', 'v=spf1 ip6:2001:db8::/32 ~all'),
  a('mail.example.com', '192.0.2.25'),
  aaaa('v6.example.com', '2001:db8::25'),
  mx('example.com', 10, 'mail.example.com'),
];

describe('analyzeSpf: counts, terminal all and findings', () => {
  const rows: Row[] = [
    { name: 'ip ranges only', records: [txt('example.com', 'v=spf1 ip4:192.0.2.0/24 ip6:2001:db8::/32 -all')], lookups: 0, voids: 0, terminal: '-all', findings: ['spf-valid'] },
    { name: 'nested include chain', records: [txt('example.com', 'v=spf1 include:_spf.provider.example mx -all'), ...PROVIDER], lookups: 4, voids: 0, terminal: '-all', findings: ['spf-valid'] },
    { name: 'the include target\'s ~all is not the record\'s', records: [txt('example.com', 'v=spf1 include:_spf.provider.example ?all'), ...PROVIDER], lookups: 3, voids: 0, terminal: '?all', findings: ['spf-neutral'] },
    { name: 'a duplicate include is counted each time', records: [txt('example.com', 'v=spf1 include:_spf.provider.example include:_spf.provider.example -all'), ...PROVIDER], lookups: 6, voids: 0, terminal: '-all', findings: ['spf-valid'] },
    { name: 'redirect without all: counted, terminal all from the target', records: [txt('example.com', 'v=spf1 a:mail.example.com redirect=_spf.provider.example'), ...PROVIDER], lookups: 4, voids: 0, terminal: '~all', findings: ['spf-valid'] },
    { name: 'redirect with all: ignored and not counted', records: [txt('example.com', 'v=spf1 mx redirect=_spf.provider.example -all'), ...PROVIDER], lookups: 1, voids: 0, terminal: '-all', findings: ['spf-redirect-ignored', 'spf-valid'] },
    { name: 'terms after all are not counted', records: [txt('example.com', 'v=spf1 -all include:_spf.provider.example mx'), ...PROVIDER], lookups: 0, voids: 0, terminal: '-all', findings: ['spf-unreachable-terms', 'spf-valid'] },
    { name: 'exp is not counted', records: [txt('example.com', 'v=spf1 mx -all exp=why.example.com'), ...PROVIDER], lookups: 1, voids: 0, terminal: '-all', findings: ['spf-valid'] },
    { name: 'a record split over several strings', records: [txt('example.com', 'v=spf1 include:_spf.prov', 'ider.example -all'), ...PROVIDER], lookups: 3, voids: 0, terminal: '-all', findings: ['spf-valid'] },
    { name: 'eleven lookups', records: [txt('example.com', `v=spf1 ${'mx '.repeat(11)}-all`), ...PROVIDER], lookups: 11, voids: 0, terminal: '-all', findings: ['spf-permerror'] },
    { name: 'ten lookups', records: [txt('example.com', `v=spf1 ${'mx '.repeat(10)}-all`), ...PROVIDER], lookups: 10, voids: 0, terminal: '-all', findings: ['spf-valid'] },
    { name: 'void lookups: a, mx and exists of missing names', records: [txt('example.com', 'v=spf1 a:gone.example.com mx:gone.example.com exists:gone.example.com ~all')], lookups: 3, voids: 3, terminal: '~all', findings: ['spf-void-lookups'] },
    { name: 'two voids are allowed', records: [txt('example.com', 'v=spf1 a:gone.example.com mx:gone.example.com ~all')], lookups: 2, voids: 2, terminal: '~all', findings: ['spf-valid'] },
    { name: 'an IPv6-only host is a void lookup for an IPv4 client (its A query is empty)', records: [txt('example.com', 'v=spf1 a:v6.example.com a:v6.example.com -all'), ...PROVIDER], lookups: 2, voids: 2, terminal: '-all', findings: ['spf-valid'] },
    { name: 'voids inside an include count', records: [txt('example.com', 'v=spf1 include:voids.example.com -all'), txt('voids.example.com', 'v=spf1 a:x.example.com a:y.example.com a:z.example.com')], lookups: 4, voids: 3, terminal: '-all', findings: ['spf-void-lookups'] },
    { name: '+all', records: [txt('example.com', 'v=spf1 mx +all'), ...PROVIDER], lookups: 1, voids: 0, terminal: '+all', findings: ['spf-plus-all'] },
    { name: 'more than 2^24 IPv4 addresses: a warning, not "valid"', records: [txt('example.com', 'v=spf1 ip4:10.0.0.0/7 -all')], lookups: 0, voids: 0, terminal: '-all', findings: ['spf-wide-pass'] },
    { name: 'ranges taken away before +all: still anyone', records: [txt('example.com', 'v=spf1 -ip4:192.0.2.0/24 -ip6:2001:db8::/32 +all')], lookups: 0, voids: 0, terminal: '+all', findings: ['spf-plus-all'] },
    { name: 'a bare all is +all', records: [txt('example.com', 'v=spf1 all')], lookups: 0, voids: 0, terminal: '+all', findings: ['spf-plus-all'] },
    { name: 'ip4:0.0.0.0/0 lets every address pass', records: [txt('example.com', 'v=spf1 ip4:0.0.0.0/0 -all')], lookups: 0, voids: 0, terminal: '-all', findings: ['spf-open-to-anyone'] },
    { name: 'an include of a +all record lets every address pass', records: [txt('example.com', 'v=spf1 include:open.example.com -all'), txt('open.example.com', 'v=spf1 +all')], lookups: 1, voids: 0, terminal: '-all', findings: ['spf-open-to-anyone'] },
    { name: '-include of a +all record rejects instead', records: [txt('example.com', 'v=spf1 -include:open.example.com ~all'), txt('open.example.com', 'v=spf1 +all')], lookups: 1, voids: 0, terminal: '~all', findings: ['spf-valid'] },
    { name: 'a/0 with an address lets every IPv4 address pass', records: [txt('example.com', 'v=spf1 a:mail.example.com/0 -all'), ...PROVIDER], lookups: 1, voids: 0, terminal: '-all', findings: ['spf-open-to-anyone'] },
    { name: 'no all: neutral by default, never reported as ~all', records: [txt('example.com', 'v=spf1 mx'), ...PROVIDER], lookups: 1, voids: 0, terminal: null, findings: ['spf-no-all'] },
    { name: 'no all in the redirect target either', records: [txt('example.com', 'v=spf1 redirect=noall.example.com'), txt('noall.example.com', 'v=spf1 ip4:192.0.2.1')], lookups: 1, voids: 0, terminal: null, findings: ['spf-no-all'] },
    { name: 'redirect chain: terminal all from the last record', records: [txt('example.com', 'v=spf1 redirect=r1.example.com'), txt('r1.example.com', 'v=spf1 redirect=r2.example.com'), txt('r2.example.com', 'v=spf1 ?all')], lookups: 2, voids: 0, terminal: '?all', findings: ['spf-neutral'] },
    { name: 'ptr: a void lookup for a client without reverse DNS', records: [txt('example.com', 'v=spf1 ptr -all')], lookups: 1, voids: 1, terminal: '-all', findings: ['spf-ptr-used', 'spf-valid'] },
    { name: 'ptr and two voids make three for such a client', records: [txt('example.com', 'v=spf1 a:x.example.com a:y.example.com ptr -all')], lookups: 3, voids: 3, terminal: '-all', findings: ['spf-void-lookups', 'spf-ptr-used'] },
    { name: 'mx with eleven hosts', records: [txt('example.com', 'v=spf1 mx:big.example.com -all'), ...Array.from({ length: 11 }, (_, index) => mx('big.example.com', index, `m${index}.example.com`))], lookups: 1, voids: 0, terminal: '-all', findings: ['spf-mx-too-many'] },
    { name: 'include target without SPF', records: [txt('example.com', 'v=spf1 include:nospf.example.com -all'), txt('nospf.example.com', 'hello')], lookups: 1, voids: 0, terminal: '-all', findings: ['spf-include-missing'] },
    // RFC 7208 §4.6.4: a TXT query answered NXDOMAIN or with no answers is a void lookup; TXT records that are not SPF are answers.
    { name: 'include target that does not exist', records: [txt('example.com', 'v=spf1 include:absent.example.com -all')], lookups: 1, voids: 1, terminal: '-all', findings: ['spf-include-missing'] },
    { name: 'include target that exists without TXT', records: [txt('example.com', 'v=spf1 include:bare.example.com -all'), a('bare.example.com', '192.0.2.1')], lookups: 1, voids: 1, terminal: '-all', findings: ['spf-include-missing'] },
    { name: 'redirect target that does not exist', records: [txt('example.com', 'v=spf1 redirect=absent.example.com')], lookups: 1, voids: 1, terminal: null, findings: ['spf-include-missing', 'spf-no-all'] },
    { name: 'include target with two SPF records', records: [txt('example.com', 'v=spf1 include:two.example.com -all'), txt('two.example.com', 'v=spf1 -all'), txt('two.example.com', 'v=spf1 +all')], lookups: 1, voids: 0, terminal: '-all', findings: ['spf-include-missing'] },
    { name: 'syntax error in the record', records: [txt('example.com', 'v=spf1 mx ip4:1.2.3 -all'), ...PROVIDER], lookups: 1, voids: 0, terminal: '-all', findings: ['spf-syntax-error'] },
    { name: 'syntax error in an included record', records: [txt('example.com', 'v=spf1 include:bad.example.com -all'), txt('bad.example.com', 'v=spf1 moo -all')], lookups: 1, voids: 0, terminal: '-all', findings: ['spf-syntax-error'] },
  ];
  it.each(rows)('$name', async (row) => {
    const analysis = await analyze(row.records);
    expect(analysis.status).toBe('found');
    expect({ lookups: analysis.lookupCount, voids: analysis.voidLookups, terminal: analysis.terminalAll, findings: ids(analysis) }).toEqual({
      lookups: row.lookups,
      voids: row.voids,
      terminal: row.terminal,
      findings: row.findings,
    });
  });
});

describe('analyzeSpf: the status of the record itself', () => {
  it('none: no record, a spf-missing finding', async () => {
    const analysis = await analyze([txt('example.com', 'google-site-verification=x')]);
    expect(analysis).toMatchObject({ status: 'none', record: null, records: [], terminalAll: null, lookupCount: 0 });
    expect(ids(analysis)).toEqual(['spf-missing']);
  });

  it('none: NXDOMAIN', async () => {
    expect((await analyze([])).status).toBe('none');
  });

  it('multiple: every record listed, none chosen', async () => {
    const analysis = await analyze([txt('example.com', 'v=spf1 -all'), txt('example.com', 'V=SPF1 include:x.example ~all'), txt('example.com', 'other')]);
    expect(analysis).toMatchObject({ status: 'multiple', record: null, records: ['V=SPF1 include:x.example ~all', 'v=spf1 -all'], terminalAll: null }); // sorted: an RRset has no order
    expect(ids(analysis)).toEqual(['spf-multiple-records']);
  });

  it.each(['timeout', 'servfail', 'refused'] as const)('temperror on %s at the top, with the failed query; never "none"', async (reason) => {
    const analysis = await analyze([txt('example.com', 'v=spf1 -all')], { 'TXT example.com': reason });
    expect(analysis).toMatchObject({ status: 'temperror', record: null, failedQuery: { name: 'example.com', type: 'TXT', reason } });
    expect(ids(analysis)).toEqual(['spf-temperror']);
  });

  it('found: the joined text and its size', async () => {
    const analysis = await analyze([txt('example.com', 'v=spf1 ', '-all')]);
    expect(analysis).toMatchObject({ status: 'found', record: 'v=spf1 -all', records: ['v=spf1 -all'], sizeOctets: 11 });
  });
});

describe('analyzeSpf: the tree', () => {
  it('gives each term its qualifier, mechanism, target, cost and children', async () => {
    const analysis = await analyze([txt('example.com', 'v=spf1 ~include:_spf.provider.example a:gone.example.com -all exp=e.example.com'), ...PROVIDER]);
    const include = node(analysis, '~include:_spf.provider.example');
    expect(include).toMatchObject({ kind: 'mechanism', qualifier: '~', mechanism: 'include', target: '_spf.provider.example', lookups: 3, voidLookups: 0, record: 'v=spf1 include:_netblocks.provider.example include:_netblocks2.provider.example ~all' });
    expect(include.children.map((child) => [child.raw, child.lookups])).toEqual([
      ['include:_netblocks.provider.example', 1],
      ['include:_netblocks2.provider.example', 1],
      ['~all', 0],
    ]);
    expect(node(analysis, 'a:gone.example.com')).toMatchObject({ lookups: 1, voidLookups: 1, target: 'gone.example.com' });
    expect(node(analysis, 'exp=e.example.com')).toMatchObject({ kind: 'modifier', qualifier: null, mechanism: 'exp', lookups: 0 });
  });

  it('shows a repeated include once and counts it again', async () => {
    const analysis = await analyze([txt('example.com', 'v=spf1 include:_spf.provider.example include:_spf.provider.example -all'), ...PROVIDER]);
    const [first, second] = analysis.tree;
    expect(first).toMatchObject({ lookups: 3, flags: { repeated: false } });
    expect(first!.children).toHaveLength(3);
    expect(second).toMatchObject({ lookups: 3, children: [], flags: { repeated: true } });
  });

  it('flags unreachable terms and an ignored redirect', async () => {
    const analysis = await analyze([txt('example.com', 'v=spf1 ~all mx redirect=x.example.com')]);
    expect(node(analysis, 'mx').flags.unreachable).toBe(true);
    expect(node(analysis, 'redirect=x.example.com').flags.ignored).toBe(true);
    expect(analysis.calls).toEqual(['TXT example.com']);
  });
});

describe('analyzeSpf: loops', () => {
  it('reports an include loop with its chain and stops walking it', async () => {
    const analysis = await analyze([txt('example.com', 'v=spf1 include:a.example.com -all'), txt('a.example.com', 'v=spf1 include:b.example.com'), txt('b.example.com', 'v=spf1 include:a.example.com')]);
    expect(ids(analysis)).toEqual(['spf-include-loop']);
    expect(analysis.errors[0]).toContain('example.com → a.example.com → b.example.com → a.example.com');
    expect(analysis.lookupCount).toBe(3);
    expect(analysis.lookupCountIsMinimum).toBe(true);
  });

  it('reports a record that redirects to itself', async () => {
    const analysis = await analyze([txt('example.com', 'v=spf1 ip4:192.0.2.1 redirect=example.com')]);
    expect(ids(analysis)).toContain('spf-include-loop');
    expect(node(analysis, 'redirect=example.com').flags.loop).toBe(true);
  });
});

describe('analyzeSpf: macros', () => {
  it('counts a term that needs the message once, flags it and does not follow it', async () => {
    const analysis = await analyze([txt('example.com', 'v=spf1 include:%{ir}.%{v}._spf.example.com exists:%{i}.bl.example.com -all')]);
    expect(analysis.lookupCount).toBe(2);
    expect(analysis.lookupCountIsMinimum).toBe(true);
    expect(analysis.tree.slice(0, 2).map((term) => [term.flags.macro, term.target, term.children.length])).toEqual([
      [true, null, 0],
      [true, null, 0],
    ]);
    expect(ids(analysis)).toEqual(['spf-macro-unresolvable', 'spf-valid']);
    // The walk itself asks for nothing past the record; only check_host() at the probe addresses does
    // (the include is evaluated first and fails for them with a permerror, so exists is never reached).
    expect(analysis.calls[0]).toBe('TXT example.com');
    expect(analysis.passSet?.runtimeTerms).toEqual(['include:%{ir}.%{v}._spf.example.com', 'exists:%{i}.bl.example.com']);
    expect(analysis.passSet?.probes.map((probe) => probe.result)).toEqual(Array(analysis.passSet!.probes.length).fill('permerror'));
    expect(analysis.calls.slice(1).every((call) => call.startsWith('TXT ') && call.endsWith('._spf.example.com'))).toBe(true);
  });

  it('expands %{d} and %{o} and follows the target', async () => {
    const analysis = await analyze([txt('example.com', 'v=spf1 redirect=%{d}._spf.example.net'), txt('example.com._spf.example.net', 'v=spf1 include:%{o}.inc.example.net -all'), txt('example.com.inc.example.net', 'v=spf1 mx ~all')]);
    expect(analysis).toMatchObject({ lookupCount: 3, terminalAll: '-all', lookupCountIsMinimum: false });
    expect(analysis.tree[0]).toMatchObject({ target: 'example.com._spf.example.net', flags: { expanded: true, macro: false } });
  });
});

describe('analyzeSpf: DNS failures below the top', () => {
  it.each([
    ['an include target times out', 'v=spf1 include:_spf.provider.example -all', { 'TXT _spf.provider.example': 'timeout' }, 'include:_spf.provider.example'],
    ['a nested include target fails', 'v=spf1 include:_spf.provider.example -all', { 'TXT _netblocks2.provider.example': 'servfail' }, 'include:_netblocks2.provider.example'],
    ['an a target times out', 'v=spf1 a:mail.example.com -all', { 'AAAA mail.example.com': 'timeout' }, 'a:mail.example.com'],
    ['an mx lookup fails', 'v=spf1 mx -all', { 'MX example.com': 'servfail' }, 'mx'],
  ] satisfies [string, string, Faults, string][])('%s: an error in the tree and a finding, not a crash', async (_name, record, faults, term) => {
    const analysis = await analyze([txt('example.com', record), ...PROVIDER], faults);
    expect(analysis.status).toBe('found');
    expect(ids(analysis)).toEqual(['spf-temperror']);
    expect(analysis.errors.some((error) => error.includes(term))).toBe(true);
  });
});

describe('analyzeSpf: hostile input finishes quickly', () => {
  it('a 50-deep include chain: bounded depth, over the limit, reported', async () => {
    const chain = Array.from({ length: 50 }, (_, index) => txt(index === 0 ? 'example.com' : `c${index}.example.com`, `v=spf1 include:c${index + 1}.example.com -all`));
    const started = performance.now();
    const analysis = await analyze(chain);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(analysis.lookupCount).toBe(MAX_ANALYSIS_DEPTH + 1);
    expect(analysis.lookupCountIsMinimum).toBe(true);
    expect(ids(analysis)).toEqual(['spf-permerror', 'spf-analysis-truncated']);
    expect(analysis.findings[0]!.title).toBe(`SPF Exceeds 10 Lookups (${MAX_ANALYSIS_DEPTH + 1}/10)`);
  });

  it('a 10,000-character garbage record: a syntax error and an oversize record', async () => {
    const garbage = `v=spf1 ${'?'.repeat(10_000)}`;
    const started = performance.now();
    const analysis = await analyze([txt('example.com', garbage)]);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(analysis).toMatchObject({ status: 'found', sizeOctets: 10_007, lookupCount: 0, tree: [] });
    expect(ids(analysis)).toEqual(['spf-syntax-error', 'spf-no-all', 'spf-record-too-long']);
    expect(analysis.findings.find((finding) => finding.id === 'spf-record-too-long')?.severity).toBe('warning');
  });

  it('a wide tree stops at the query budget', async () => {
    const leaves = Array.from({ length: 40 }, (_, index) => txt(`l${index}.example.com`, `v=spf1 ${Array.from({ length: 10 }, (_, term) => `a:h${index}-${term}.example.com`).join(' ')}`));
    const top = txt('example.com', `v=spf1 ${leaves.map((_, index) => `include:l${index}.example.com`).join(' ')} -all`);
    const analysis = await analyze([top, ...leaves]);
    expect(analysis.queries).toBeLessThanOrEqual(MAX_ANALYSIS_QUERIES);
    expect(analysis.calls.length).toBeLessThanOrEqual(MAX_ANALYSIS_QUERIES);
    expect(analysis.lookupCountIsMinimum).toBe(true);
    expect(ids(analysis)).toContain('spf-permerror');
  });
});

describe('analyzeSpf: record size (RFC 7208 §3.4)', () => {
  it.each([
    [450, []],
    [451, ['info']],
    [512, ['info']],
    [513, ['warning']],
  ])('%i octets → %j', async (size, severities) => {
    const record = `v=spf1 ${'ip4:192.0.2.1 '.repeat(20)}`.padEnd(size - 5, ' ') + ' -all';
    const analysis = await analyze([txt('example.com', record)]);
    expect(analysis.sizeOctets).toBe(size);
    expect(analysis.findings.filter((finding) => finding.id === 'spf-record-too-long').map((finding) => finding.severity)).toEqual(severities);
  });
});

describe('analyzeSpf agrees with checkHost', () => {
  it('on every domain of the RFC 7208 suite whose record it can walk completely', async () => {
    let compared = 0;
    for (const scenario of loadSuite('rfc7208')) {
      for (const domain of new Set(scenario.tests.map((test) => argumentsOf(test).domain))) {
        const analysis = await analyzeSpf(domain, scenario.resolver);
        if (analysis.status !== 'found' || analysis.lookupCountIsMinimum || analysis.errors.some((error) => !error.includes('reverse DNS'))) continue;
        // An address no suite record lists, with no reverse DNS: the worst case the analysis describes.
        const evaluated = await checkHost({ ip: '203.0.113.254', domain, sender: `x@${domain}`, helo: 'helo.example' }, { resolver: scenario.resolver });
        if (evaluated.result === 'permerror' || evaluated.result === 'temperror') continue;
        expect({ domain, lookups: evaluated.lookups.dns, voids: evaluated.lookups.void }).toEqual({ domain, lookups: analysis.lookupCount, voids: analysis.voidLookups });
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(60);
  });

  // For a record without macros, the worst case is an address that matches nothing: check_host()
  // then spends exactly the lookups the analysis counts.
  it.each([
    ['v=spf1 include:_spf.provider.example mx a:mail.example.com -all'],
    ['v=spf1 include:_spf.provider.example include:_spf.provider.example ~all'],
    ['v=spf1 a:mail.example.com redirect=_spf.provider.example'],
    ['v=spf1 mx a:gone.example.com exists:gone.example.com ?all'],
    ['v=spf1 -all include:_spf.provider.example'],
    // RFC 7208 §4.6.4: the include's and the redirect's empty TXT answer is a void lookup for both.
    ['v=spf1 ip4:192.0.2.0/24 include:gone.example.com -all'],
    ['v=spf1 ip4:192.0.2.0/24 redirect=gone.example.com'],
  ])('%s', async (record) => {
    const records = [txt('example.com', record), ...PROVIDER];
    const analysis = await analyze(records);
    const evaluated = await checkHost({ ip: '203.0.113.254', domain: 'example.com', sender: 'a@example.com' }, { resolver: new TestResolver(records) });
    expect(analysis.lookupCount).toBe(evaluated.lookups.dns);
    expect(analysis.voidLookups).toBe(evaluated.lookups.void);
  });
});
