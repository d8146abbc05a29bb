import { CachingResolver, DEFAULT_CACHE_MAX_ENTRIES, DEFAULT_CACHE_TTL_SECONDS, DEFAULT_MAX_TTL_SECONDS } from '../dns/cache.js';
import { ConcurrencyLimitedResolver, DEFAULT_MAX_OUTSTANDING_QUERIES } from '../dns/limits.js';
import { NetworkResolver } from '../dns/network-resolver.js';
import type { Resolver } from '../dns/types.js';
import { ZoneResolver } from '../dns/zone-resolver.js';
import { loadZoneDirectory } from '../zones/load.js';
import { integerOption, UsageError } from './args.js';

/** The flags (or environment variables) that choose where answers come from. */
export interface ResolverFlags {
  /** A directory of `*.zone` files: the loaded zones are the whole DNS. */
  zones?: string | undefined;
  /** A DNS server as `ip[:port]` or `[ipv6]:port`. */
  resolver?: string | undefined;
  /** Per-query timeout in milliseconds, for real servers. */
  timeout?: string | undefined;
  /** Cap on outstanding queries to real servers. */
  maxOutstanding?: number | undefined;
  /** Answers the shared cache keeps for real servers; `DEFAULT_CACHE_MAX_ENTRIES` unless told. */
  cacheMaxEntries?: number | undefined;
}

/** The longest per-query timeout a flag may ask for. */
export const MAX_TIMEOUT_FLAG_MS = 60_000;

/**
 * Builds the resolver the flags name, with a one-line description for start-up messages:
 * zone files in memory (`--zones`), or real servers (`--resolver`, else the system's) behind a
 * concurrency cap and a shared TTL-aware cache. Throws `UsageError` for contradictory or bad flags
 * and for zone files that do not load (the message names file, line and column).
 */
export async function resolverFromFlags(flags: ResolverFlags): Promise<{ resolver: Resolver; description: string; zones?: ZoneResolver }> {
  if (flags.zones !== undefined && flags.resolver !== undefined) {
    throw new UsageError('give --zones DIR or --resolver IP[:PORT], not both');
  }
  if (flags.zones !== undefined) {
    if (flags.timeout !== undefined) throw new UsageError('--timeout applies to real DNS servers, not to --zones');
    let zones;
    try {
      zones = await loadZoneDirectory(flags.zones);
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
    const resolver = new ZoneResolver(zones);
    return { resolver, zones: resolver, description: `${zones.length} zone(s) from ${flags.zones}` };
  }
  const timeoutMs = integerOption(flags.timeout, 'timeout', 0, 1, MAX_TIMEOUT_FLAG_MS) || undefined;
  let network: NetworkResolver;
  try {
    network = new NetworkResolver({ servers: flags.resolver === undefined ? undefined : [flags.resolver], timeoutMs });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const limited = new ConcurrencyLimitedResolver(network, flags.maxOutstanding ?? DEFAULT_MAX_OUTSTANDING_QUERIES);
  return {
    resolver: new CachingResolver(limited, {
      maxEntries: flags.cacheMaxEntries ?? DEFAULT_CACHE_MAX_ENTRIES,
      defaultTtlSeconds: DEFAULT_CACHE_TTL_SECONDS,
      maxTtlSeconds: DEFAULT_MAX_TTL_SECONDS,
    }),
    description: flags.resolver === undefined ? `the system DNS resolvers (${network.servers().join(', ')})` : `the DNS server ${flags.resolver}`,
  };
}
