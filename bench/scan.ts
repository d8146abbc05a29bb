/**
 * Benchmark 5, the bulk scan: the CLI's `scan` over N synthetic domains on the zone resolver
 * (`--zones DIR`, one master file per domain plus the providers' zones), each N in a child process
 * of its own so that its peak RSS is its own. Reports domains per second and peak RSS; the zone
 * files are written to a temporary directory and removed afterwards.
 *
 * The zones are loaded into memory by the scan (that is what `--zones` does), so part of the RSS
 * grows with N by design; the RSS when the first result comes out (zones loaded) is reported too,
 * so that what the scan itself adds (peak − loaded) can be told from the zone data.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { EngineModules } from './engine.js';
import { createKeyPool, syntheticDomainName, writeSyntheticZoneDirectory, type KeyPool } from './synthetic.js';

/** The target: peak RSS under this many MB at every size. */
export const SCAN_RSS_TARGET_MB = 300;
/** Domain counts scanned. */
export const SCAN_SIZES = [10_000, 100_000] as const;
/** With --quick: smaller, still a tenfold step so that flatness shows. */
export const QUICK_SCAN_SIZES = [1_000, 10_000] as const;
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

/**
 * Runs bench/scan-child.mjs on the built CLI with plain `node` (from the sources it needs tsx, whose
 * loader thread adds its own memory, so RSS figures then read high).
 */
async function scanInChild(engine: EngineModules, list: string, zones: string): Promise<ScanChildReport> {
  const script = fileURLToPath(new URL('./scan-child.mjs', import.meta.url));
  const cli = join(engine.dir, 'cli', engine.from === 'build' ? 'main.js' : 'main.ts');
  const loader = engine.from === 'build' ? [] : process.execArgv;
  const args = [...loader, script, '--cli', cli, '--list', list, '--zones', zones, '--concurrency', String(SCAN_CONCURRENCY)];
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
      await writeFile(list, Array.from({ length: domains }, (_, index) => `${syntheticDomainName(index)}\n`).join(''));
      const report = await scanInChild(options.engine, list, zones);
      await rm(zones, { recursive: true, force: true });
      if (report.exitCode !== 0 || report.lines !== domains) {
        // Reported, not thrown: the other sizes still count.
        failed.push({ domains, error: `exit code ${report.exitCode}, ${report.lines} lines: ${report.stderr.trim()}` });
        continue;
      }
      const checking = report.totalSeconds - report.loadSeconds;
      results.push({
        ...report,
        domains,
        domainsPerSec: domains / checking,
        domainsPerSecOverall: domains / report.totalSeconds,
        scanGrowthMb: report.peakRssMb - report.rssAtFirstResultMb,
      });
    }
    const first = results[0];
    const last = results[results.length - 1];
    return {
      sizes: results,
      failed,
      peakRssMb: Math.max(...results.map((result) => result.peakRssMb)),
      rssGrowth: first && last && results.length > 1 ? last.peakRssMb / first.peakRssMb : Number.NaN,
      concurrency: SCAN_CONCURRENCY,
      target: SCAN_RSS_TARGET_MB,
    };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
