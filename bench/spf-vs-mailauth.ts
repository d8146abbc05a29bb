/**
 * Benchmark: our checkHost() against the current mailauth's (7.x) SPF over the same in-memory zones,
 * the 203 tests of the OpenSPF RFC 7208 suite, in one process; and our DMARC discovery
 * (discoverDmarc) against mailauth's getDmarcRecord over the fixture zones.
 *
 *   npx tsx bench/spf-vs-mailauth.ts [--quick] [--json]
 *
 * mailauth 7 wants Node >= 22.19 (bench/mailauth.ts installs it into .cache/): on an older host the
 * measurement runs in a child process on Node 24, with the same engine build.
 *
 * Both engines read the same ZoneResolver answers: ours through the Resolver port, mailauth through
 * a `resolver(name, rrtype)` adapter shaped like `dns.promises.resolve` (NXDOMAIN → ENOTFOUND, no
 * records → ENODATA, timeout → ETIMEOUT). After a warm-up, each run measures one engine for a fixed
 * time, then the other, alternating which goes first; the figures are medians over the runs.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { RecordType, Resolver } from '../packages/engine/src/dns/types.js';
import type { discoverDmarc as DiscoverDmarc } from '../packages/engine/src/dmarc/index.js';
import { checkHost } from '../packages/engine/src/spf/index.js';
import { ZoneResolver } from '../packages/engine/src/zones/zone-resolver.js';
import { loadZoneDirectory } from '../packages/engine/src/zones/load.js';
import { PACKAGE_ROOT } from './engine.js';
import { SMOKE, smokeOr } from './smoke.js';
import { loadMailauth, nodeForMailauth, nodeRunsMailauth, type Mailauth, type MailauthResolver } from './mailauth.js';
import { DEFAULT_EXPLANATION, RECEIVER, argumentsOf, loadSuite } from '../packages/engine/test/spf/suite.js';
import type { SuiteScenario, SuiteTest } from '../packages/engine/test/spf/suite.js';

/** Options of a benchmark run. */
export interface SpfBenchmarkOptions {
  /** Fewer and shorter runs, for CI smoke checks. */
  quick?: boolean;
  /** Our check_host() to measure (the benchmark suite passes the built one); the sources' otherwise. */
  checkHost?: typeof checkHost;
  /** Our DMARC discovery to measure (the built one from the suite); the sources' otherwise. */
  discoverDmarc?: typeof DiscoverDmarc;
  /**
   * The directory of the engine build (dist/) the suite measures: a Node 24 child process imports
   * the same build from there. Without it, the child measures the sources.
   */
  engineDir?: string;
}

/** DMARC discovery, ours against mailauth's getDmarcRecord, over the fixture zones. */
export interface DmarcBenchmarkResult {
  /** Median discoveries per second of our discoverDmarc(). */
  ours: number;
  /** Median discoveries per second of mailauth's getDmarcRecord(). */
  mailauth: number;
  /** ours / mailauth. */
  ratio: number;
  /** Names per pass: every fixture zone's apex and two names under it (the tree walk). */
  namesPerPass: number;
  /** Names where both engines found a record at the same domain, or both found none. */
  agreement: { same: number; total: number };
}

/** One measured run: evaluations per second of each engine. */
export interface SpfBenchmarkRun {
  ours: number;
  mailauth: number;
}

/** The benchmark's figures. */
export interface SpfBenchmarkResult {
  /** Median evaluations per second of our checkHost(). */
  ours: number;
  /** Median evaluations per second of mailauth's spf(). */
  mailauth: number;
  /** ours / mailauth. */
  ratio: number;
  /** Spread of the runs: lowest and highest evaluations per second of each engine. */
  spread: { ours: { min: number; max: number }; mailauth: { min: number; max: number } };
  runs: SpfBenchmarkRun[];
  /** Evaluations in one pass over the suite. */
  evaluationsPerPass: number;
  /** How many suite tests each engine answers as the suite expects (same inputs, same zones). */
  agreement: { ours: number; mailauth: number; total: number };
  node: string;
  /** The mailauth version measured against. */
  mailauthVersion: string;
  /** DMARC discovery against mailauth's getDmarcRecord. */
  dmarc: DmarcBenchmarkResult;
}

/** Number of measured runs (each engine once per run). */
export const BENCH_RUNS = 7;
/** Runs with --quick (the brief asks for at least 5). */
export const QUICK_BENCH_RUNS = smokeOr(1, 5);
/** How long each engine runs per measured run. */
export const BENCH_RUN_MS = 400;
/** Time per engine per run with --quick. */
export const QUICK_BENCH_RUN_MS = smokeOr(20, 120);
/** Warm-up time per engine before measuring, so both are past the JIT's first tiers. */
export const BENCH_WARMUP_MS = 500;
/** Warm-up per engine with --quick. */
export const QUICK_BENCH_WARMUP_MS = smokeOr(20, 150);

interface Case {
  test: SuiteTest;
  resolver: Resolver;
  mailauthResolver: MailauthResolver;
}

type Engine = (item: Case) => Promise<string>;

function oursWith(evaluate: typeof checkHost): Engine {
  return async ({ test, resolver }) => {
    const outcome = await evaluate(argumentsOf(test), { resolver, explanationDefault: DEFAULT_EXPLANATION, receiver: RECEIVER });
    return outcome.result;
  };
}

function mailauthWith(mailauth: Mailauth): Engine {
  return async ({ test, mailauthResolver }) => {
    const args = argumentsOf(test);
    const outcome = await mailauth.spf({ sender: args.sender, ip: args.ip, helo: args.helo, mta: RECEIVER, resolver: mailauthResolver });
    return outcome.status.result;
  };
}

/**
 * mailauth's resolver contract over our Resolver: records as `dns.promises.resolve` returns them,
 * errors with `.code` as node:dns sets it (a name that cannot exist in the DNS is EBADNAME).
 */
function mailauthResolverFor(resolver: Resolver): MailauthResolver {
  const adapter = async (name: string, rrtype: string): Promise<unknown[]> => {
    const answer = await resolver.resolve(name, rrtype as RecordType);
    switch (answer.kind) {
      case 'records':
        if (rrtype === 'MX') return (answer.records as { preference: number; exchange: string }[]).map((mx) => ({ exchange: mx.exchange, priority: mx.preference }));
        return answer.records as unknown[];
      case 'nxdomain':
        throw dnsError('ENOTFOUND', name);
      case 'nodata':
        throw dnsError('ENODATA', name);
      case 'error':
        throw dnsError(NODE_DNS_CODES[answer.reason] ?? 'ESERVFAIL', name);
    }
  };
  return adapter;
}

/** Our DNS error reasons as node:dns names them. */
const NODE_DNS_CODES: Partial<Record<string, string>> = {
  timeout: 'ETIMEOUT',
  refused: 'EREFUSED',
  'invalid-name': 'EBADNAME',
  malformed: 'EBADRESP',
  servfail: 'ESERVFAIL',
};

function dnsError(code: string, name: string): Error & { code: string } {
  return Object.assign(new Error(`${code} ${name}`), { code });
}

function casesOf(scenarios: SuiteScenario[]): Case[] {
  return scenarios.flatMap((scenario) => {
    const mailauthResolver = mailauthResolverFor(scenario.resolver);
    return scenario.tests.map((test) => ({ test, resolver: scenario.resolver, mailauthResolver }));
  });
}

/** Runs `engine` over every case, repeatedly, for at least `ms`; evaluations per second. */
async function measure<T>(engine: (item: T) => Promise<unknown>, cases: T[], ms: number): Promise<number> {
  let evaluations = 0;
  const start = performance.now();
  let elapsed = 0;
  do {
    for (const item of cases) await engine(item);
    evaluations += cases.length;
    elapsed = performance.now() - start;
  } while (elapsed < ms);
  return evaluations / (elapsed / 1000);
}

async function agreement(engine: Engine, cases: Case[]): Promise<number> {
  let agreed = 0;
  for (const item of cases) if (item.test.results.includes((await engine(item)) as never)) agreed++;
  return agreed;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Measures two engines over the same cases in alternating runs; the runs' figures. */
async function sideBySide<T>(ours: (item: T) => Promise<unknown>, theirs: (item: T) => Promise<unknown>, cases: T[], quick: boolean): Promise<SpfBenchmarkRun[]> {
  const runCount = quick ? QUICK_BENCH_RUNS : BENCH_RUNS;
  const runMs = quick ? QUICK_BENCH_RUN_MS : BENCH_RUN_MS;
  const warmupMs = quick ? QUICK_BENCH_WARMUP_MS : BENCH_WARMUP_MS;
  await measure(ours, cases, warmupMs);
  await measure(theirs, cases, warmupMs);
  const runs: SpfBenchmarkRun[] = [];
  for (let run = 0; run < runCount; run++) {
    // Alternate which engine goes first, so neither always runs on a heap the other just filled.
    if (run % 2 === 0) {
      const first = await measure(ours, cases, runMs);
      runs.push({ ours: first, mailauth: await measure(theirs, cases, runMs) });
    } else {
      const first = await measure(theirs, cases, runMs);
      runs.push({ ours: await measure(ours, cases, runMs), mailauth: first });
    }
  }
  return runs;
}

/** The DMARC side: every fixture zone's apex, a name under it and one two labels down. */
async function runDmarcBenchmark(discover: typeof DiscoverDmarc, mailauth: Mailauth, quick: boolean): Promise<DmarcBenchmarkResult> {
  const resolver = new ZoneResolver(await loadZoneDirectory(join(PACKAGE_ROOT, 'fixtures', 'zones')));
  const mailauthResolver = mailauthResolverFor(resolver);
  const apexes = resolver.origins().filter((origin) => !origin.startsWith('_'));
  const names = apexes.flatMap((apex) => [apex, `mail.${apex}`, `a.b.${apex}`]);
  const ours = async (name: string) => {
    const found = await discover(name, resolver);
    return found.status === 'found' ? found.policyDomain : null;
  };
  const theirs = async (name: string) => {
    const found = await mailauth.getDmarcRecord(name, mailauthResolver).catch(() => 'error' as const);
    return found === false ? null : found === 'error' ? 'error' : (found.recordDomain ?? null);
  };
  let same = 0;
  for (const name of names) if ((await ours(name)) === (await theirs(name))) same++;
  const runs = await sideBySide(ours, theirs, names, quick);
  const oursMedian = median(runs.map((run) => run.ours));
  const mailauthMedian = median(runs.map((run) => run.mailauth));
  return { ours: oursMedian, mailauth: mailauthMedian, ratio: oursMedian / mailauthMedian, namesPerPass: names.length, agreement: { same, total: names.length } };
}

/**
 * Runs the benchmark and returns its figures (nothing is printed). On a Node older than mailauth 7
 * supports, the same measurement runs in a child process on Node 24 and its figures come back as JSON.
 */
export async function runSpfBenchmark(options: SpfBenchmarkOptions = {}): Promise<SpfBenchmarkResult> {
  if (!nodeRunsMailauth()) return runInChild(options);
  const quick = options.quick ?? false;
  const mailauthLib = loadMailauth();
  const ours = oursWith(options.checkHost ?? checkHost);
  const mailauth = mailauthWith(mailauthLib);
  const cases = casesOf(loadSuite('rfc7208'));
  const runs = await sideBySide(ours, mailauth, cases, quick);
  const discover = options.discoverDmarc ?? (await import('../packages/engine/src/dmarc/index.js')).discoverDmarc;
  const dmarc = await runDmarcBenchmark(discover, mailauthLib, quick);
  const oursMedian = median(runs.map((run) => run.ours));
  const mailauthMedian = median(runs.map((run) => run.mailauth));
  const spreadOf = (values: number[]) => ({ min: Math.min(...values), max: Math.max(...values) });
  return {
    ours: oursMedian,
    mailauth: mailauthMedian,
    ratio: oursMedian / mailauthMedian,
    spread: { ours: spreadOf(runs.map((run) => run.ours)), mailauth: spreadOf(runs.map((run) => run.mailauth)) },
    runs,
    evaluationsPerPass: cases.length,
    agreement: { ours: await agreement(ours, cases), mailauth: await agreement(mailauth, cases), total: cases.length },
    node: process.version,
    mailauthVersion: mailauthLib.version,
    dmarc,
  };
}

/** The measurement in a Node 24 child (tsx loads this file there), over the same engine build. */
function runInChild(options: SpfBenchmarkOptions): SpfBenchmarkResult {
  const node = nodeForMailauth();
  const args = ['--import', 'tsx', join(PACKAGE_ROOT, 'bench', 'spf-vs-mailauth.ts'), '--json'];
  if (options.quick) args.push('--quick');
  if (options.engineDir) args.push('--engine-dir', options.engineDir);
  const output = execFileSync(node, args, { cwd: PACKAGE_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 16 * 1024 * 1024 });
  return JSON.parse(output) as SpfBenchmarkResult;
}

function format(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const engineDirAt = args.indexOf('--engine-dir');
  const engineDir = engineDirAt >= 0 ? args[engineDirAt + 1] : undefined;
  const built = engineDir ? ((await import(pathToFileURL(join(engineDir, 'index.js')).href)) as typeof import('../packages/engine/src/index.js')) : undefined;
  const result = await runSpfBenchmark({ quick: args.includes('--quick') || SMOKE, checkHost: built?.checkHost, discoverDmarc: built?.discoverDmarc, engineDir });
  if (args.includes('--json')) {
    console.log(JSON.stringify(result, null, 2));
    return;
  }
  const spread = (range: { min: number; max: number }) => `${format(range.min)}–${format(range.max)}`;
  console.log(`SPF check_host() over the RFC 7208 suite (${result.evaluationsPerPass} evaluations per pass, ${result.runs.length} runs, Node ${result.node})`);
  console.log(`  ours      ${format(result.ours).padStart(9)} evaluations/s   (runs ${spread(result.spread.ours)})   suite agreement ${result.agreement.ours}/${result.agreement.total}`);
  console.log(`  mailauth  ${format(result.mailauth).padStart(9)} evaluations/s   (runs ${spread(result.spread.mailauth)})   suite agreement ${result.agreement.mailauth}/${result.agreement.total}`);
  console.log(`  ratio     ${result.ratio.toFixed(2)}× (median ours / median mailauth ${result.mailauthVersion}, Node ${result.node})`);
  const { dmarc } = result;
  console.log(`DMARC discovery over the fixture zones (${dmarc.namesPerPass} names per pass; same answer for ${dmarc.agreement.same}/${dmarc.agreement.total})`);
  console.log(`  ours      ${format(dmarc.ours).padStart(9)} discoveries/s`);
  console.log(`  mailauth  ${format(dmarc.mailauth).padStart(9)} discoveries/s (getDmarcRecord)`);
  console.log(`  ratio     ${dmarc.ratio.toFixed(2)}×`);
}

// Run only when executed directly, not when the lead's bench runner imports runSpfBenchmark.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
