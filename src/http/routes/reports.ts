/**
 * Reports: DMARC aggregate and TLS reports under `/api/tools/v1/spoof-checker/reports`, scoped by
 * organisation like every resource (another organisation's reports are never seen):
 *
 * - `GET  …/reports`                          the reports received (newest first; `domain`, `kind`, pages)
 * - `POST …/reports`                          upload a report file (authenticated): stored for the key's organisation
 * - `GET  …/reports/rejections`               files refused, with their reason
 * - `GET  …/reports/domains/:domain`          the whole summary (`reports show --json`)
 * - `GET  …/reports/domains/:domain/senders`  who sends as the domain
 * - `GET  …/reports/domains/:domain/readiness` what p=quarantine and p=reject would break
 * - `GET  …/reports/domains/:domain/tls`      TLS-RPT per policy and MX, and whether MTA-STS enforce is safe
 *
 * And `POST /api/tools/v1/spoof-checker/tlsrpt`: TLS-RPT's HTTPS delivery (RFC 8460 §5.3: a POST of
 * `application/tlsrpt+gzip` or `application/tlsrpt+json`, no authentication defined), public, routed
 * to the organisations that added the policy domain (or the only organisation), capped in size.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { registerPagedList } from './paged-list.js';
import type { onRequestHookHandler } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { MAX_SUMMARY_LIST, type Resolver } from '@spoof-checker/engine';
import { countTally, ingestReportFile, ReportParserFull, reportSink, unauthenticatedOrigin, type IngestTally, type OriginBase } from '../../ingest/ingest.js';
import { MAX_REPORT_MESSAGE_BYTES } from '../../ingest/message.js';
import type { ReportParser } from '../../ingest/parse-pool.js';
import { DEFAULT_REPORT_DAYS, MAX_REPORT_DAYS, showReports } from '../../summaries/summary.js';
import type { ReportRejection, StoredReport } from '../../store/reports.js';
import type { Stores } from '../../store/types.js';
import { clientAddress } from '../client-address.js';
import { chargeStored, STORED_RECORD_QUOTA_BYTES, STORED_REPORT_QUOTA_BYTES } from '../storage-quota.js';
import { ApiError, notInScope, type DomainScope } from '../errors.js';
import { API_SECURITY, COMMON_ERROR_STATUSES, DEFAULT_PAGE_LIMIT, errorResponses, pageQuery } from '../schemas.js';
import { principalOf } from './logs.js';

/** Where the report routes live. */
export const REPORTS_PATH = '/api/tools/v1/spoof-checker/reports';
/** TLS-RPT's HTTPS delivery point (the `rua=https://…` of a TLS-RPT record, RFC 8460 §3). */
export const TLSRPT_PATH = '/api/tools/v1/spoof-checker/tlsrpt';
/** Bytes of one uploaded or POSTed report file. */
export const MAX_REPORT_UPLOAD_BYTES = MAX_REPORT_MESSAGE_BYTES;

/** The media types a report file may come as; the bytes decide what it is (the engine sniffs them). */
const REPORT_MEDIA_TYPES = [
  'application/gzip',
  'application/x-gzip',
  'application/zip',
  'application/x-zip-compressed',
  'application/xml',
  'text/xml',
  'application/json',
  'application/tlsrpt+gzip',
  'application/tlsrpt+json',
  'application/octet-stream',
];

/** Where the parsed body keeps the file's bytes (a symbol: invisible to JSON and to Object.entries). */
const REPORT_BYTES = Symbol('report bytes');
/** A report file body as the routes see it. */
interface ReportFileBody {
  /** What the record log shows: the media type and the size. */
  reportFile: string;
  [REPORT_BYTES]: Buffer;
}

/** Settings of the report routes. */
export interface ReportRouteSettings {
  /** The resolver for the SPF record the tightening needs (the service's); without it no tightening. */
  resolver?: Resolver;
  /** The service's own report domain (from `--report-address`): domains elsewhere are shown the record that authorises it. */
  serviceDomain?: string | null;
  /** Where uploads are parsed: the process's pool unless given (src/ingest/parse-pool.ts). */
  parser?: ReportParser;
}

/** Options of the report routes. */
export interface ReportRouteOptions extends ReportRouteSettings {
  stores: Stores;
  now: () => Date;
  /** The per-client-address limit of the public TLS-RPT delivery (undefined: rate limits off). */
  publicLimiter?: onRequestHookHandler | undefined;
  /** `serve --demo`: a report file about another domain is refused whole, before anything is stored (404 NOT_IN_DEMO). */
  domainScope?: DomainScope;
}

const ReportItemSchema = Type.Object(
  {
    object: Type.Literal('report'),
    id: Type.String(),
    kind: Type.Enum(['aggregate', 'tls']),
    domain: Type.String({ description: 'The policy domain the report is about' }),
    reportId: Type.String({ description: "The report's own id" }),
    begin: Type.String({ description: "The report's own date range: its start (ISO 8601)" }),
    end: Type.String(),
    reporter: Type.String({ description: 'The domain that authenticated the report message (DKIM/DMARC), or "unauthenticated"; never the org_name inside the report' }),
    orgName: Type.Union([Type.String(), Type.Null()], { description: 'org_name as the report says it: shown, not trusted' }),
    authenticated: Type.Boolean(),
    contested: Type.Boolean({
      description: 'Another unauthenticated report listed here claims the same identity (reporter, report id, domain, period) but says something else: one of them is forged; both are kept',
    }),
    records: Type.Integer(),
    messages: Type.Integer(),
    origin: Type.Object({
      channel: Type.Enum(['file', 'smtp', 'imap', 'https', 'upload']),
      fileName: Type.Union([Type.String(), Type.Null()]),
      sender: Type.Union([Type.String(), Type.Null()]),
      messageId: Type.Union([Type.String(), Type.Null()]),
      dkim: Type.String(),
      spf: Type.String(),
      dmarc: Type.String(),
      receivedAt: Type.String(),
    }),
  },
  { additionalProperties: false },
);

const RejectionSchema = Type.Object(
  {
    object: Type.Literal('report_rejection'),
    id: Type.String(),
    receivedAt: Type.String(),
    channel: Type.String(),
    fileName: Type.Union([Type.String(), Type.Null()]),
    sender: Type.Union([Type.String(), Type.Null()]),
    reason: Type.String({ description: 'Stable reason: doctype, entity, malformed, truncated, too-large, ratio-exceeded, not-a-report, …' }),
    detail: Type.String(),
  },
  { additionalProperties: false },
);

const IngestResultSchema = Type.Object(
  {
    stored: Type.Integer(),
    duplicates: Type.Integer(),
    rejected: Type.Array(Type.Object({ fileName: Type.Union([Type.String(), Type.Null()]), reason: Type.String(), detail: Type.String() })),
    reports: Type.Array(
      Type.Object({
        kind: Type.String(),
        domain: Type.String(),
        reportId: Type.String(),
        outcome: Type.Enum(['stored', 'duplicate', 'no-organization']),
        records: Type.Integer(),
        messages: Type.Integer(),
      }),
    ),
  },
  { additionalProperties: false },
);

const SenderSchema = Type.Object(
  {
    source: Type.String(),
    provider: Type.Union([Type.String(), Type.Null()]),
    messages: Type.Integer(),
    spfAligned: Type.Integer({ description: 'Messages with an aligned SPF pass' }),
    dkimAligned: Type.Integer({ description: 'Messages with an aligned DKIM pass' }),
    dmarcPass: Type.Integer({ description: 'Messages that passed DMARC' }),
    failing: Type.Integer(),
    selectors: Type.Array(Type.String()),
    class: Type.Enum(['legitimate', 'forwarded', 'unauthorised']),
    why: Type.String(),
    fix: Type.Union([Type.String(), Type.Null()]),
    firstDay: Type.String(),
    lastDay: Type.String(),
  },
  { additionalProperties: true },
);
const LEFT_OUT = `Entries beyond the list (lists hold at most ${MAX_SUMMARY_LIST}); counted in the figures, not named`;
const ImpactSchema = Type.Object(
  { messages: Type.Integer(), share: Type.Number({ minimum: 0, maximum: 1 }), senders: Type.Array(Type.String(), { maxItems: MAX_SUMMARY_LIST }), sendersLeftOut: Type.Integer({ minimum: 0, description: LEFT_OUT }) },
  { additionalProperties: true },
);
const ReadinessSchema = Type.Object(
  {
    reject: ImpactSchema,
    quarantine: ImpactSchema,
    verdict: Type.Enum(['ready', 'not-ready']),
    blockers: Type.Array(Type.Object({ source: Type.String(), fix: Type.String() }, { additionalProperties: true }), { maxItems: MAX_SUMMARY_LIST }),
    blockersLeftOut: Type.Integer({ minimum: 0, description: LEFT_OUT }),
    summary: Type.String({ description: 'The answer in one line' }),
  },
  { additionalProperties: true },
);
const TlsSchema = Type.Object(
  {
    reports: Type.Integer(),
    policies: Type.Array(
      Type.Object(
        {
          policy: Type.String(),
          successful: Type.Integer(),
          failed: Type.Integer(),
          failures: Type.Array(Type.Object({ resultType: Type.String(), sessions: Type.Integer() })),
          enforce: Type.Union([Type.Object({ safe: Type.Boolean(), answer: Type.String() }), Type.Null()]),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: true },
);
const ExternalDestinationSchema = Type.Union([Type.Object({ name: Type.String(), value: Type.String() }), Type.Null()], {
  description: 'The TXT record the domain must publish for receivers to send its reports to this service (RFC 7489 §7.1); null when none is needed',
});
const WindowFields = {
  domain: Type.String(),
  days: Type.Integer(),
  window: Type.Object({ from: Type.String(), to: Type.String() }),
  reports: Type.Integer({ description: 'Aggregate reports in the window (TLS reports are under tls)' }),
  duplicates: Type.Integer(),
  unauthenticatedReports: Type.Integer(),
  messages: Type.Integer(),
  externalDestination: ExternalDestinationSchema,
};
const DayTotalsSchema = Type.Object({
  day: Type.String(),
  trusted: Type.Boolean({ description: 'false: untrusted reports (unauthenticated mail, the public TLS-RPT route), kept apart' }),
  messages: Type.Integer(),
  dmarcPass: Type.Integer(),
  spfAligned: Type.Integer(),
  dkimAligned: Type.Integer(),
  failing: Type.Integer(),
});
const UntrustedSchema = Type.Object(
  {
    marked: Type.Literal('untrusted'),
    note: Type.String(),
    reports: Type.Integer(),
    messages: Type.Integer(),
    dmarcPass: Type.Integer(),
    failing: Type.Integer(),
    sources: Type.Array(Type.Object({ source: Type.String(), messages: Type.Integer(), dmarcPass: Type.Integer(), failing: Type.Integer() }), { maxItems: MAX_SUMMARY_LIST }),
    sourcesLeftOut: Type.Integer({ minimum: 0, description: LEFT_OUT }),
  },
  { description: 'Reports anyone could have sent (no authenticated message, not handed in by the organisation): counted apart, never in the figures beside them, never alerted on, never probed' },
);
const SummarySchema = Type.Object(
  {
    ...WindowFields,
    senders: Type.Array(SenderSchema, { maxItems: MAX_SUMMARY_LIST }),
    sendersLeftOut: Type.Integer({ minimum: 0, description: LEFT_OUT }),
    readiness: ReadinessSchema,
    spfTighten: Type.Union([Type.Object({ record: Type.String(), keep: Type.Array(Type.String()) }, { additionalProperties: true }), Type.Null()]),
    spfUnused: Type.Array(Type.Object({ term: Type.String(), lookupsSaved: Type.Integer() })),
    selectors: Type.Array(Type.String(), { maxItems: MAX_SUMMARY_LIST }),
    selectorsLeftOut: Type.Integer({ minimum: 0, description: LEFT_OUT }),
    tls: TlsSchema,
    spf: Type.Object({ status: Type.String(), record: Type.Union([Type.String(), Type.Null()]) }),
    daily: Type.Array(Type.Object({ day: Type.String(), messages: Type.Integer(), dmarcPass: Type.Integer(), failing: Type.Integer() }), { description: 'Messages per UTC day of the window: DMARC pass and fail' }),
    series: Type.Array(DayTotalsSchema, { description: 'Messages per UTC day with aligned SPF and DKIM apart, trusted and untrusted rows apart' }),
    untrusted: UntrustedSchema,
  },
  { additionalProperties: false },
);

const ListQuery = Type.Object(
  { ...pageQuery(DEFAULT_PAGE_LIMIT), domain: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })), kind: Type.Optional(Type.Enum(['aggregate', 'tls'])) },
  { additionalProperties: false },
);
const DaysQuery = Type.Object(
  { days: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_REPORT_DAYS, default: DEFAULT_REPORT_DAYS, description: "Reports whose own date range falls in the last N days" })) },
  { additionalProperties: false },
);
const DomainParams = Type.Object({ domain: Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9._-]+$' }) }, { additionalProperties: false });

/** A stored report as the API shows it. */
export function reportBody(report: StoredReport) {
  const { origin } = report;
  return {
    object: 'report' as const,
    id: report.id,
    kind: report.kind,
    domain: report.domain,
    reportId: report.reportId,
    begin: new Date(report.begin * 1000).toISOString(),
    end: new Date(report.end * 1000).toISOString(),
    reporter: report.reporter,
    orgName: report.orgName,
    authenticated: origin.authenticatedDomain !== null,
    contested: report.contested,
    records: report.recordCount,
    messages: report.messageCount,
    origin: { channel: origin.channel, fileName: origin.fileName, sender: origin.sender, messageId: origin.messageId, dkim: origin.dkim, spf: origin.spf, dmarc: origin.dmarc, receivedAt: origin.receivedAt },
  };
}

function rejectionBody(r: ReportRejection) {
  return { object: 'report_rejection' as const, id: r.id, receivedAt: r.receivedAt, channel: r.channel, fileName: r.fileName, sender: r.sender, reason: r.reason, detail: r.detail };
}

function ingestBody(tally: IngestTally) {
  const c = countTally(tally);
  return {
    stored: c.stored,
    duplicates: c.duplicates,
    rejected: tally.rejected,
    reports: tally.reports.map((r) => ({ kind: r.kind, domain: r.domain, reportId: r.reportId, outcome: r.outcome, records: r.records, messages: r.messages })),
  };
}

function fileNameOf(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return null;
  // A label only, never a path.
  const name = value.replace(/^.*[/\\]/, '').slice(0, 255);
  return name === '' ? null : name;
}

/** The report routes. */
export const reportRoutes: FastifyPluginAsyncTypebox<ReportRouteOptions> = async (app, options) => {
  const { stores, now } = options;
  const routeOptions = options;
  const scope = options.domainScope;
  // The demo takes reports about its own domains only: a file with one about another is refused whole.
  // Uploads are bounded in the parser's queue (MAX_REPORT_PARSE_QUEUED_BYTES): full, 503 with Retry-After.
  const ingestUpload = async (sink: Awaited<ReturnType<typeof reportSink>>, file: Parameters<typeof ingestReportFile>[1], origin: OriginBase, options: Parameters<typeof ingestReportFile>[3] = {}) => {
    try {
      return await ingestReportFile(routeOptions.parser ? { ...sink, parser: routeOptions.parser } : sink, file, origin, { ...options, bounded: true });
    } catch (error) {
      if (error instanceof ReportParserFull) throw new ApiError('REPORT_PARSER_BUSY', { message: `The report parser is busy: ${error.message}.`, retryAfter: error.retryAfterSeconds });
      throw error;
    }
  };
  const admit = scope
    ? {
        admit: (domains: readonly string[]) => {
          const refusal = notInScope(scope, domains, (domain) => `The file holds a report about ${domain}, which is not in the demo: the demo takes reports about its own domains only.`);
          if (refusal) throw refusal;
        },
      }
    : {};
  // Report files are taken as bytes whatever they are labelled (the engine sniffs them); JSON
  // included, in this scope only (a TLS report is JSON, parsed by the engine's own capped reader).
  app.removeContentTypeParser('application/json');
  // The bytes ride under a symbol: the service's hooks that walk a body (the depth check, the record
  // log's redaction, the quota) see only the short description, never 25 MiB of array entries.
  app.addContentTypeParser(REPORT_MEDIA_TYPES, { parseAs: 'buffer', bodyLimit: MAX_REPORT_UPLOAD_BYTES }, (request, body, done) => {
    const bytes = body as Buffer;
    const file: ReportFileBody = { reportFile: `${String(request.headers['content-type'] ?? '').slice(0, 100)}, ${bytes.length} bytes`, [REPORT_BYTES]: bytes };
    done(null, file);
  });
  const security = API_SECURITY;
  const bodyOf = (parsed: unknown): Buffer => {
    const body = (parsed as Partial<ReportFileBody> | undefined)?.[REPORT_BYTES];
    if (!Buffer.isBuffer(body) || body.length === 0) {
      throw new ApiError('VALIDATION_FAILED', { message: 'The body is empty: send the report file itself.', fix: `Send the file's bytes with a Content-Type such as ${REPORT_MEDIA_TYPES.slice(0, 3).join(', ')}.` });
    }
    return body;
  };
  const mediaTypeCheck = async (request: { headers: Record<string, string | string[] | undefined> }) => {
    const type = String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (!REPORT_MEDIA_TYPES.includes(type)) {
      throw new ApiError('UNSUPPORTED_MEDIA_TYPE', {
        message: `A report file cannot be sent as ${type || 'no Content-Type'}.`,
        why: 'Report files are gzip, zip, XML or JSON.',
        fix: `Send it with one of: ${REPORT_MEDIA_TYPES.join(', ')}.`,
      });
    }
  };

  app.get(
    REPORTS_PATH,
    {
      config: { audit: { service: 'tools', resource: 'report', verb: 'list', past: 'listed' } },
      schema: {
        tags: ['reports'],
        security,
        summary: 'List reports',
        description: 'DMARC aggregate and TLS reports received by the organisation, newest first by their own date range.',
        querystring: ListQuery,
        response: { 200: Type.Object({ reports: Type.Array(ReportItemSchema), total: Type.Integer(), page: Type.Integer(), limit: Type.Integer() }), ...errorResponses(...COMMON_ERROR_STATUSES) },
      },
    },
    async (request) => {
      const page = request.query.page ?? 1;
      const limit = request.query.limit ?? DEFAULT_PAGE_LIMIT;
      const query = { page, limit, ...(request.query.domain ? { domain: request.query.domain.toLowerCase() } : {}), ...(request.query.kind ? { kind: request.query.kind } : {}) };
      const result = await stores.reports.list(principalOf(request).organizationId, query);
      // Unauthenticated reports that collide on identity but differ in content are stored apart
      // (src/ingest/ingest.ts storedIdentity) under one `identityBase`: the store marks each, across all pages.
      const reports = result.items.map(reportBody);
      return { reports, total: result.total, page, limit };
    },
  );

  app.post(
    REPORTS_PATH,
    {
      bodyLimit: MAX_REPORT_UPLOAD_BYTES,
      preValidation: mediaTypeCheck,
      config: { audit: { service: 'tools', resource: 'report', verb: 'upload', past: 'uploaded' } },
      schema: {
        tags: ['reports'],
        security,
        summary: 'Upload a report file',
        description:
          'A DMARC aggregate report (.xml, .xml.gz, .zip) or a TLS report (.json, .json.gz), as the reporter sent it; the bytes decide the format. Stored for the key\'s organisation, whatever domain it is about. A report already stored is counted as a duplicate. The file name may be given in the X-Report-Filename header.',
        response: { 200: IngestResultSchema, ...errorResponses(...COMMON_ERROR_STATUSES, 422, 503) },
      },
    },
    async (request) => {
      const organizationId = principalOf(request).organizationId;
      const sink = await reportSink(stores.reports, { organizationId }, { now });
      const tally = await ingestUpload(sink, { bytes: bodyOf(request.body), fileName: fileNameOf(request.headers['x-report-filename']), contentType: request.headers['content-type'] ?? null }, unauthenticatedOrigin('upload', null), admit);
      // The quota counts what was stored too, not only the (compressed) bytes sent.
      for (const report of tally.reports) if (report.outcome === 'stored') chargeStored(request, STORED_REPORT_QUOTA_BYTES + report.records * STORED_RECORD_QUOTA_BYTES);
      if (tally.reports.length === 0 && tally.rejected.length > 0) {
        const first = tally.rejected[0]!;
        throw new ApiError('REPORT_REFUSED', { message: `The file was refused (${first.reason}): ${first.detail}.` });
      }
      return ingestBody(tally);
    },
  );

  app.post(
    TLSRPT_PATH,
    {
      bodyLimit: MAX_REPORT_UPLOAD_BYTES,
      onRequest: options.publicLimiter ? [options.publicLimiter] : [],
      preValidation: mediaTypeCheck,
      config: { public: true },
      schema: {
        tags: ['reports'],
        security: [],
        summary: 'Deliver a TLS report (RFC 8460 §5.3)',
        description:
          'The HTTPS delivery of SMTP TLS reports: publish `rua=https://<this service>' +
          TLSRPT_PATH +
          '` in the TLS-RPT record. A POST of application/tlsrpt+gzip or application/tlsrpt+json; no key (RFC 8460 defines none). TLS reports only: a DMARC aggregate report is refused (422, reason wrong-kind). Stored for the organisations that added the policy domain (or the only organisation); the report is marked unauthenticated.',
        response: { 200: IngestResultSchema, ...errorResponses(400, 404, 413, 415, 422, 429, 500, 503) },
      },
    },
    async (request) => {
      const sink = await reportSink(stores.reports, 'routed', { now });
      // RFC 8460 §5.3: this route is the HTTPS delivery of TLS reports; a DMARC aggregate report is refused unread.
      const tally = await ingestUpload(sink, { bytes: bodyOf(request.body), fileName: null, contentType: request.headers['content-type'] ?? null }, unauthenticatedOrigin('https', clientAddress(request)), { kinds: ['tls'], ...admit });
      if (tally.reports.length === 0 && tally.rejected.length > 0) {
        const first = tally.rejected[0]!;
        throw new ApiError('REPORT_REFUSED', { message: `The report was refused (${first.reason}): ${first.detail}.` });
      }
      if (tally.reports.length > 0 && tally.reports.every((r) => r.outcome === 'no-organization')) {
        throw new ApiError('NOT_FOUND', { message: `No organisation here takes reports for ${[...new Set(tally.reports.map((r) => r.domain))].join(', ')}.`, why: 'The policy domain has not been added by any organisation of this service.', fix: 'Add the domain (the domains resource), or point the TLS-RPT rua elsewhere.' });
      }
      return ingestBody(tally);
    },
  );

  registerPagedList(app, {
    path: `${REPORTS_PATH}/rejections`,
    audit: { service: 'tools', resource: 'report', verb: 'list-rejections', past: 'listed' },
    tag: 'reports',
    security,
    summary: 'List refused report files',
    key: 'rejections',
    item: RejectionSchema,
    list: (organizationId, page) => stores.reports.rejections(organizationId, page),
    body: rejectionBody,
  });

  const summaryOf = async (organizationId: string, domain: string, days: number) =>
    (
      await showReports({
        store: stores.reports,
        organizationId,
        domain: domain.toLowerCase().replace(/\.$/, ''),
        days,
        now: now(),
        ...(options.resolver ? { resolver: options.resolver } : {}),
        serviceDomain: options.serviceDomain ?? null,
      })
    ).summary;

  const domainRoute = (suffix: string, summary: string, description: string, response: TSchema, pick: (s: Awaited<ReturnType<typeof summaryOf>>) => unknown) => {
    app.get(
      `${REPORTS_PATH}/domains/:domain${suffix}`,
      {
        config: { audit: { service: 'tools', resource: 'report', verb: `read${suffix.replace('/', '-') || '-summary'}`, past: 'read', idParam: 'domain' } },
        schema: { tags: ['reports'], security, summary, description, params: DomainParams, querystring: DaysQuery, response: { 200: response, ...errorResponses(...COMMON_ERROR_STATUSES) } },
      },
      async (request) => pick(await summaryOf(principalOf(request).organizationId, request.params.domain, request.query.days ?? DEFAULT_REPORT_DAYS)),
    );
  };

  domainRoute('', 'Report summary of a domain', 'The whole answer of `reports show --json`: senders, readiness, SPF tightening, DKIM selectors seen, TLS.', SummarySchema, (s) => s);
  domainRoute(
    '/senders',
    'Who sends as the domain',
    'Every source address of the reports in the window, most messages first: provider, messages, aligned SPF and DKIM, DMARC pass, selectors, class and fix.',
    Type.Object({ ...WindowFields, senders: Type.Array(SenderSchema, { maxItems: MAX_SUMMARY_LIST }), sendersLeftOut: Type.Integer({ minimum: 0, description: LEFT_OUT }), untrusted: UntrustedSchema }, { additionalProperties: false }),
    (s) => ({ domain: s.domain, days: s.days, window: s.window, reports: s.reports, duplicates: s.duplicates, unauthenticatedReports: s.unauthenticatedReports, messages: s.messages, externalDestination: s.externalDestination, senders: s.senders, sendersLeftOut: s.sendersLeftOut, untrusted: s.untrusted }),
  );
  domainRoute(
    '/readiness',
    'What enforcement would break',
    'For p=quarantine and p=reject: the messages and share of the window that would have failed and the sources behind them; "ready", or the legitimate senders to fix first.',
    Type.Object({ ...WindowFields, readiness: ReadinessSchema }, { additionalProperties: false }),
    (s) => ({ domain: s.domain, days: s.days, window: s.window, reports: s.reports, duplicates: s.duplicates, unauthenticatedReports: s.unauthenticatedReports, messages: s.messages, externalDestination: s.externalDestination, readiness: s.readiness }),
  );
  domainRoute(
    '/tls',
    'TLS report summary',
    'Per policy and MX: successful and failed sessions, failure types, and whether moving MTA-STS to enforce is safe.',
    Type.Object({ domain: Type.String(), days: Type.Integer(), window: Type.Object({ from: Type.String(), to: Type.String() }), tls: TlsSchema }, { additionalProperties: false }),
    (s) => ({ domain: s.domain, days: s.days, window: s.window, tls: s.tls }),
  );
};
