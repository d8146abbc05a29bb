/**
 * spoof-checker: can someone send mail that looks like it comes from this domain, and what exactly
 * should its owner change? This file is the whole public surface: everything here is named on
 * purpose, and nothing else in the package is part of the API.
 *
 * @example
 * import { checkDomain, NetworkResolver, CachingResolver } from 'spoof-checker';
 * const resolver = new CachingResolver(new NetworkResolver(), { maxEntries: 10_000 }); // TTL bounds: the defaults
 * const result = await checkDomain('ceo@example.com', { resolver });
 * console.log(result.verdict, result.headline, result.nextStep.body);
 */

// The entry point and its result.
/** Checks a domain, URL or address: DMARC, SPF, DKIM and MX, scored into a verdict with reasons and a next step. */
export { checkDomain, DEFAULT_CHECK_MAX_QUERIES } from './check.js';
export type { CheckOptions, CheckTransportOptions } from './check.js';
export type { InboxOutcome, SpoofCheckDetails, SpoofCheckResult, Verdict } from './result.js';
/** Why a check gave no verdict (bad input, or a failed lookup the verdict rests on). */
export { SpoofCheckError, isSpoofCheckError } from './errors.js';
export type { CheckErrorCode, FailedQuery } from './errors.js';
export type { Finding, Severity } from './findings.js';
/** Turns user input (domain, URL, address, IDN) into the name to check, or says what is wrong with it. */
export { normaliseDomainInput, DEFAULT_SPECIAL_USE_SUFFIXES } from './input.js';
export type { NormalisedInput, NormaliseOptions } from './input.js';

// The verdict: a pure function of the facts.
/** The verdict table and the pure function that applies it. */
export { decide, VERDICT_RULES } from './verdict/index.js';
export type { Decision, VerdictFacts, VerdictRule } from './verdict/index.js';

// DNS: one port, several implementations, all injectable.
export type { DnsAnswer, DnsErrorReason, MxData, RecordType, Resolver, ResolverStats, SoaData } from './dns/types.js';
/** Answers from zones loaded in memory, as if they were the whole DNS. */
export { ZoneResolver } from './dns/zone-resolver.js';
/** Asks real DNS servers (the system's, or given as ip[:port]) with timeouts, retries and TCP fallback. */
export { NetworkResolver } from './dns/network-resolver.js';
export type { NetworkResolverOptions } from './dns/network-resolver.js';
/** A bounded, TTL-aware cache with negative caching and single-flight, in front of any resolver. */
export { CachingResolver } from './dns/cache.js';
export type { CacheOptions } from './dns/cache.js';
/** A cap on outstanding queries, and the per-check budget (queries, wall time, cancellation). */
export { ConcurrencyLimitedResolver, createCheckResolver } from './dns/limits.js';
export type { CheckBudget, CheckResolver, CheckStats } from './dns/limits.js';
/** Injects DNS faults (SERVFAIL, REFUSED, timeouts, delays, truncation, malformed answers) for tests. */
export { FaultyResolver } from './dns/faults.js';
export type { Fault, FaultPlan, FaultRule } from './dns/faults.js';

// Zone files (RFC 1035 §5).
/** Parses and loads RFC 1035 master files into zones for `ZoneResolver`. */
export { parseZone, ZoneSyntaxError } from './zones/parse.js';
export { loadZoneDirectory, loadZoneFile, ZoneLoadError, FIXTURE_ZONES_DIR } from './zones/load.js';
export type { ResourceRecord, Zone } from './zones/types.js';

// The protocol analyzers, for callers who want one piece.
/** SPF (RFC 7208): the record parser, check_host(), and the worst-case lookup analysis. */
export { analyzeSpf, checkHost, parseSpfRecord } from './spf/index.js';
export type { CheckHostInput, CheckHostOptions, CheckHostResult, SpfAnalysis, SpfResult, SpfTermNode } from './spf/index.js';
/** DMARC (RFC 7489, RFC 9989): parsing, tree-walk discovery, the effective policy for a name, report destinations. */
export { discoverDmarc, effectivePolicy, parseDmarcRecord, verifyReportDestinations } from './dmarc/index.js';
export type { DmarcDiscovery, DmarcRecord, EffectivePolicy } from './dmarc/index.js';
/** DKIM (RFC 6376, RFC 8463): key records parsed, key length read from the key, selectors probed. */
export { parseDkimKeyRecord, probeDkim } from './dkim/index.js';
export type { DkimKey, DkimProbe } from './dkim/index.js';
/** MX (RFC 5321, RFC 7505 null MX) with provider classification. */
export { lookupMx } from './mx/index.js';
export type { MxAnalysis } from './mx/index.js';

/**
 * Shared infrastructure (BreakSPF): published cloud, CI runner and CDN edge ranges, loaded from a
 * `ranges update` file (`CheckOptions.ranges`) or the shipped snapshot, and the classification of an
 * SPF pass set against them.
 */
export { buildRangesFile, classifySharedInfrastructure, loadRangesFile, parseFeed, PROVIDERS, RANGES_STALE_AFTER_DAYS, CRITICAL_RENTABLE_IPV4, CRITICAL_RENTABLE_IPV6, shippedRanges } from './ranges/index.js';
export type { RangeData, RangesFile, SharedInfrastructureExposure, SharedInfrastructureReport } from './ranges/index.js';

// Mail sent to the domain: MTA-STS (RFC 8461), TLS-RPT (RFC 8460), STARTTLS of every MX (RFC 3207).
/** Checks how mail to a domain travels, with its own verdict (enforced, opportunistic, at-risk, broken). */
export { checkTransport, TransportCache, MAX_ADDRESSES_PROBED, MAX_MX_HOSTS_PROBED } from './transport/check.js';
export type { TransportOptions } from './transport/check.js';
/** The pure parts: record and policy parsers, the one-label MX pattern rule. */
export { mxCovered, parseStsPolicy, parseStsRecord, parseTlsRptRecord } from './transport/index.js';
export type { AddressProbe, CertificateSummary, ConnectPorts, PolicyFetchError, ProbeOutcome, StsMode, StsPolicy, TransportResult, TransportVerdict } from './transport/types.js';
/** The address guard: may a public service connect to this IP? (Shared by the probe and webhooks.) */
export { ADDRESS_CLASS_TEXT, classifyAddress, isPublicAddress } from './net/address-guard.js';
export type { AddressClass } from './net/address-guard.js';

// The HTTP service and its stores are in `spoof-checker/service` (src/service.ts), so that this entry
// never loads Fastify.
