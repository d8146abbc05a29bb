/**
 * DMARC aggregate reports (RFC 7489 Appendix C, RFC 9990) and SMTP TLS reports (RFC 8460): report
 * files unpacked with capped decompression, parsed strictly (no DTD, no entity), identified for
 * de-duplication, and analysed: who sends as a domain, what enforcement would break, SPF tightening,
 * TLS failures (docs/reports.md). An engine room: it imports only other engine rooms and Node built-ins.
 */
export type * from './types.js';
export { DEFAULT_UNPACK_CAPS, MAX_COMPRESSION_RATIO, MAX_INPUT_BYTES, MAX_TOTAL_UNCOMPRESSED_BYTES, MAX_UNCOMPRESSED_BYTES, MAX_ZIP_ENTRIES, RATIO_FLOOR_BYTES, sniffContainer, unpackReportFile } from './unpack.js';
export type { UnpackOptions } from './unpack.js';
export { MAX_XML_ATTRIBUTES, MAX_XML_DEPTH, MAX_XML_NODES, MAX_XML_TEXT, child, childrenNamed, decodeXmlBytes, parseXml } from '../xml/reader.js';
export type { ParseXmlOptions, XmlElement, XmlOutcome, XmlRejection } from '../xml/reader.js';
export { AGGREGATE_ELEMENTS, DMARC_2_NAMESPACE, MAX_AUTH_RESULTS_PER_RECORD, MAX_HEADER_ELEMENTS, MAX_RECORD_ELEMENTS, MAX_REPEATED_ELEMENTS, MAX_FUTURE_SKEW_SECONDS, MAX_REPORT_RECORDS, MAX_REPORT_WARNINGS, MAX_TEXT_FIELD, canonicalIp, parseAggregateReport } from './parse-aggregate.js';
export type { ParseReportOptions } from './parse-aggregate.js';
export { MAX_JSON_DEPTH, MAX_POLICY_STRINGS, MAX_TLS_REPORT_ITEMS, jsonDepthOver, parseDateTime, parseTlsReport } from './parse-tls.js';
export { reportIdentity } from './identity.js';
export type { ReportIdentityOptions } from './identity.js';
export { DAY_SECONDS, KNOWN_MAIL_SERVICES, addressIn, cloudOf, emptySenderRests, epochSecondsOf, knownMailService, mergeDigestEntries, mergeSenderDigests, reportsInWindow, summariseDigestSenders, summariseSenders } from './senders.js';
export type { KnownMailService, SenderClass, SenderDigestEntry, SenderOptions, SenderRests, SenderSummary } from './senders.js';
export { MAX_SUMMARY_LIST, capList, readiness } from './readiness.js';
export type { EnforcementImpact, Readiness, ReadinessBlocker } from './readiness.js';
export { spfTighten, unusedSpfTerms } from './spf-tighten.js';
export type { SpfTightening, UnusedSpfTerm } from './spf-tighten.js';
export { POLICY_FETCH_FAILURES, tlsSummary } from './tls-summary.js';
export type { TlsFailureCount, TlsPolicySummary, TlsSummary } from './tls-summary.js';
export { digestReports, digestSelectors, mergeDigests, selectorsSeen, summariseReports } from './summary.js';
export type { ReportsDigest, ReportsSummary, ReportsSummarySender, SummariseReportsInput } from './summary.js';
export { MAX_REVERSE_LOOKUPS, REVERSE_LOOKUP_CONCURRENCY, lookupReverseNames } from './reverse-names.js';
export type { ReverseName } from './reverse-names.js';
export { dailyCounts } from './daily.js';
export type { DailyCount } from './daily.js';
