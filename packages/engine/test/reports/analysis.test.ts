/**
 * The analysis over the fixture reports of spf-cloud-ec2.example (whose SPF authorises Amazon EC2
 * space, fixtures/zones): exact message counts per sender, the classes, what reject would break, the
 * SPF tightening record, the TLS answer; plus tables for the classification rules.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { shippedRanges } from '../../src/ranges/snapshot.js';
import { dailyCounts } from '../../src/reports/daily.js';
import { parseAggregateReport } from '../../src/reports/parse-aggregate.js';
import { parseTlsReport } from '../../src/reports/parse-tls.js';
import { readiness } from '../../src/reports/readiness.js';
import { tlsSummary } from '../../src/reports/tls-summary.js';
import { summariseSenders } from '../../src/reports/senders.js';
import { spfTighten, unusedSpfTerms } from '../../src/reports/spf-tighten.js';
import { digestReports, mergeDigests, selectorsSeen, summariseReports, type ReportsSummary } from '../../src/reports/summary.js';
import { reportIdentity } from '../../src/reports/identity.js';
import type { AggregateRecord, AggregateReport, TlsReport } from '../../src/reports/types.js';
import { unpackReportFile } from '../../src/reports/unpack.js';
import { analyzeSpf } from '../../src/spf/index.js';
import type { SpfAnalysis } from '../../src/spf/analyze.js';
import { loadZoneDirectory } from '../../src/zones/load.js';
import { parseZone } from '../../src/zones/parse.js';
import { fixture } from './helpers.js';

const NOW = new Date('2026-11-27T12:00:00Z');
const DOMAIN = 'spf-cloud-ec2.example';
/** Every file as imported: the Google report twice (its zip and its raw XML). */
const FILES = [
  'google.com!spf-cloud-ec2.example!1795219200!1795305599.zip',
  'src/google.com!spf-cloud-ec2.example!1795219200!1795305599.xml',
  'protection.outlook.com!spf-cloud-ec2.example!1795219200!1795305600.xml.gz',
  'yahoo.com!spf-cloud-ec2.example!1795132800!1795219199.xml.gz',
  'src/gmx.net!spf-cloud-ec2.example!1795305600!1795391999.xml',
  'mail.example.net-two-days.zip',
  'src/google.com!spf-cloud-ec2.example!2026-11-21.json',
  'microsoft.com!spf-cloud-ec2.example!2026-11-21.json.gz',
];

function load(files: readonly string[]): { aggregate: AggregateReport[]; tls: TlsReport[] } {
  const aggregate: AggregateReport[] = [];
  const tls: TlsReport[] = [];
  for (const file of files) {
    const unpacked = unpackReportFile(fixture(file), { filename: file });
    if (!unpacked.ok) throw new Error(`${file}: ${unpacked.detail}`);
    for (const document of unpacked.documents) {
      if (document.kind === 'aggregate') {
        const parsed = parseAggregateReport(document.bytes);
        if (!parsed.ok) throw new Error(`${file}: ${parsed.detail}`);
        aggregate.push(parsed.report);
      } else {
        const parsed = parseTlsReport(document.bytes);
        if (!parsed.ok) throw new Error(`${file}: ${parsed.detail}`);
        tls.push(parsed.report);
      }
    }
  }
  return { aggregate, tls };
}

let spf: SpfAnalysis;
let summary: ReportsSummary;

beforeAll(async () => {
  const resolver = new ZoneResolver(await loadZoneDirectory(new URL('../../../../fixtures/zones/', import.meta.url).pathname));
  spf = await analyzeSpf(DOMAIN, resolver);
  const { aggregate, tls } = load(FILES);
  summary = summariseReports({ domain: DOMAIN, days: 30, now: NOW, aggregate, tls, spf, ranges: shippedRanges() });
});

describe('summariseReports over the fixtures', () => {
  it('counts reports, the duplicate once, and every message', () => {
    expect([summary.reports, summary.duplicates, summary.messages]).toEqual([6, 1, 2173]);
  });

  it('gives exact counts and a class per sender', () => {
    expect(summary.senders.map((s) => [s.source, s.provider, s.messages, s.spfAligned, s.dkimAligned, s.dmarcPass, s.selectors, s.class])).toEqual([
      ['198.51.100.130', null, 1203, 1203, 1203, 1203, ['esp1'], 'legitimate'],
      ['3.224.10.5', 'Amazon EC2', 500, 500, 500, 500, ['app2026'], 'legitimate'],
      ['192.0.2.44', 'Twilio SendGrid', 300, 0, 0, 0, [], 'legitimate'],
      ['198.51.100.20', null, 80, 0, 0, 0, ['billing2024'], 'legitimate'],
      ['3.224.77.9', 'Amazon EC2', 40, 40, 0, 40, [], 'legitimate'],
      ['203.0.113.9', null, 35, 0, 0, 0, [], 'unauthorised'],
      ['209.85.220.41', null, 12, 0, 0, 0, [], 'forwarded'],
      ['2001:db8:e5::10', null, 3, 3, 3, 3, ['esp1'], 'legitimate'],
    ]);
    expect(summary.senders.find((s) => s.source === '198.51.100.130')).toMatchObject({ firstDay: '2026-11-21', lastDay: '2026-11-22' });
  });

  it('says what reject would break, and the exact fixes', () => {
    expect(summary.readiness.reject).toEqual({ messages: 427, share: 427 / 2173, senders: ['192.0.2.44', '198.51.100.20', '203.0.113.9', '209.85.220.41'], sendersLeftOut: 0 });
    expect(summary.readiness.quarantine).toEqual(summary.readiness.reject);
    expect(summary.readiness.verdict).toBe('not-ready');
    expect(summary.readiness.blockers).toEqual([
      { source: '192.0.2.44', provider: 'Twilio SendGrid', messages: 300, fix: 'sign with d=spf-cloud-ec2.example at Twilio SendGrid: set up its domain authentication (custom DKIM) and publish the selectors it gives (it signs with d=sendgrid.net)' },
      { source: '198.51.100.20', provider: null, messages: 80, fix: 'publish selector billing2024: the DKIM key at billing2024._domainkey.spf-cloud-ec2.example that this sender signs with' },
    ]);
    expect(summary.readiness.summary).toBe('380 messages from 2 legitimate senders would be rejected: fix these first');
  });

  it('tightens the SPF record to the EC2 addresses that sent', () => {
    expect(summary.spfTighten).toEqual({ record: 'v=spf1 ip4:3.224.10.5 ip4:3.224.77.9 include:_spf.esp.example -all', keep: ['3.224.10.5', '3.224.77.9'], drop: ['ip4:3.224.0.0/16'], services: ['Amazon EC2'] });
  });

  it('counts pass and fail per UTC day', () => {
    expect(summary.daily).toEqual([
      { day: '2026-11-18', messages: 5, dmarcPass: 0, failing: 5 },
      { day: '2026-11-19', messages: 5, dmarcPass: 0, failing: 5 },
      { day: '2026-11-20', messages: 100, dmarcPass: 0, failing: 100 },
      { day: '2026-11-21', messages: 2060, dmarcPass: 1743, failing: 317 },
      { day: '2026-11-22', messages: 3, dmarcPass: 3, failing: 0 },
    ]);
  });

  it('spreads a multi-week report over its days, adding up exactly', () => {
    const long = reportOf([{ count: 10, dkimResult: 'pass' }, { sourceIp: '203.0.113.1', count: 7 }], 1795219200 - 2 * 86400);
    long.dateRange.end = long.dateRange.begin + 3 * 86400;
    const series = dailyCounts([long], { domain: 'test.example', days: 30, now: NOW });
    expect(series.map((d) => d.day)).toEqual(['2026-11-19', '2026-11-20', '2026-11-21']);
    expect(series.reduce((a, d) => a + d.dmarcPass, 0)).toBe(10);
    expect(series.reduce((a, d) => a + d.failing, 0)).toBe(7);
    expect(series.map((d) => d.dmarcPass)).toEqual([4, 3, 3]);
  });

  it('lists the selectors seen, for DKIM probing', () => {
    expect(summary.selectors).toEqual(['app2026', 'billing2024', 'esp1']);
  });

  it('summarises TLS per policy and MX, and answers the enforce question', () => {
    expect(summary.tls.reports).toBe(2);
    expect(summary.tls.policies).toEqual([
      {
        policy: 'sts spf-cloud-ec2.example',
        policyType: 'sts',
        policyDomain: 'spf-cloud-ec2.example',
        mode: 'testing',
        mxHosts: ['mx1.spf-cloud-ec2.example', 'mx2.spf-cloud-ec2.example'],
        successful: 2300,
        failed: 6,
        failures: [
          { resultType: 'certificate-expired', sessions: 4 },
          { resultType: 'sts-policy-fetch-error', sessions: 2 },
        ],
        byMx: [
          { mx: '(not given)', failures: [{ resultType: 'sts-policy-fetch-error', sessions: 2 }] },
          { mx: 'mx2.spf-cloud-ec2.example', failures: [{ resultType: 'certificate-expired', sessions: 4 }] },
        ],
        reporters: ['Google Inc.', 'Microsoft Corporation'],
        enforce: {
          safe: false,
          answer: '4 sessions would have been refused under enforce (certificate-expired on mx2.spf-cloud-ec2.example ×4): fix these first; also, senders could not fetch or use the policy (sts-policy-fetch-error ×2): fix the policy host, or the policy protects nothing',
        },
      },
    ]);
  });

  it('gives the same answer from digests merged report by report (what a store keeps) as from the rows', () => {
    const { aggregate, tls } = load(FILES);
    const seen = new Set<string>();
    const digests = aggregate
      .filter((r) => {
        const key = reportIdentity(r);
        return !seen.has(key) && Boolean(seen.add(key));
      })
      // Through JSON, as a store keeps it.
      .map((r) => JSON.parse(JSON.stringify(digestReports([r], DOMAIN))) as ReturnType<typeof digestReports>);
    const digest = mergeDigests(digests);
    expect(digest.senders.length).toBeLessThan(aggregate.reduce((n, r) => n + r.records.length, 0));
    const fromDigest = summariseReports({ domain: DOMAIN, days: 30, now: NOW, aggregate: [], digest, reportCount: 6, duplicates: 1, tls, spf, ranges: shippedRanges() });
    expect(fromDigest).toEqual(summary);
    // Merging in another order gives the same digest.
    expect(mergeDigests([...digests].reverse())).toEqual(digest);
  });

  it('TLS: no failures → safe to enforce; nothing reported → nothing to judge by', () => {
    const { tls } = load(['src/google.com!spf-cloud-ec2.example!2026-11-21.json']);
    expect(tlsSummary(tls).policies[0]!.enforce).toEqual({ safe: true, answer: 'ready: all 1500 sessions from 1 reporter validated' });
    const empty = { ...tls[0]!, policies: [{ ...tls[0]!.policies[0]!, summary: { successful: 0, failed: 0 } }] };
    expect(tlsSummary([empty]).policies[0]!.enforce).toEqual({ safe: false, answer: 'no sessions reported yet: nothing to judge by' });
  });

  it('selects reports by their own date range: a 3-day window leaves out the older days', () => {
    const { aggregate } = load(FILES);
    const recent = summariseReports({ domain: DOMAIN, days: 3, now: new Date('2026-11-24T00:00:00Z'), aggregate, spf, ranges: null });
    // Reports ending after 2026-11-21 00:00: Google, Microsoft (21st), GMX (22nd); Yahoo ends 23:59:59 on the 20th.
    expect([recent.reports, recent.messages]).toEqual([3, 2063]);
    expect(recent.spfTighten).toBeNull();
  });

  it('with no reports: not ready, and says there is nothing to judge by', () => {
    const empty = summariseReports({ domain: DOMAIN, days: 30, now: NOW, aggregate: [], spf, ranges: null });
    expect(empty.readiness).toMatchObject({ verdict: 'not-ready', blockers: [], summary: 'no aggregate reports for spf-cloud-ec2.example in the last 30 days: nothing to judge by yet' });
    expect(empty.tls).toEqual({ reports: 0, policies: [] });
  });
});

/** A report of one day holding `records`. */
function reportOf(records: Partial<AggregateRecord>[], begin = 1795219200): AggregateReport {
  return {
    kind: 'aggregate',
    schema: '7489',
    namespace: null,
    version: '1.0',
    reporter: { orgName: 'r.example', email: null, extraContactInfo: null, generator: null },
    reportId: `r-${begin}`,
    dateRange: { begin, end: begin + 86399 },
    errors: [],
    policyPublished: { domain: 'test.example', adkim: 'r', aspf: 'r', p: 'none', sp: null, np: null, pct: null, fo: null, testing: null, discoveryMethod: null },
    records: records.map((r) => ({ sourceIp: '192.0.2.1', count: 1, disposition: 'none', dkimResult: 'fail', spfResult: 'fail', headerFrom: 'test.example', envelopeFrom: null, envelopeTo: null, auth: { dkim: [], spf: [] }, reasons: [], ...r })),
  };
}

describe('classification rules', () => {
  const dkim = (domain: string, selector: string | null, result: string) => ({ domain, selector, result, humanResult: null });
  const spfResult = (domain: string, result: string) => ({ domain, scope: 'mfrom', result, humanResult: null });
  it.each([
    ['passes DMARC', [{ dkimResult: 'pass' }], 'legitimate', null],
    ['mailing_list override', [{ reasons: [{ type: 'mailing_list', comment: null }] }], 'forwarded', null],
    ['trusted_forwarder override', [{ reasons: [{ type: 'trusted_forwarder', comment: null }] }], 'forwarded', null],
    ['local_policy with an ARC pass', [{ reasons: [{ type: 'local_policy', comment: 'arc=pass as[1].d=lists.example' }] }], 'forwarded', null],
    ['local_policy without forwarding', [{ reasons: [{ type: 'local_policy', comment: 'whitelisted' }] }], 'unauthorised', null],
    ['nothing authenticates', [{ auth: { dkim: [], spf: [spfResult('test.example', 'fail')] } }], 'unauthorised', null],
    ['DKIM passes for another domain', [{ auth: { dkim: [dkim('crm.example', 's1', 'pass')], spf: [] } }], 'legitimate', 'sign with d=test.example (it signs with d=crm.example)'],
    ['SPF passes for another domain', [{ auth: { dkim: [], spf: [spfResult('bounce.crm.example', 'pass')] } }], 'legitimate', 'sign with d=test.example'],
    ['own signature, unknown selector', [{ auth: { dkim: [dkim('test.example', 'new1', 'fail')], spf: [] } }], 'legitimate', 'publish selector new1: the DKIM key at new1._domainkey.test.example that this sender signs with'],
    ['known service with MAIL FROM of the domain and no include', [{ auth: { dkim: [dkim('mailgun.org', 'mx', 'fail')], spf: [spfResult('test.example', 'softfail')] } }], 'legitimate', 'add include:mailgun.org to the SPF record of test.example (Mailgun sends with MAIL FROM test.example)'],
  ] as [string, Partial<AggregateRecord>[], string, string | null][])('%s', (_, records, cls, fix) => {
    const [sender] = summariseSenders([reportOf(records)], { domain: 'test.example', days: 30, now: NOW });
    expect(sender!.class).toBe(cls);
    expect(sender!.fix).toBe(fix);
  });

  it('own signature that verifies elsewhere but broke here, and nothing says it was forwarded: unauthorised (issue 38 item 12; packages/engine/test/reports/forwarded.test.ts)', () => {
    const senders = summariseSenders(
      [reportOf([{ sourceIp: '192.0.2.1', dkimResult: 'pass', auth: { dkim: [dkim('test.example', 's1', 'pass')], spf: [] } }, { sourceIp: '192.0.2.99', auth: { dkim: [dkim('test.example', 's1', 'fail')], spf: [spfResult('list.example', 'fail')] } }])],
      { domain: 'test.example', days: 30, now: NOW },
    );
    expect(senders.find((s) => s.source === '192.0.2.99')!.class).toBe('unauthorised');
  });

  it('a forwarder whose mail sometimes keeps the signature intact: forwarded, not a blocker', () => {
    const senders = summariseSenders(
      [
        reportOf([
          { sourceIp: '192.0.2.200', count: 30, dkimResult: 'pass', auth: { dkim: [dkim('test.example', 's1', 'pass')], spf: [spfResult('forwarder.example', 'pass')] } },
          { sourceIp: '192.0.2.200', count: 4, auth: { dkim: [dkim('test.example', 's1', 'fail')], spf: [spfResult('forwarder.example', 'pass')] } },
          { sourceIp: '192.0.2.200', count: 2, reasons: [{ type: 'mailing_list', comment: null }] },
        ]),
      ],
      { domain: 'test.example', days: 30, now: NOW },
    );
    expect(senders[0]).toMatchObject({ class: 'forwarded', failing: 6, fix: null });
    expect(readiness(senders).verdict).toBe('ready');
  });

  it('an address of the own SPF pass set with another MAIL FROM: legitimate', async () => {
    const zone = '$ORIGIN test.example.\n$TTL 300\n@ IN SOA ns hostmaster 1 7200 900 1209600 300\n@ IN NS ns\n@ IN TXT "v=spf1 ip4:192.0.2.0/24 include:_spf.old.example -all"\n';
    const old = '$ORIGIN old.example.\n$TTL 300\n@ IN SOA ns hostmaster 1 7200 900 1209600 300\n@ IN NS ns\n_spf IN TXT "v=spf1 ip4:198.51.100.0/24 -all"\n';
    const analysis = await analyzeSpf('test.example', new ZoneResolver([parseZone(zone, { file: 't.zone' }), parseZone(old, { file: 'o.zone' })]));
    const reports = [reportOf([{ sourceIp: '192.0.2.7', count: 5 }])];
    const senders = summariseSenders(reports, { domain: 'test.example', days: 30, now: NOW, spf: analysis });
    expect(senders[0]).toMatchObject({ class: 'legitimate', fix: 'sign with d=test.example' });
    // The include sent nothing: a removal candidate that saves its lookup.
    expect(unusedSpfTerms(analysis, senders)).toEqual([{ term: 'include:_spf.old.example', lookupsSaved: 1 }]);
    // A sender inside the include's range: the include is used, the own range is not.
    const viaInclude = summariseSenders([reportOf([{ sourceIp: '198.51.100.5', count: 3, spfResult: 'pass' }])], { domain: 'test.example', days: 30, now: NOW, spf: analysis });
    expect(unusedSpfTerms(analysis, viaInclude)).toEqual([{ term: 'ip4:192.0.2.0/24', lookupsSaved: 0 }]);
    expect(readiness(senders, { domain: 'test.example' }).summary).toBe('5 messages from 1 legitimate sender would be rejected: fix these first');
    // No shared infrastructure in this record: nothing to tighten (the shipped provider data by default).
    expect(spfTighten(analysis, senders)).toBeNull();
    expect(spfTighten(null, senders)).toBeNull();
  });

  it('ready when every failing sender is unauthorised or forwarded', () => {
    const senders = summariseSenders([reportOf([{ sourceIp: '192.0.2.1', count: 90, dkimResult: 'pass' }, { sourceIp: '203.0.113.5', count: 10 }])], { domain: 'test.example', days: 30, now: NOW });
    expect(readiness(senders)).toMatchObject({ verdict: 'ready', summary: 'ready', reject: { messages: 10, share: 0.1, senders: ['203.0.113.5'] }, blockers: [] });
  });

  it('the window follows the reports’ own dates: a stream fixed in the last 14 days is ready over 14 days, not over 35', () => {
    const day0 = Math.floor(NOW.getTime() / 1000) - 35 * 86400;
    const reports = Array.from({ length: 35 }, (_, d) =>
      reportOf(
        [
          { sourceIp: '192.0.2.1', count: 100, dkimResult: 'pass', auth: { dkim: [dkim('test.example', 'main', 'pass')], spf: [] } },
          // The ESP signed with its own domain until 20 days ago, then with the domain's.
          d < 15 ? { sourceIp: '198.51.100.9', count: 20, auth: { dkim: [dkim('esp.example', 'e1', 'pass')], spf: [] } } : { sourceIp: '198.51.100.9', count: 20, dkimResult: 'pass', auth: { dkim: [dkim('test.example', 'esp', 'pass')], spf: [] } },
          { sourceIp: '203.0.113.50', count: 2 },
        ],
        day0 + d * 86400,
      ),
    );
    const over = (days: number) => readiness(summariseSenders(reports, { domain: 'test.example', days, now: NOW }), { domain: 'test.example', days });
    expect(over(35)).toMatchObject({ verdict: 'not-ready', summary: '300 messages from 1 legitimate sender would be rejected: fix these first' });
    expect(over(14)).toMatchObject({ verdict: 'ready', summary: 'ready', reject: { messages: 28, senders: ['203.0.113.50'] } });
  });

  it('selectorsSeen keeps valid selectors of the domain and its subdomains only', () => {
    const reports = [reportOf([{ auth: { dkim: [dkim('test.example', 'S1', 'pass'), dkim('mail.test.example', 'k2', 'fail'), dkim('other.example', 'x', 'pass'), dkim('test.example', 'bad selector', 'fail'), dkim('test.example', null, 'fail')], spf: [] } }])];
    expect(selectorsSeen(reports, 'test.example')).toEqual(['k2', 's1']);
  });
});
