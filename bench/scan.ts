/**
 * Benchmark 5, the bulk scan: the CLI's `scan` over N synthetic domains, each N in a child process
 * of its own so that its peak RSS is its own. Reports domains per second and peak RSS. Two answer
 * sources:
 * - `--zones DIR` (`runScanBenchmark`): one master file per domain plus the providers' zones, written
 *   to a temporary directory and removed afterwards. The scan loads the zones into memory (that is
 *   what `--zones` does), so part of the RSS grows with N by design; the RSS when the first result
 *   comes out (zones loaded) is reported too, so that what the scan itself adds (peak − loaded) can
 *   be told from the zone data.
 * - `--resolver IP:PORT` (`runResolverScanBenchmark`): the embedded DNS server over the same
 *   synthetic zones in another process (bench/dns-server-child.ts), asked over loopback through the
 *   CLI's real-server stack (network client, concurrency cap, shared cache). The scan holds no zones,
 *   so its peak RSS must not grow with N at all.
 */
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { EngineModules } from './engine.js';
import { engineArgs } from './engine.js';
import { startChild } from './stats.js';
import { smokeOr } from './smoke.js';
import { createKeyPool, syntheticDomainName, writeSyntheticZoneDirectory, type KeyPool } from './synthetic.js';

/** The target: peak RSS under this many MB at every size. */
export const SCAN_RSS_TARGET_MB = 300;
/** Domain counts scanned. */
export const SCAN_SIZES = [10_000, 100_000] as const;
/** With --quick: smaller, still a tenfold step so that flatness shows. */
export const QUICK_SCAN_SIZES: readonly number[] = smokeOr([20, 200], [1_000, 10_000]);
/**
 * The million-file run: `scan --zones` reads each zone when a check first needs it (an index of the
 * directory and a bounded cache), so a directory of a million zone files scans in flat memory at
 * nearly the rate of the largest of SCAN_SIZES. `--quick` uses 200,000.
 */
export const SCAN_MILLION_SIZE = 1_000_000;
/** With --quick (and --smoke): the million run made smaller. */
export const QUICK_SCAN_MILLION_SIZE = smokeOr(400, 200_000);
/** The million run's checks per second, as a share of the largest ordinary size's: the target. */
export const SCAN_MILLION_RATE_TARGET = 0.8;
/** Domain counts scanned with `--resolver` (the full run). */
export const SCAN_RESOLVER_SIZES = [10_000, 100_000] as const;
/**
 * With --quick: the `--zones` sizes, a tenfold step, and the same names, so the verdicts can be
 * compared. Over loopback DNS a scan checks a few hundred domains per second on two shared cores,
 * so 100,000 take minutes.
 */
export const QUICK_SCAN_RESOLVER_SIZES = QUICK_SCAN_SIZES;
/** Checks in flight (the CLI's default). */
export const SCAN_CONCURRENCY = 32;

/** Options of the scan benchmark. */
export interface ScanBenchOptions {
  engine: EngineModules;
  quick?: boolean;
  keys?: KeyPool;
}

/** What bench/scan-child.mjs reports. */
export interface ScanChildReport {
  exitCode: number;
  lines: number;
  /** Seconds from the start of the command to its first result (reading and loading the zones). */
  loadSeconds: number;
  totalSeconds: number;
  /** RSS when the first result was written, in MB: the zones loaded, the scan just begun. */
  rssAtFirstResultMb: number;
  peakRssMb: number;
  stderr: string;
}

/** What the scan's summary on stderr says: `scan: N checked in S s: spoofable a, …; F failed`. */
export interface ScanTally {
  /** Names whose check failed (an error line instead of a result: DNS failure, timeout, …). */
  failed: number;
  /** Results per verdict. */
  verdicts: Record<string, number>;
}

/** Reads the scan's summary line; undefined when there is none (the scan did not finish). */
export function readScanTally(stderr: string): ScanTally | undefined {
  const summary = /^scan: \d+ checked in [\d.]+ s: (.*); (\d+) failed/m.exec(stderr);
  if (!summary) return undefined;
  const verdicts: Record<string, number> = {};
  for (const part of (summary[1] ?? '').split(', ')) {
    const [verdict, count] = part.split(' ');
    if (verdict && count) verdicts[verdict] = Number(count);
  }
  return { failed: Number(summary[2]), verdicts };
}

/**
 * Runs bench/scan-child.mjs on the built CLI with plain `node` (from the sources it needs tsx, whose
 * loader thread adds its own memory, so RSS figures then read high).
 */
async function scanInChild(engine: EngineModules, list: string, source: ['--zones' | '--resolver', string]): Promise<ScanChildReport> {
  const script = fileURLToPath(new URL('./scan-child.mjs', import.meta.url));
  const cli = join(engine.dir, 'cli', engine.from === 'build' ? 'main.js' : 'main.ts');
  const loader = engine.from === 'build' ? [] : process.execArgv;
  const args = [...loader, script, '--cli', cli, '--list', list, ...source, '--concurrency', String(SCAN_CONCURRENCY)];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  for await (const line of createInterface({ input: child.stdout })) {
    if (line.trim() !== '') return JSON.parse(line) as ScanChildReport;
  }
  throw new Error(`the scan child exited with code ${child.exitCode} before reporting`);
}

/** One size's figures. */
export interface ScanSizeResult extends ScanChildReport {
  domains: number;
  /** Domains per second while checking (from the first result to the end). */
  domainsPerSec: number;
  /** Domains per second including reading and loading the zone files. */
  domainsPerSecOverall: number;
  /** peak − RSS at the first result: what the scan added on top of the loaded zones. */
  scanGrowthMb: number;
  /** Names whose check failed (error lines): 0 unless DNS failed somewhere. */
  failedLines: number;
  /** Results per verdict, from the scan's summary. */
  verdicts: Record<string, number>;
}

/** The scan benchmark's figures. */
export interface ScanBenchResult {
  sizes: ScanSizeResult[];
  /** Sizes the scan could not complete, with its error output. */
  failed: { domains: number; error: string }[];
  /** The largest peak RSS over the sizes, in MB. */
  peakRssMb: number;
  /** Peak RSS at the largest size ÷ at the smallest (1 is flat); NaN unless two sizes completed. */
  rssGrowth: number;
  concurrency: number;
  target: number;
  /** Where the answers came from. */
  source: 'zones' | 'resolver';
  /** The million-file run (`--zones` only): its figures, or why it failed. */
  million?: ScanSizeResult | { domains: number; error: string };
  /** The million run's domains/s ÷ the largest size's (target ≥ SCAN_MILLION_RATE_TARGET); NaN when either failed. */
  millionRateRatio?: number;
}

/** Runs the scan benchmark. One run per size: each is long, and RSS is a maximum, not a rate. */
export async function runScanBenchmark(options: ScanBenchOptions): Promise<ScanBenchResult> {
  const keys = options.keys ?? createKeyPool();
  const sizes = options.quick ? QUICK_SCAN_SIZES : SCAN_SIZES;
  const scratch = await mkdtemp(join(tmpdir(), 'spoof-checker-scan-bench-'));
  try {
    const results: ScanSizeResult[] = [];
    const failed: ScanBenchResult['failed'] = [];
    for (const domains of sizes) {
      const zones = join(scratch, `zones-${domains}`);
      const list = join(scratch, `names-${domains}.txt`);
      await writeSyntheticZoneDirectory(zones, domains, keys);
      await writeNameList(list, domains);
      const report = await scanInChild(options.engine, list, ['--zones', zones]);
      await rm(zones, { recursive: true, force: true });
      recordSize(domains, report, results, failed);
    }
    const summary = summarise('zones', results, failed);
    // The million run: the same scan over far more files than fit in memory at once.
    const domains = options.quick ? QUICK_SCAN_MILLION_SIZE : SCAN_MILLION_SIZE;
    const zones = join(scratch, `zones-${domains}`);
    const list = join(scratch, `names-${domains}.txt`);
    await writeSyntheticZoneDirectory(zones, domains, keys);
    await writeNameList(list, domains);
    const report = await scanInChild(options.engine, list, ['--zones', zones]);
    await rm(zones, { recursive: true, force: true });
    const million: ScanSizeResult[] = [];
    const millionFailed: ScanBenchResult['failed'] = [];
    recordSize(domains, report, million, millionFailed);
    summary.million = million[0] ?? millionFailed[0];
    const largest = results[results.length - 1];
    summary.millionRateRatio = million[0] && largest ? million[0].domainsPerSec / largest.domainsPerSec : Number.NaN;
    return summary;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** Writes the list of the first `domains` synthetic names. */
async function writeNameList(path: string, domains: number): Promise<void> {
  const handle = await open(path, 'w');
  try {
    // In slices: a million names joined at once would be one string of tens of MB.
    for (let start = 0; start < domains; start += 10_000) {
      const end = Math.min(domains, start + 10_000);
      await handle.write(Array.from({ length: end - start }, (_, index) => `${syntheticDomainName(start + index)}\n`).join(''));
    }
  } finally {
    await handle.close();
  }
}

/**
 * Adds one size's report to `results`, or to `failed` when the scan did not write a line per name.
 * Reported, not thrown: the other sizes still count. Names whose check failed (error lines) are
 * kept in the figures and counted in `failedLines`; the table marks such a size as missed.
 */
function recordSize(domains: number, report: ScanChildReport, results: ScanSizeResult[], failed: ScanBenchResult['failed']): void {
  const tally = readScanTally(report.stderr);
  if (report.lines !== domains || tally === undefined) {
    failed.push({ domains, error: `exit code ${report.exitCode}, ${report.lines} lines: ${report.stderr.trim()}` });
    return;
  }
  const checking = report.totalSeconds - report.loadSeconds;
  results.push({
    ...report,
    domains,
    domainsPerSec: domains / checking,
    domainsPerSecOverall: domains / report.totalSeconds,
    scanGrowthMb: report.peakRssMb - report.rssAtFirstResultMb,
    failedLines: tally.failed,
    verdicts: tally.verdicts,
  });
}

function summarise(source: ScanBenchResult['source'], results: ScanSizeResult[], failed: ScanBenchResult['failed']): ScanBenchResult {
  const first = results[0];
  const last = results[results.length - 1];
  return {
    sizes: results,
    failed,
    peakRssMb: results.length > 0 ? Math.max(...results.map((result) => result.peakRssMb)) : Number.NaN,
    rssGrowth: first && last && results.length > 1 ? last.peakRssMb / first.peakRssMb : Number.NaN,
    concurrency: SCAN_CONCURRENCY,
    target: SCAN_RSS_TARGET_MB,
    source,
  };
}

/**
 * The scan against a real DNS server: the embedded server over the synthetic zones of the largest
 * size (every smaller list is a prefix of it) runs in a child process of its own, answering
 * NXDOMAIN outside its zones, as engine-cold does; each size's scan runs in another child with
 * `--resolver 127.0.0.1:PORT`.
 */
export async function runResolverScanBenchmark(options: ScanBenchOptions): Promise<ScanBenchResult> {
  const keys = options.keys ?? createKeyPool();
  const sizes = options.quick ? QUICK_SCAN_RESOLVER_SIZES : SCAN_RESOLVER_SIZES;
  const scratch = await mkdtemp(join(tmpdir(), 'spoof-checker-scan-resolver-bench-'));
  const server = startChild(fileURLToPath(new URL('./dns-server-child.ts', import.meta.url)), engineArgs(options.engine));
  try {
    server.send({ start: { domains: Math.max(...sizes), keys } });
    const { port } = await server.next<{ port: number }>();
    const results: ScanSizeResult[] = [];
    const failed: ScanBenchResult['failed'] = [];
    for (const domains of sizes) {
      const list = join(scratch, `names-${domains}.txt`);
      await writeNameList(list, domains);
      recordSize(domains, await scanInChild(options.engine, list, ['--resolver', `127.0.0.1:${port}`]), results, failed);
    }
    return summarise('resolver', results, failed);
  } finally {
    await server.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}
