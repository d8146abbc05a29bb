/**
 * The demo's DMARC aggregate (RFC 7489 §7.2, Appendix C) and TLS (RFC 8460 §4) reports (issue 42
 * item 3): written at demo start for yesterday, so that they fall in the reports' window whatever the
 * day, and stored for the demo organisation through the same ingestion as any report file. One per
 * thing the report sections show:
 *
 * - `p-reject.example`: every message passes: readiness **ready**;
 * - `p-none.example`: readiness **blocked** by a legitimate sender that authenticates as another
 *   domain (a mail service signing with its own `d=`), beside its own mail, a **forwarder** (the
 *   receiver's override says `forwarded`, with an ARC pass) and an **unauthorised sender** (nothing
 *   authenticates it);
 * - `sts-broken.example`: a TLS report whose sessions fail on the MX's certificate name (**TLS
 *   failure**), and `sts-enforced.example` one where every session succeeds.
 *
 * The reports are the demo's own: the reporters' names are the demo's (`reports.demo.example`), the
 * addresses documentation ones (RFC 5737), and nothing is fetched or sent.
 */
import type { ReportStore } from '../store/reports.js';
import { ingestReportFile, unauthenticatedOrigin } from '../ingest/ingest.js';

/** What each demo report domain shows in the report sections. */
export const DEMO_REPORT_DOMAINS: readonly { domain: string; shows: string }[] = [
  { domain: 'p-reject.example', shows: 'DMARC reports: every message passes; ready for enforcement' },
  { domain: 'p-none.example', shows: 'DMARC reports: blocked by a mail service that signs as itself; a forwarder and an unauthorised sender' },
  { domain: 'sts-broken.example', shows: 'TLS reports: sessions fail on the MX certificate name' },
  { domain: 'sts-enforced.example', shows: 'TLS reports: every session succeeds' },
];

/** A record of an aggregate report (RFC 7489 Appendix C `RecordType`). */
interface Row {
  ip: string;
  count: number;
  dkim: 'pass' | 'fail';
  spf: 'pass' | 'fail';
  /** auth_results: DKIM signatures (domain, selector, result) and the SPF identity. */
  signatures: [string, string, string][];
  spfDomain: string;
  spfResult: string;
  /** An override reason (RFC 7489 §6.6.2 PolicyOverrideType) with its comment. */
  reason?: [string, string];
}

function aggregate(reporter: string, id: string, domain: string, policy: string, begin: number, rows: readonly Row[]): string {
  const records = rows
    .map(
      (r) => `  <record>
    <row>
      <source_ip>${r.ip}</source_ip>
      <count>${r.count}</count>
      <policy_evaluated>
        <disposition>none</disposition>
        <dkim>${r.dkim}</dkim>
        <spf>${r.spf}</spf>${r.reason ? `\n        <reason><type>${r.reason[0]}</type><comment>${r.reason[1]}</comment></reason>` : ''}
      </policy_evaluated>
    </row>
    <identifiers>
      <header_from>${domain}</header_from>
    </identifiers>
    <auth_results>
${r.signatures.map(([d, s, result]) => `      <dkim>\n        <domain>${d}</domain>\n        <selector>${s}</selector>\n        <result>${result}</result>\n      </dkim>`).join('\n')}
      <spf>
        <domain>${r.spfDomain}</domain>
        <result>${r.spfResult}</result>
      </spf>
    </auth_results>
  </record>`,
    )
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<feedback>
  <version>1.0</version>
  <report_metadata>
    <org_name>${reporter}</org_name>
    <email>dmarc-reports@${reporter}</email>
    <report_id>${id}</report_id>
    <date_range>
      <begin>${begin}</begin>
      <end>${begin + 86_399}</end>
    </date_range>
  </report_metadata>
  <policy_published>
    <domain>${domain}</domain>
    <adkim>r</adkim>
    <aspf>r</aspf>
    <p>${policy}</p>
    <sp>${policy}</sp>
    <pct>100</pct>
  </policy_published>
${records}
</feedback>
`;
}

function tls(reporter: string, id: string, domain: string, mx: string, day: string, next: string, successes: number, failures: { type: string; ip: string; count: number }[]): string {
  return JSON.stringify({
    'organization-name': reporter,
    'date-range': { 'start-datetime': `${day}T00:00:00Z`, 'end-datetime': `${next}T00:00:00Z` },
    'contact-info': `tlsrpt@${reporter}`,
    'report-id': id,
    policies: [
      {
        policy: { 'policy-type': 'sts', 'policy-string': ['version: STSv1', 'mode: enforce', `mx: ${mx}`, 'max_age: 604800'], 'policy-domain': domain, 'mx-host': mx },
        summary: { 'total-successful-session-count': successes, 'total-failure-session-count': failures.reduce((n, f) => n + f.count, 0) },
        ...(failures.length > 0
          ? { 'failure-details': failures.map((f) => ({ 'result-type': f.type, 'sending-mta-ip': '192.0.2.25', 'receiving-mx-hostname': mx, 'receiving-ip': f.ip, 'failed-session-count': f.count })) }
          : {}),
      },
    ],
  });
}

/** The demo reports for the day before `now`: file names and contents. */
export function demoReportFiles(now: Date): { name: string; text: string }[] {
  const dayStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) - 86_400_000;
  const begin = dayStart / 1000;
  const day = new Date(dayStart).toISOString().slice(0, 10);
  const next = new Date(dayStart + 86_400_000).toISOString().slice(0, 10);
  const reporter = 'reports.demo.example';
  const own = (domain: string, ip: string, count: number): Row => ({ ip, count, dkim: 'pass', spf: 'pass', signatures: [[domain, 'dkim', 'pass']], spfDomain: domain, spfResult: 'pass' });
  return [
    { name: `${reporter}!p-reject.example!${begin}!${begin + 86_399}.xml`, text: aggregate(reporter, `demo-p-reject-${day}`, 'p-reject.example', 'reject', begin, [own('p-reject.example', '198.51.100.25', 1200), own('p-reject.example', '198.51.100.26', 340)]) },
    {
      name: `${reporter}!p-none.example!${begin}!${begin + 86_399}.xml`,
      text: aggregate(reporter, `demo-p-none-${day}`, 'p-none.example', 'none', begin, [
        own('p-none.example', '198.51.100.25', 900),
        // A mail service that signs with its own domain and bounces to its own: aligned with neither (a blocker).
        { ip: '198.51.100.200', count: 260, dkim: 'fail', spf: 'fail', signatures: [['esp-mail.example', 'esp', 'pass']], spfDomain: 'bounces.esp-mail.example', spfResult: 'pass' },
        // Forwarded: the domain's signature broke on the way; the receiver says forwarded, with ARC.
        { ip: '192.0.2.77', count: 35, dkim: 'fail', spf: 'fail', signatures: [['p-none.example', 'dkim', 'fail']], spfDomain: 'lists.forwarder.example', spfResult: 'pass', reason: ['local_policy', 'arc=pass; forwarded by lists.forwarder.example'] },
        // Nothing authenticates it: a forger.
        { ip: '203.0.113.66', count: 48, dkim: 'fail', spf: 'fail', signatures: [], spfDomain: 'p-none.example', spfResult: 'fail' },
      ]),
    },
    { name: `${reporter}!sts-broken.example!${day}.json`, text: tls(reporter, `demo-sts-broken-${day}`, 'sts-broken.example', 'mx.sts-broken.example', day, next, 0, [{ type: 'certificate-host-mismatch', ip: '127.0.0.2', count: 57 }]) },
    { name: `${reporter}!sts-enforced.example!${day}.json`, text: tls(reporter, `demo-sts-enforced-${day}`, 'sts-enforced.example', 'mx.sts-enforced.example', day, next, 410, []) },
  ];
}

/** Stores the demo reports for `organizationId` (the demo's); returns how many were stored. */
export async function seedDemoReports(store: ReportStore, organizationId: string, now: Date): Promise<number> {
  const sink = { store, organizationsFor: async () => [organizationId], rejectionOrganizations: [organizationId], now: () => now };
  let stored = 0;
  for (const file of demoReportFiles(now)) {
    const tally = await ingestReportFile(sink, { bytes: Buffer.from(file.text, 'utf8'), fileName: file.name }, unauthenticatedOrigin('file', null));
    if (tally.rejected.length > 0) throw new Error(`the demo report ${file.name} was refused: ${tally.rejected.map((r) => r.detail).join('; ')}`);
    stored += tally.reports.length;
  }
  return stored;
}
