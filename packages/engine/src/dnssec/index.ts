/**
 * DNSSEC in one import: the validating stub (`Validator`), its raw query client, trust anchors,
 * and the states and reasons it reports.
 */
export type { DnssecReason, DnssecStatus, RawQuery, RawResponse, RRsetValidation, TrustAnchor, ValidationResult } from './types.js';
export { EDE } from './types.js';
export {
  DNSSEC_CACHE_ENTRIES,
  DNSSEC_CACHE_SECONDS,
  DnssecCache,
  MAX_CHAIN_LEVELS_AT_ONCE,
  MAX_NSEC3_HASHES,
  MAX_NSEC3_ITERATIONS,
  MAX_SIGNATURES_PER_RRSET,
  MAX_VALIDATION_CNAMES,
  MAX_VALIDATION_QUERIES,
  MAX_VALIDATION_QUERIES_IN_FLIGHT,
  Validator,
  weakest,
} from './validate.js';
export type { ValidatorOptions } from './validate.js';
export { createRawQuery, DNSSEC_QUERY_ATTEMPTS, DNSSEC_QUERY_TIMEOUT_MS } from './query.js';
export type { RawQueryServer } from './query.js';
export { IANA_ROOT_ANCHOR_DS, ianaRootAnchors, loadTrustAnchorFile, parseTrustAnchors } from './anchors.js';
export { SUPPORTED_ALGORITHMS, SUPPORTED_DIGESTS, verifyCounter } from './verify.js';
export { TYPE } from '../dns/canonical.js';
export { dnssecNotChecked, startDnssec } from './check.js';
export type { CheckDnssecOptions, DnssecResult, DnssecResultStatus, DnssecRRsetResult, DnssecWork } from './check.js';
