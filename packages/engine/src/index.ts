/**
 * @spoof-checker/engine: can someone send mail that looks like it comes from this domain, and what exactly
 * should its owner change? This file is the whole public surface: everything here is named on
 * purpose, and nothing else in the package is part of the API.
 *
 * @example
 * import { checkDomain, NetworkResolver, CachingResolver } from '@spoof-checker/engine';
 * const resolver = new CachingResolver(new NetworkResolver(), { maxEntries: 10_000 }); // TTL bounds: the defaults
 * const result = await checkDomain('ceo@example.com', { resolver });
 * console.log(result.verdict, result.headline, result.nextStep.body);
 */

// The entry point and its result.
/** Checks a domain, URL or address: DMARC, SPF, DKIM and MX, scored into a verdict with reasons and a next step. */
export { checkDomain, DEFAULT_CHECK_MAX_QUERIES } from './check.js';
export type { CheckBimiOptions, CheckOptions, CheckTransportOptions } from './check.js';
export { OPTIONAL_SECTIONS, SECTION_NAMES, type SectionName } from './sections.js';
export { nextStepsOf, type SectionEnvelope } from './findings.js';
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
export type { CheckSource, DnsAnswer, DnsErrorReason, MxData, RecordType, Resolver, ResolverStats, SoaData } from './dns/types.js';
/** Where a resolver's answers come from (`dns` unless it says `fixture-zones`), as results report it in `source`. */
export { checkSourceOf } from './dns/types.js';
/** Answers from zones loaded in memory, as if they were the whole DNS. */
export { ZoneResolver } from './zones/zone-resolver.js';
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
export { loadZoneDirectory, loadZoneFile, ZoneLoadError } from './zones/load.js';
/** Zone files parsed on first use from an index of their directory, a bounded number kept: `scan --zones` over a million files. */
export { DEFAULT_ZONE_CACHE_MAX_ZONES, ZoneDirectoryResolver } from './zones/directory-resolver.js';
export type { ZoneDirectoryOptions } from './zones/directory-resolver.js';
export type { OtherRecord, ResourceRecord, Zone } from './zones/types.js';

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
/** What `spoof-checker ranges` builds on: reading the official feeds from a folder, the file's codec, its age, the shipped file's path. */
export { decodeRangesFile, formatIpv6Count, isStale, rangesAgeDays, readFeedDirectory, SHIPPED_RANGES_FILE } from './ranges/index.js';
export type { BuildResult, FeedSpec, FeedText } from './ranges/index.js';

// Mail sent to the domain: MTA-STS (RFC 8461), TLS-RPT (RFC 8460), STARTTLS of every MX (RFC 3207).
/** Checks how mail to a domain travels, with its own verdict (enforced, opportunistic, at-risk, broken, untested, no-mail). */
export { checkTransport, TransportCache, MAX_ADDRESSES_PROBED, MAX_MX_HOSTS_PROBED } from './transport/check.js';
export type { TransportOptions } from './transport/check.js';
/** The pure parts: record and policy parsers, the one-label MX pattern rule. */
export { mxCovered, parseStsPolicy, parseStsRecord, parseTlsRptRecord } from './transport/index.js';
export type { AddressProbe, CertificateSummary, ConnectPorts, PolicyFetchError, ProbeOutcome, StsMode, StsPolicy, TransportResult, TransportVerdict } from './transport/types.js';
// The brand logo receivers show once DMARC is enforced: BIMI (draft-brand-indicators-for-message-identification-14).
/** Checks BIMI: the record, the DMARC prerequisite, the logo (SVG Tiny PS) and the mark certificate (VMC, CMC), graded apart from the spoof verdict. */
export { checkBimi, BIMI_EXPIRY_WARNING_DAYS } from './bimi/check.js';
export type { BimiOptions } from './bimi/check.js';
/** The pure parts: the record parser, the SVG Tiny PS validator, the mark certificate check by signature, the shipped Mark Verifying Authority roots. */
export { bimiRootsFromPem, bimiSelectorProblem, checkMarkCertificate, MAX_SVG_BYTES, parseBimiRecord, shippedBimiRoots, SVG_RULES, validateSvg } from './bimi/index.js';
export type { BimiCertificate, BimiGrade, BimiLogo, BimiResult, BimiRoot, MarkCertificateInput, ProviderEligibility, SvgReport, SvgViolation } from './bimi/index.js';
/** The address guard: may a public service connect to this IP? (Shared by the probe and webhooks.) */
export { ADDRESS_CLASS_TEXT, classifyAddress, forbiddenReason, isForbiddenAddress, isPublicAddress, resolveAllowedAddress } from './net/address-guard.js';
export type { AddressCheck, AddressClass, HostLookup } from './net/address-guard.js';
/** The trust set of the TLS probes: the default roots plus extra PEM roots (`--tls-ca`), built once per PEM. */
export { tlsTrust } from './net/tls-peer.js';
export type { TlsTrust } from './net/tls-peer.js';

// Reports the receivers send back: DMARC aggregate (RFC 7489 Appendix C, RFC 9990) and SMTP TLS (RFC 8460) (docs/reports.md).
/** Report files to report documents: gzip, zip, XML or JSON by their first bytes, decompression capped (bombs stop at the cap). */
export { DEFAULT_UNPACK_CAPS, MAX_COMPRESSION_RATIO, MAX_INPUT_BYTES, MAX_TOTAL_UNCOMPRESSED_BYTES, MAX_UNCOMPRESSED_BYTES, MAX_ZIP_ENTRIES, RATIO_FLOOR_BYTES, unpackReportFile } from './reports/index.js';
/** The strict XML reader (reports and BIMI SVG): no DOCTYPE, no entity beyond the five predefined and character references, depth and node caps. */
export { MAX_XML_DEPTH, MAX_XML_NODES, parseXml } from './reports/index.js';
/** Parsers of the two report formats (whole or nothing, with a reason), and the dedupe key of a report (independent of its bytes). */
export { DMARC_2_NAMESPACE, MAX_FUTURE_SKEW_SECONDS, MAX_REPORT_RECORDS, MAX_TLS_REPORT_ITEMS, parseAggregateReport, parseTlsReport, reportIdentity } from './reports/index.js';
/**
 * The analysis, pure over parsed reports: senders grouped and classed (legitimate, forwarded,
 * unauthorised), what quarantine or reject would break and the exact fixes, the SPF record tightened to
 * the cloud addresses that really sent, unused SPF terms, the DKIM selectors seen, the daily series of
 * pass and fail, the TLS summary with its enforce answer, and `summariseReports`: the whole
 * `reports show --json` answer, from the reports or from their digest (`digestReports`, `mergeDigests`:
 * one entry per source and day, so a summary does not read every row; `SenderRests` and `emptySenderRests`:
 * a source's sets and words being added up, for a reader adding up stored entries itself). `lookupReverseNames` is the one
 * that asks DNS (bounded, through the resolver given).
 */
export { capList, dailyCounts, digestReports, digestSelectors, emptySenderRests, KNOWN_MAIL_SERVICES, MAX_SUMMARY_LIST, lookupReverseNames, mergeDigestEntries, mergeDigests, mergeSenderDigests, MAX_REVERSE_LOOKUPS, readiness, reportsInWindow, selectorsSeen, spfTighten, summariseDigestSenders, summariseReports, summariseSenders, tlsSummary, unusedSpfTerms } from './reports/index.js';
export type {
  DailyCount,
  EnforcementImpact,
  KnownMailService,
  Readiness,
  ReadinessBlocker,
  ReportsDigest,
  ReportsSummary,
  ReportsSummarySender,
  ReverseName,
  SenderDigestEntry,
  SenderClass,
  SenderOptions,
  SenderRests,
  SenderSummary,
  SpfTightening,
  SummariseReportsInput,
  TlsFailureCount,
  TlsPolicySummary,
  TlsSummary,
  UnusedSpfTerm,
} from './reports/index.js';
export type {
  AggregateRecord,
  AggregateReport,
  DkimAuthResult,
  OverrideReason,
  ParseOutcome,
  ParseReportOptions,
  PolicyPublished,
  ReportDocument,
  ReportIdentityOptions,
  ReportKind,
  ReportRejection,
  SpfAuthResult,
  TlsFailureDetail,
  TlsPolicyResult,
  TlsReport,
  UnpackCaps,
  UnpackFailureReason,
  UnpackOptions,
  UnpackOutcome,
  XmlElement,
  XmlOutcome,
} from './reports/index.js';
/**
 * DNSSEC: the validating stub (trust anchor → DS → DNSKEY → RRSIG, NSEC/NSEC3 denial; RFC 4035 §5),
 * its DO+CD query client, the IANA root anchors and anchor files, and `result.dnssec`'s types.
 */
export { createRawQuery, DnssecCache, EDE, IANA_ROOT_ANCHOR_DS, ianaRootAnchors, loadTrustAnchorFile, parseTrustAnchors, startDnssec, Validator } from './dnssec/index.js';
export type {
  CheckDnssecOptions,
  DnssecReason,
  DnssecResult,
  DnssecResultStatus,
  DnssecRRsetResult,
  DnssecStatus,
  RawQuery,
  RawResponse,
  TrustAnchor,
  ValidationResult,
  ValidatorOptions,
} from './dnssec/index.js';
/** DANE for SMTP: TLSA records matched against the chain an MX sent after STARTTLS (RFC 7672, RFC 7671). */
export { chainAsSent, matchTlsa, parseTlsaRdata, rolloverScheme } from './dane/index.js';
export type { DaneMatch, DaneOutcome, RolloverScheme, TlsaRecord } from './dane/index.js';
export type { DaneVerdict, MxTlsa } from './transport/dane.js';
/** Signed zone files served as RFC 4035 §3 says, by `startDnsServer({ signedZones })`. */
export { loadSignedZoneDirectory, SignedZoneSet } from './zones/signed.js';
export { signedZoneQuery } from './zones/signed-query.js';
// Lookalike (cousin) domains: the names that look like a domain, and what each can do with mail.
/**
 * Generates the dnstwist fuzzers' names for a domain's registrable label (homoglyphs only where the
 * TLD's registry registers them), probes them cheap first through the injected resolver, and grades
 * each: critical, high, medium, unknown, protected, none (docs/lookalikes.md).
 */
export { findLookalikes, generateFor as generateLookalikes, originalName as lookalikeOriginal, LOOKALIKE_FUZZERS, LOOKALIKE_GRADES, MAX_PROBE_CONCURRENCY } from './lookalikes/index.js';
/** The lookalike run's limits: candidates (default and deep caps), DNS lookups, wall time, probes at once; the built-in word and TLD lists. */
export {
  DEEP_LOOKALIKE_DEADLINE_MS,
  DEEP_LOOKALIKE_MAX_QUERIES,
  DEEP_MAX_CANDIDATES,
  DEFAULT_DICTIONARY,
  DEFAULT_LOOKALIKE_DEADLINE_MS,
  DEFAULT_LOOKALIKE_MAX_QUERIES,
  DEFAULT_MAX_CANDIDATES,
  DEFAULT_PROBE_CONCURRENCY,
  DEFAULT_SWAP_TLDS,
  MAX_LOOKALIKE_CANDIDATES,
  MIN_CANDIDATES_PER_FUZZER,
} from './lookalikes/index.js';
/** UTS #39 skeletons (strict, and loose without combining marks), the Damerau-Levenshtein distance, the per-TLD IDN policy, the parking records. */
export { damerauLevenshtein, DEFENSIVE_HINT, IDN_POLICY, idnPolicyFor, looseSkeleton, parkingRecords, skeleton } from './lookalikes/index.js';
/** The opt-in catch-all test over SMTP (EHLO, MAIL FROM:<>, RCPT TO a random address, QUIT; never DATA), behind the address guard. */
export { createSmtpProbe, LOOKALIKE_SMTP_DEADLINE_MS, LOOKALIKE_SMTP_PORT } from './lookalikes/index.js';
export type {
  GenerateOptions as LookalikeGenerateOptions,
  GeneratedCandidates as LookalikeCandidates,
  IdnPolicy,
  Lookalike,
  LookalikeCandidate,
  LookalikeDmarc,
  LookalikeFuzzer,
  LookalikeGrade,
  LookalikeMx,
  LookalikeNextStep,
  LookalikeOptions,
  LookalikeReport,
  LookalikeSmtpProbe,
  LookalikeSpf,
  OriginalName as LookalikeOriginal,
  OriginalOutcome as LookalikeOriginalOutcome,
  SkeletonMatch,
  SmtpProbeOptions,
} from './lookalikes/index.js';

// The HTTP service and its stores are in `spoof-checker/service` (src/service.ts), so that this entry
// never loads Fastify.

// Pieces the CLI and the service package build on: documented and kept stable like the rest.
/** The authoritative DNS server over zone files (`spoof-checker dns-serve`): UDP and TCP, AA, SOA in negative answers. */
export { startDnsServer } from './zones/server.js';
export type { DnsServerOptions, OutsideZones } from './zones/server.js';
/** Why a string is not a DNS name (RFC 1035 §2.3.4 lengths, RFC 952/1123 labels), and whether a name is at or below another. */
export { canonicalName, dnsNameProblem, isAtOrBelow } from './dns/name.js';
/** The defaults of CachingResolver and ConcurrencyLimitedResolver, for callers that show or derive them. */
export { DEFAULT_CACHE_MAX_ENTRIES, DEFAULT_CACHE_TTL_SECONDS, DEFAULT_MAX_TTL_SECONDS } from './dns/cache.js';
export { DEFAULT_MAX_OUTSTANDING_QUERIES } from './dns/limits.js';
/** Caller-given DKIM selectors: how many a check takes, how long one label may be, and why one is refused. */
export { MAX_CALLER_SELECTORS, MAX_SELECTOR_LABEL_OCTETS, selectorProblem } from './dkim/probe.js';
/** RFC 7208 §4.6.4's limits: 10 DNS-querying terms, 2 void lookups. */
export { MAX_DNS_TERMS, MAX_VOID_LOOKUPS } from './spf/evaluate.js';
/** The guide pages a next step links to, and their default base URL. */
export { DEFAULT_GUIDE_BASE_URL, GUIDE_TOPICS } from './verdict/index.js';
export type { GuideTopic } from './verdict/index.js';
/** The record types a zone file may hold (the others are refused with the line that has them). */
export { SUPPORTED_RECORD_TYPES } from './zones/parse.js';
/** Reads a JSON file a person wrote; a syntax error names the file, line and column. */
export { readJsonFile } from './json-file.js';
