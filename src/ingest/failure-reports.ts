/**
 * Failure reports (RFC 6591: authentication-failure reports in the Abuse Reporting Format, RFC
 * 5965; the reports a DMARC record's `ruf` asks for, RFC 9991) taken from the paths aggregate
 * reports come by (files, the SMTP receiver, IMAP: src/ingest/ingest.ts `ingestReportMessage` hands
 * them here), read with mailparser.
 *
 * What is kept: the feedback report's fields (RFC 5965 §3.1, RFC 6591 §3.1), the reporter's
 * authentication results, and the reported message's header fields: never its body (the header
 * block is cut at its first empty line, RFC 5322 §2.1; `DKIM-Canonicalized-Body` is dropped, it is
 * the body). Every address's local part is replaced by a salted SHA-256 (the organisation's own
 * salt) unless the organisation turned that off. Work is bounded: the message by the aggregate
 * path's cap (MAX_REPORT_MESSAGE_BYTES, enforced by each path before this), the feedback part, the
 * header block, the number of fields and each value by the constants below.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { simpleParser } from 'mailparser';
import { normaliseDomainInput } from '@spoof-checker/engine';
import type { FailureReport, FailureReportStore, HeaderField } from '../store/failure-reports.js';
import type { ReportChannel } from '../store/reports.js';

/** Bytes of the `message/feedback-report` part read. */
export const MAX_FEEDBACK_PART_BYTES = 64 * 1024;
/** Bytes of the reported message's header block kept (the rest of the block is dropped). */
export const MAX_REPORTED_HEADER_BYTES = 64 * 1024;
/** Header fields kept, of the feedback report and of the reported message each. */
export const MAX_HEADER_FIELDS = 200;
/** Characters of one field's value kept. */
export const MAX_FIELD_VALUE_CHARS = 2_000;
/** Hex digits of a hashed local part (64 bits: enough to tell senders apart, short to read). */
export const HASHED_LOCAL_PART_HEX = 16;
/** Failure reports read for one domain's summary. */
export const MAX_FAILURE_REPORTS_SUMMARISED = 10_000;

/** What a failure report says, before it is stored. */
export interface ParsedFailureReport {
  feedback: HeaderField[];
  headers: HeaderField[];
  /** The `From` of the report message itself (the reporter), lower case. */
  reportFrom: string | null;
}

/** Why a failure report was refused. */
export type FailureRefusal = { kind: 'refused'; reason: 'no-feedback-report' | 'no-domain' | 'unreadable'; detail: string };

/** The outcome of reading a message as a failure report. */
export type FailureParse = { kind: 'not-failure-report' } | { kind: 'failure'; report: ParsedFailureReport } | FailureRefusal;

/** Fields of the feedback report never kept: they carry the reported body. */
const BODY_FIELDS = new Set(['dkim-canonicalized-body']);

/**
 * Header fields of `text` (up to its first empty line), unfolded (RFC 5322 §2.2.3), bounded:
 * at most `MAX_HEADER_FIELDS` fields of at most `MAX_FIELD_VALUE_CHARS` characters.
 */
export function headerFields(text: string, maxBytes: number): HeaderField[] {
  let block = text.length > maxBytes ? text.slice(0, maxBytes) : text;
  // RFC 5322 §2.1: the header ends at the first empty line; what follows is the body, never kept.
  const end = block.search(/\r?\n\r?\n/);
  if (end >= 0) block = block.slice(0, end);
  const fields: HeaderField[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (line === '') continue;
    if ((line.startsWith(' ') || line.startsWith('\t')) && fields.length > 0) {
      const last = fields[fields.length - 1]!;
      if (last.value.length < MAX_FIELD_VALUE_CHARS) last.value = `${last.value} ${line.trim()}`.slice(0, MAX_FIELD_VALUE_CHARS);
      continue;
    }
    // RFC 5322 §3.6.8: a field name is printable ASCII but the colon.
    const match = /^([!-9;-~]{1,100}):[ \t]*(.*)$/.exec(line);
    if (!match) continue;
    if (fields.length >= MAX_HEADER_FIELDS) break;
    fields.push({ name: match[1]!, value: match[2]!.trim().slice(0, MAX_FIELD_VALUE_CHARS) });
  }
  return fields;
}

/** The first value of field `name` (case-insensitive), or null. */
export function fieldValue(fields: readonly HeaderField[], name: string): string | null {
  const lower = name.toLowerCase();
  return fields.find((f) => f.name.toLowerCase() === lower)?.value ?? null;
}

/** Every value of field `name`. */
function fieldValues(fields: readonly HeaderField[], name: string): string[] {
  const lower = name.toLowerCase();
  return fields.filter((f) => f.name.toLowerCase() === lower).map((f) => f.value);
}

/**
 * Reads `raw` as a failure report: `multipart/report; report-type=feedback-report` (RFC 6522,
 * RFC 5965 §2) whose `message/feedback-report` part says `Feedback-Type: auth-failure` (RFC 6591
 * §3.1). Another message is `not-failure-report` (an aggregate report, an abuse report); never throws.
 */
export async function parseFailureReport(raw: Buffer): Promise<FailureParse> {
  // Most messages on these paths are aggregate reports: a look at the header block spares them a
  // second MIME parse.
  if (!mayBeFeedbackReport(raw)) return { kind: 'not-failure-report' };
  let parsed: Awaited<ReturnType<typeof simpleParser>>;
  try {
    parsed = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true, skipTextLinks: true, maxHtmlLengthToParse: 0 });
  } catch (error) {
    return { kind: 'refused', reason: 'unreadable', detail: `the message cannot be read as MIME: ${error instanceof Error ? error.message : String(error)}` };
  }
  const contentType = parsed.headers.get('content-type') as { value?: string; params?: Record<string, string> } | undefined;
  if (contentType?.value?.toLowerCase() !== 'multipart/report' || contentType.params?.['report-type']?.toLowerCase() !== 'feedback-report') return { kind: 'not-failure-report' };
  const feedbackPart = parsed.attachments.find((a) => (a.contentType ?? '').toLowerCase() === 'message/feedback-report');
  if (!feedbackPart) return { kind: 'refused', reason: 'no-feedback-report', detail: 'a multipart/report of type feedback-report without its message/feedback-report part (RFC 5965 §2 (c))' };
  const feedback = headerFields(Buffer.from(feedbackPart.content).subarray(0, MAX_FEEDBACK_PART_BYTES).toString('utf8'), MAX_FEEDBACK_PART_BYTES).filter((f) => !BODY_FIELDS.has(f.name.toLowerCase()));
  // RFC 6591 §3.1: an authentication-failure report says so; other ARF types (abuse, fraud) are not ours.
  if (fieldValue(feedback, 'Feedback-Type')?.toLowerCase() !== 'auth-failure') return { kind: 'not-failure-report' };
  // RFC 5965 §2 (d): the reported message, whole (message/rfc822) or its header only (text/rfc822-headers).
  const reported = parsed.attachments.find((a) => ['message/rfc822', 'text/rfc822-headers'].includes((a.contentType ?? '').toLowerCase()));
  const headers = reported ? headerFields(Buffer.from(reported.content).subarray(0, MAX_REPORTED_HEADER_BYTES).toString('utf8'), MAX_REPORTED_HEADER_BYTES) : [];
  const from = parsed.from?.value.find((v) => v.address)?.address?.toLowerCase() ?? null;
  return { kind: 'failure', report: { feedback, headers, reportFrom: from } };
}

/** Bytes of a message's start searched for its Content-Type (the header block, usually far less). */
const HEADER_SCAN_BYTES = 64 * 1024;

/** Whether the top-level header block names `multipart/report` and `feedback-report` (a cheap look before parsing). */
export function mayBeFeedbackReport(raw: Buffer): boolean {
  const head = raw.subarray(0, HEADER_SCAN_BYTES).toString('latin1');
  const end = head.search(/\r?\n\r?\n/);
  const block = (end >= 0 ? head.slice(0, end) : head).toLowerCase();
  return block.includes('multipart/report') && block.includes('feedback-report');
}

/** The domain a failure report is about: `Reported-Domain` (RFC 6591 §3.1), else the reported From's. */
export function reportedDomain(report: ParsedFailureReport): string | null {
  const candidates = [fieldValue(report.feedback, 'Reported-Domain'), addressDomain(fieldValue(report.headers, 'From'))];
  for (const candidate of candidates) {
    if (candidate === null) continue;
    const domain = normaliseDomainInput(candidate);
    if (domain.ok) return domain.domain;
  }
  return null;
}

function addressDomain(value: string | null): string | null {
  if (value === null) return null;
  const match = /@([A-Za-z0-9.-]{1,253})>?\s*$/.exec(value) ?? /@([A-Za-z0-9.-]{1,253})/.exec(value);
  return match ? match[1]! : null;
}

/** Longest local part looked at (RFC 5321 §4.5.3.1.1). */
const MAX_LOCAL_PART = 64;
/** Longest domain looked at (RFC 1035 §2.3.4). */
const MAX_DOMAIN = 253;

/**
 * Characters of a dot-atom local part (RFC 5322 §3.2.3 atext, and the dot), less `=`: in
 * `smtp.mailfrom=alice@example.com` (RFC 8601) the `=` ends the property, not the address starts
 * there (and in an SRS address, `SRS0=…=user@…`, the user is what follows the last `=`).
 */
const LOCAL_CHARS = (() => {
  const table = new Uint8Array(128);
  for (const c of "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-/?^_`{|}~.") table[c.charCodeAt(0)] = 1;
  return table;
})();

function isLocalChar(c: number): boolean {
  return c < 128 && LOCAL_CHARS[c] === 1;
}

/** A character of a host name (letters, digits, hyphen, dot). */
function isDomainChar(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e;
}

/** Two or more LDH labels of 1 to 63 characters, none starting or ending with a hyphen. */
function isHostName(domain: string): boolean {
  const labels = domain.split('.');
  return labels.length >= 2 && labels.every((l) => l.length >= 1 && l.length <= 63 && !l.startsWith('-') && !l.endsWith('-'));
}

/**
 * `text` with every address's local part replaced by `h.<SHA-256(salt, local part) truncated>`.
 * One pass from `@` to `@`: each character is looked at at most twice (no regular expression
 * backtracking on hostile text).
 */
export function hashLocalParts(text: string, salt: string): string {
  let at = text.indexOf('@');
  if (at < 0) return text;
  let out = '';
  let copied = 0;
  while (at >= 0) {
    let start = at;
    while (start > copied && at - start < MAX_LOCAL_PART && isLocalChar(text.charCodeAt(start - 1))) start--;
    let end = at + 1;
    while (end < text.length && end - at - 1 < MAX_DOMAIN && isDomainChar(text.charCodeAt(end))) end++;
    // A sentence's full stop or a hyphen after the address is not part of it.
    while (end > at + 1 && (text.charCodeAt(end - 1) === 0x2e || text.charCodeAt(end - 1) === 0x2d)) end--;
    const domain = text.slice(at + 1, end);
    if (start < at && isHostName(domain)) {
      const local = text.slice(start, at);
      out += `${text.slice(copied, start)}h.${createHash('sha256').update(salt).update('\0').update(local.toLowerCase()).digest('hex').slice(0, HASHED_LOCAL_PART_HEX)}@${domain}`;
      copied = end;
    }
    at = text.indexOf('@', Math.max(at + 1, copied));
  }
  return out + text.slice(copied);
}

/** Where failure reports go. */
export interface FailureReportSink {
  store: FailureReportStore;
  /** The organisations a report about `domain` is stored for (the aggregate path's routing). */
  organizationsFor(domain: string): Promise<string[]>;
  now?: () => Date;
}

/** What became of one failure report. */
export type FailureIngestOutcome =
  | { kind: 'stored' | 'duplicate' | 'no-organization'; domain: string; organizations: string[]; ids: string[] }
  | FailureRefusal;

/**
 * Stores a parsed failure report for each organisation that takes its domain, hashed per each one's
 * setting. `authenticated`: the report message passed DMARC (src/ingest/authenticate.ts).
 */
export async function storeFailureReport(sink: FailureReportSink, parsed: ParsedFailureReport, channel: ReportChannel, authenticated: boolean): Promise<FailureIngestOutcome> {
  const domain = reportedDomain(parsed);
  if (domain === null) return { kind: 'refused', reason: 'no-domain', detail: 'the report names no domain (no Reported-Domain, no From in the reported header)' };
  const organizations = await sink.organizationsFor(domain);
  if (organizations.length === 0) return { kind: 'no-organization', domain, organizations: [], ids: [] };
  const identity = createHash('sha256').update(JSON.stringify([parsed.feedback, parsed.headers])).digest('hex');
  const receivedAt = (sink.now?.() ?? new Date()).toISOString();
  const ids: string[] = [];
  let stored = false;
  for (const organizationId of organizations) {
    const settings = await sink.store.settings(organizationId);
    const salt = settings.hashLocalParts ? await sink.store.salt(organizationId, () => randomBytes(32).toString('hex')) : '';
    const clean = (fields: HeaderField[]): HeaderField[] => (settings.hashLocalParts ? fields.map((f) => ({ name: f.name, value: hashLocalParts(f.value, salt) })) : fields);
    const feedback = clean(parsed.feedback);
    const known = new Set(['source-ip', 'arrival-date', 'auth-failure', 'authentication-results', 'identity-alignment', 'delivery-result', 'user-agent', 'feedback-type', 'version', 'reported-domain']);
    const report: FailureReport = {
      id: `fr_${randomUUID()}`,
      organizationId,
      domain,
      identity,
      receivedAt,
      arrivalDate: fieldValue(feedback, 'Arrival-Date'),
      sourceIp: fieldValue(feedback, 'Source-IP'),
      // RFC 6591 §3.1: Auth-Failure may appear more than once.
      authFailure: fieldValues(feedback, 'Auth-Failure').flatMap((v) => v.split(',')).map((v) => v.trim().toLowerCase()).filter((v) => v !== ''),
      authenticationResults: fieldValues(feedback, 'Authentication-Results'),
      identityAlignment: fieldValue(feedback, 'Identity-Alignment'),
      deliveryResult: fieldValue(feedback, 'Delivery-Result')?.toLowerCase() ?? null,
      reporter: { userAgent: fieldValue(feedback, 'User-Agent'), from: parsed.reportFrom, authenticated },
      feedback: feedback.filter((f) => !known.has(f.name.toLowerCase())),
      headers: clean(parsed.headers),
      localPartsHashed: settings.hashLocalParts,
    };
    if ((await sink.store.add(report)) === 'stored') {
      stored = true;
      ids.push(report.id);
    }
  }
  return { kind: stored ? 'stored' : 'duplicate', domain, organizations, ids };
}

/** One sending source of a domain's failure reports. */
export interface FailureSource {
  sourceIp: string | null;
  reports: number;
  firstReceived: string;
  lastReceived: string;
  /** How often each `Auth-Failure` value was reported. */
  authFailures: Record<string, number>;
  /** How often each `Delivery-Result`. */
  deliveryResults: Record<string, number>;
  /** The reported From domains (RFC 5322.From) seen from this source. */
  fromDomains: string[];
  /** The newest reports' ids (at most 5). */
  latest: string[];
}

/** A domain's failure reports since `since`, grouped by sending source, most reports first. */
export async function failureReportsBySource(store: FailureReportStore, organizationId: string, domain: string, since: string): Promise<{ domain: string; since: string; reports: number; truncated: boolean; sources: FailureSource[] }> {
  const reports = await store.forDomain(organizationId, domain, since, MAX_FAILURE_REPORTS_SUMMARISED);
  const groups = new Map<string, FailureSource>();
  for (const report of reports) {
    const key = report.sourceIp ?? '';
    let group = groups.get(key);
    if (!group) {
      group = { sourceIp: report.sourceIp, reports: 0, firstReceived: report.receivedAt, lastReceived: report.receivedAt, authFailures: {}, deliveryResults: {}, fromDomains: [], latest: [] };
      groups.set(key, group);
    }
    group.reports += 1;
    if (report.receivedAt < group.firstReceived) group.firstReceived = report.receivedAt;
    if (report.receivedAt > group.lastReceived) group.lastReceived = report.receivedAt;
    for (const failure of report.authFailure) group.authFailures[failure] = (group.authFailures[failure] ?? 0) + 1;
    if (report.deliveryResult) group.deliveryResults[report.deliveryResult] = (group.deliveryResults[report.deliveryResult] ?? 0) + 1;
    const fromDomain = addressDomain(fieldValue(report.headers, 'From'))?.toLowerCase();
    if (fromDomain && !group.fromDomains.includes(fromDomain) && group.fromDomains.length < 20) group.fromDomains.push(fromDomain);
    if (group.latest.length < 5) group.latest.push(report.id);
  }
  const sources = [...groups.values()].sort((a, b) => b.reports - a.reports || (a.sourceIp ?? '').localeCompare(b.sourceIp ?? ''));
  return { domain, since, reports: reports.length, truncated: reports.length >= MAX_FAILURE_REPORTS_SUMMARISED, sources };
}
