/**
 * SPF (RFC 7208): the record parser, check_host() and the worst-case analysis the spoof checker
 * uses. Everything exported here is named; nothing else in the folder is public.
 */
export type {
  Directive,
  IpAddress,
  MacroLetter,
  MacroString,
  MacroToken,
  Mechanism,
  MechanismName,
  Modifier,
  Qualifier,
  SpfParseResult,
  SpfRecord,
  SpfResult,
  SpfSyntaxError,
  SpfTerm,
} from './types.js';
export { QUALIFIER_RESULT } from './types.js';
export { MAX_REPORTED_SYNTAX_ERRORS, SPF_VERSION, describeSyntaxError, isSpfRecordText, parseSpfRecord } from './parse.js';
export type { MacroContext, MacroParseResult, MacroSyntax, MacroSyntaxError, TargetName } from './macro.js';
export { MAX_MACRO_PARTS, expandMacroString, parseDomainSpec, parseMacroString, toTargetName, urlEscape } from './macro.js';
export type { ClientAddress } from './address.js';
export { formatIp6, inNetwork, parseClientAddress, parseIp4, parseIp6, reverseName } from './address.js';
export type { SpfRecordLookup } from './record.js';
export { joinTxt, lookupSpfRecord, selectSpfRecords } from './record.js';
export type { CheckHostInput, CheckHostOptions, CheckHostResult, SpfFailedQuery, SpfLimits } from './evaluate.js';
export {
  DEFAULT_SPF_LIMITS,
  MAX_DNS_TERMS,
  MAX_MX_NAMES,
  MAX_PTR_NAMES,
  MAX_VOID_LOOKUPS,
  UNKNOWN_HELO,
  UNKNOWN_RECEIVER,
  UNKNOWN_VALIDATED_NAME,
  checkHost,
} from './evaluate.js';
export type { AnalyzeSpfOptions, SpfAnalysis, SpfTermFlags, SpfTermNode, TerminalAll } from './analyze.js';
export { MAX_ANALYSIS_DEPTH, MAX_ANALYSIS_QUERIES, RECOMMENDED_SPF_OCTETS, UDP_MESSAGE_OCTETS, analyzeSpf, analyzeSpfNow, describeOpening, formatShare, isPlainPlusAll } from './analyze.js';
export type { FamilyShare, PassOpener, PassSetProbe, PassSetSets, PassSetUnknown, PassSources, SpfOpening, SpfPassSet } from './pass-set.js';
export {
  IPV4_PROBES,
  IPV6_PROBES,
  MAX_PASS_SET_DEPTH,
  OPEN_IPV4_ADDRESSES,
  OPEN_IPV6_PREFIX,
  WIDE_IPV4_ADDRESSES,
  computePassSet,
  computePassSetWithSourcesNow,
  isOpen,
  passSetSets,
  probeAddresses,
} from './pass-set.js';
export type { AddressSet, Family } from './ranges.js';
export { RangeSet } from './ranges.js';
