import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ingestReportFile, unauthenticatedOrigin } from '../src/ingest/ingest.js';
import { showReports } from '../src/summaries/summary.js';
import { openSqliteStores } from '../src/store/sqlite.js';
const N = Number(process.argv[2] ?? 200000);
const channel = (process.argv[3] ?? 'upload') as 'upload' | 'https';
const begin = Math.floor(Date.UTC(2026, 10, 20) / 1000);
const recs: string[] = [];
for (let i = 0; i < N; i++) {
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  recs.push(`<record><row><source_ip>${ip}</source_ip><count>1</count><policy_evaluated><disposition>none</disposition><dkim>fail</dkim><spf>fail</spf></policy_evaluated></row><identifiers><header_from>victim.example</header_from></identifiers>${i % 10 === 0 ? `<auth_results><dkim><domain>victim.example</domain><selector>s${i % 50}</selector><result>fail</result></dkim></auth_results>` : ''}</record>`);
}
const xml = Buffer.from(`<?xml version="1.0"?><feedback><report_metadata><org_name>x</org_name><email>a@x.example</email><report_id>big</report_id><date_range><begin>${begin}</begin><end>${begin + 86399}</end></date_range></report_metadata><policy_published><domain>victim.example</domain><p>none</p></policy_published>${recs.join('')}</feedback>`);
const { gzipSync } = await import('node:zlib');
const gz = gzipSync(xml);
console.log('xml', xml.length, 'gzip', gz.length);
const dir = await mkdtemp(join(tmpdir(), 'big-'));
const { stores } = await openSqliteStores(dir, { pruneAutomatically: false });
let t = performance.now();
const tally = await ingestReportFile({ store: stores.reports, organizationsFor: async () => ['o'], rejectionOrganizations: ['o'] }, { bytes: gz, fileName: 'big.xml.gz' }, unauthenticatedOrigin(channel, null));
console.log('ingest', (performance.now() - t).toFixed(0), 'ms', tally.reports[0]?.outcome, tally.rejected[0]);
for (let i = 0; i < 3; i++) {
  t = performance.now();
  const shown = await showReports({ store: stores.reports, organizationId: 'o', domain: 'victim.example', days: 30, now: new Date((begin + 5 * 86400) * 1000) });
  const bytes = JSON.stringify(shown.summary).length;
  console.log('show', (performance.now() - t).toFixed(0), 'ms', bytes, 'bytes', shown.summary.senders.length, shown.summary.sendersLeftOut, shown.summary.untrusted.sources.length, shown.summary.untrusted.sourcesLeftOut);
}
await stores.close();
{
  const { stores } = await openSqliteStores(dir, { pruneAutomatically: false });
  const { summariseDigestSenders, shippedRanges } = await import('@spoof-checker/engine');
  let t0 = performance.now();
  const e = await stores.reports.senderDays('o', 'victim.example', { from: '2026-01-01', to: '2026-12-31' }, true);
  console.log('senderDays', (performance.now() - t0).toFixed(0), e.length);
  t0 = performance.now();
  summariseDigestSenders(e, { domain: 'victim.example', days: 30, now: new Date((begin + 5 * 86400) * 1000), ranges: null });
  console.log('senders no ranges', (performance.now() - t0).toFixed(0));
  t0 = performance.now();
  summariseDigestSenders(e, { domain: 'victim.example', days: 30, now: new Date((begin + 5 * 86400) * 1000), ranges: shippedRanges() });
  console.log('senders ranges', (performance.now() - t0).toFixed(0));
  await stores.close();
}
