/**
 * Benchmark: our checkHost() against mailauth 4.13.3's SPF over the same in-memory zones, the 203
 * tests of the OpenSPF RFC 7208 suite, in one process.
 *
 *   npx tsx bench/spf-vs-mailauth.ts [--quick] [--json]
 *
 * Both engines read the same ZoneResolver answers: ours through the Resolver port, mailauth through
 * a `resolver(name, rrtype)` adapter shaped like `dns.promises.resolve` (NXDOMAIN → ENOTFOUND, no
 * records → ENODATA, timeout → ETIMEOUT). After a warm-up, each run measures one engine for a fixed
 * time, then the other, alternating which goes first; the figures are medians over the runs.
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { spf as mailauthSpf } from 'mailauth/lib/spf/index.js';
import type { DNSResolver } from 'mailauth';
import type { RecordType, Resolver } from '../src/dns/types.js';
import { checkHost } from '../src/spf/index.js';
import { DEFAULT_EXPLANATION, RECEIVER, argumentsOf, loadSuite } from '../test/spf/suite.js';
import type { SuiteScenario, SuiteTest } from '../test/spf/suite.js';

/** Options of a benchmark run. */
export interface SpfBenchmarkOptions {
  /** Fewer and shorter runs, for CI smoke checks. */
  quick?: boolean;
  /** Our check_host() to measure (the benchmark suite passes the built one); the sources' otherwise. */
  checkHost?: typeof checkHost;
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
}

/** Number of measured runs (each engine once per run). */
export const BENCH_RUNS = 7;
/** Runs with --quick (the brief asks for at least 5). */
export const QUICK_BENCH_RUNS = 5;
/** How long each engine runs per measured run. */
export const BENCH_RUN_MS = 400;
/** Time per engine per run with --quick. */
export const QUICK_BENCH_RUN_MS = 120;
/** Warm-up time per engine before measuring, so both are past the JIT's first tiers. */
export const BENCH_WARMUP_MS = 500;
/** Warm-up per engine with --quick. */
export const QUICK_BENCH_WARMUP_MS = 150;

interface Case {
  test: SuiteTest;
  resolver: Resolver;
  mailauthResolver: DNSResolver;
}

type Engine = (item: Case) => Promise<string>;

function oursWith(evaluate: typeof checkHost): Engine {
  return async ({ test, resolver }) => {
    const outcome = await evaluate(argumentsOf(test), { resolver, explanationDefault: DEFAULT_EXPLANATION, receiver: RECEIVER });
    return outcome.result;
  };
}

const mailauth: Engine = async ({ test, mailauthResolver }) => {
  const args = argumentsOf(test);
  const outcome = await mailauthSpf({ sender: args.sender, ip: args.ip, helo: args.helo, mta: RECEIVER, resolver: mailauthResolver });
  return outcome.status.result;
};

/** mailauth's resolver contract over our Resolver: records as `dns.promises.resolve` returns them, errors with `.code`. */
function mailauthResolverFor(resolver: Resolver): DNSResolver {
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
        throw dnsError(answer.reason === 'timeout' ? 'ETIMEOUT' : answer.reason === 'refused' ? 'EREFUSED' : 'ESERVFAIL', name);
    }
  };
  return adapter as DNSResolver;
}

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
async function measure(engine: Engine, cases: Case[], ms: number): Promise<number> {
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

/** Runs the benchmark and returns its figures (nothing is printed). */
export async function runSpfBenchmark(options: SpfBenchmarkOptions = {}): Promise<SpfBenchmarkResult> {
  const quick = options.quick ?? false;
  const ours = oursWith(options.checkHost ?? checkHost);
  const cases = casesOf(loadSuite('rfc7208'));
  const runCount = quick ? QUICK_BENCH_RUNS : BENCH_RUNS;
  const runMs = quick ? QUICK_BENCH_RUN_MS : BENCH_RUN_MS;
  const warmupMs = quick ? QUICK_BENCH_WARMUP_MS : BENCH_WARMUP_MS;
  await measure(ours, cases, warmupMs);
  await measure(mailauth, cases, warmupMs);
  const runs: SpfBenchmarkRun[] = [];
  for (let run = 0; run < runCount; run++) {
    // Alternate which engine goes first, so neither always runs on a heap the other just filled.
    if (run % 2 === 0) {
      const first = await measure(ours, cases, runMs);
      runs.push({ ours: first, mailauth: await measure(mailauth, cases, runMs) });
    } else {
      const first = await measure(mailauth, cases, runMs);
      runs.push({ ours: await measure(ours, cases, runMs), mailauth: first });
    }
  }
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
  };
}

function format(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const result = await runSpfBenchmark({ quick: args.includes('--quick') });
  if (args.includes('--json')) {
    console.log(JSON.stringify(result, null, 2));
    return;
  }
  const spread = (range: { min: number; max: number }) => `${format(range.min)}–${format(range.max)}`;
  console.log(`SPF check_host() over the RFC 7208 suite (${result.evaluationsPerPass} evaluations per pass, ${result.runs.length} runs, Node ${result.node})`);
  console.log(`  ours      ${format(result.ours).padStart(9)} evaluations/s   (runs ${spread(result.spread.ours)})   suite agreement ${result.agreement.ours}/${result.agreement.total}`);
  console.log(`  mailauth  ${format(result.mailauth).padStart(9)} evaluations/s   (runs ${spread(result.spread.mailauth)})   suite agreement ${result.agreement.mailauth}/${result.agreement.total}`);
  console.log(`  ratio     ${result.ratio.toFixed(2)}× (median ours / median mailauth)`);
}

// Run only when executed directly, not when the lead's bench runner imports runSpfBenchmark.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
