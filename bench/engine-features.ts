/**
 * Benchmark 1c, what each part of a warm check costs: the warm benchmark's synthetic domains
 * (bench/synthetic.ts) behind a warm `CachingResolver`, and each part `checkDomain` runs measured
 * alone, the way the check runs it (over a fresh check resolver per domain, its per-check memo and
 * budget included), against the whole check in the same run:
 * - existence of the registrable domain (RFC 8020), DMARC (discovery, the policy for the exact name,
 *   the report destinations' authorisation), SPF (the record, every lookup, the pass set; at the
 *   name and at the registrable domain when they differ), MX (hosts, addresses, provider), DKIM
 *   (every selector probe);
 * - the shared-infrastructure classification and its findings, on the pass sets those SPF analyses
 *   gave (no lookups);
 * - the rest (input, facts, verdict, advice, the result object): the whole check less the parts.
 *
 * Each part's bare lookups (those it passes down, recorded once and replayed against the same cache
 * with `Promise.all`, as section 1's baseline does) are shown beside it: the part less its lookups
 * is the engine's own work there. Parts take turns within each run, so a slow phase of the machine
 * falls on all of them.
 *
 *   npx tsx bench/engine-features.ts [--quick]      (or: npm run bench -- --only features)
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import type { RecordType, Resolver } from '../packages/engine/src/dns/types.js';
import { ENGINE_PACKAGE_BUILD_DIR, PACKAGE_ROOT, type EngineModules } from './engine.js';
import { measured, type Measured } from './stats.js';
import { smokeOr } from './smoke.js';
import type { KeyPool } from './synthetic.js';
import { RecordingResolver, warmSetup, type Lookup } from './engine-warm.js';

/** The parts, in the order the table lists them. */
export const FEATURES = ['existence', 'dmarc', 'spf', 'mx', 'dkim', 'shared', 'rest'] as const;
export type Feature = (typeof FEATURES)[number];

/** What each part is, for the table. */
export const FEATURE_LABELS: Readonly<Record<Feature, string>> = {
  existence: 'existence (RFC 8020)',
  dmarc: 'DMARC: discovery, policy, report destinations',
  spf: 'SPF: record, lookups, pass set',
  mx: 'MX: hosts, addresses, provider',
  dkim: 'DKIM: selector probes',
  shared: 'shared-infrastructure classification',
  rest: 'the rest: input, verdict, advice, result',
};

/** One part's figures, per check (µs, medians over the runs). */
export interface FeatureCost {
  feature: Feature;
  /** Microseconds per check the part takes. */
  us: Measured;
  /** `us` ÷ the whole check's microseconds. */
  share: number;
  /** Lookups the part passes down per check (after the per-check memo). */
  lookups: number;
  /** Microseconds per check of those lookups alone, replayed bare; null for parts that make none. */
  bareLookupsUs: number | null;
}

/** The figures. */
export interface EngineFeaturesResult {
  domains: number;
  /** Microseconds per whole check. */
  checkUs: Measured;
  features: FeatureCost[];
  warmupMs: number;
  runMs: number;
  runs: number;
}


/** The engine's internals the parts are made of, from the same build (or sources) as `api`. */
interface Internals {
  limits: typeof import('../packages/engine/src/dns/limits.js');
  dmarc: typeof import('../packages/engine/src/dmarc/index.js');
  orgdomain: typeof import('../packages/engine/src/dmarc/orgdomain.js');
  spf: typeof import('../packages/engine/src/spf/index.js');
  mx: typeof import('../packages/engine/src/mx/index.js');
  dkim: typeof import('../packages/engine/src/dkim/index.js');
  ranges: typeof import('../packages/engine/src/ranges/index.js');
  types: typeof import('../packages/engine/src/dns/types.js');
}

async function loadInternals(engine: EngineModules): Promise<Internals> {
  const dir = engine.from === 'build' ? ENGINE_PACKAGE_BUILD_DIR : join(PACKAGE_ROOT, 'packages', 'engine', 'src');
  const extension = engine.from === 'build' ? '.js' : '.ts';
  const load = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(dir, `${path}${extension}`)).href)) as T;
  return {
    limits: await load('dns/limits'),
    dmarc: await load('dmarc/index'),
    orgdomain: await load('dmarc/orgdomain'),
    spf: await load('spf/index'),
    mx: await load('mx/index'),
    dkim: await load('dkim/index'),
    ranges: await load('ranges/index'),
    types: await load('dns/types'),
  };
}

type SpfAnalysis = import('../packages/engine/src/spf/index.js').SpfAnalysis;

/** Each part as `checkDomain` runs it, over one check resolver; a value when nothing waited. */
function partsOf(x: Internals, ranges: import('../packages/engine/src/ranges/index.js').RangeData) {
  const { thenNow, allNow } = x.types;
  const spfOf = (domain: string, resolver: Resolver) => {
    const registrable = x.orgdomain.pslOrganizationalDomain(domain);
    return allNow<SpfAnalysis | null>([x.spf.analyzeSpfNow(domain, resolver), registrable === domain ? null : x.spf.analyzeSpfNow(registrable, resolver)]);
  };
  return {
    existence: (domain: string, resolver: Resolver) => x.dmarc.nameExistsNow(x.orgdomain.pslOrganizationalDomain(domain), resolver),
    dmarc: (domain: string, resolver: Resolver) =>
      thenNow(x.dmarc.discoverDmarcNow(domain, resolver), (discovery) => {
        if (discovery.status !== 'found' || discovery.record === null) return discovery;
        return allNow<unknown>([
          x.dmarc.effectivePolicyNow(domain, discovery, resolver),
          x.dmarc.verifyReportDestinationsNow(discovery.policyDomain ?? domain, discovery.record, resolver),
        ]);
      }),
    spf: spfOf,
    mx: (domain: string, resolver: Resolver) => x.mx.lookupMxNow(domain, resolver),
    dkim: (domain: string, resolver: Resolver) => x.dkim.probeDkimNow(domain, resolver, {}),
    /** The classification of pass sets already computed (as `checkDomain`'s `classifyShared`), with its findings. */
    shared: (domain: string, analyses: readonly (SpfAnalysis | null)[], now: Date) => {
      const inputs = [];
      for (const analysis of analyses) {
        if (analysis === null || analysis.passSources === null || analysis.passSet?.open) continue;
        inputs.push({ checkedDomain: analysis.domain, sources: analysis.passSources });
      }
      if (inputs.length === 0) return null;
      const report = x.ranges.classifySharedInfrastructure(inputs, () => ranges, now);
      return report === null ? null : x.ranges.sharedInfrastructureFindings(report, domain);
    },
  };
}


/** Runs the benchmark. */
export async function runEngineFeaturesBenchmark(options: { engine: EngineModules; quick?: boolean; keys?: KeyPool }): Promise<EngineFeaturesResult> {
  const x = await loadInternals(options.engine);
  const { api, runMs, warmupMs, runs, domains, cache } = warmSetup(options);
  const ranges = x.ranges.shippedRanges();
  const parts = partsOf(x, ranges);
  const now = new Date();
  const checkResolver = (inner: Resolver) => x.limits.createCheckResolver(inner, { maxQueries: api.DEFAULT_CHECK_MAX_QUERIES });

  // Fill the cache; keep each domain's SPF analyses for the classification part.
  const analyses: (readonly (SpfAnalysis | null)[])[] = [];
  for (const domain of domains) {
    await api.checkDomain(domain, { resolver: cache }).catch(() => null);
    analyses.push((await parts.spf(domain, checkResolver(cache))) as (SpfAnalysis | null)[]);
  }

  // Each DNS part's own lookups, recorded once per domain through a check resolver over a recorder.
  const lookupParts = ['existence', 'dmarc', 'spf', 'mx', 'dkim'] as const;
  const recorded = {} as Record<(typeof lookupParts)[number], Lookup[][]>;
  for (const part of lookupParts) {
    recorded[part] = [];
    for (const domain of domains) {
      const recorder = new RecordingResolver(cache);
      await parts[part](domain, checkResolver(recorder));
      recorded[part].push(recorder.lookups);
    }
  }

  const wholeCheck = async (): Promise<void> => {
    for (const domain of domains) await api.checkDomain(domain, { resolver: cache }).catch(() => null);
  };
  const runPart = (part: (typeof lookupParts)[number]) => async (): Promise<void> => {
    const run = parts[part];
    for (const domain of domains) {
      const outcome = run(domain, checkResolver(cache));
      if (outcome instanceof Promise) await outcome;
    }
  };
  const runShared = async (): Promise<void> => {
    for (let index = 0; index < domains.length; index++) parts.shared(domains[index]!, analyses[index]!, now);
  };
  const replay = (part: (typeof lookupParts)[number]) => async (): Promise<void> => {
    for (const set of recorded[part]) await Promise.all(set.map(([name, type]) => cache.resolve(name, type)));
  };

  // Microseconds per domain of one pass of `task`, repeated for at least `ms`.
  const usPerDomain = async (ms: number, task: () => Promise<void>): Promise<number> => {
    let passes = 0;
    const started = performance.now();
    do {
      await task();
      passes++;
    } while (performance.now() - started < ms);
    return ((performance.now() - started) * 1000) / (passes * domains.length);
  };

  const tasks: [string, () => Promise<void>][] = [
    ['check', wholeCheck],
    ...lookupParts.map((part): [string, () => Promise<void>] => [part, runPart(part)]),
    ['shared', runShared],
    ...lookupParts.map((part): [string, () => Promise<void>] => [`bare:${part}`, replay(part)]),
  ];
  const warmupEnd = performance.now() + warmupMs;
  while (performance.now() < warmupEnd) for (const [, task] of tasks) await task();
  // The runs of each task are shorter than section 1's (there are 12 tasks): a fifth of a run each.
  const taskMs = Math.max(smokeOr(5, 20), runMs / 5);
  const samples = new Map<string, number[]>(tasks.map(([name]) => [name, []]));
  for (let run = 0; run < runs; run++) {
    // Taking turns, starting one further along each run.
    for (let step = 0; step < tasks.length; step++) {
      const [name, task] = tasks[(run + step) % tasks.length]!;
      samples.get(name)!.push(await usPerDomain(taskMs, task));
    }
  }
  const checkUs = measured(samples.get('check')!);
  const lookupsOf = (part: (typeof lookupParts)[number]) => recorded[part].reduce((sum, set) => sum + set.length, 0) / domains.length;
  const features: FeatureCost[] = [];
  let partsTotal = 0;
  for (const part of [...lookupParts, 'shared'] as const) {
    const us = measured(samples.get(part)!);
    partsTotal += us.median;
    const isLookupPart = part !== 'shared';
    features.push({
      feature: part,
      us,
      share: us.median / checkUs.median,
      lookups: isLookupPart ? lookupsOf(part) : 0,
      bareLookupsUs: isLookupPart ? measured(samples.get(`bare:${part}`)!).median : null,
    });
  }
  const restUs = Math.max(0, checkUs.median - partsTotal);
  features.push({ feature: 'rest', us: measured([restUs]), share: restUs / checkUs.median, lookups: 0, bareLookupsUs: null });
  features.sort((a, b) => FEATURES.indexOf(a.feature) - FEATURES.indexOf(b.feature));
  return { domains: domains.length, checkUs, features, warmupMs, runMs: taskMs, runs };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { buildEngine, loadEngine } = await import('./engine.js');
  if (!process.argv.includes('--no-build')) buildEngine();
  const result = await runEngineFeaturesBenchmark({ engine: await loadEngine(), quick: process.argv.includes('--quick') || (await import('./smoke.js')).SMOKE });
  for (const f of result.features) {
    console.log(`${FEATURE_LABELS[f.feature].padEnd(45)} ${f.us.median.toFixed(2).padStart(7)} µs  ${(f.share * 100).toFixed(1).padStart(5)}%  lookups ${f.lookups.toFixed(1)}${f.bareLookupsUs === null ? '' : `  bare ${f.bareLookupsUs.toFixed(2)} µs`}`);
  }
  console.log(JSON.stringify({ checkUs: result.checkUs.median, features: Object.fromEntries(result.features.map((f) => [f.feature, f.us.median])) }));
}
