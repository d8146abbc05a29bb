/**
 * Report benchmark: DMARC aggregate reports imported through the whole ingestion path of
 * `reports import` (a directory of report files, written before the clock starts, read by the parser
 * processes themselves; the XML unpacked, parsed without entities, named, and stored with their records, several reports
 * to a transaction and a savepoint each: src/ingest/report-writer.ts) on SQLite (a temp dir, WAL, as `serve --data` runs it) and on PostgreSQL (a
 * throw-away server started here with its durable defaults, as bench/store.ts does); then
 * `reports show` over 30 days of one domain.
 *
 *   npx tsx bench/reports.ts            10,000 reports of 100 records (1,000,000 rows) per backend
 *   npx tsx bench/reports.ts --quick    500 reports (50,000 rows): seconds
 *   npx tsx bench/reports.ts --smoke    40 reports: proves it runs (figures not judged)
 *   … --store sqlite | --store postgres  one store only (to profile it)
 *
 * The baseline (issue 43): the same number of rows inserted bare into the same store, in one
 * transaction, by one multi-row INSERT text (500 rows a statement) reused for every chunk, with no
 * parsing: what the database takes at most. The figure is rows stored per second through the whole
 * path ÷ the baseline's (target ≥ 0.3 on both stores); `reports show` over 30 days must take
 * ≤ 200 ms (the median, the larger of the two stores). bench/run.ts runs this as its section 7
 * (`reportIngestRatioSqlite`, `reportIngestRatioPostgres`, `reportsShowMs`).
 *
 * Reports are read one file at a time (REPORT_INGEST_IN_FLIGHT at once) and dropped once stored
 * (streaming), so memory should stay flat however many are imported: the peak resident set size is sampled every 50 ms and reported
 * with the heap. The reports cover DOMAINS domains over DAYS days, REPORTERS reports per domain and
 * day, each domain's mail from SOURCES_PER_DOMAIN addresses, so a 30-day `show` of one domain reads
 * about 30 × REPORTERS reports (12,000 records); it is timed SHOW_RUNS times (median and worst, wall
 * and CPU: on a loaded machine the CPU time is the figure to compare), without DNS (the SPF lookup is
 * the resolver's cost, not the store's).
 *
 * Measured (10,000 reports, load average 17 on 2 shared cores): SQLite 42 reports/s, 2.9 ms CPU per
 * report, RSS flat at 138 MiB, show 139 ms CPU (1,167 ms wall); PostgreSQL 24 reports/s, 3.3 ms CPU
 * per report, RSS flat at 364 MiB, show 91 ms CPU (445 ms wall). docs/benchmarks.md#reports.
 * Several reports to a transaction (December 2026, load 17–21): SQLite ratio 0.13, 4.8 ms CPU a
 * report; PostgreSQL 0.26, 4.5 ms; RSS flat (docs/benchmarks.md, "Ingestion, third pass").
 * The path to the parser, the stored form back (December 2026, `--quick`, load 8–9): the storing
 * process's CPU a report 4.9 → 4.05 ms on SQLite, 6.35 → 5.15 ms on PostgreSQL ("fourth pass").
 * Two indexes dropped (migration 0016) and SQLite's writer gathering reports on their way (December
 * 2026, `--quick`, load 5–7.5): the store's CPU a report 2.82 → 2.33 ms, 1.7 → 7.0 reports a
 * transaction on SQLite; the ratio within the noise ("fifth pass").
 * Jobs sent ahead to the parser processes (December 2026, load 4–5 on a machine taken by other
 * work): 98–100 % of parser jobs start behind another (none before: each parser waited for the
 * storing process between files); reports/s and CPU a report within the noise ("seventh pass").
 * The result line also says that share (`parserJobsAheadShare`) and how busy this process's event
 * loop was (`mainLoopBusy`; the rest it waited for parsed reports).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { limitHeapGrowth } from '../src/cli/heap-growth.js';
import { IMPORT_HEAP_GROWING_PERCENT } from '../src/cli/reports.js';
import { importPaths } from '../src/ingest/files.js';
import { reportSink } from '../src/ingest/ingest.js';
import { defaultReportParser, ReportParserPool } from '../src/ingest/parse-pool.js';
import { closeReportWriter, reportWriter } from '../src/ingest/report-writer.js';
import { showReports } from '../src/summaries/summary.js';
import { openPostgresStores } from '../src/store/postgres.js';
import { openSqliteStores } from '../src/store/sqlite.js';
import type { SqlDialectName } from '../src/store/migration-types.js';
import type { Stores } from '../src/store/types.js';
import { startPostgres } from '../test/setup/postgres.js';
import { SMOKE } from './smoke.js';

const quick = process.argv.includes('--quick') || SMOKE;
/** `--store sqlite` or `--store postgres`: one store only (a profile of one); both by default. */
const onlyStore = process.argv[process.argv.indexOf('--store') + 1];
const runs = (store: 'sqlite' | 'postgres'): boolean => !process.argv.includes('--store') || onlyStore === store;
/** Reports imported per backend. */
const REPORTS = SMOKE ? 40 : quick ? 500 : 10_000;
/** Records per report. */
const RECORDS = 100;
/** Reporters per domain and day. */
const REPORTERS = 4;
/** Domains the reports are about. */
const DOMAINS = SMOKE ? 2 : quick ? 5 : 25;
/** Days covered (REPORTS / DOMAINS / REPORTERS). */
const DAYS = Math.ceil(REPORTS / DOMAINS / REPORTERS);
/** Distinct source addresses a domain's mail comes from (its ESPs, servers, forwarders, spoofers). */
const SOURCES_PER_DOMAIN = 400;
/** `show` runs timed per backend. */
const SHOW_RUNS = SMOKE ? 3 : 20;
/** Rows per statement of the bare baseline (the store's own chunk). */
const BARE_CHUNK = 500;
/** Targets (issue 43). */
export const REPORT_INGEST_RATIO_TARGET = 0.3;
export const REPORTS_SHOW_TARGET_MS = 200;
/** Points of the import at which memory is read (each tenth of the reports). */
export const MEMORY_POINTS = 10;
/**
 * Memory is flat when the last point's heap after a full collection (and its RSS) is within this share
 * of the first point's (`memoryFlat`): what an import retains must not grow with the reports imported.
 */
export const MEMORY_FLAT_TOLERANCE = 0.25;
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

/** One store's figures. */
export interface ReportsBackendResult {
  name: string;
  reportsPerSecond: number;
  rowsPerSecond: number;
  /** The same rows inserted bare (one transaction, one multi-row INSERT text reused, no parsing). */
  bareRowsPerSecond: number;
  /** rowsPerSecond ÷ bareRowsPerSecond (target ≥ 0.3). */
  ingestRatio: number;
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
  /**
   * Of importCpuMsPerReport, the CPU of the store's `addMany` (its statements, the digest merge, the
   * commits) and the rest (the path: the parser traffic, naming, the writer); measured only where the
   * store writes synchronously on the event loop (SQLite), null elsewhere.
   */
  storeCpuMsPerReport: number | null;
  pathCpuMsPerReport: number | null;
  /** CPU time of the parser processes per report (read, unpack, parse, form, send: what they say they spent, parse-worker.ts). */
  parserCpuMsPerReport: number | null;
  /**
   * Of the parser processes' jobs, the share that started as the process answered the one before
   * (sent ahead, parse-pool.ts REPORT_PARSE_JOBS_AHEAD): 1 when the parsers never waited for work.
   */
  parserJobsAheadShare: number | null;
  /** The share of the import's wall time this process's event loop was busy (`eventLoopUtilization`): the rest it waited for parsed reports. */
  mainLoopBusy: number;
  /** Reports per transaction, on average (the writer's batches). */
  reportsPerBatch: number;
  showReports: number;
  showMessages: number;
  showSenders: number;
  /** RSS at each tenth of the import (MEMORY_POINTS), read before the collection of heapAfterGcSeriesMiB. */
  rssSeriesMiB: number[];
  /** Heap used after a full collection (`global.gc`, `--expose-gc`) at the same points: what the import retains; null without it. */
  heapAfterGcSeriesMiB: number[] | null;
  /** The last point within MEMORY_FLAT_TOLERANCE of the first, in both series (the heap's, when measured). */
  memoryFlat: boolean;
}

/** Whether `series` ends within MEMORY_FLAT_TOLERANCE of where it began. */
function flat(series: readonly number[]): boolean {
  return series.length < 2 || series[series.length - 1]! <= series[0]! * (1 + MEMORY_FLAT_TOLERANCE);
}

/**
 * The baseline: `rows` rows of report_records' shape inserted into a fresh table of the same
 * columns and key (report_records has no other index since migration 0016_report_write_indexes), in
 * one transaction, 500 rows a statement, one statement text for every chunk.
 */
async function bareInsert(db: Kysely<any>, dialect: SqlDialectName, rows: number): Promise<number> {
  const text = dialect === 'postgres' ? 'text collate "C"' : 'text';
  await sql
    .raw(
      `create table bench_bare_rows (report_pk ${text} not null, seq integer not null, organization_id ${text} not null, domain ${text} not null, begin_at bigint not null, end_at bigint not null, day ${text} not null, source_ip ${text} not null, header_from ${text} not null, disposition ${text} not null, dkim_aligned integer not null, spf_aligned integer not null, count bigint not null, detail ${text} not null, primary key (report_pk, seq))`,
    )
    .execute(db);
  const width = 14;
  const statement = (n: number) =>
    `insert into bench_bare_rows values ${Array.from({ length: n }, (_, r) => `(${Array.from({ length: width }, (_, c) => (dialect === 'postgres' ? `$${r * width + c + 1}` : '?')).join(', ')})`).join(', ')}`;
  const full = statement(BARE_CHUNK);
  const detail = JSON.stringify({ dkimResult: 'pass', spfResult: 'pass', envelopeFrom: 'bench0.example', envelopeTo: null, auth: { dkim: [{ domain: 'bench0.example', selector: 's1', result: 'pass', humanResult: null }], spf: [{ domain: 'bench0.example', scope: 'mfrom', result: 'pass', humanResult: null }] }, reasons: [] });
  const started = performance.now();
  await db.transaction().execute(async (trx) => {
    for (let start = 0; start < rows; start += BARE_CHUNK) {
      const n = Math.min(BARE_CHUNK, rows - start);
      const parameters: unknown[] = [];
      for (let i = 0; i < n; i++) {
        const k = start + i;
        parameters.push(`bare-${Math.floor(k / RECORDS)}`, k % RECORDS, ORG, `bench${k % DOMAINS}.example`, END, END + DAY - 1, '2026-10-31', `198.51.${Math.floor((k % SOURCES_PER_DOMAIN) / 250)}.${k % 250}`, 'bench0.example', 'none', 1, 1, 1 + (k % 17), detail);
      }
      await trx.executeQuery(CompiledQuery.raw(n === BARE_CHUNK ? full : statement(n), parameters));
    }
  });
  const seconds = (performance.now() - started) / 1000;
  await sql.raw('drop table bench_bare_rows').execute(db);
  return rows / seconds;
}

/** Writes the REPORTS report files into `dir` (before the clock starts), named in report order. */
async function writeReportFiles(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (let n = 0; n < REPORTS; n++) await writeFile(join(dir, `bench-${String(n).padStart(6, '0')}.xml`), reportXml(n));
}

async function measure(name: string, stores: Stores & { db: Kysely<any>; dialect: SqlDialectName }, files: string): Promise<ReportsBackendResult> {
  const sink = await reportSink(stores.reports, { organizationId: ORG });
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
  const loopStarted = performance.eventLoopUtilization();
  const cpuStarted = process.cpuUsage();
  // SQLite's addMany runs on this thread without yielding to the event loop: the CPU between its call
  // and its answer is the store's own.
  let storeCpuMicros = 0;
  if (stores.reports.serialWrites) {
    const addMany = stores.reports.addMany;
    stores.reports.addMany = async (reports) => {
      const before = process.cpuUsage();
      try {
        return await addMany(reports);
      } finally {
        const used = process.cpuUsage(before);
        storeCpuMicros += used.user + used.system;
      }
    };
  }
  let stored = 0;
  const rssSeries: number[] = [];
  const heapAfterGcSeries: number[] = [];
  // The collections of that series are the benchmark's, not the import's: their time is taken out of its figures.
  const memoryReads = { ms: 0, cpuMicros: 0 };
  // `reports import` of the directory: the parser processes read the files (REPORT_INGEST_IN_FLIGHT at
  // once) while this process stores the parsed ones, several to a transaction.
  const writer = reportWriter(stores.reports);
  const batchesBefore = { ...writer.counters };
  const parser = defaultReportParser();
  const parserBefore = parser instanceof ReportParserPool ? { ...parser.counters } : undefined;
  await importPaths([files], {
    sink,
    onInput: (result) => {
      if (result.tally.reports[0]?.outcome !== 'stored') throw new Error(`${result.input} was not stored: ${JSON.stringify(result.tally.rejected)}`);
      stored += 1;
      if (stored % Math.max(1, Math.floor(REPORTS / 10)) === 0) say(`  ${name}: ${stored} reports, ${((stored / (performance.now() - started)) * 1000).toFixed(0)}/s, rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
      if (stored % Math.max(1, Math.floor(REPORTS / MEMORY_POINTS)) === 0) {
        rssSeries.push(process.memoryUsage().rss / 2 ** 20);
        if (global.gc) {
          const [at, cpuAt] = [performance.now(), process.cpuUsage()];
          global.gc();
          heapAfterGcSeries.push(process.memoryUsage().heapUsed / 2 ** 20);
          const used = process.cpuUsage(cpuAt);
          memoryReads.ms += performance.now() - at;
          memoryReads.cpuMicros += used.user + used.system;
        }
      }
    },
  });
  const seconds = (performance.now() - started - memoryReads.ms) / 1000;
  const mainLoopBusy = performance.eventLoopUtilization(loopStarted).utilization;
  const importCpu = process.cpuUsage(cpuStarted);
  importCpu.user -= memoryReads.cpuMicros;
  const parserCpuMsPerReport = parser instanceof ReportParserPool && parserBefore ? (parser.counters.cpuMicros - parserBefore.cpuMicros) / 1000 / stored : null;
  const parserJobsAheadShare = parser instanceof ReportParserPool && parserBefore ? (parser.counters.ahead - parserBefore.ahead) / Math.max(1, parser.counters.jobs - parserBefore.jobs) : null;
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
  const bareRowsPerSecond = await bareInsert(stores.db, stores.dialect, stored * RECORDS);
  const rowsPerSecond = (stored * RECORDS) / seconds;
  return {
    name,
    reportsPerSecond: stored / seconds,
    rowsPerSecond,
    bareRowsPerSecond,
    ingestRatio: rowsPerSecond / bareRowsPerSecond,
    seconds,
    startRssMiB: startRss / 2 ** 20,
    peakRssMiB: peakRss / 2 ** 20,
    peakHeapMiB: peakHeap / 2 ** 20,
    showMedianMs: times[Math.floor(times.length / 2)]!,
    showMaxMs: times[times.length - 1]!,
    showCpuMs: cpu[Math.floor(cpu.length / 2)]!,
    importCpuMsPerReport: (importCpu.user + importCpu.system) / 1000 / stored,
    storeCpuMsPerReport: stores.reports.serialWrites ? storeCpuMicros / 1000 / stored : null,
    pathCpuMsPerReport: stores.reports.serialWrites ? (importCpu.user + importCpu.system - storeCpuMicros) / 1000 / stored : null,
    parserCpuMsPerReport,
    parserJobsAheadShare,
    mainLoopBusy,
    reportsPerBatch: (writer.counters.reports - batchesBefore.reports) / Math.max(1, writer.counters.batches - batchesBefore.batches),
    showReports: last!.summary.reports,
    showMessages: last!.summary.messages,
    showSenders: last!.summary.senders.length,
    rssSeriesMiB: rssSeries,
    heapAfterGcSeriesMiB: global.gc ? heapAfterGcSeries : null,
    memoryFlat: flat(rssSeries) && flat(heapAfterGcSeries),
  };
}

/** What a run of this benchmark gives (bench/run.ts section 7). */
export interface ReportsBenchResult {
  reports: number;
  records: number;
  domains: number;
  days: number;
  loadAverage: number;
  results: ReportsBackendResult[];
  /** rows/s through the whole path ÷ bare rows/s, per store (target ≥ 0.3). */
  ingestRatioSqlite: number | null;
  ingestRatioPostgres: number | null;
  /** The median `reports show` over 30 days, the larger of the two stores (target ≤ 200 ms). */
  showMs: number | null;
}

/** Both stores: SQLite in a temp dir, PostgreSQL started here (durable defaults). */
export async function runReportsBenchmark(): Promise<ReportsBenchResult> {
  // As `reports import` runs (src/cli/reports.ts): the old space collected at 1.5 times the live heap.
  limitHeapGrowth(IMPORT_HEAP_GROWING_PERCENT);
  say(`load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} cores`);
  say(`reports bench: ${REPORTS} reports × ${RECORDS} records = ${REPORTS * RECORDS} rows per backend; ${DOMAINS} domains, ${DAYS} days, ${REPORTERS} reporters a day${SMOKE ? ' (--smoke)' : quick ? ' (--quick)' : ''}`);
  const results: ReportsBackendResult[] = [];
  const files = await mkdtemp(join(tmpdir(), 'bench-report-files-'));
  try {
    await writeReportFiles(files);
    if (runs('sqlite')) {
      const dir = await mkdtemp(join(tmpdir(), 'bench-reports-'));
      try {
        const sqlite = (await openSqliteStores(dir, { pruneAutomatically: false })).stores;
        try {
          results.push(await measure('sqlite', sqlite, files));
        } finally {
          // The writer's background block refresh ends before its store closes (as the service's stop does).
          await closeReportWriter(sqlite.reports);
          await sqlite.close();
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
    if (runs('postgres')) {
      let server: Awaited<ReturnType<typeof startPostgres>> | undefined;
      try {
        say('starting PostgreSQL (durable defaults: fsync on) …');
        server = await startPostgres({ durable: true });
        const postgres = (await openPostgresStores(server.url, { pruneAutomatically: false })).stores;
        try {
          results.push(await measure('postgres', postgres, files));
        } finally {
          await closeReportWriter(postgres.reports);
          await postgres.close();
        }
      } finally {
        await server?.stop();
      }
    }
  } finally {
    await rm(files, { recursive: true, force: true });
  }
  for (const r of results) {
    say(
      `${r.name}: ${r.reportsPerSecond.toFixed(0)} reports/s (${r.rowsPerSecond.toFixed(0)} rows/s, ${r.seconds.toFixed(1)} s; bare ${r.bareRowsPerSecond.toFixed(0)} rows/s: ratio ${r.ingestRatio.toFixed(2)}); RSS ${r.startRssMiB.toFixed(0)} → peak ${r.peakRssMiB.toFixed(0)} MiB, heap peak ${r.peakHeapMiB.toFixed(0)} MiB; ` +
        `import CPU ${r.importCpuMsPerReport.toFixed(1)} ms/report${r.storeCpuMsPerReport === null ? '' : ` (store ${r.storeCpuMsPerReport.toFixed(2)}, path ${r.pathCpuMsPerReport!.toFixed(2)})`}${r.parserCpuMsPerReport === null ? '' : `, parser processes ${r.parserCpuMsPerReport.toFixed(2)} ms/report`}${r.parserJobsAheadShare === null ? '' : `, ${(r.parserJobsAheadShare * 100).toFixed(0)} % of parser jobs sent ahead`}, event loop busy ${(r.mainLoopBusy * 100).toFixed(0)} %, ${r.reportsPerBatch.toFixed(1)} reports a transaction; show 30 days (${r.showReports} reports, ${r.showMessages} messages, ${r.showSenders} senders): median ${r.showMedianMs.toFixed(1)} ms (CPU ${r.showCpuMs.toFixed(1)} ms), worst ${r.showMaxMs.toFixed(1)} ms`,
    );
    say(`${r.name} memory at each tenth: RSS ${r.rssSeriesMiB.map((m) => m.toFixed(0)).join(' ')} MiB; heap after a full collection ${r.heapAfterGcSeriesMiB?.map((m) => m.toFixed(0)).join(' ') ?? '(not measured: run with --expose-gc)'} MiB; flat (±${MEMORY_FLAT_TOLERANCE * 100} %): ${r.memoryFlat ? 'yes' : 'NO'}`);
  }
  const of = (name: string) => results.find((r) => r.name === name);
  return {
    reports: REPORTS,
    records: RECORDS,
    domains: DOMAINS,
    days: DAYS,
    loadAverage: loadavg()[0]!,
    results,
    ingestRatioSqlite: of('sqlite')?.ingestRatio ?? null,
    ingestRatioPostgres: of('postgres')?.ingestRatio ?? null,
    showMs: results.length === 0 ? null : Math.max(...results.map((r) => r.showMedianMs)),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(`${JSON.stringify(await runReportsBenchmark())}\n`);
}
