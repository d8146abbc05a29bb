/**
 * DMARC (RFC 7489 and RFC 9989, DMARCbis): record parsing, policy discovery with the DNS tree walk,
 * the effective policy for an exact name, and external report destination checks. Every function that
 * asks the DNS takes the `Resolver` as an argument and returns values, never throwing for a DNS
 * condition or bad record text.
 */
export type {
  AlignmentMode,
  DmarcParseResult,
  DmarcPolicy,
  DmarcRecord,
  DmarcRecordOutcome,
  DmarcTag,
  DmarcWarning,
  FailureReportOption,
  NotDmarcReason,
  PolicyProblem,
  PsdFlag,
  ReportSizeLimit,
  ReportUri,
  ReportUriProblem,
  SizeUnit,
} from './types.js';
export { isDmarcRecord, KNOWN_TAGS, MAX_PCT, MAX_RI_SECONDS, parseDmarcRecord, parseFailureOptions } from './parse.js';
export { isHostName, MAX_REPORT_SIZE_BYTES, parseReportUri, splitUriList } from './uri.js';
export type { ReportUriParse } from './uri.js';
export {
  oneLabelBelow,
  pslOrganizationalDomain,
  selectOrganizationalDomain,
  TREE_WALK_MAX_QUERIES,
  TREE_WALK_SHORTCUT_LABELS,
  treeWalkTargets,
} from './orgdomain.js';
export type { WalkRecord } from './orgdomain.js';
export { discoverDmarc, discoverDmarcNow, DMARC_LABEL, findOrganizationalDomain, findOrganizationalDomainNow, treeWalk } from './discover.js';
export type { DmarcDiscovery, DmarcFailedQuery, OrganizationalDomainResult, PolicySource, TreeWalkResult, TreeWalkStep } from './discover.js';
export { effectivePolicy, effectivePolicyNow, EXISTENCE_QUERY_TYPES, lowerOneLevel, nameExists, nameExistsNow } from './policy.js';
export type { EffectivePolicy, ExistenceQuery, NameExistence, PolicyTag } from './policy.js';
export { REPORT_AUTHORIZATION_LABELS, verifyReportDestinations, verifyReportDestinationsNow } from './reports.js';
export type { DestinationStatus, ReportDestination, ReportDestinationCheck } from './reports.js';
export { checkAlignment } from './alignment.js';
export type { AlignmentResult } from './alignment.js';
export { DMARC_FINDING_IDS, recordFindings } from './findings.js';
export type { DmarcFindingId } from './findings.js';
