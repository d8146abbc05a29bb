/**
 * MX analysis (RFC 1035 §3.3.9, RFC 5321 §5.1, RFC 7505, RFC 2181 §10.3): where a domain receives
 * mail, and which provider runs it. `lookupMx` is the entry point.
 */
export type { MxAnalysis, MxHost, MxHostAddresses, MxLookupOptions, MxStatus } from './types.js';
export { MAX_MX_HOSTS_RESOLVED, MAX_PARALLEL_HOST_LOOKUPS, NULL_MX_PREFERENCE, isIpLiteral, lookupMx, lookupMxNow } from './lookup.js';
export { MX_PROVIDERS, matchesHostPattern, providerForMxHost } from './providers.js';
export type { MxProvider, MxProviderConfidence } from './providers.js';
