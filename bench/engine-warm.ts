/**
 * Benchmark 1, the engine warm: `checkDomain` one check at a time on one core, every answer already
 * in memory, over synthetic domains (bench/synthetic.ts). Two answer sources:
 * - `zone`: the `ZoneResolver` itself (the zones are the whole DNS, held in memory);
 * - `cache`: a warm `CachingResolver` over it, the shape a service runs (every answer a cache hit).
 *
 * Baseline, in the same run: the bare lookups each check makes (recorded once per domain, after the
 * check's own de-duplication), replayed straight against the same resolver with `Promise.all`. The
 * ratio engine ÷ baseline is the share of a check's time the DNS answers alone would take; what is
 * left is the engine's own work (parsing, SPF evaluation, DMARC, DKIM keys, verdict, result).
 *
 * Rates are per second of the main thread's CPU time, the warm-up and each run last a set CPU time,
 * and in each run the engine's passes and the baseline's take turns pass by pass
 * (`alternateInterleaved`, `forCpuMs` in bench/stats.ts): on the shared machine a wall-clock second
 * held anything from a twentieth to all of a core's second, so a quick run and a full run (or the
 * two halves of one pair) taken at different loads measured different amounts of work, the warm-up
 * included (docs/benchmarks.md, "Quick and full warm ratios (item 5)").
 */
import type { RecordType, Resolver } from '../packages/engine/src/dns/types.js';
import type { Zone } from '../packages/engine/src/zones/types.js';
import type { EngineModules } from './engine.js';
import { alternateInterleaved, forCpuMs, measured, MIN_RUNS, pairedRatio, type Measured } from './stats.js';
import { smokeOr } from './smoke.js';
import { createKeyPool, syntheticDomainName, syntheticZones, type KeyPool } from './synthetic.js';

/** The target: checks per second on one core. */
export const ENGINE_WARM_TARGET = 20_000;
/** The target that does not depend on the machine: a warm check at least this share of its bare lookups' rate (issue 33). */
export const ENGINE_WARM_RATIO_TARGET = 0.6;
/** Distinct domains checked in turn (about 47 cached answers each, so 25,000 entries: under the cache's default 50,000). */
export const WARM_DOMAINS = 500;
/** Measured runs (each alternates engine and baseline). */
export const WARM_RUNS = 7;
/** CPU time per measured run of each side. */
export const WARM_RUN_MS = 1000;
/**
 * `--quick`: the same warm-up and the same runs as the full run, fewer of them (`MIN_RUNS`: the median
 * of three read one odd run's figure, 0.50 against 0.57, at a load average of 18). (Shorter runs read
 * high: a 350 ms run often held no full collection of the heap the engine's garbage fills, and the
 * median of nine such runs took the runs without one: 0.68 against the full run's 0.59. With a
 * shorter warm-up the JIT had not settled and the quick ratio read 25% low, 0.54 against 0.72.)
 */
export const QUICK_WARM_RUNS = MIN_RUNS;
export const QUICK_WARM_RUN_MS = smokeOr(30, WARM_RUN_MS);
/** CPU time of checks before measuring, so that the JIT has compiled the hot paths. */
export const WARM_WARMUP_MS = 2000;
export const QUICK_WARM_WARMUP_MS = smokeOr(50, WARM_WARMUP_MS);

/** Options of the warm engine benchmark. */
export interface EngineWarmOptions {
  /** The engine to measure (bench/engine.ts). */
  engine: EngineModules;
  quick?: boolean;
  /** A key pool to reuse (generating one takes a second). */
  keys?: KeyPool;
}

/** One answer source's figures. */
export interface WarmSourceResult {
  /** Checks per CPU second. */
  engine: Measured;
  /** The same domains' bare lookups, as sets per CPU second (one set = one check's lookups). */
  baseline: Measured;
  /** engine ÷ baseline: the median of each run's pair's ratio (`pairedRatio`). */
  ratioToBaseline: number;
  /** engine ÷ target. */
  ratioToTarget: number;
  /** Microseconds of the main thread's CPU per check (1e6 ÷ the engine's median rate). */
  cpuUsPerCheck: number;
  /** The same for one check's bare lookups; the difference is the engine's own work. */
  cpuUsPerLookupSet: number;
}

/** The warm engine benchmark's figures. */
export interface EngineWarmResult {
  domains: number;
  /** Distinct lookups per check, averaged over the domains. */
  lookupsPerCheck: number;
  verdicts: Record<string, number>;
  warmupMs: number;
  runMs: number;
  runs: number;
  zone: WarmSourceResult;
  cache: WarmSourceResult;
  target: number;
}

/** One lookup: the name and the record type. */
export type Lookup = readonly [name: string, type: RecordType];

/** Records the lookups a check passes down (after its per-check memo). */
export class RecordingResolver implements Resolver {
  readonly lookups: Lookup[] = [];
  constructor(private readonly inner: Resolver) {}
  resolve<T extends RecordType>(name: string, type: T) {
    this.lookups.push([name, type]);
    return this.inner.resolve(name, type);
  }
}

type Api = EngineModules['api'];

async function checkAll(api: Api, domains: readonly string[], resolver: Resolver, verdicts?: Map<string, number>): Promise<void> {
  for (const domain of domains) {
    let outcome: string;
    try {
      outcome = (await api.checkDomain(domain, { resolver })).verdict;
    } catch (error) {
      if (!api.isSpoofCheckError(error)) throw error;
      outcome = `error:${error.code}`;
    }
    verdicts?.set(outcome, (verdicts.get(outcome) ?? 0) + 1);
  }
}

async function replayAll(sets: readonly (readonly Lookup[])[], resolver: Resolver): Promise<void> {
  for (const set of sets) await Promise.all(set.map(([name, type]) => resolver.resolve(name, type)));
}

/**
 * What sections 1, 1b and 1c share: their timings (quick or full), section 1's synthetic domains, and
 * a `ZoneResolver` over their zones (and `extraZones`) with a cache over it, large enough for them all.
 */
export function warmSetup(options: { engine: EngineModules; quick?: boolean; keys?: KeyPool }, extraZones: readonly Zone[] = []) {
  const { api } = options.engine;
  const quick = options.quick ?? false;
  const keys = options.keys ?? createKeyPool();
  const domains = Array.from({ length: WARM_DOMAINS }, (_, index) => syntheticDomainName(index));
  const zones = new api.ZoneResolver([...syntheticZones(WARM_DOMAINS, keys), ...extraZones]);
  return {
    api,
    runMs: quick ? QUICK_WARM_RUN_MS : WARM_RUN_MS,
    warmupMs: quick ? QUICK_WARM_WARMUP_MS : WARM_WARMUP_MS,
    runs: quick ? QUICK_WARM_RUNS : WARM_RUNS,
    domains,
    zones,
    cache: new api.CachingResolver(zones, { maxEntries: 200_000, defaultTtlSeconds: 3600, maxTtlSeconds: 24 * 3600 }),
  };
}

/** Runs the warm engine benchmark. */
export async function runEngineWarmBenchmark(options: EngineWarmOptions): Promise<EngineWarmResult> {
  const { api, runMs, warmupMs, runs, domains, zones, cache } = warmSetup(options);

  // One pass records each check's lookups and fills the cache; the verdict mix is reported.
  const sets: Lookup[][] = [];
  const verdicts = new Map<string, number>();
  for (const domain of domains) {
    const recorder = new RecordingResolver(cache);
    await checkAll(api, [domain], recorder, verdicts);
    sets.push(recorder.lookups);
  }
  const lookupsPerCheck = sets.reduce((sum, set) => sum + set.length, 0) / sets.length;

  const source = async (resolver: Resolver): Promise<WarmSourceResult> => {
    await forCpuMs(warmupMs, async () => {
      await checkAll(api, domains, resolver);
      await replayAll(sets, resolver);
    });
    const rates = await alternateInterleaved(
      runs,
      runMs,
      { batch: domains.length, once: () => checkAll(api, domains, resolver) },
      { batch: sets.length, once: () => replayAll(sets, resolver) },
    );
    const engine = measured(rates.a);
    const baseline = measured(rates.b);
    // Each run's pair ran back to back: the ratio is theirs (pairedRatio), so quick's fewer runs and
    // the full run's drift with the machine's load alike.
    return {
      engine,
      baseline,
      ratioToBaseline: pairedRatio(rates.a, rates.b),
      ratioToTarget: engine.median / ENGINE_WARM_TARGET,
      // The rates are per CPU second already: their inverse is the CPU each takes.
      cpuUsPerCheck: 1e6 / engine.median,
      cpuUsPerLookupSet: 1e6 / baseline.median,
    };
  };

  const zone = await source(zones);
  const cached = await source(cache);
  return {
    domains: domains.length,
    lookupsPerCheck,
    verdicts: Object.fromEntries(verdicts),
    warmupMs,
    runMs,
    runs,
    zone,
    cache: cached,
    target: ENGINE_WARM_TARGET,
  };
}
