/**
 * Micro-benchmark of the report engine (packages/engine/src/reports/): parse speed of a large DMARC
 * aggregate report, as a ratio to `JSON.parse` of the same data (the baseline: V8's native parser
 * over the same records as JSON), unpacking its gzip, and `summariseReports` over 30 days of
 * reports (10,000 reports, 100 rows each: a million rows), from the rows and from their digest.
 *
 *   npx tsx bench/reports-parse.ts [--quick]
 *
 * Figures are medians of several runs, in CPU time of this process (`process.cpuUsage`, user and
 * system), which a machine shared with other work disturbs far less than wall time; the ratio is what
 * carries to other machines.
 */
import { gzipSync } from 'node:zlib';
import { digestReports, mergeDigests, parseAggregateReport, parseXml, summariseReports, unpackReportFile, type AggregateReport } from '../packages/engine/src/index.js';

const quick = process.argv.includes('--quick');
const RECORDS = quick ? 5_000 : 50_000;
const RUNS = quick ? 3 : 7;
const SUMMARY_REPORTS = quick ? 1_000 : 10_000;
const ROWS_PER_REPORT = 100;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Milliseconds of CPU this process spent in `run`. */
function cpuMs(run: () => unknown): number {
  const start = process.cpuUsage();
  run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

function time(run: () => unknown): number {
  const times: number[] = [];
  run();
  for (let i = 0; i < RUNS; i++) times.push(cpuMs(run));
  return median(times);
}

interface Row {
  ip: string;
  count: number;
  dkim: string;
  spf: string;
  selector: string;
}

function rows(n: number, seed: number): Row[] {
  return Array.from({ length: n }, (_, i) => ({
    ip: `198.51.${(i >> 8) & 255}.${(i + seed) & 255}`,
    count: (i % 17) + 1,
    dkim: i % 5 === 0 ? 'fail' : 'pass',
    spf: i % 7 === 0 ? 'fail' : 'pass',
    selector: `s${i % 3}`,
  }));
}

function xmlOf(list: Row[], id: string, begin: number): string {
  const records = list
    .map(
      (r) =>
        `<record><row><source_ip>${r.ip}</source_ip><count>${r.count}</count><policy_evaluated><disposition>none</disposition><dkim>${r.dkim}</dkim><spf>${r.spf}</spf></policy_evaluated></row><identifiers><header_from>bench.example</header_from></identifiers><auth_results><dkim><domain>bench.example</domain><selector>${r.selector}</selector><result>${r.dkim}</result></dkim><spf><domain>bench.example</domain><scope>mfrom</scope><result>${r.spf}</result></spf></auth_results></record>`,
    )
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<feedback><version>1.0</version><report_metadata><org_name>bench</org_name><email>b@bench.example</email><report_id>${id}</report_id><date_range><begin>${begin}</begin><end>${begin + 86399}</end></date_range></report_metadata><policy_published><domain>bench.example</domain><adkim>r</adkim><aspf>r</aspf><p>none</p><sp>none</sp><pct>100</pct></policy_published>\n${records}\n</feedback>\n`;
}

function jsonOf(list: Row[]): string {
  return JSON.stringify({
    report_metadata: { org_name: 'bench', email: 'b@bench.example', report_id: 'x', date_range: { begin: 0, end: 86399 } },
    policy_published: { domain: 'bench.example', adkim: 'r', aspf: 'r', p: 'none', sp: 'none', pct: 100 },
    record: list.map((r) => ({
      row: { source_ip: r.ip, count: r.count, policy_evaluated: { disposition: 'none', dkim: r.dkim, spf: r.spf } },
      identifiers: { header_from: 'bench.example' },
      auth_results: { dkim: [{ domain: 'bench.example', selector: r.selector, result: r.dkim }], spf: [{ domain: 'bench.example', scope: 'mfrom', result: r.spf }] },
    })),
  });
}

const list = rows(RECORDS, 0);
const xml = xmlOf(list, 'big', 1795219200);
const xmlBytes = Buffer.from(xml);
const json = jsonOf(list);
const gz = gzipSync(xmlBytes);

// Our parser and the baseline alternate, run by run, so a busy machine slows both alike: the ratio is the median of the pairs.
const pairs: { ours: number; baseline: number }[] = [];
const parseOnce = (): void => {
  const outcome = parseAggregateReport(xmlBytes);
  if (!outcome.ok || outcome.report.records.length !== RECORDS) throw new Error('bench report did not parse');
};
parseOnce();
JSON.parse(json);
for (let i = 0; i < RUNS; i++) {
  const ours = cpuMs(parseOnce);
  pairs.push({ ours, baseline: cpuMs(() => JSON.parse(json)) });
}
const parseMs = median(pairs.map((p) => p.ours));
const jsonMs = median(pairs.map((p) => p.baseline));
const ratio = median(pairs.map((p) => p.ours / p.baseline));
const xmlOnlyMs = time(() => parseXml(xmlBytes));
const unpackMs = time(() => unpackReportFile(gz));

// 30 days of reports, a million rows: what `reports show` computes.
const reports: AggregateReport[] = [];
const now = 1795219200 + 86400;
for (let i = 0; i < SUMMARY_REPORTS; i++) {
  const begin = now - 86400 * (1 + (i % 30));
  const outcome = parseAggregateReport(xmlOf(rows(ROWS_PER_REPORT, i), `r-${i}`, begin));
  if (!outcome.ok) throw new Error('summary report did not parse');
  reports.push(outcome.report);
}
const summaryMs = time(() => summariseReports({ domain: 'bench.example', days: 30, now, aggregate: reports, spf: null, ranges: null }));
// The same through digests: one per report at import (what a store would keep), merged, then summarised.
const digestMs = time(() => reports.map((r) => digestReports([r], 'bench.example')));
const digests = reports.map((r) => digestReports([r], 'bench.example'));
const mergeMs = time(() => mergeDigests(digests));
const merged = mergeDigests(digests);
const fromDigestMs = time(() => summariseReports({ domain: 'bench.example', days: 30, now, aggregate: [], digest: merged, reportCount: reports.length, spf: null, ranges: null }));

const mb = xmlBytes.length / 1024 / 1024;
const result = {
  records: RECORDS,
  xmlMiB: Number(mb.toFixed(2)),
  parseAggregateMs: Number(parseMs.toFixed(1)),
  parseXmlOnlyMs: Number(xmlOnlyMs.toFixed(1)),
  jsonParseBaselineMs: Number(jsonMs.toFixed(1)),
  ratioToJsonParse: Number(ratio.toFixed(2)),
  recordsPerSecond: Math.round(RECORDS / (parseMs / 1000)),
  mibPerSecond: Number((mb / (parseMs / 1000)).toFixed(1)),
  gzipBytes: gz.length,
  unpackMs: Number(unpackMs.toFixed(1)),
  summary: {
    reports: SUMMARY_REPORTS,
    rows: SUMMARY_REPORTS * ROWS_PER_REPORT,
    summariseReportsMs: Number(summaryMs.toFixed(1)),
    digestEveryReportMs: Number(digestMs.toFixed(1)),
    mergeDigestsMs: Number(mergeMs.toFixed(1)),
    digestEntries: merged.senders.length,
    summariseFromDigestMs: Number(fromDigestMs.toFixed(1)),
  },
};
console.log(JSON.stringify(result, null, 2));
