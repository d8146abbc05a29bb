/**
 * Shared infrastructure (BreakSPF): the published ranges of cloud compute, hosted CI runners and
 * CDN edges, and what of an SPF pass set lies in them. An engine room: it imports only other engine
 * rooms and Node built-ins.
 */
export type {
  AttackKind,
  ExposureSeverity,
  FeedFormat,
  Port25Policy,
  ProviderId,
  RangeCategory,
  RangeData,
  RangeSource,
  SharedInfrastructureExposure,
  SharedInfrastructureMaybe,
  SharedInfrastructureReport,
} from './types.js';
export type { FeedSpec, ProviderSpec } from './providers.js';
export { FIRST_PARTY_MAIL_TAGS, PROVIDERS, describePort25, providerSpec } from './providers.js';
export type { Cidr, FeedParseResult, FeedPrefix } from './parse.js';
export { parseCidr, parseFeed } from './parse.js';
export type { EncodedCategory, RangesFile, DecodeResult } from './codec.js';
export { RANGES_FILE_FORMAT, decodeRangesFile } from './codec.js';
export type { BuildResult, FeedText, ProviderOutcome } from './build.js';
export { MAX_SHRINK_RATIO, buildRangesFile, readFeedDirectory } from './build.js';
export type { LoadRangesResult } from './snapshot.js';
export { RANGES_STALE_AFTER_DAYS, SHIPPED_RANGES_FILE, isStale, loadRangesFile, rangesAgeDays, shippedRanges } from './snapshot.js';
export type { ClassifyInput } from './classify.js';
export { CRITICAL_RENTABLE_IPV4, CRITICAL_RENTABLE_IPV6, classifySharedInfrastructure } from './classify.js';
export type { SharedInfrastructureFix } from './findings.js';
export { SHARED_INFRASTRUCTURE_FINDING, SHARED_INFRASTRUCTURE_FIXED_FINDING, formatIpv6Count, sharedInfrastructureFindings, sharedInfrastructureFix } from './findings.js';
