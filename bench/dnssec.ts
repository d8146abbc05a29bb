/**
 * The cost of DNSSEC validation (`result.dnssec`, issue 43 item 1): the same checks of the signed
 * fixture domains (fixtures/dnssec) with validation off and on, on the build (`loadEngine`, as
 * every section of `npm run bench`), over the embedded DNS server on loopback behind the resolver
 * stack `check` and `serve` use (`CachingResolver` over `ConcurrencyLimitedResolver` over
 * `NetworkResolver`), at concurrency 16:
 *
 * - cold: a new DNS cache and a new `DnssecCache` every round (as one `check` invocation or one
 *   batch starts), also over the same zones unsigned (the zone files before signing, served by the
 *   same server through `ZoneResolver`), so signing's own cost shows;
 * - warm: one DNS cache and one `DnssecCache` for every round (the service's shape);
 * - cold at a round trip: cold, with every answer (the check's and the validator's) `DNSSEC_RTT_MS`
 *   late, as from a resolver that has to ask: on loopback a round trip costs next to nothing, so
 *   only here do the validator's questions one after another (or at once) show.
 *
 * Modes alternate within each round, and each ratio is the median over rounds of the ratio within
 * a round (the machine's load moves between runs; a spike moves one round's pair, not the figure). Headline: `dnssecWarmRatio` and `dnssecColdRatio` (validated ÷ unvalidated; targets
 * ≥ 0.5), `dnssecSignedColdRatio` (unvalidated signed ÷ unsigned; target ≥ 0.8).
 *
 *   npm run bench -- --only dnssec [--quick]      as a section
 *   npx tsx --tsconfig bench/tsconfig.json bench/dnssec.ts [--quick] [--source]   alone
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ENGINE_PACKAGE_BUILD_DIR, loadEngine, type EngineModules } from './engine.js';
import { SMOKE } from './smoke.js';
import { pairedRatio } from './stats.js';

/** Checks in flight. */
export const DNSSEC_CONCURRENCY = 16;
/** Measured rounds (full / quick); one more unmeasured round warms the JIT and, for warm, the caches. */
export const DNSSEC_ROUNDS = { full: 10, quick: 5 } as const;
/** Passes over the domains per warm round (a warm pass takes milliseconds). */
export const WARM_PASSES = { full: 200, quick: 100 } as const;
/** How late every answer comes in the round-trip mode, in ms (a resolver's miss to a nearby authority). */
export const DNSSEC_RTT_MS = 25;
/** Targets (issue 43 item 1). */
export const DNSSEC_WARM_RATIO_TARGET = 0.5;
export const DNSSEC_COLD_RATIO_TARGET = 0.5;
export const DNSSEC_SIGNED_COLD_RATIO_TARGET = 0.8;

const DIR = fileURLToPath(new URL('../fixtures/dnssec/', import.meta.url));
/** Record types the plain zone reader does not read: the signed files' own, dropped for the unsigned copy. */
const DNSSEC_ONLY_TYPES = /\s(DS|DNSKEY|RRSIG|NSEC|NSEC3|NSEC3PARAM|TLSA)\s/;

/** One mode's figures. */
export interface DnssecModeResult {
  checksPerSec: number;
  checks: number;
  failed: number;
  /** Signature verifications per check (validation on). */
  verificationsPerCheck: number;
  /** CPU time of the process (the checks and the embedded server together) per check, in ms. */
  cpuMsPerCheck: number;
  statuses: Record<string, number>;
}

/** The section's result. */
export interface DnssecBenchResult {
  domains: number;
  concurrency: number;
  rounds: number;
  cold: { unsigned: DnssecModeResult; off: DnssecModeResult; on: DnssecModeResult };
  warm: { off: DnssecModeResult; on: DnssecModeResult };
  /** Cold, every answer `DNSSEC_RTT_MS` late. */
  roundTrip: { rttMs: number; off: DnssecModeResult; on: DnssecModeResult };
  warmRatio: number;
  coldRatio: number;
  /**
   * Cold CPU per check, unvalidated ÷ validated (median over rounds): the throughput ratio a machine
   * whose cores are busy would give, steadier than `coldRatio` under load.
   */
  coldCpuRatio: number;
  signedColdRatio: number;
  /** Cold at a `DNSSEC_RTT_MS` round trip, validated ÷ unvalidated (median over rounds). */
  roundTripColdRatio: number;
}

type Api = EngineModules['api'];

/** Runs the section on `engine` (the build unless told). */
export async function runDnssecBenchmark(options: { engine: EngineModules; quick: boolean }): Promise<DnssecBenchResult> {
  const { engine, quick } = options;
  const api = engine.api;
  const verify = (engine.from === 'build'
    ? await import(pathToFileURL(join(ENGINE_PACKAGE_BUILD_DIR, 'dnssec', 'verify.js')).href)
    : await import('../packages/engine/src/dnssec/verify.js')) as typeof import('../packages/engine/src/dnssec/verify.js');
  const rounds = SMOKE ? 1 : quick ? DNSSEC_ROUNDS.quick : DNSSEC_ROUNDS.full;
  const passes = SMOKE ? 2 : quick ? WARM_PASSES.quick : WARM_PASSES.full;
  const signedServer = await engine.server.startDnsServer({ resolver: new api.ZoneResolver([]), signedZones: await api.loadSignedZoneDirectory(`${DIR}zones`), outsideZones: 'nxdomain' });
  const unsignedZones = readdirSync(`${DIR}unsigned`)
    .filter((file) => file.endsWith('.zone'))
    .map((file) =>
      api.parseZone(
        readFileSync(`${DIR}unsigned/${file}`, 'utf8')
          .split('\n')
          .filter((line) => !DNSSEC_ONLY_TYPES.test(line))
          .join('\n'),
        { origin: file === 'root.zone' ? '.' : file.replace(/\.zone$/, ''), file },
      ),
    );
  const unsignedServer = await engine.server.startDnsServer({ resolver: new api.ZoneResolver(unsignedZones), outsideZones: 'nxdomain' });
  const anchors = api.parseTrustAnchors(readFileSync(`${DIR}root-anchor.ds`, 'utf8'));
  const domains = readdirSync(`${DIR}zones`)
    .filter((file) => file.endsWith('.test.signed') || file.endsWith('.test.zone'))
    .map((file) => file.replace(/\.(signed|zone)$/, ''));
  const signed = new api.NetworkResolver({ servers: [`127.0.0.1:${signedServer.address.port}`] });
  const unsigned = new api.NetworkResolver({ servers: [`127.0.0.1:${unsignedServer.address.port}`] });

  /**
   * The resolver stack of `check`/`serve`, and (validation on) a DnssecCache over the same servers;
   * with `rttMs`, every answer of both that many ms late.
   */
  const stack = (network: InstanceType<Api['NetworkResolver']>, validate: boolean, rttMs = 0) => {
    const raw = network.dnssecQuery();
    const late = { resolve: ((name: string, type: never) => sleep(rttMs).then(() => network.resolve(name, type))) as typeof network.resolve };
    return {
      resolver: new api.CachingResolver(new api.ConcurrencyLimitedResolver(rttMs > 0 ? late : network), { maxEntries: 10_000 }),
      dnssec: validate ? { query: rttMs > 0 ? (name: string, type: number) => sleep(rttMs).then(() => raw(name, type)) : raw, anchors, cache: new api.DnssecCache() } : undefined,
    };
  };
  type Stack = ReturnType<typeof stack>;
  const tally = (): DnssecModeResult & { ms: number; cpuMs: number; verifications: number; perRound: number[]; cpuPerRound: number[] } => ({ checksPerSec: 0, checks: 0, failed: 0, verificationsPerCheck: 0, cpuMsPerCheck: 0, statuses: {}, ms: 0, cpuMs: 0, verifications: 0, perRound: [], cpuPerRound: [] });

  /** `list` checked at `DNSSEC_CONCURRENCY` through `using`, added to `into` when `measured`. */
  const pass = async (list: readonly string[], using: Stack, into: ReturnType<typeof tally>, measured: boolean): Promise<void> => {
    const queue = [...list];
    const verifiesBefore = verify.verifyCounter.count;
    const cpuBefore = process.cpuUsage();
    const startedAt = performance.now();
    let checks = 0;
    let failed = 0;
    const statuses: Record<string, number> = {};
    await Promise.all(
      Array.from({ length: DNSSEC_CONCURRENCY }, async () => {
        for (let domain = queue.shift(); domain; domain = queue.shift()) {
          try {
            const result = await api.checkDomain(domain, { resolver: using.resolver, ...(using.dnssec ? { dnssec: using.dnssec } : { dnssec: false }) });
            const status = result.dnssec?.status ?? 'none';
            statuses[status] = (statuses[status] ?? 0) + 1;
          } catch {
            failed++;
          }
          checks++;
        }
      }),
    );
    if (!measured) return;
    const ms = performance.now() - startedAt;
    const cpu = process.cpuUsage(cpuBefore);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    into.perRound.push(checks / (ms / 1000));
    into.cpuPerRound.push(cpuMs / Math.max(1, checks));
    into.ms += ms;
    into.cpuMs += cpuMs;
    into.checks += checks;
    into.failed += failed;
    into.verifications += verify.verifyCounter.count - verifiesBefore;
    for (const [status, count] of Object.entries(statuses)) into.statuses[status] = (into.statuses[status] ?? 0) + count;
  };

  const cold = { unsigned: tally(), off: tally(), on: tally() };
  for (let round = -1; round < rounds; round++) {
    // A new stack per mode and round: nothing cached from before.
    await pass(domains, stack(unsigned, false), cold.unsigned, round >= 0);
    await pass(domains, stack(signed, false), cold.off, round >= 0);
    await pass(domains, stack(signed, true), cold.on, round >= 0);
  }
  const roundTrip = { off: tally(), on: tally() };
  for (let round = -1; round < rounds; round++) {
    await pass(domains, stack(signed, false, DNSSEC_RTT_MS), roundTrip.off, round >= 0);
    await pass(domains, stack(signed, true, DNSSEC_RTT_MS), roundTrip.on, round >= 0);
  }
  const warm = { off: tally(), on: tally() };
  const warmStacks = { off: stack(signed, false), on: stack(signed, true) };
  const many = Array.from({ length: passes }, () => domains).flat();
  for (let round = -1; round < rounds; round++) {
    await pass(round < 0 ? domains : many, warmStacks.off, warm.off, round >= 0);
    await pass(round < 0 ? domains : many, warmStacks.on, warm.on, round >= 0);
  }
  signed.close();
  unsigned.close();
  await signedServer.close();
  await unsignedServer.close();

  const done = ({ ms, cpuMs, verifications, perRound: _perRound, cpuPerRound: _cpuPerRound, ...mode }: ReturnType<typeof tally>): DnssecModeResult => ({
    ...mode,
    checksPerSec: Math.round(mode.checks / (ms / 1000)),
    cpuMsPerCheck: +(cpuMs / Math.max(1, mode.checks)).toFixed(2),
    verificationsPerCheck: +(verifications / Math.max(1, mode.checks)).toFixed(2),
  });
  const result = {
    domains: domains.length,
    concurrency: DNSSEC_CONCURRENCY,
    rounds,
    cold: { unsigned: done(cold.unsigned), off: done(cold.off), on: done(cold.on) },
    warm: { off: done(warm.off), on: done(warm.on) },
    roundTrip: { rttMs: DNSSEC_RTT_MS, off: done(roundTrip.off), on: done(roundTrip.on) },
  };
  // The median over rounds of the ratio within each round: the two modes of a round ran back to
  // back, so a load spike on the shared machine moves one round's pair, not the figure.
  const ratio = (a: ReturnType<typeof tally>, b: ReturnType<typeof tally>): number => +pairedRatio(a.perRound, b.perRound).toFixed(2);
  return {
    ...result,
    warmRatio: ratio(warm.on, warm.off),
    coldRatio: ratio(cold.on, cold.off),
    coldCpuRatio: +pairedRatio(cold.off.cpuPerRound, cold.on.cpuPerRound).toFixed(2),
    signedColdRatio: ratio(cold.off, cold.unsigned),
    roundTripColdRatio: ratio(roundTrip.on, roundTrip.off),
  };
}

// Run alone: `npx tsx --tsconfig bench/tsconfig.json bench/dnssec.ts [--quick] [--source]`.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const engine = await loadEngine({ fromSource: process.argv.includes('--source') });
  const result = await runDnssecBenchmark({ engine, quick: process.argv.includes('--quick') || SMOKE });
  console.log(JSON.stringify({ bench: 'dnssec', engine: engine.from, node: process.version, ...result }, null, 2));
}
