/**
 * Report benchmark: DMARC aggregate reports imported through the whole ingestion path (the XML
 * bytes unpacked, parsed without entities, named, and stored with their records in one
 * transaction each) on SQLite (a temp dir, WAL, as `serve --data` runs it) and on PostgreSQL (a
 * throw-away server started here with its durable defaults, as bench/store.ts does); then
 * `reports show` over 30 days of one domain.
 *
 *   npx tsx bench/reports.ts            10,000 reports of 100 records (1,000,000 rows) per backend
 *   npx tsx bench/reports.ts --quick    500 reports (50,000 rows): seconds
 *
 * Reports are generated one at a time and dropped once stored (streaming), so memory should stay
 * flat however many are imported: the peak resident set size is sampled every 50 ms and reported
 * with the heap. The reports cover DOMAINS domains over DAYS days, REPORTERS reports per domain and
 * day, each domain's mail from SOURCES_PER_DOMAIN addresses, so a 30-day `show` of one domain reads
 * about 30 × REPORTERS reports (12,000 records); it is timed SHOW_RUNS times (median and worst, wall
 * and CPU: on a loaded machine the CPU time is the figure to compare), without DNS (the SPF lookup is
 * the resolver's cost, not the store's).
 *
 * Measured (10,000 reports, load average 17 on 2 shared cores): SQLite 42 reports/s, 2.9 ms CPU per
 * report, RSS flat at 138 MiB, show 139 ms CPU (1,167 ms wall); PostgreSQL 24 reports/s, 3.3 ms CPU
 * per report, RSS flat at 364 MiB, show 91 ms CPU (445 ms wall). docs/benchmarks.md#reports.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ingestReportFile, unauthenticatedOrigin, type ReportSink } from '../src/ingest/ingest.js';
import { showReports } from '../src/summaries/summary.js';
import { openPostgresStores } from '../src/store/postgres.js';
import { openSqliteStores } from '../src/store/sqlite.js';
import type { Stores } from '../src/store/types.js';
import { startPostgres } from '../test/setup/postgres.js';

const quick = process.argv.includes('--quick');
/** Reports imported per backend. */
const REPORTS = quick ? 500 : 10_000;
/** Records per report. */
const RECORDS = 100;
/** Reporters per domain and day. */
const REPORTERS = 4;
/** Domains the reports are about. */
const DOMAINS = quick ? 5 : 25;
/** Days covered (REPORTS / DOMAINS / REPORTERS). */
const DAYS = Math.ceil(REPORTS / DOMAINS / REPORTERS);
/** Distinct source addresses a domain's mail comes from (its ESPs, servers, forwarders, spoofers). */
const SOURCES_PER_DOMAIN = 400;
/** `show` runs timed per backend. */
const SHOW_RUNS = 20;
const DAY = 86_400;
/** The last day of the generated reports. */
const END = Math.floor(Date.UTC(2026, 10, 1) / 1000);
const ORG = 'org_bench';

const say = (line: string) => process.stderr.write(`${line}\n`);

/** The XML of report `n`: its domain, day and reporter from `n`; records from a pool of sources. */
function reportXml(n: number): Buffer {
  const domain = `bench${n % DOMAINS}.example`;
  const reporter = Math.floor(n / DOMAINS) % REPORTERS;
  const day = Math.floor(n / DOMAINS / REPORTERS);
  const begin = END - (DAYS - day) * DAY;
  const records: string[] = [];
  for (let r = 0; r < RECORDS; r++) {
    const pass = r % 10 !== 0;
    // Each report sees 100 of the domain's sources; which ones shifts with the reporter and the day.
    const source = (r + reporter * 37 + day * 11) % SOURCES_PER_DOMAIN;
    const ip = `198.51.${Math.floor(source / 250)}.${source % 250}`;
    records.push(
      `<record><row><source_ip>${ip}</source_ip><count>${1 + (r % 17)}</count><policy_evaluated><disposition>none</disposition><dkim>${pass ? 'pass' : 'fail'}</dkim><spf>${r % 3 === 0 ? 'fail' : 'pass'}</spf></policy_evaluated></row>` +
        `<identifiers><header_from>${domain}</header_from><envelope_from>${domain}</envelope_from></identifiers>` +
        `<auth_results><dkim><domain>${pass ? domain : 'esp.example'}</domain><selector>s${r % 3}</selector><result>pass</result></dkim><spf><domain>${domain}</domain><result>pass</result></spf></auth_results></record>`,
    );
  }
  return Buffer.from(
    `<?xml version="1.0" encoding="UTF-8"?><feedback><version>1.0</version><report_metadata><org_name>reporter${reporter}.example</org_name><email>dmarc@reporter${reporter}.example</email>` +
      `<report_id>bench-${n}</report_id><date_range><begin>${begin}</begin><end>${begin + DAY - 1}</end></date_range></report_metadata>` +
      `<policy_published><domain>${domain}</domain><adkim>r</adkim><aspf>r</aspf><p>none</p><sp>none</sp><pct>100</pct></policy_published>${records.join('')}</feedback>`,
  );
}

interface BackendResult {
  name: string;
  reportsPerSecond: number;
  rowsPerSecond: number;
  seconds: number;
  peakRssMiB: number;
  startRssMiB: number;
  peakHeapMiB: number;
  showMedianMs: number;
  showMaxMs: number;
  /** CPU time of this process per `show` (median): what the machine's load does not inflate. */
  showCpuMs: number;
  /** CPU time of this process per report imported. */
  importCpuMsPerReport: number;
  showReports: number;
  showMessages: number;
  showSenders: number;
}

async function measure(name: string, stores: Stores): Promise<BackendResult> {
  const sink: ReportSink = { store: stores.reports, organizationsFor: async () => [ORG], rejectionOrganizations: [ORG] };
  const origin = unauthenticatedOrigin('file', null);
  global.gc?.();
  const startRss = process.memoryUsage().rss;
  let peakRss = startRss;
  let peakHeap = process.memoryUsage().heapUsed;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  }, 50);
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  let stored = 0;
  for (let n = 0; n < REPORTS; n++) {
    const tally = await ingestReportFile(sink, { bytes: reportXml(n), fileName: `bench-${n}.xml` }, origin);
    if (tally.reports[0]?.outcome !== 'stored') throw new Error(`report ${n} was not stored: ${JSON.stringify(tally.rejected)}`);
    stored += 1;
    if (n > 0 && n % Math.max(1, Math.floor(REPORTS / 10)) === 0) say(`  ${name}: ${n} reports, ${((n / (performance.now() - started)) * 1000).toFixed(0)}/s, rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
  }
  const seconds = (performance.now() - started) / 1000;
  const importCpu = process.cpuUsage(cpuStarted);
  clearInterval(sampler);
  // show: the newest 30 days of one domain, SHOW_RUNS times.
  const times: number[] = [];
  const cpu: number[] = [];
  let last: Awaited<ReturnType<typeof showReports>> | undefined;
  for (let i = 0; i < SHOW_RUNS; i++) {
    const t = performance.now();
    const c = process.cpuUsage();
    last = await showReports({ store: stores.reports, organizationId: ORG, domain: 'bench0.example', days: 30, now: new Date(END * 1000) });
    const used = process.cpuUsage(c);
    cpu.push((used.user + used.system) / 1000);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  return {
    name,
    reportsPerSecond: stored / seconds,
    rowsPerSecond: (stored * RECORDS) / seconds,
    seconds,
    startRssMiB: startRss / 2 ** 20,
    peakRssMiB: peakRss / 2 ** 20,
    peakHeapMiB: peakHeap / 2 ** 20,
    showMedianMs: times[Math.floor(times.length / 2)]!,
    showMaxMs: times[times.length - 1]!,
    showCpuMs: cpu[Math.floor(cpu.length / 2)]!,
    importCpuMsPerReport: (importCpu.user + importCpu.system) / 1000 / stored,
    showReports: last!.summary.reports,
    showMessages: last!.summary.messages,
    showSenders: last!.summary.senders.length,
  };
}

async function main(): Promise<void> {
  say(`load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} cores`);
  say(`reports bench: ${REPORTS} reports × ${RECORDS} records = ${REPORTS * RECORDS} rows per backend; ${DOMAINS} domains, ${DAYS} days, ${REPORTERS} reporters a day${quick ? ' (--quick)' : ''}`);
  const results: BackendResult[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'bench-reports-'));
  try {
    const sqlite = (await openSqliteStores(dir, { pruneAutomatically: false })).stores;
    try {
      results.push(await measure('sqlite', sqlite));
    } finally {
      await sqlite.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  let server: Awaited<ReturnType<typeof startPostgres>> | undefined;
  try {
    say('starting PostgreSQL (durable defaults: fsync on) …');
    server = await startPostgres({ durable: true });
    const postgres = (await openPostgresStores(server.url, { pruneAutomatically: false })).stores;
    try {
      results.push(await measure('postgres', postgres));
    } finally {
      await postgres.close();
    }
  } catch (error) {
    say(`PostgreSQL not measured: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    await server?.stop();
  }
  for (const r of results) {
    say(
      `${r.name}: ${r.reportsPerSecond.toFixed(0)} reports/s (${r.rowsPerSecond.toFixed(0)} rows/s, ${r.seconds.toFixed(1)} s); RSS ${r.startRssMiB.toFixed(0)} → peak ${r.peakRssMiB.toFixed(0)} MiB, heap peak ${r.peakHeapMiB.toFixed(0)} MiB; ` +
        `import CPU ${r.importCpuMsPerReport.toFixed(1)} ms/report; show 30 days (${r.showReports} reports, ${r.showMessages} messages, ${r.showSenders} senders): median ${r.showMedianMs.toFixed(1)} ms (CPU ${r.showCpuMs.toFixed(1)} ms), worst ${r.showMaxMs.toFixed(1)} ms`,
    );
  }
  process.stdout.write(`${JSON.stringify({ reports: REPORTS, records: RECORDS, domains: DOMAINS, days: DAYS, loadAverage: loadavg()[0], results })}\n`);
}

await main();
