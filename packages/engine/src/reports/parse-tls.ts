/**
 * SMTP TLS reports (RFC 8460 §4): the JSON read and validated field by field, with the deviations of
 * real reporters tolerated as warnings: `mx-host` as a string or a list (RFC 8460 erratum 6241),
 * `mx-host-pattern` and `additional-info-uri` (names from the draft), date-times without a zone
 * (Microsoft; read as UTC), failure details without addresses, details that do not add up to the
 * summary (mail.ru). Unknown members are ignored. Whole or nothing: a report with an unusable
 * required field is refused with a reason and gives no rows.
 */
import { canonicalName } from '../dns/name.js';
import { futureProblem, MAX_TEXT_FIELD, type ParseReportOptions } from './parse-aggregate.js';
import { MAX_UNCOMPRESSED_BYTES } from './unpack.js';
import type { ParseOutcome, TlsFailureDetail, TlsPolicyResult, TlsReport } from './types.js';

/** Policies plus failure details in one TLS report. */
export const MAX_TLS_REPORT_ITEMS = 100_000;
/** Policy strings kept per policy (an MTA-STS policy has a handful of lines). */
export const MAX_POLICY_STRINGS = 1000;
/**
 * Arrays and objects nested in a TLS report: RFC 8460 §4.4 needs 4 (report, policies, a policy, its
 * strings); more is refused before `JSON.parse` builds anything (a 300 KB gzip of `[[[…` would
 * otherwise build millions of arrays).
 */
export const MAX_JSON_DEPTH = 32;

/**
 * The deepest nesting of arrays and objects in `text` (strings skipped, escapes honoured), stopping
 * as soon as it passes `limit`: linear, allocation-free, and run before `JSON.parse`.
 */
export function jsonDepthOver(text: string, limit: number): { offset: number } | null {
  let depth = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      for (i++; i < length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c /* \ */) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > limit) return { offset: i };
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return null;
}

type Refusal = { ok: false; reason: 'missing-field' | 'invalid-field' | 'not-a-report' | 'too-many-records' | 'malformed' | 'too-large' | 'too-deep'; detail: string };
class Refused extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.detail);
  }
}
const refuse = (reason: Refusal['reason'], detail: string): never => {
  throw new Refused({ ok: false, reason, detail });
};

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** RFC 3339 §5.6 date-time to epoch seconds; without a zone it is read as UTC (Microsoft's reports). */
export function parseDateTime(value: string): number | null {
  const match = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$/.exec(value.trim());
  if (match === null) return null;
  const ms = Date.parse(`${match[1]}T${match[2]}${match[3] ?? ''}${match[4] === undefined ? 'Z' : match[4].toUpperCase()}`);
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000);
}

/** Parses an SMTP TLS report (decompressed JSON bytes or text). Never throws. */
export function parseTlsReport(input: Uint8Array | string, options: ParseReportOptions = {}): ParseOutcome<TlsReport> {
  const maxItems = options.maxRecords ?? MAX_TLS_REPORT_ITEMS;
  if (input.length > MAX_UNCOMPRESSED_BYTES) return { ok: false, reason: 'too-large', detail: `the report has ${input.length} ${typeof input === 'string' ? 'characters' : 'bytes'}, over the ${MAX_UNCOMPRESSED_BYTES} cap` };
  const warnings: string[] = [];
  let json: unknown;
  try {
    const text = typeof input === 'string' ? input : new TextDecoder('utf-8').decode(input);
    const deep = jsonDepthOver(text, MAX_JSON_DEPTH);
    if (deep !== null) return { ok: false, reason: 'too-deep', detail: `arrays and objects nested deeper than ${MAX_JSON_DEPTH} (MAX_JSON_DEPTH) at character ${deep.offset}: a TLS report (RFC 8460 §4.4) nests 4 deep; refused before parsing` };
    json = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    return { ok: false, reason: 'malformed', detail: `not valid JSON (truncated?): ${error instanceof Error ? error.message : String(error)}` };
  }
  try {
    const report = readReport(json, warnings, maxItems);
    const future = futureProblem(report.dateRange.end, options.now);
    if (future !== null) return { ok: false, reason: 'invalid-field', detail: future };
    return { ok: true, report, warnings };
  } catch (error) {
    if (error instanceof Refused) return error.refusal;
    return { ok: false, reason: 'malformed', detail: `the report could not be read: ${error instanceof Error ? error.message : String(error)}` };
  }
}

function requiredString(object: Record<string, unknown>, key: string, where: string): string {
  const value = object[key];
  if (value === undefined || value === null || value === '') refuse('missing-field', `no "${key}" in ${where}`);
  if (typeof value !== 'string') refuse('invalid-field', `"${key}" in ${where} is not a string`);
  return (value as string).slice(0, MAX_TEXT_FIELD);
}

function optionalString(object: Record<string, unknown>, ...keys: string[]): string | null {
  for (const key of keys) {
    const value = object[key];
    if (typeof value === 'string' && value !== '') return value.slice(0, MAX_TEXT_FIELD);
  }
  return null;
}

function count(object: Record<string, unknown>, key: string, where: string): number {
  const value = object[key];
  if (value === undefined || value === null) refuse('missing-field', `no "${key}" in ${where}`);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) refuse('invalid-field', `"${key}" in ${where} is not a whole number of sessions`);
  return value as number;
}

function readReport(json: unknown, warnings: string[], maxItems: number): TlsReport {
  if (!isObject(json)) return refuse('not-a-report', 'the JSON is not an object: not a TLS report (RFC 8460 §4.4)');
  const organizationName = typeof json['organization-name'] === 'string' ? (json['organization-name'] as string).slice(0, MAX_TEXT_FIELD) : '';
  if (organizationName === '') warnings.push('"organization-name" is empty or missing');
  const reportId = requiredString(json, 'report-id', 'the report');
  const range = json['date-range'];
  if (!isObject(range)) return refuse('missing-field', 'no "date-range" object');
  const startText = requiredString(range, 'start-datetime', '"date-range"');
  const endText = requiredString(range, 'end-datetime', '"date-range"');
  const start = parseDateTime(startText);
  const end = parseDateTime(endText);
  if (start === null || end === null) return refuse('invalid-field', `"date-range" is not RFC 3339 date-times ("${startText.slice(0, 40)}", "${endText.slice(0, 40)}")`);
  if (end < start) return refuse('invalid-field', `"date-range" ends (${endText}) before it starts (${startText})`);
  if (!/[Zz]|[+-]\d{2}:\d{2}$/.test(startText.trim())) warnings.push('date-times without a time zone: read as UTC');
  const policies = json.policies;
  if (policies === undefined) return refuse('missing-field', 'no "policies"');
  if (!Array.isArray(policies)) return refuse('invalid-field', '"policies" is not a list (RFC 8460 §4.4)');
  let items = policies.length;
  if (items > maxItems) return refuse('too-many-records', `${policies.length} policies, over the cap of ${maxItems}`);
  const results: TlsPolicyResult[] = [];
  policies.forEach((entry, index) => {
    const where = `policy ${index + 1}`;
    if (!isObject(entry)) return refuse('invalid-field', `${where} is not an object`);
    const policy = entry.policy;
    if (!isObject(policy)) return refuse('missing-field', `no "policy" in ${where}`);
    const type = requiredString(policy, 'policy-type', where).toLowerCase();
    if (type !== 'sts' && type !== 'tlsa' && type !== 'no-policy-found') warnings.push(`${where}: unknown policy-type "${type}" kept`);
    const domain = canonicalName(requiredString(policy, 'policy-domain', where).trim());
    const rawStrings = policy['policy-string'];
    const strings = (Array.isArray(rawStrings) ? rawStrings : typeof rawStrings === 'string' ? [rawStrings] : []).filter((s): s is string => typeof s === 'string').slice(0, MAX_POLICY_STRINGS).map((s) => s.slice(0, MAX_TEXT_FIELD));
    const rawMx = policy['mx-host'] ?? policy['mx-host-pattern'];
    const mxHosts = (Array.isArray(rawMx) ? rawMx : typeof rawMx === 'string' ? [rawMx] : [])
      .filter((s): s is string => typeof s === 'string' && s !== '')
      .slice(0, MAX_POLICY_STRINGS)
      .map((s) => canonicalName(s.trim().slice(0, 255)));
    const summary = entry.summary;
    if (!isObject(summary)) return refuse('missing-field', `no "summary" in ${where}`);
    const successful = count(summary, 'total-successful-session-count', `the summary of ${where}`);
    const failed = count(summary, 'total-failure-session-count', `the summary of ${where}`);
    const rawDetails = entry['failure-details'] ?? [];
    if (!Array.isArray(rawDetails)) return refuse('invalid-field', `"failure-details" of ${where} is not a list`);
    items += rawDetails.length;
    if (items > maxItems) return refuse('too-many-records', `more than ${maxItems} policies and failure details`);
    const failureDetails: TlsFailureDetail[] = rawDetails.map((detail, n) => {
      const at = `failure detail ${n + 1} of ${where}`;
      if (!isObject(detail)) return refuse('invalid-field', `${at} is not an object`);
      return {
        resultType: requiredString(detail, 'result-type', at).toLowerCase(),
        sendingMtaIp: optionalString(detail, 'sending-mta-ip'),
        receivingIp: optionalString(detail, 'receiving-ip'),
        receivingMxHostname: ((h) => (h === null ? null : canonicalName(h.trim())))(optionalString(detail, 'receiving-mx-hostname')),
        receivingMxHelo: optionalString(detail, 'receiving-mx-helo'),
        failedSessionCount: count(detail, 'failed-session-count', at),
        additionalInformation: optionalString(detail, 'additional-information', 'additional-info-uri'),
        failureReasonCode: optionalString(detail, 'failure-reason-code'),
      };
    });
    const detailed = failureDetails.reduce((sum, d) => sum + d.failedSessionCount, 0);
    // RFC 8460 §4.3: failure types "are non-exclusive", so details may add up to more than the summary.
    if (detailed < failed && failureDetails.length > 0) warnings.push(`${where}: failure details count ${detailed} sessions, the summary ${failed}`);
    results.push({ policy: { type, strings, domain, mxHosts }, summary: { successful, failed }, failureDetails });
  });
  return { kind: 'tls', organizationName, dateRange: { start, end }, contactInfo: optionalString(json, 'contact-info'), reportId, policies: results };
}
