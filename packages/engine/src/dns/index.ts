/**
 * The DNS layer in one import. A service stacks it as
 *   createCheckResolver(new CachingResolver(new ConcurrencyLimitedResolver(new NetworkResolver(…), n), …), budget)
 * with one `CachingResolver` shared by all checks and one check resolver per check; tests use a
 * `ZoneResolver` (zones/zone-resolver.ts, optionally inside a `FaultyResolver`) or the embedded
 * server (zones/server.ts): both live a floor up, beside the zones they answer from.
 */
export type { DnsAnswer, DnsErrorReason, MxData, RecordData, RecordDataMap, RecordType, Resolver, ResolverStats, SoaData } from './types.js';
export { describeAnswer, isVoid } from './types.js';
export { canonicalName, dnsNameProblem, isAtOrBelow, parentName } from './name.js';
export { MAX_CNAME_CHAIN } from './types.js';
export { FaultyResolver, faultFor } from './faults.js';
export type { Fault, FaultPlan, FaultRule, FaultyResolverOptions } from './faults.js';
export {
  CachingResolver,
  DEFAULT_CACHE_MAX_ENTRIES,
  DEFAULT_CACHE_TTL_SECONDS,
  DEFAULT_MAX_TTL_SECONDS,
  DEFAULT_NEGATIVE_TTL_SECONDS,
} from './cache.js';
export type { AnswerSource, CacheAwareResolver, CachedLookupResolver, CacheOptions, CacheStats, LookupResult } from './cache.js';
export {
  ConcurrencyLimitedResolver,
  createCheckResolver,
  DEFAULT_CHECK_DEADLINE_MS,
  DEFAULT_CHECK_MAX_QUERIES,
  DEFAULT_MAX_OUTSTANDING_QUERIES,
} from './limits.js';
export type { CheckBudget, CheckResolver, CheckStats } from './limits.js';
export { DEFAULT_QUERY_ATTEMPTS, DEFAULT_QUERY_TIMEOUT_MS, NetworkResolver, parseServerAddress } from './network-resolver.js';
export type { NetworkResolverOptions, ServerAddress } from './network-resolver.js';
