/**
 * Benchmark 1b, what the shared-infrastructure classification (src/ranges/) adds to a warm check:
 * the warm benchmark's synthetic domains (bench/synthetic.ts) behind a warm `CachingResolver`,
 * checked with the shipped provider data and, alternately in the same run, with `ranges: false`
 * (no classification). Most of those domains authorise Google Workspace, Microsoft 365, Mailchimp
 * or SendGrid plus a few fixed addresses: every pass set is classified (the usual case), and none
 * of them is in rentable space. A second pair measures domains whose pass set is empty
 * (`v=spf1 -all`), for which the data is never consulted.
 *
 *   npx tsx bench/shared-infrastructure.ts [--quick]      (or: npm run bench -- --only shared)
 */
import { performance } from 'node:perf_hooks';
import type { Resolver } from '../packages/engine/src/dns/types.js';
import type { EngineModules } from './engine.js';
import { alternate, measured, pairedRatio, ratePerSecond, type Measured } from './stats.js';
import type { KeyPool } from './synthetic.js';
import { warmSetup } from './engine-warm.js';

/** The target: classification costs less than this share of a warm check. */
export const SHARED_INFRASTRUCTURE_COST_TARGET = 0.05;
/** Domains whose SPF is `v=spf1 -all` (empty pass set) in the second pair. */
export const EMPTY_PASS_SET_DOMAINS = 200;

/** One pair: checks per second with and without the classification. */
export interface ClassificationPair {
  withClassification: Measured;
  without: Measured;
  /** 1 − with ÷ without (the median of each run pair's ratio, `pairedRatio`): the share of a check the classification costs. */
  cost: number;
}

/** The figures. */
export interface SharedInfrastructureBenchResult {
  domains: number;
  /** Domains whose result had a shared-infrastructure report (non-empty pass set). */
  classified: number;
  warmupMs: number;
  runMs: number;
  runs: number;
  usual: ClassificationPair;
  emptyPassSet: ClassificationPair;
  target: number;
}

type Api = EngineModules['api'];

async function checkAll(api: Api, domains: readonly string[], resolver: Resolver, classify: boolean): Promise<void> {
  for (const domain of domains) {
    try {
      await api.checkDomain(domain, classify ? { resolver } : { resolver, ranges: false });
    } catch (error) {
      if (!api.isSpoofCheckError(error)) throw error;
    }
  }
}

/** `v=spf1 -all` domains with DMARC reject: nothing passes SPF. */
function emptyPassSetZone(count: number): string {
  const lines = ['$ORIGIN empty-spf.test.', '$TTL 3600', '@ IN SOA ns hostmaster 1 7200 900 1209600 300', '@ IN NS ns'];
  for (let i = 0; i < count; i++) lines.push(`d${i} IN TXT "v=spf1 -all"`, `_dmarc.d${i} IN TXT "v=DMARC1; p=reject"`, `d${i} IN MX 0 .`);
  return `${lines.join('\n')}\n`;
}

/** Runs the benchmark. */
export async function runSharedInfrastructureBenchmark(options: { engine: EngineModules; quick?: boolean; keys?: KeyPool }): Promise<SharedInfrastructureBenchResult> {
  const emptyZone = options.engine.api.parseZone(emptyPassSetZone(EMPTY_PASS_SET_DOMAINS), { file: 'empty-spf.test.zone' });
  const { api, runMs, warmupMs, runs, domains, cache } = warmSetup(options, [emptyZone]);
  const empty = Array.from({ length: EMPTY_PASS_SET_DOMAINS }, (_, index) => `d${index}.empty-spf.test`);

  // Fill the cache (and load the provider data); count the classified results.
  let classified = 0;
  for (const domain of domains) {
    try {
      if ((await api.checkDomain(domain, { resolver: cache })).details.spf.sharedInfrastructure !== null) classified++;
    } catch (error) {
      if (!api.isSpoofCheckError(error)) throw error;
    }
  }
  await checkAll(api, empty, cache, true);

  const pair = async (names: readonly string[]): Promise<ClassificationPair> => {
    const warmupEnd = performance.now() + warmupMs;
    while (performance.now() < warmupEnd) {
      await checkAll(api, names, cache, true);
      await checkAll(api, names, cache, false);
    }
    const rates = await alternate(
      runs,
      () => ratePerSecond(runMs, names.length, () => checkAll(api, names, cache, true)),
      () => ratePerSecond(runMs, names.length, () => checkAll(api, names, cache, false)),
    );
    const withClassification = measured(rates.a);
    const without = measured(rates.b);
    return { withClassification, without, cost: 1 - pairedRatio(rates.a, rates.b) };
  };

  const usual = await pair(domains);
  const emptyPassSet = await pair(empty);
  return { domains: domains.length, classified, warmupMs, runMs, runs, usual, emptyPassSet, target: SHARED_INFRASTRUCTURE_COST_TARGET };
}

// Run on its own: `npx tsx bench/shared-infrastructure.ts [--quick]` (measures the build in dist/).
if (import.meta.url === `file://${process.argv[1]}`) {
  const { buildEngine, loadEngine } = await import('./engine.js');
  buildEngine();
  const result = await runSharedInfrastructureBenchmark({ engine: await loadEngine(), quick: process.argv.includes('--quick') || (await import('./smoke.js')).SMOKE });
  const line = (name: string, p: ClassificationPair) =>
    `${name}: with ${p.withClassification.median.toFixed(0)}/s, without ${p.without.median.toFixed(0)}/s, cost ${(p.cost * 100).toFixed(1)}% (target < ${(result.target * 100).toFixed(0)}%)`;
  process.stdout.write(`${line(`warm check, ${result.classified}/${result.domains} pass sets classified`, result.usual)}\n${line('empty pass set (v=spf1 -all)', result.emptyPassSet)}\n`);
}
