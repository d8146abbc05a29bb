/**
 * The one path every report takes into the store, whatever brought it (a file, SMTP, IMAP, HTTPS):
 * the engine unpacks it (gzip, zip, XML, JSON by the bytes, capped), parses it (no DTD, no entity,
 * capped), names it (`reportIdentity`, with the authenticated reporter when there is one), and the
 * store takes it whole for each organisation it belongs to, or counts it as a duplicate. A file
 * that gives no report is kept as a rejection with the engine's reason.
 */
import { createHash, randomUUID } from 'node:crypto';
import { reportIdentity, type AggregateReport, type Resolver } from '@spoof-checker/engine';
import { isTrustedOrigin, MAX_REPORT_RECORDS_PER_ORGANIZATION_PER_DAY, reportingSource, sourceLimit, type ReportChannel, type ReportKind, type ReportOrigin, type ReportStore } from '../store/reports.js';
import { authenticateReportMessage, type MessageConnection } from './authenticate.js';
import { parseReportMessage } from './message.js';
import { reportWriter } from './report-writer.js';
import type { FailureReportStore } from '../store/failure-reports.js';
import { parseFailureReport, storeFailureReport, type FailureIngestOutcome, type FailureReportSink } from './failure-reports.js';
import { reportDomain, type ParsedFile, type ReportFileInput, type ReportHead, type StoredForm } from './parse-files.js';
import { defaultReportParser, PARSER_FULL, REPORT_PARSE_RETRY_AFTER_SECONDS, type ReportParser } from './parse-pool.js';

/** Where reports go and for whom. */
export interface ReportSink {
  store: ReportStore;
  /**
   * The organisations a report about `domain` is stored for: the one organisation, or each that
   * added the domain. Empty: nobody takes it (SMTP answers 550).
   */
  organizationsFor(domain: string): Promise<string[]>;
  /** Where a file that gave no report is recorded (the organisations known before it is read). */
  rejectionOrganizations: readonly string[];
  now?: () => Date;
  newId?: () => string;
  /** Failure reports (RFC 6591) found on the same paths go here (src/ingest/failure-reports.ts); without it they count as no report. */
  failures?: FailureReportStore;
  /** Where files are parsed: the process's worker pool unless given (parse-pool.ts). */
  parser?: ReportParser;
}

/**
 * The one way a sink is made. For one organisation (`{ organizationId }`: an API key's upload, the
 * CLI's `--org`): every report and every refused file is that organisation's. `routed`: by the policy
 * domain ({@link serviceRouting}: the SMTP receiver, the IMAP fetch, the public TLS-RPT route), refused
 * files kept for the sole organisation when there is exactly one.
 */
export async function reportSink(
  store: ReportStore,
  owner: { organizationId: string } | 'routed',
  options: { now?: () => Date; newId?: () => string; failures?: FailureReportStore | undefined } = {},
): Promise<ReportSink> {
  const extra = {
    ...(options.now ? { now: options.now } : {}),
    ...(options.newId ? { newId: options.newId } : {}),
    // RFC 6591 failure reports arrive by the same paths: stored beside the aggregate reports when given.
    ...(options.failures ? { failures: options.failures } : {}),
  };
  if (owner === 'routed') return { store, organizationsFor: serviceRouting(store), rejectionOrganizations: await soleOrganization(store), ...extra };
  const organizations = [owner.organizationId];
  return { store, organizationsFor: async () => organizations, rejectionOrganizations: organizations, ...extra };
}

/** Thrown by {@link ingestReportFile} (`bounded`) when the parser's queue is full: nothing was read or recorded. */
export class ReportParserFull extends Error {
  override readonly name = 'ReportParserFull' as const;
  readonly retryAfterSeconds = REPORT_PARSE_RETRY_AFTER_SECONDS;
}

/** A file refused, with the engine's reason. */
export interface RejectedFile {
  fileName: string | null;
  reason: string;
  detail: string;
}

/** One report found, and what became of it. */
export interface IngestedReport {
  kind: 'aggregate' | 'tls';
  domain: string;
  reportId: string;
  /** The authenticated reporter, or `unauthenticated`. */
  reporter: string;
  /** Copies stored (one per organisation), duplicates counted, or nobody takes the domain. */
  outcome: 'stored' | 'duplicate' | 'no-organization';
  organizations: string[];
  records: number;
  messages: number;
}

/** What one ingestion did. */
export interface IngestTally {
  reports: IngestedReport[];
  rejected: RejectedFile[];
}

/** An empty tally. */
export function emptyTally(): IngestTally {
  return { reports: [], rejected: [] };
}

/** Adds `more` into `into`. */
export function addTally(into: IngestTally, more: IngestTally): IngestTally {
  into.reports.push(...more.reports);
  into.rejected.push(...more.rejected);
  return into;
}

/** Reports stored, duplicates and refusals of a tally, counted. */
export function countTally(tally: IngestTally): { stored: number; duplicates: number; unrouted: number; rejected: number } {
  return {
    stored: tally.reports.filter((r) => r.outcome === 'stored').length,
    duplicates: tally.reports.filter((r) => r.outcome === 'duplicate').length,
    unrouted: tally.reports.filter((r) => r.outcome === 'no-organization').length,
    rejected: tally.rejected.length,
  };
}

/**
 * How far in the future a report's period may begin (clock skew between reporter and service). A
 * report of a period that has not started is refused (`future-date`): mox refuses `end > now + 60 s`;
 * a day of slack keeps a reporter whose clock is off by hours (or a zone-less date read as UTC).
 */
export const MAX_FUTURE_SKEW_SECONDS = 86_400;

/** The reporter's label when the message was not authenticated (never the report's `org_name`). */
export const UNAUTHENTICATED_REPORTER = 'unauthenticated';

/** How a report file arrived, less its name (which the file itself gives). */
export type OriginBase = Omit<ReportOrigin, 'fileName' | 'receivedAt'>;

/** The origin of a report that did not come in a message (a file, an upload, an HTTPS POST). */
export function unauthenticatedOrigin(channel: ReportChannel, sender: string | null): OriginBase {
  return { channel, sender, messageId: null, authenticatedDomain: null, dkim: 'none', spf: 'none', dmarc: 'none' };
}

/** An aggregate record as stored (parse-files.ts makes the rows where the report is parsed). */
export { recordRow, reportDomain } from './parse-files.js';

/** Records a refused file for the organisations known before it was read, and returns it for the tally. */
export async function rejectFile(sink: ReportSink, origin: Pick<OriginBase, 'channel' | 'sender'>, fileName: string | null, reason: string, detail: string): Promise<RejectedFile> {
  return reject(sink, origin, fileName, reason, detail, (sink.now?.() ?? new Date()).toISOString());
}

async function reject(sink: ReportSink, origin: Pick<OriginBase, 'channel' | 'sender'>, fileName: string | null, reason: string, detail: string, receivedAt: string): Promise<RejectedFile> {
  const newId = sink.newId ?? randomUUID;
  for (const organizationId of sink.rejectionOrganizations) {
    await sink.store.reject({ id: newId(), organizationId, receivedAt, channel: origin.channel, fileName, sender: origin.sender, reason, detail });
  }
  return { fileName, reason, detail };
}

/**
 * The identity a report is stored under. Authenticated: the engine's `reportIdentity` with the
 * authenticated reporter (a resend in any container counts once). Unauthenticated: that identity and
 * what the report says together, in another namespace: a forged copy under a guessed id that says
 * something else never makes the real one a duplicate (both are kept; `identityBase` in their origin
 * shows they collide), and an authenticated report is never a duplicate of an unauthenticated one.
 */
export function storedIdentity(report: ReportHead | AggregateReport, authenticatedDomain: string | null, digest: string): { identity: string; base: string } {
  // The identity reads the report's metadata only (reporter, id, domain, dates), never its records.
  const base = reportIdentity(report.kind === 'aggregate' && !('records' in report) ? { ...report, records: [] } : report, authenticatedDomain ? { reporter: authenticatedDomain } : {});
  if (authenticatedDomain) return { identity: base, base };
  return { identity: createHash('sha256').update(`unauthenticated|${base}|${digest}`).digest('hex'), base };
}

async function storeReport(sink: ReportSink, report: ReportHead, form: StoredForm, origin: ReportOrigin, contentDigest: string): Promise<IngestedReport | { overLimit: string }> {
  const newId = sink.newId ?? randomUUID;
  const reporter = origin.authenticatedDomain ?? UNAUTHENTICATED_REPORTER;
  const named = storedIdentity(report, origin.authenticatedDomain, contentDigest);
  const identity = named.identity;
  if (!origin.authenticatedDomain) origin = { ...origin, identityBase: named.base };
  // RFC 8460 §4: a TLS report is about one policy domain (its policies name it); the first one files it (reportDomain).
  const domain = reportDomain(report);
  const begin = report.kind === 'aggregate' ? report.dateRange.begin : report.dateRange.start;
  const end = report.dateRange.end;
  const orgName = report.kind === 'aggregate' ? report.reporter.orgName : report.organizationName;
  // The rows, the document and the engine's digest were made where the report was parsed (parse-files.ts).
  const { document, records, digest } = form;
  const organizations = await sink.organizationsFor(domain);
  const messages = records.reduce((sum, r) => sum + r.count, 0);
  const base = { kind: report.kind, domain, reportId: report.reportId, reporter, organizations, records: records.length, messages };
  if (organizations.length === 0) return { ...base, outcome: 'no-organization' };
  let stored = false;
  let duplicate = false;
  let overLimit: string | null = null;
  const trusted = isTrustedOrigin(origin);
  for (const organizationId of organizations) {
    // Through the store's writer: stored in one transaction with the reports that arrive at the same time (report-writer.ts).
    const outcome = await reportWriter(sink.store).add({ id: newId(), organizationId, kind: report.kind, identity, domain, begin, end, reporter, orgName, reportId: report.reportId, origin, document, records, trusted, digest });
    if (outcome === 'stored') stored = true;
    else if (outcome === 'duplicate') duplicate = true;
    else overLimit = limitDetail(outcome, reportingSource({ origin, trusted }), records.length);
  }
  if (!stored && !duplicate && overLimit !== null) return { overLimit };
  return { ...base, outcome: stored ? 'stored' : 'duplicate' };
}

/** What a refusal for a record limit says (the limit by name and value, and what to do). */
function limitDetail(outcome: 'over-organization-limit' | 'over-source-limit', source: string | null, records: number): string {
  if (outcome === 'over-organization-limit') {
    return `the organisation has taken ${MAX_REPORT_RECORDS_PER_ORGANIZATION_PER_DAY} report records in the last day (MAX_REPORT_RECORDS_PER_ORGANIZATION_PER_DAY); this report's ${records} were refused and nothing stored was lost: send it again tomorrow`;
  }
  const limit = sourceLimit(source ?? '');
  const who = source === 'unauthenticated' ? 'unauthenticated reports (together)' : source === 'organization' ? "the organisation's own uploads" : `the reporter ${source}`;
  return `${who} have given ${limit} report records in the last day (${source === 'unauthenticated' ? 'MAX_UNTRUSTED_REPORT_RECORDS_PER_DAY' : 'MAX_REPORT_RECORDS_PER_SOURCE_PER_DAY'}); this report's ${records} were refused and nothing stored was lost${source === 'unauthenticated' ? ': a report whose message is authenticated (DKIM or DMARC) has its own limit' : ': send it again tomorrow'}`;
}

/**
 * Ingests one report file (any container the engine reads). `candidate` marks a message part that
 * may not be a report at all (a logo, a signature): then an unknown format is skipped silently
 * instead of being recorded as a rejection.
 */
export async function ingestReportFile(
  sink: ReportSink,
  file: ReportFileInput,
  origin: OriginBase,
  options: { candidate?: boolean; kinds?: readonly ReportKind[]; admit?: (domains: readonly string[]) => void; bounded?: boolean } = {},
): Promise<IngestTally & { found: boolean }> {
  // A path that takes one kind has the other refused unread, in the parser (parse-files.ts).
  const [parsed] = await parseExpecting(sink, () => (sink.parser ?? defaultReportParser()).parse([options.kinds ? { ...file, kinds: options.kinds } : file], options.bounded ? { bounded: true } : {}));
  // The parser's queue is full (a bounded caller only): nothing was read, nothing is recorded; the caller says to retry.
  if (!parsed!.ok && parsed!.reason === PARSER_FULL) throw new ReportParserFull(parsed!.detail);
  // `admit` sees every domain the file's reports are about before any is stored, and may refuse the
  // whole file by throwing (the demo takes reports about its own domains only).
  if (options.admit && parsed!.ok) options.admit(parsed!.documents.flatMap((d) => (d.outcome.ok ? [reportDomain(d.outcome.report)] : [])));
  return ingestParsedFile(sink, file.fileName, parsed!, origin, options);
}

/** Runs `parse` with the store's writer told that reports are on their way (it may gather them into one transaction: report-writer.ts). */
async function parseExpecting<T>(sink: ReportSink, parse: () => Promise<T>): Promise<T> {
  const arrived = reportWriter(sink.store).expect();
  try {
    return await parse();
  } finally {
    arrived();
  }
}

/** Stores what the parser made of one file (or records why it gave no report). */
async function ingestParsedFile(sink: ReportSink, fileName: string | null, parsed: ParsedFile, origin: OriginBase, options: { candidate?: boolean }): Promise<IngestTally & { found: boolean }> {
  const receivedAt = (sink.now?.() ?? new Date()).toISOString();
  const tally: IngestTally & { found: boolean } = { reports: [], rejected: [], found: false };
  if (!parsed.ok) {
    if (options.candidate && (parsed.reason === 'unknown-format' || parsed.reason === 'empty')) return tally;
    tally.found = true;
    tally.rejected.push(await reject(sink, origin, fileName, parsed.reason, parsed.detail, receivedAt));
    return tally;
  }
  tally.found = true;
  for (const document of parsed.documents) {
    const outcome = document.outcome;
    const name = document.name || fileName;
    // A document of a kind the path does not take was refused unread by the parser (`wrong-kind`, parse-files.ts).
    if (!outcome.ok) {
      tally.rejected.push(await reject(sink, origin, name, outcome.reason, outcome.detail, receivedAt));
      continue;
    }
    const begin = outcome.report.kind === 'aggregate' ? outcome.report.dateRange.begin : outcome.report.dateRange.start;
    const nowSeconds = Math.floor((sink.now?.() ?? new Date()).getTime() / 1000);
    if (begin > nowSeconds + MAX_FUTURE_SKEW_SECONDS) {
      const when = new Date(begin * 1000).toISOString();
      tally.rejected.push(await reject(sink, origin, name, 'future-date', `the report's period begins ${when}, in the future: a reporter's clock is wrong or the report is forged`, receivedAt));
      continue;
    }
    const stored = await storeReport(sink, outcome.report, outcome.stored, { ...origin, fileName: name, receivedAt }, outcome.contentDigest);
    if ('overLimit' in stored) tally.rejected.push(await reject(sink, origin, name, 'over-limit', stored.overLimit, receivedAt));
    else tally.reports.push(stored);
  }
  return tally;
}

/** How a message arrived, for {@link ingestReportMessage}. */
export interface MessageArrival {
  channel: ReportChannel;
  /** Authenticate the message (DKIM, DMARC; SPF with a connection) through this resolver; without one nothing is verified. */
  resolver?: Resolver;
  connection?: MessageConnection;
}

/**
 * Ingests one report message: its parts that may be reports, authenticated once for all of them.
 * `noReport` is true when it carried none (a "[Preview]" HTML message, an error report, spam).
 */
export async function ingestReportMessage(sink: ReportSink, raw: Buffer, arrival: MessageArrival): Promise<IngestTally & { noReport: boolean; failure?: FailureIngestOutcome }> {
  // RFC 6591: a failure report is not an aggregate report: its own path, headers only.
  if (sink.failures) {
    const failure = await ingestFailureMessage({ store: sink.failures, organizationsFor: (d) => sink.organizationsFor(d), ...(sink.now ? { now: sink.now } : {}) }, raw, arrival);
    if (failure !== undefined) return { reports: [], rejected: [], noReport: failure.kind === 'refused', failure };
  }
  let message: Awaited<ReturnType<typeof parseReportMessage>>;
  try {
    message = await parseReportMessage(raw);
  } catch (error) {
    // A message the MIME parser cannot read is refused and set aside, never retried for ever.
    const detail = `the message cannot be read as MIME: ${error instanceof Error ? error.message : String(error)}`;
    return { reports: [], rejected: [await rejectFile(sink, { channel: arrival.channel, sender: arrival.connection?.sender ?? null }, null, 'unreadable-message', detail)], noReport: true };
  }
  let auth = { dkim: 'none', spf: 'none', dmarc: 'none', authenticatedDomain: null as string | null };
  if (arrival.resolver && message.parts.length > 0) {
    try {
      auth = await authenticateReportMessage(raw, arrival.resolver, arrival.connection);
    } catch {
      // A message mailauth cannot read is not authenticated (counted and marked, never trusted).
      auth = { dkim: 'temperror', spf: 'none', dmarc: 'none', authenticatedDomain: null };
    }
  }
  const origin: OriginBase = {
    channel: arrival.channel,
    sender: message.from ?? arrival.connection?.sender ?? null,
    messageId: message.messageId,
    ...auth,
  };
  const tally: IngestTally & { noReport: boolean } = { reports: [], rejected: [], noReport: true };
  // One job for every part: they share one deadline and one budget (a message of 16 bombs costs one).
  const parsed = await parseExpecting(sink, () => (sink.parser ?? defaultReportParser()).parse(message.parts));
  for (const [index, part] of message.parts.entries()) {
    const one = await ingestParsedFile(sink, part.fileName, parsed[index]!, origin, { candidate: true });
    if (one.found) tally.noReport = false;
    addTally(tally, one);
  }
  return tally;
}

/** A failure report's message, stored (or refused); undefined when the message is not a failure report. */
async function ingestFailureMessage(sink: FailureReportSink, raw: Buffer, arrival: MessageArrival): Promise<FailureIngestOutcome | undefined> {
  const parsed = await parseFailureReport(raw);
  if (parsed.kind === 'not-failure-report') return undefined;
  if (parsed.kind === 'refused') return parsed;
  let authenticated = false;
  if (arrival.resolver) {
    // A report message mailauth cannot read is not authenticated (kept and marked, never trusted).
    authenticated = await authenticateReportMessage(raw, arrival.resolver, arrival.connection).then((auth) => auth.dmarc === 'pass', () => false);
  }
  return storeFailureReport(sink, parsed.report, arrival.channel, authenticated);
}

/**
 * The service's routing: with exactly one organisation, it takes reports for any domain; with
 * several, a report is stored for each organisation that added its domain (or a parent of it, the
 * domains resource), and for none when no organisation has.
 */
export function serviceRouting(store: ReportStore): (domain: string) => Promise<string[]> {
  return async (domain) => {
    let name = domain;
    for (;;) {
      const routing = await store.routing(name);
      if (routing.organizations.length === 1) return routing.organizations;
      if (routing.withDomain.length > 0) return routing.withDomain;
      const dot = name.indexOf('.');
      // Stop before a single label: an organisation never adds a top-level domain.
      if (dot < 0 || name.indexOf('.', dot + 1) < 0) return [];
      name = name.slice(dot + 1);
    }
  };
}

/** The organisation when exactly one exists (it also keeps the refused files), else none. */
export async function soleOrganization(store: ReportStore): Promise<string[]> {
  const routing = await store.routing('');
  return routing.organizations.length === 1 ? routing.organizations : [];
}
