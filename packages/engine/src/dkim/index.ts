/**
 * DKIM (RFC 6376, RFC 8301, RFC 8463): key record parsing and selector discovery.
 * `probeDkim` is the entry point; the parser and the sourced selector list are exported for reuse.
 */
export type {
  DkimDanglingAlias,
  DkimFlag,
  DkimHashName,
  DkimKey,
  DkimKeyEncoding,
  DkimKeyOutcome,
  DkimKeyRecord,
  DkimKeyStatus,
  DkimKeyType,
  DkimParseOptions,
  DkimProbe,
  DkimProbeFailure,
  DkimProbeOptions,
  DkimProbeStatus,
  DkimPublicKey,
  DkimSelectorRejection,
  DkimTagValues,
  ProviderEvidence,
  SelectorOrigin,
} from './types.js';
export {
  DKIM_KEY_VERSION,
  ED25519_KEY_BITS,
  ED25519_PUBLIC_KEY_BYTES,
  MAX_REQUIRED_RSA_KEY_BITS,
  MIN_RSA_KEY_BITS,
  RECOMMENDED_RSA_KEY_BITS,
  decodeBase64,
  describeKey,
  parseDkimKeyRecord,
  parseTagList,
} from './parse.js';
export type { TagListParse } from './parse.js';
export {
  DOMAINKEY_LABEL,
  MAX_CALLER_SELECTORS,
  MAX_PARALLEL_SELECTOR_QUERIES,
  chooseBestKey,
  keyRecordName,
  probeDkim,
  probeDkimNow,
  dkimUnderMissingName,
  selectorProblem,
} from './probe.js';
export { DKIM_CNAME_PROVIDERS, KNOWN_SELECTORS, microsoftDynamicSelectors, providerForCnameTarget, providerForSelector } from './selectors.js';
export type { DkimCnameProvider, KnownSelector, SourceConfidence } from './selectors.js';
