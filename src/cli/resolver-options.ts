import { CachingResolver, DEFAULT_CACHE_MAX_ENTRIES, DEFAULT_CACHE_TTL_SECONDS, DEFAULT_MAX_TTL_SECONDS } from '@spoof-checker/engine';
import { FaultyResolver, type FaultPlan } from '@spoof-checker/engine';
import { ConcurrencyLimitedResolver, DEFAULT_MAX_OUTSTANDING_QUERIES } from '@spoof-checker/engine';
import { NetworkResolver } from '@spoof-checker/engine';
import type { Resolver } from '@spoof-checker/engine';
import { ZoneDirectoryResolver, ZoneResolver } from '@spoof-checker/engine';
import { loadZoneDirectory } from '@spoof-checker/engine';
import { existsSync, statSync } from 'node:fs';
import { FIXTURE_ZONES_DIR } from '../fixtures.js';
import { integerOption, UsageError } from './args.js';
import { faultPlanForEveryCheck, faultPlanForInput, loadFaultPlan } from './faults-file.js';

/** The flags (or environment variables) that choose where answers come from. */
export interface ResolverFlags {
  /** A directory of `*.zone` files: the loaded zones are the whole DNS. */
  zones?: string | undefined;
  /** `--demo-zones`: the fixture zones shipped with spoof-checker (`FIXTURE_ZONES_DIR`), found from any working directory. */
  demoZones?: boolean | undefined;
  /**
   * DNS servers as `ip[:port]` or `[ipv6]:port`, separated by commas: questions are spread over them,
   * and a query that gets no answer from one is tried at the next.
   */
  resolver?: string | undefined;
  /** Per-query timeout in milliseconds, for real servers. */
  timeout?: string | undefined;
  /** Cap on outstanding queries to real servers. */
  maxOutstanding?: number | undefined;
  /** Answers the shared cache keeps for real servers; `DEFAULT_CACHE_MAX_ENTRIES` unless told. */
  cacheMaxEntries?: number | undefined;
  /** A faults file (src/cli/faults-file.ts): the DNS faults to inject in front of whichever source is chosen. */
  faults?: string | undefined;
  /**
   * Parse each zone file when a check first needs it, keeping a bounded number in memory
   * (`ZoneDirectoryResolver`), instead of loading the whole directory at start: `scan`, whose
   * directories may hold a million files. A broken file then fails the lookups into it, not the start.
   */
  onDemandZones?: boolean | undefined;
}

/**
 * How long an injected `drop` waits before it answers `timeout`: 0, at once. A real client would wait
 * its whole timeout (seconds) for the same outcome; the check's verdict is the same either way, and
 * answering at once keeps the demo page and the CLI responsive. A `delay` rule simulates slowness.
 */
export const INJECTED_DROP_AFTER_MS = 0;

/** The longest per-query timeout a flag may ask for. */
export const MAX_TIMEOUT_FLAG_MS = 60_000;

/** What `resolverFromFlags` builds. */
export interface BuiltResolver {
  /** The source with the faults that apply to every check (all of a list of rules; none of a list of scenarios). */
  resolver: Resolver;
  /**
   * The resolver for the check of `input`: `resolver`, plus the faults of the scenario that checks
   * that domain (a list of scenarios scopes each fault to its scenario). Every command checks through it.
   */
  resolverFor(input: string): Resolver;
  /** One line for start-up messages: the source, and the faults. */
  description: string;
  /** The zone resolver itself, without faults, when the source is `--zones`. */
  zones?: ZoneResolver;
  /** The network resolver under the cache, when the source is real servers (DNSSEC asks through it). */
  network?: NetworkResolver;
}

/**
 * Builds the resolver the flags name, with a one-line description for start-up messages:
 * zone files in memory (`--zones`), or real servers (`--resolver`, else the system's) behind a
 * concurrency cap and a shared TTL-aware cache; with `--faults FILE`, wrapped in a `FaultyResolver`
 * applying the file's faults (outside the cache, so an injected failure is never cached).
 * Throws `UsageError` for contradictory or bad flags, for zone files that do not load (the message
 * names file, line and column) and for a bad faults file (the message names the file and the JSON path).
 */
export async function resolverFromFlags(flags: ResolverFlags): Promise<BuiltResolver> {
  const built = await sourceFromFlags(flags);
  const source = built.resolver;
  if (flags.faults === undefined) return { ...built, resolverFor: () => source };
  const loaded = await loadFaultPlan(flags.faults);
  const wrap = (plan: FaultPlan): Resolver => (plan.length === 0 ? source : new FaultyResolver(source, plan, { dropAfterMs: INJECTED_DROP_AFTER_MS }));
  const everyCheck = faultPlanForEveryCheck(loaded);
  const shared = wrap(everyCheck);
  return {
    ...built,
    resolver: shared,
    resolverFor: (input) => {
      const plan = faultPlanForInput(loaded, input);
      // Most checks match no scoped rule: they share one resolver.
      return plan.length === everyCheck.length ? shared : wrap(plan);
    },
    description: `${built.description}; ${loaded.plan.length} DNS fault(s) from ${flags.faults}${loaded.shape === 'scenarios' ? ', each for its scenario' : ''}`,
  };
}

/** The flag that names the shipped fixture zones, for messages. */
export const DEMO_ZONES_FLAG = '--demo-zones';

/**
 * `--zones DIR` or `--demo-zones` as one directory (undefined when neither): the shipped fixture
 * zones for `--demo-zones`; a DIR that is not there is a usage error that names the directory
 * against the working directory and points at `--demo-zones` (`--zones fixtures/zones` only works
 * from a clone of the repository, not from an installed package).
 */
export function zonesDirectory(zones: string | undefined, demoZones: boolean | undefined, what = '--zones'): string | undefined {
  if (demoZones) {
    if (zones !== undefined) throw new UsageError(`give --zones DIR or ${DEMO_ZONES_FLAG}, not both`);
    return FIXTURE_ZONES_DIR;
  }
  if (zones === undefined) return undefined;
  if (!existsSync(zones)) {
    throw new UsageError(
      `${what} ${zones}: no such directory (looked for in ${process.cwd()}). For the fixture zones shipped with spoof-checker, wherever it is installed, use ${DEMO_ZONES_FLAG} instead`,
    );
  }
  if (!statSync(zones).isDirectory()) throw new UsageError(`${what} ${zones}: not a directory (give the directory that holds the *.zone files, or ${DEMO_ZONES_FLAG})`);
  return zones;
}

/** The DNS source alone: zone files or real servers. */
async function sourceFromFlags(flags: ResolverFlags): Promise<{ resolver: Resolver; description: string; zones?: ZoneResolver; network?: NetworkResolver }> {
  if ((flags.zones !== undefined || flags.demoZones) && flags.resolver !== undefined) {
    throw new UsageError(`give --zones DIR (or ${DEMO_ZONES_FLAG}) or --resolver IP[:PORT], not both`);
  }
  const dir = zonesDirectory(flags.zones, flags.demoZones);
  if (dir !== undefined) {
    if (flags.timeout !== undefined) throw new UsageError('--timeout applies to real DNS servers, not to --zones');
    if (flags.onDemandZones) {
      let onDemand: ZoneDirectoryResolver;
      try {
        onDemand = await ZoneDirectoryResolver.open(dir);
      } catch (error) {
        throw new UsageError(error instanceof Error ? error.message : String(error));
      }
      return { resolver: onDemand, description: `${onDemand.zoneCount} zone file(s) from ${flags.demoZones ? `the shipped fixture zones (${dir})` : dir}, each read when first needed` };
    }
    let zones;
    try {
      zones = await loadZoneDirectory(dir);
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
    const resolver = new ZoneResolver(zones);
    return { resolver, zones: resolver, description: `${zones.length} zone(s) from ${flags.demoZones ? `the shipped fixture zones (${dir})` : dir}` };
  }
  const timeoutMs = integerOption(flags.timeout, 'timeout', 0, 1, MAX_TIMEOUT_FLAG_MS) || undefined;
  let network: NetworkResolver;
  try {
    network = new NetworkResolver({ servers: flags.resolver === undefined ? undefined : serverList(flags.resolver), timeoutMs });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const limited = new ConcurrencyLimitedResolver(network, flags.maxOutstanding ?? DEFAULT_MAX_OUTSTANDING_QUERIES);
  return {
    network,
    resolver: new CachingResolver(limited, {
      maxEntries: flags.cacheMaxEntries ?? DEFAULT_CACHE_MAX_ENTRIES,
      defaultTtlSeconds: DEFAULT_CACHE_TTL_SECONDS,
      maxTtlSeconds: DEFAULT_MAX_TTL_SECONDS,
    }),
    description:
      flags.resolver === undefined
        ? `the system DNS resolvers (${network.servers().join(', ')})`
        : network.servers().length === 1
          ? `the DNS server ${flags.resolver}`
          : `the DNS servers ${network.servers().join(', ')}`,
  };
}

/** `--resolver`'s servers: a comma-separated list, blanks around them ignored; an empty entry is a mistake. */
export function serverList(text: string): string[] {
  const servers = text.split(',').map((server) => server.trim());
  if (servers.some((server) => server === '')) {
    throw new UsageError(`--resolver takes DNS servers separated by commas, such as 192.0.2.53 or 192.0.2.53,[2001:db8::53]:5300; "${text}" has an empty entry`);
  }
  return servers;
}
