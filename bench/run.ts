/**
 * The benchmark suite (`npm run bench`): five figures, each against a baseline measured in the
 * same run, printed as a table and written to bench/results.json.
 *
 *   npm run bench                   full run (several minutes)
 *   npm run bench -- --quick        shorter runs and smaller scans (under a minute)
 *   npm run bench -- --json         … and end with one JSON line of the headline figures
 *   npm run bench -- --only warm,spf   run some sections: warm, shared, features, cold, http, spf, scan, store
 *   npm run bench -- --source       measure src/ through tsx instead of the build in dist/
 *   npm run bench -- --smoke        the smallest run of every section (seconds; figures not judged: bench/smoke.ts)
 *   npm run bench -- --out FILE     write the results to FILE instead of bench/results.json
 *   npm run bench -- --no-build     measure the build already in dist/ (as the smoke test does: a rebuild would
 *                                   rewrite files other tests are running)
 *
 * Sections: 1 the engine warm (bench/engine-warm.ts), 1b what the shared-infrastructure classification adds
 * to it (bench/shared-infrastructure.ts), 2 the engine cold over loopback DNS
 * (bench/engine-cold.ts), 3 the HTTP service (bench/http.ts), 4 SPF against mailauth
 * (bench/spf-vs-mailauth.ts), 5 the bulk scan (bench/scan.ts), 6 the stores (bench/store.ts). Every rate is the median of at least
 * five runs, with the lowest and highest; warm-up is stated per section.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { cpus, totalmem, type as osType, release } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { runEngineColdBenchmark, type EngineColdResult } from './engine-cold.js';
import { ENGINE_WARM_RATIO_TARGET, runEngineWarmBenchmark, type EngineWarmResult } from './engine-warm.js';
import { runSharedInfrastructureBenchmark, type SharedInfrastructureBenchResult } from './shared-infrastructure.js';
import { FEATURE_LABELS, runEngineFeaturesBenchmark, type EngineFeaturesResult } from './engine-features.js';
import { BENCH_TSCONFIG, buildEngine, loadEngine, PACKAGE_ROOT } from './engine.js';
import { runHttpBenchmark, type HttpBenchResult } from './http.js';
import { runResolverScanBenchmark, runScanBenchmark, SCAN_MILLION_RATE_TARGET, type ScanBenchResult } from './scan.js';
import { runSpfBenchmark, type SpfBenchmarkResult } from './spf-vs-mailauth.js';
import { runStoreBenchmark, type StoreBenchResult } from './store.js';
import { MEMORY_FLAT_TOLERANCE, REPORT_INGEST_RATIO_TARGET, REPORTS_SHOW_TARGET_MS, type ReportsBenchResult } from './reports.js';
import { formatCount, formatMeasured, formatRatio } from './stats.js';
import { createKeyPool } from './synthetic.js';
import { SMOKE } from './smoke.js';
import { DNSSEC_COLD_RATIO_TARGET, DNSSEC_SIGNED_COLD_RATIO_TARGET, DNSSEC_WARM_RATIO_TARGET, runDnssecBenchmark, type DnssecBenchResult } from './dnssec.js';

/** The sections, in the order they run. */
export const SECTIONS = ['warm', 'shared', 'features', 'cold', 'http', 'spf', 'scan', 'store', 'dnssec', 'reports'] as const;
export type Section = (typeof SECTIONS)[number];

/** The SPF target: at least this many times mailauth's evaluations per second. */
export const SPF_TARGET_RATIO = 2;
/** Where the results go. */
export const RESULTS_FILE = join(PACKAGE_ROOT, 'bench', 'results.json');

/** The machine a run measured. */
export interface Machine {
  node: string;
  cpu: string;
  cores: number;
  memoryGb: number;
  os: string;
}

/** One line of the table. */
export interface Row {
  section: string;
  figure: string;
  value: string;
  baseline: string;
  ratio: string;
  target: string;
  met: boolean | null;
}

/** Everything a run produced. */
export interface BenchResults {
  mode: 'smoke' | 'quick' | 'full';
  engine: 'build' | 'source';
  startedAt: string;
  seconds: number;
  machine: Machine;
  /** Sections that could not be measured, with why. */
  failures: { section: string; error: string }[];
  warm?: EngineWarmResult;
  /** What the shared-infrastructure classification adds to a warm check. */
  shared?: SharedInfrastructureBenchResult;
  /** What each part of a warm check costs. */
  features?: EngineFeaturesResult;
  cold?: EngineColdResult;
  http?: HttpBenchResult;
  spf?: SpfBenchmarkResult;
  scan?: ScanBenchResult;
  /** The same scan with `--resolver`, against the embedded DNS server in another process. */
  scanResolver?: ScanBenchResult;
  store?: StoreBenchResult;
  /** DNSSEC validation on and off over the signed fixtures (bench/dnssec.ts). */
  dnssec?: DnssecBenchResult;
  /** DMARC reports through the whole path against the same rows inserted bare; `reports show` (bench/reports.ts). */
  reports?: ReportsBenchResult;
  rows: Row[];
  /** The headline figures (also the last line of `--json`). */
  summary: Summary;
}

/** The headline figures; null for a section that did not run. */
export interface Summary {
  engineWarmChecksPerSec: number | null;
  engineWarmRatioToTarget: number | null;
  /** A warm check's rate over the bare lookups it makes, replayed in the same run (the service's shape: a warm cache; target ≥ 0.6). */
  warmRatioToBareLookups: number | null;
  /** Share of a warm check the shared-infrastructure classification costs (target < 0.05). */
  sharedInfrastructureCost: number | null;
  engineColdRatioToCeiling: number | null;
  queriesPerCheck: number | null;
  httpRatioToBaseline: number | null;
  spfVsMailauth: number | null;
  /** Our DMARC discovery against mailauth's getDmarcRecord (discoveries/s ratio). */
  dmarcVsMailauth: number | null;
  scanPeakRssMb: number | null;
  /** `scan --resolver` against a DNS server: the largest peak RSS over the sizes, in MB (target ≤ 300, flat). */
  scanResolverPeakRssMb: number | null;
  /** `scan --zones` over a million zone files (200,000 with --quick), read on demand: peak RSS in MB (target ≤ 300). */
  scanMillionPeakRssMb: number | null;
  /** That run's domains/s ÷ the 100,000-file run's (target ≥ 0.8). */
  scanMillionRateRatio: number | null;
  /** Warm checks/s with DNSSEC validation ÷ without, same run (target ≥ 0.5). */
  dnssecWarmRatio: number | null;
  /** Cold checks/s with DNSSEC validation ÷ without, concurrency 16, same run (target ≥ 0.5). */
  dnssecColdRatio: number | null;
  /** Report rows stored per second through the whole path ÷ the same rows inserted bare, SQLite (target ≥ 0.3). */
  reportIngestRatioSqlite: number | null;
  /** The same on PostgreSQL (target ≥ 0.3). */
  reportIngestRatioPostgres: number | null;
  /** `reports show` over 30 days, median, the larger of the two stores, in ms (target ≤ 200). */
  reportsShowMs: number | null;
  /** Memory over the 10,000-report import, last tenth ÷ first (RSS, and heap after a full GC), the largest of the stores (flat: ≤ 1 + MEMORY_FLAT_TOLERANCE). */
  reportsMemoryGrowth: number | null;
}

/** The machine: Node version, CPU model from /proc/cpuinfo (else os.cpus()), cores, memory. */
export function describeMachine(): Machine {
  let cpu = cpus()[0]?.model ?? 'unknown';
  try {
    const model = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (model?.[1]) cpu = model[1].trim();
  } catch {
    // Not Linux: os.cpus() said it.
  }
  return { node: process.version, cpu, cores: cpus().length, memoryGb: Math.round(totalmem() / 1024 ** 3), os: `${osType()} ${release()}` };
}

function parseArgs(argv: readonly string[]): { quick: boolean; json: boolean; source: boolean; build: boolean; only: Set<Section>; out: string } {
  const at = argv.indexOf('--only');
  const listed = at === -1 ? undefined : (argv[at + 1] ?? '').split(',').filter(Boolean);
  for (const name of listed ?? []) {
    if (!(SECTIONS as readonly string[]).includes(name)) throw new Error(`--only: unknown section "${name}" (sections: ${SECTIONS.join(', ')})`);
  }
  const outAt = argv.indexOf('--out');
  if (outAt !== -1 && (argv[outAt + 1] ?? '').trim() === '') throw new Error('--out needs a file');
  return {
    quick: argv.includes('--quick') || SMOKE,
    out: outAt === -1 ? RESULTS_FILE : argv[outAt + 1]!,
    json: argv.includes('--json'),
    build: !argv.includes('--no-build'),
    source: argv.includes('--source'),
    only: new Set((listed ?? SECTIONS) as Section[]),
  };
}

/** The table rows of whatever sections ran. */
export function rowsOf(results: Omit<BenchResults, 'rows' | 'summary'>): Row[] {
  const rows: Row[] = [];
  const { warm, cold, http, spf, scan } = results;
  for (const failure of results.failures) {
    rows.push({ section: failure.section, figure: 'could not be measured', value: failure.error.slice(0, 160), baseline: '', ratio: '', target: '', met: false });
  }
  if (warm) {
    for (const [label, source] of [['zone resolver', warm.zone], ['warm cache over it', warm.cache]] as const) {
      rows.push({
        section: '1 engine, warm',
        figure: `checks/s, one core (${label}; ${source.cpuUsPerCheck.toFixed(1)} µs CPU/check, lookups ${source.cpuUsPerLookupSet.toFixed(1)})`,
        value: formatMeasured(source.engine),
        baseline: `bare lookups: ${formatMeasured(source.baseline)} sets/s`,
        ratio: `${formatRatio(source.ratioToBaseline)} of baseline; ${formatRatio(source.ratioToTarget)} of ${formatCount(warm.target)}/s`,
        target: `≥ ${formatRatio(ENGINE_WARM_RATIO_TARGET)} of baseline`,
        met: source.ratioToBaseline >= ENGINE_WARM_RATIO_TARGET,
      });
    }
  }
  if (results.shared) {
    const shared = results.shared;
    for (const [label, pair] of [[`classified (${shared.classified}/${shared.domains} pass sets)`, shared.usual], ['empty pass set (v=spf1 -all)', shared.emptyPassSet]] as const) {
      rows.push({
        section: '1b shared infrastructure',
        figure: `warm checks/s with the classification, ${label}`,
        value: formatMeasured(pair.withClassification),
        baseline: `without (ranges: false): ${formatMeasured(pair.without)}`,
        ratio: `costs ${(pair.cost * 100).toFixed(1)}%`,
        target: `< ${(shared.target * 100).toFixed(0)}%`,
        met: pair.cost < shared.target,
      });
    }
  }
  if (results.features) {
    const { checkUs, features } = results.features;
    for (const part of features) {
      const own = part.bareLookupsUs === null ? null : Math.max(0, part.us.median - part.bareLookupsUs);
      rows.push({
        section: '1c cost per part of a warm check',
        figure: `µs per check: ${FEATURE_LABELS[part.feature]}`,
        value: part.feature === 'rest' ? part.us.median.toFixed(1) : `${part.us.median.toFixed(1)} (${part.us.min.toFixed(1)}–${part.us.max.toFixed(1)})`,
        baseline: part.bareLookupsUs === null ? (part.feature === 'rest' ? `whole check: ${checkUs.median.toFixed(1)} µs, less the parts` : 'no lookups') : `its ${part.lookups.toFixed(1)} bare lookups: ${part.bareLookupsUs.toFixed(1)} µs`,
        ratio: `${(part.share * 100).toFixed(1)}% of a check${own === null ? '' : `; own work ${own.toFixed(1)} µs`}`,
        target: part.feature === 'shared' ? '< 5%' : '',
        met: part.feature === 'shared' ? part.share < 0.05 : null,
      });
    }
  }
  if (cold) {
    for (const level of cold.levels) {
      rows.push({
        section: '2 engine, cold (loopback DNS)',
        figure: `checks/s at concurrency ${level.concurrency} (p50 ${level.p50Ms.toFixed(1)} ms, ${formatCount(level.cpuUsPerCheck)} µs CPU/check${level.failedChecks ? `, ${level.failedChecks} failed` : ''})`,
        value: formatMeasured(level.checksPerSec),
        baseline: `ceiling ${formatCount(cold.ceilingChecksPerSec)}/s (${formatCount(cold.rawQueriesPerSec.median)} q/s ÷ ${cold.queriesPerCheck.toFixed(1)} q/check)`,
        ratio: `${formatRatio(level.ratioToCeiling)} of ceiling; ${formatRatio(level.checksPerSec.median / cold.caresChecksPerSec)} of c-ares alone`,
        target: `≥ ${formatRatio(cold.target)}`,
        met: level.ratioToCeiling >= cold.target,
      });
    }
  }
  if (http) {
    rows.push({
      section: '3 HTTP',
      figure: `POST spoof-checker req/s on SQLite (p50 ${http.check.p50Ms} ms, p99 ${http.check.p99Ms} ms)`,
      value: formatMeasured(http.check.requestsPerSec),
      baseline: `same route on the memory store ${formatMeasured(http.checkMemory.requestsPerSec)} (p50 ${http.checkMemory.p50Ms} ms); GET /healthz ${formatMeasured(http.healthz.requestsPerSec)} (p50 ${http.healthz.p50Ms} ms)`,
      ratio: `${formatRatio(http.ratioToBaseline)} of memory; ${formatRatio(http.ratioToHealthz)} of /healthz`,
      target: `≥ ${formatRatio(http.target)}`,
      met: http.ratioToBaseline >= http.target,
    });
  }
  if (spf) {
    rows.push({
      section: '4 SPF vs mailauth',
      figure: `check_host()/s, RFC 7208 suite (${spf.agreement.ours}/${spf.agreement.total} agree)`,
      value: `${formatCount(spf.ours)} (${formatCount(spf.spread.ours.min)}–${formatCount(spf.spread.ours.max)})`,
      baseline: `mailauth ${spf.mailauthVersion} ${formatCount(spf.mailauth)} (${formatCount(spf.spread.mailauth.min)}–${formatCount(spf.spread.mailauth.max)}), ${spf.agreement.mailauth}/${spf.agreement.total} agree`,
      ratio: formatRatio(spf.ratio),
      target: `≥ ${formatRatio(SPF_TARGET_RATIO)}`,
      met: spf.ratio >= SPF_TARGET_RATIO,
    });
    rows.push({
      section: '4 DMARC vs mailauth',
      figure: `discoveries/s, fixture zones (${spf.dmarc.agreement.same}/${spf.dmarc.agreement.total} same record domain)`,
      value: formatCount(spf.dmarc.ours),
      baseline: `mailauth ${spf.mailauthVersion} getDmarcRecord ${formatCount(spf.dmarc.mailauth)}`,
      ratio: formatRatio(spf.dmarc.ratio),
      target: '(reported)',
      met: null,
    });
  }
  if (scan) {
    for (const size of scan.sizes) {
      rows.push({
        section: '5 bulk scan',
        figure: `${formatCount(size.domains)} domains: domains/s (load ${size.loadSeconds.toFixed(1)} s)`,
        value: `${formatCount(size.domainsPerSec)}/s; peak RSS ${size.peakRssMb.toFixed(0)} MB`,
        baseline: `RSS with zones loaded ${size.rssAtFirstResultMb.toFixed(0)} MB; scan adds ${size.scanGrowthMb.toFixed(0)} MB`,
        ratio: size === scan.sizes[scan.sizes.length - 1] && Number.isFinite(scan.rssGrowth) ? `peak ${formatRatio(scan.rssGrowth)} of smallest` : '',
        target: `< ${scan.target} MB, flat`,
        met: size.peakRssMb < scan.target,
      });
    }
    for (const failure of scan.failed) {
      rows.push({
        section: '5 bulk scan',
        figure: `${formatCount(failure.domains)} domains: could not be scanned`,
        value: failure.error.slice(0, 160),
        baseline: '',
        ratio: '',
        target: `< ${scan.target} MB, flat`,
        met: false,
      });
    }
  }
  if (scan?.million) {
    const million = scan.million;
    const largest = scan.sizes[scan.sizes.length - 1];
    rows.push(
      'error' in million
        ? {
            section: '5 bulk scan',
            figure: `${formatCount(million.domains)} zone files: could not be scanned`,
            value: million.error.slice(0, 160),
            baseline: '',
            ratio: '',
            target: `< ${scan.target} MB, ≥ ${formatRatio(SCAN_MILLION_RATE_TARGET)} of the largest size's rate`,
            met: false,
          }
        : {
            section: '5 bulk scan',
            figure: `${formatCount(million.domains)} zone files, read on demand: domains/s (index ${million.loadSeconds.toFixed(1)} s)`,
            value: `${formatCount(million.domainsPerSec)}/s; peak RSS ${million.peakRssMb.toFixed(0)} MB`,
            baseline: largest ? `${formatCount(largest.domains)} files: ${formatCount(largest.domainsPerSec)}/s, ${largest.peakRssMb.toFixed(0)} MB` : '',
            ratio: Number.isFinite(scan.millionRateRatio) ? `${formatRatio(scan.millionRateRatio as number)} of the rate` : '',
            target: `< ${scan.target} MB, ≥ ${formatRatio(SCAN_MILLION_RATE_TARGET)} of the rate`,
            met: million.peakRssMb < scan.target && (scan.millionRateRatio ?? 0) >= SCAN_MILLION_RATE_TARGET,
          },
    );
  }
  if (results.scanResolver) rows.push(...resolverScanRows(results.scanResolver, scan));
  if (results.store) {
    const store = results.store;
    for (const [name, value, ratio] of [
      ['SQLite (WAL, synchronous=NORMAL)', store.sqlite, store.sqliteRatio],
      [`PostgreSQL ${store.postgresVersion ?? ''} (fsync on)`, store.postgres, store.postgresRatio],
    ] as const) {
      rows.push({
        section: '6 stores',
        figure: `template versions/s, ${name}, ${store.workers} in flight`,
        value: value ? formatMeasured(value) : `not measured: ${store.postgresError ?? ''}`.slice(0, 160),
        baseline: `memory ${formatMeasured(store.memory)}`,
        ratio: ratio === null ? '' : `${formatRatio(ratio)} of memory`,
        target: '(reported)',
        met: value ? null : false,
      });
    }
  }
  rows.push(...dnssecRows(results.dnssec));
  if (results.reports) {
    const reports = results.reports;
    for (const r of reports.results) {
      rows.push({
        section: '7 reports',
        figure: `report rows stored/s, ${r.name} (${formatCount(reports.reports)} reports of ${reports.records} records)`,
        value: `${formatCount(r.rowsPerSecond)} rows/s`,
        baseline: `bare ${formatCount(r.bareRowsPerSecond)} rows/s`,
        ratio: formatRatio(r.ingestRatio),
        target: `≥ ${REPORT_INGEST_RATIO_TARGET}`,
        met: r.ingestRatio >= REPORT_INGEST_RATIO_TARGET,
      });
      rows.push({
        section: '7 reports',
        figure: `reports show, 30 days, ${r.name} (${r.showReports} reports, ${r.showSenders} senders)`,
        value: `${r.showMedianMs.toFixed(0)} ms (worst ${r.showMaxMs.toFixed(0)})`,
        baseline: '',
        ratio: '',
        target: `≤ ${REPORTS_SHOW_TARGET_MS} ms`,
        met: r.showMedianMs <= REPORTS_SHOW_TARGET_MS,
      });
      const [rss, heap] = [r.rssSeriesMiB, r.heapAfterGcSeriesMiB ?? []];
      rows.push({
        section: '7 reports',
        figure: `memory over the import, ${r.name}: first → last tenth`,
        value: `RSS ${rss[0]?.toFixed(0)} → ${rss.at(-1)?.toFixed(0)} MiB`,
        baseline: heap.length > 0 ? `heap after a full GC ${heap[0]!.toFixed(0)} → ${heap.at(-1)!.toFixed(0)} MiB` : '',
        ratio: heap.length > 0 ? formatRatio(memoryGrowth(r)) : '',
        target: `flat (±${MEMORY_FLAT_TOLERANCE * 100} %)`,
        met: r.memoryFlat,
      });
    }
  }
  return rows;
}

/**
 * The rows of the `--resolver` scan: one per size. The scan holds no zones, so its RSS at the first
 * result is the process with the CLI loaded; a size also misses when any name failed, or when its
 * verdicts differ from the `--zones` scan of the same names (the same zones, served over DNS).
 */
function resolverScanRows(scanResolver: ScanBenchResult, zones: ScanBenchResult | undefined): Row[] {
  const rows: Row[] = [];
  const section = '5 bulk scan, --resolver';
  const target = `≤ ${scanResolver.target} MB, flat`;
  for (const size of scanResolver.sizes) {
    const sameNames = zones?.sizes.find((other) => other.domains === size.domains);
    const verdictsMatch = sameNames === undefined ? undefined : sameVerdicts(size.verdicts, sameNames.verdicts);
    const checks = [size.failedLines > 0 ? `${size.failedLines} failed` : '', verdictsMatch === false ? 'verdicts differ from --zones' : '']
      .filter(Boolean)
      .join(', ');
    rows.push({
      section,
      figure: `${formatCount(size.domains)} domains: domains/s${checks ? ` (${checks})` : ''}`,
      value: `${formatCount(size.domainsPerSec)}/s; peak RSS ${size.peakRssMb.toFixed(0)} MB`,
      baseline: `RSS at the first result ${size.rssAtFirstResultMb.toFixed(0)} MB; scan adds ${size.scanGrowthMb.toFixed(0)} MB`,
      ratio: size === scanResolver.sizes[scanResolver.sizes.length - 1] && Number.isFinite(scanResolver.rssGrowth) ? `peak ${formatRatio(scanResolver.rssGrowth)} of smallest` : '',
      target,
      met: size.peakRssMb <= scanResolver.target && size.failedLines === 0 && verdictsMatch !== false,
    });
  }
  for (const failure of scanResolver.failed) {
    rows.push({ section, figure: `${formatCount(failure.domains)} domains: could not be scanned`, value: failure.error.slice(0, 160), baseline: '', ratio: '', target, met: false });
  }
  return rows;
}

function sameVerdicts(a: Record<string, number>, b: Record<string, number>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((key) => (a[key] ?? 0) === (b[key] ?? 0));
}

/** The larger of a store's two memory series' last point ÷ first (1: flat). */
function memoryGrowth(r: ReportsBenchResult['results'][number]): number {
  const growth = (series: readonly number[]) => (series.length < 2 ? 1 : series[series.length - 1]! / series[0]!);
  return Math.max(growth(r.rssSeriesMiB), growth(r.heapAfterGcSeriesMiB ?? []));
}

/** Section 7's rows: validated against unvalidated checks, warm and cold, and signed against unsigned zones. */
function dnssecRows(dnssec: DnssecBenchResult | undefined): Row[] {
  if (!dnssec) return [];
  const section = '7 DNSSEC';
  const row = (figure: string, value: number, baseline: string, ratio: number, target: number): Row => ({
    section,
    figure,
    value: `${formatCount(value)}/s`,
    baseline,
    ratio: formatRatio(ratio),
    target: `≥ ${formatRatio(target)}`,
    met: ratio >= target,
  });
  return [
    row('warm checks, validated (DnssecCache)', dnssec.warm.on.checksPerSec, `unvalidated: ${formatCount(dnssec.warm.off.checksPerSec)}/s`, dnssec.warmRatio, DNSSEC_WARM_RATIO_TARGET),
    row(`cold checks, validated, concurrency ${dnssec.concurrency}`, dnssec.cold.on.checksPerSec, `unvalidated: ${formatCount(dnssec.cold.off.checksPerSec)}/s`, dnssec.coldRatio, DNSSEC_COLD_RATIO_TARGET),
    row('cold checks, unvalidated, signed zones', dnssec.cold.off.checksPerSec, `same zones unsigned: ${formatCount(dnssec.cold.unsigned.checksPerSec)}/s`, dnssec.signedColdRatio, DNSSEC_SIGNED_COLD_RATIO_TARGET),
  ];
}

/**
 * Section 7 in a child process of its own (`node --expose-gc bench/reports.ts`), as `reports import`
 * runs: in one process after the other sections, V8's old-space limit was theirs too, and the
 * import's short-lived reports piled up as garbage to it (RSS 856 → 2,283 MiB, then 310 MiB after one
 * full collection: docs/benchmarks.md, "Ingestion memory"): the figure was the process's, not the
 * import's. `--expose-gc` lets it read the heap after a full collection at each tenth of the import.
 */
function runReportsInChild(quick: boolean): Promise<ReportsBenchResult> {
  return new Promise((resolve, reject) => {
    const args = ['--expose-gc', '--import', 'tsx', join(PACKAGE_ROOT, 'bench', 'reports.ts'), ...(quick ? ['--quick'] : [])];
    // stderr (its progress) is this run's; stdout ends with its figures as one JSON line. A smoke run's variable is inherited.
    const child = spawn(process.execPath, args, { cwd: PACKAGE_ROOT, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, TSX_TSCONFIG_PATH: BENCH_TSCONFIG } });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code !== 0) {
        reject(new Error(`bench/reports.ts exited with ${signal ?? code}`));
        return;
      }
      try {
        resolve(JSON.parse(stdout.trimEnd().split('\n').at(-1) ?? '') as ReportsBenchResult);
      } catch (error) {
        reject(new Error(`bench/reports.ts wrote no figures: ${error instanceof Error ? error.message : String(error)}`));
      }
    });
  });
}

/** The headline figures of whatever sections ran. */
export function summaryOf(results: Omit<BenchResults, 'rows' | 'summary'>): Summary {
  const { warm, cold, http, spf, scan } = results;
  return {
    // The warm figure is the service's shape: a warm shared cache over the answer source.
    engineWarmChecksPerSec: warm ? warm.cache.engine.median : null,
    engineWarmRatioToTarget: warm ? warm.cache.ratioToTarget : null,
    warmRatioToBareLookups: warm ? warm.cache.ratioToBaseline : null,
    sharedInfrastructureCost: results.shared ? results.shared.usual.cost : null,
    engineColdRatioToCeiling: cold ? cold.ratioToCeiling : null,
    queriesPerCheck: cold ? cold.queriesPerCheck : warm ? warm.lookupsPerCheck : null,
    httpRatioToBaseline: http ? http.ratioToBaseline : null,
    spfVsMailauth: spf ? spf.ratio : null,
    dmarcVsMailauth: spf ? spf.dmarc.ratio : null,
    scanPeakRssMb: scan ? scan.peakRssMb : null,
    scanResolverPeakRssMb: results.scanResolver && Number.isFinite(results.scanResolver.peakRssMb) ? results.scanResolver.peakRssMb : null,
    scanMillionPeakRssMb: scan?.million && !('error' in scan.million) ? scan.million.peakRssMb : null,
    scanMillionRateRatio: scan?.millionRateRatio !== undefined && Number.isFinite(scan.millionRateRatio) ? scan.millionRateRatio : null,
    dnssecWarmRatio: results.dnssec ? results.dnssec.warmRatio : null,
    dnssecColdRatio: results.dnssec ? results.dnssec.coldRatio : null,
    reportIngestRatioSqlite: results.reports?.ingestRatioSqlite ?? null,
    reportIngestRatioPostgres: results.reports?.ingestRatioPostgres ?? null,
    reportsShowMs: results.reports?.showMs ?? null,
    reportsMemoryGrowth: results.reports && results.reports.results.length > 0 ? Math.max(...results.reports.results.map(memoryGrowth)) : null,
  };
}

/** How each section warmed up and how long it measured, for the lines under the table. */
export function notesOf(results: Omit<BenchResults, 'rows' | 'summary'>): string[] {
  const notes: string[] = [];
  const { warm, cold, http, spf, scan } = results;
  if (warm) {
    notes.push(
      `1: ${warm.domains} synthetic domains (${warm.lookupsPerCheck.toFixed(1)} lookups/check), one check at a time; rates per second of the main thread's CPU; warm-up ${warm.warmupMs / 1000} s of CPU per source; ${warm.runs} runs of ${warm.runMs / 1000} s of CPU a side, engine and baseline passes taking turns within each run.`,
    );
  }
  if (results.features) {
    const features = results.features;
    notes.push(
      `1c: section 1's domains behind the warm cache; each part run alone as the check runs it (a check resolver per domain), its lookups replayed bare beside it; warm-up ${features.warmupMs / 1000} s; ${features.runs} runs of ${features.runMs / 1000} s per part, parts taking turns.`,
    );
  }
  if (cold) {
    notes.push(
      `2: server in a child process over ${cold.domains} domains; ${cold.queriesPerCheck.toFixed(1)} queries/check sent, ${cold.serverQueriesPerCheck.toFixed(1)} received; ceiling from pre-encoded UDP queries, the best of every pair tried (${cold.rawConcurrency} in flight over ${cold.rawSockets} socket(s)); c-ares alone (no engine, ${formatCount(cold.caresQueriesPerSec.median)} q/s) would allow ${formatCount(cold.caresChecksPerSec)} checks/s; ${cold.tcpQueries} engine queries over TCP (c-ares, asking without EDNS: ${cold.caresTcpQueries}); warm-up: a recording pass, then half a run per level; ${cold.runs} runs of ${cold.runMs / 1000} s.`,
    );
  }
  if (http) {
    notes.push(
      `3: autocannon, ${http.connections} connections; two apps, each in a child process: ${http.store.replace(/ \/\S+/, '')} in a temp dir (record logs by group commit) and the memory store; warm-up ${http.warmupSeconds} s per route; ${http.runs} runs of ${http.runSeconds} s, routes taking turns; ${http.check.non2xx + http.checkMemory.non2xx + http.healthz.non2xx} non-2xx, ${http.check.errors + http.checkMemory.errors + http.healthz.errors} errors.`,
    );
  }
  if (spf) notes.push(`4: mailauth ${spf.mailauthVersion} on Node ${spf.node} (a child process where the host's Node is older than mailauth's 22.19); ${spf.evaluationsPerPass} SPF evaluations and ${spf.dmarc.namesPerPass} DMARC discoveries per pass, in one process; warm-up per engine before ${spf.runs.length} alternating runs.`);
  if (results.store) notes.push(`6: bench/store.ts in this process: ${results.store.workers} createVersion calls in flight, each on its own template; warm-up half a run per store; ${results.store.runs} runs of ${results.store.runMs / 1000} s, stores taking turns; PostgreSQL started in a temp dir with its durable defaults.`);
  if (results.reports) notes.push(`7: bench/reports.ts in a child process of its own (a fresh heap, as \`reports import\` runs; \`--expose-gc\`: the heap after a full collection read at each tenth of the import): ${formatCount(results.reports.reports)} reports generated one at a time through the whole path (unpack, parse, digest, store: one transaction each), against the same rows inserted bare in one transaction; show over 30 days of one domain; PostgreSQL with its durable defaults.`);
  if (scan) notes.push(`5: \`scan --zones\` in a child process per size (plain node on dist/), concurrency ${scan.concurrency}; one run per size; domains/s counted from the first result.`);
  const { scanResolver } = results;
  if (scanResolver) {
    const sizes = [...scanResolver.sizes.map((size) => size.domains), ...scanResolver.failed.map((failure) => failure.domains)].sort((a, b) => a - b);
    notes.push(
      `5: \`scan --resolver\` over ${sizes.map(formatCount).join(' and ')} domains${results.mode === 'quick' ? ' (quick sizes: the full run scans 10,000 and 100,000)' : ''}, in a child process per size (plain node on dist/), concurrency ${scanResolver.concurrency}, against the embedded DNS server over the synthetic zones of the largest size in another process (loopback UDP); one run per size; ${scanResolver.sizes.reduce((sum, size) => sum + size.failedLines, 0)} names failed; verdicts compared with \`--zones\` where the sizes match.`,
    );
  }
  return notes;
}

/** The table as text. */
export function formatTable(rows: readonly Row[]): string {
  const header = ['section', 'figure', 'value (median, min–max)', 'baseline (same run)', 'ratio', 'target', 'met'];
  const cells = rows.map((row) => [row.section, row.figure, row.value, row.baseline, row.ratio, row.target, row.met === null ? '' : row.met ? 'yes' : 'NO']);
  const widths = header.map((_, column) => Math.max(...[header, ...cells].map((line) => (line[column] ?? '').length)));
  const line = (values: readonly string[]) => `| ${values.map((value, column) => value.padEnd(widths[column] ?? 0)).join(' | ')} |`;
  return [line(header), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...cells.map(line)].join('\n');
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const machine = describeMachine();
  const say = (text: string) => process.stderr.write(`${text}\n`);
  say(`spoof-checker benchmarks (${SMOKE ? 'smoke' : args.quick ? 'quick' : 'full'}), Node ${machine.node}, ${machine.cpu}, ${machine.cores} cores`);
  if (!args.source && args.build) {
    say('building the engine (npm run build) …');
    buildEngine();
  }
  const engine = await loadEngine({ fromSource: args.source });
  const keys = createKeyPool();
  const results: Omit<BenchResults, 'rows' | 'summary'> = {
    mode: SMOKE ? 'smoke' : args.quick ? 'quick' : 'full',
    engine: engine.from,
    startedAt,
    seconds: 0,
    machine,
    failures: [],
  };
  // A section that fails is reported as failed; the others still run and are written.
  const timed = async <T>(label: string, run: () => Promise<T>): Promise<T | undefined> => {
    const at = performance.now();
    say(`${label} …`);
    try {
      const value = await run();
      const memory = process.memoryUsage();
      say(`${label}: done in ${((performance.now() - at) / 1000).toFixed(1)} s; this process: RSS ${(memory.rss / 2 ** 20).toFixed(0)} MiB, heap used ${(memory.heapUsed / 2 ** 20).toFixed(0)} MiB`);
      return value;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      say(`${label}: FAILED: ${message}`);
      results.failures.push({ section: label, error: message });
      return undefined;
    }
  };
  const quick = args.quick;
  if (args.only.has('warm')) results.warm = await timed('1 engine, warm', () => runEngineWarmBenchmark({ engine, quick, keys }));
  if (args.only.has('shared')) results.shared = await timed('1b shared infrastructure', () => runSharedInfrastructureBenchmark({ engine, quick, keys }));
  if (args.only.has('features')) results.features = await timed('1c cost per part', () => runEngineFeaturesBenchmark({ engine, quick, keys }));
  if (args.only.has('cold')) results.cold = await timed('2 engine, cold', () => runEngineColdBenchmark({ engine, quick, keys }));
  if (args.only.has('http')) results.http = await timed('3 HTTP', () => runHttpBenchmark({ engine, quick, keys }));
  if (args.only.has('spf')) results.spf = await timed('4 SPF vs mailauth', () => runSpfBenchmark({ quick, checkHost: engine.api.checkHost, discoverDmarc: engine.api.discoverDmarc, ...(engine.from === 'build' ? { engineDir: engine.dir } : {}) }));
  if (args.only.has('scan')) results.scan = await timed('5 bulk scan', () => runScanBenchmark({ engine, quick, keys }));
  if (args.only.has('scan')) results.scanResolver = await timed('5 bulk scan (--resolver)', () => runResolverScanBenchmark({ engine, quick, keys }));
  if (args.only.has('store')) results.store = await timed('6 stores', () => runStoreBenchmark({ quick, say }));
  if (args.only.has('dnssec')) results.dnssec = await timed('7 DNSSEC', () => runDnssecBenchmark({ engine, quick }));
  if (args.only.has('reports')) results.reports = await timed('7 reports', () => runReportsInChild(quick));
  if (results.failures.length > 0) process.exitCode = 1;
  results.seconds = (performance.now() - started) / 1000;

  const rows = rowsOf(results);
  const summary = summaryOf(results);
  const all: BenchResults = { ...results, rows, summary };
  // Written next to the final name first, so an interrupted run never leaves half a file.
  await writeFile(`${args.out}.tmp`, `${JSON.stringify(all, null, 2)}\n`);
  await rename(`${args.out}.tmp`, args.out);

  console.log(`\n${formatTable(rows)}\n`);
  for (const note of notesOf(results)) console.log(note);
  console.log(`Machine: Node ${machine.node}, ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GB, ${machine.os}.`);
  console.log(
    `Engine: ${engine.from === 'build' ? 'the build in dist/ (npm run build)' : 'src/ through tsx'}. ${SMOKE ? 'Smoke run (figures not judged)' : args.quick ? 'Quick run' : 'Full run'} in ${results.seconds.toFixed(0)} s; results in ${args.out === RESULTS_FILE ? 'bench/results.json' : args.out}.`,
  );
  if (args.json) console.log(JSON.stringify(summary));
}

await main();
