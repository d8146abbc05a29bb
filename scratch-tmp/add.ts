import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { digestReports, parseAggregateReport, unpackReportFile } from '@spoof-checker/engine';
import { recordRow } from '../src/ingest/ingest.js';
import { openSqliteStores } from '../src/store/sqlite.js';
import type { NewReport } from '../src/store/reports.js';
const src = await import('./prof-xml.js');
const N = 400;
const xmls = Array.from({ length: N }, (_, n) => src.reportXml(n));
const parsed = xmls.map((x) => { const u = unpackReportFile(x, {}); if (!u.ok) throw new Error(); const p = parseAggregateReport(u.documents[0]!.bytes); if (!p.ok) throw new Error(); return p.report; });
for (const variant of (process.argv[2] ?? 'full,no-digest,no-records').split(',')) {
  const dir = await mkdtemp(join(tmpdir(), 'add-'));
  const { stores } = await openSqliteStores(dir, { pruneAutomatically: false });
  const reports: NewReport[] = parsed.map((r, n) => ({ id: `r${n}`, organizationId: 'o', kind: 'aggregate', identity: `i${n}`, domain: r.policyPublished.domain, begin: r.dateRange.begin, end: r.dateRange.end, reporter: 'x', orgName: 'x', reportId: r.reportId,
    origin: { channel: 'file', fileName: null, sender: null, messageId: null, authenticatedDomain: null, dkim: 'none', spf: 'none', dmarc: 'none', receivedAt: '2026-01-01T00:00:00Z' }, document: '{}',
    records: variant === 'no-records' ? [] : r.records.map(recordRow), trusted: true, digest: variant === 'no-digest' ? [] : digestReports([r], r.policyPublished.domain).senders }));
  const t = performance.now(); const c = process.cpuUsage();
  for (const r of reports) await stores.reports.add(r);
  const u = process.cpuUsage(c);
  console.log(variant, 'per report', ((performance.now() - t) / N).toFixed(2), 'ms wall', ((u.user + u.system) / 1000 / N).toFixed(2), 'ms cpu');
  await stores.close();
}
