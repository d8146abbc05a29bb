/**
 * Failure reports (RFC 6591) per domain, grouped by sending source, under
 * `/api/tools/v1/spoof-checker/failure-reports`; one report; and the organisation's setting that
 * keeps the local parts of addresses hashed (on by default). Organisation-scoped. What is stored is
 * src/ingest/failure-reports.ts's: headers and authentication results, never a body.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { normaliseDomainInput } from '@spoof-checker/engine';
import { failureReportsBySource } from '../../ingest/failure-reports.js';
import type { FailureReport } from '../../store/failure-reports.js';
import type { Stores } from '../../store/types.js';
import type { AuditSpec } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { API_SECURITY, COMMON_ERROR_STATUSES, errorResponses } from '../schemas.js';
import { principalOf } from './logs.js';

/** Where the failure report routes live. */
export const FAILURE_REPORTS_PATH = '/api/tools/v1/spoof-checker/failure-reports';
/** The window of a summary without `days`. */
export const DEFAULT_FAILURE_WINDOW_DAYS = 30;
/** The longest window a summary may ask for. */
export const MAX_FAILURE_WINDOW_DAYS = 365;

const audit = (verb: string, past: string, idParam?: string): AuditSpec => ({ service: 'tools', resource: 'failure_report', verb, past, ...(idParam ? { idParam } : {}) });

const Field = Type.Object({ name: Type.String(), value: Type.String() });
/** One failure report as the API shows it. */
export const FailureReportSchema = Type.Object({
  object: Type.Literal('failure_report'),
  id: Type.String(),
  domain: Type.String(),
  receivedAt: Type.String({ format: 'date-time' }),
  arrivalDate: Type.Union([Type.String(), Type.Null()]),
  sourceIp: Type.Union([Type.String(), Type.Null()]),
  authFailure: Type.Array(Type.String(), { description: 'Auth-Failure: dmarc, spf, dkim, bodyhash, revoked, signature' }),
  authenticationResults: Type.Array(Type.String()),
  identityAlignment: Type.Union([Type.String(), Type.Null()]),
  deliveryResult: Type.Union([Type.String(), Type.Null()]),
  reporter: Type.Object({ userAgent: Type.Union([Type.String(), Type.Null()]), from: Type.Union([Type.String(), Type.Null()]), authenticated: Type.Boolean() }),
  feedback: Type.Array(Field, { description: 'The other fields of the feedback report (DKIM-Domain, DKIM-Selector, SPF-DNS, Original-Mail-From…)' }),
  headers: Type.Array(Field, { description: 'The reported message\'s header fields; its body is never stored' }),
  localPartsHashed: Type.Boolean({ description: 'Local parts of addresses are hashed (h.<16 hex>@domain)' }),
});

function reportBody(report: FailureReport): Static<typeof FailureReportSchema> {
  const { organizationId: _org, identity: _identity, ...rest } = report;
  return { object: 'failure_report', ...rest };
}

const CountMap = Type.Record(Type.String(), Type.Integer());
const SummarySchema = Type.Object({
  object: Type.Literal('failure_report_summary'),
  domain: Type.String(),
  since: Type.String({ format: 'date-time' }),
  reports: Type.Integer(),
  truncated: Type.Boolean({ description: 'More reports than are summarised (10,000) arrived in the window' }),
  sources: Type.Array(
    Type.Object({
      sourceIp: Type.Union([Type.String(), Type.Null()]),
      reports: Type.Integer(),
      firstReceived: Type.String({ format: 'date-time' }),
      lastReceived: Type.String({ format: 'date-time' }),
      authFailures: CountMap,
      deliveryResults: CountMap,
      fromDomains: Type.Array(Type.String()),
      latest: Type.Array(Type.String(), { description: 'Ids of the newest reports from this source (at most 5)' }),
    }),
  ),
});
const SettingsSchema = Type.Object({ object: Type.Literal('failure_report_settings'), hashLocalParts: Type.Boolean({ description: 'Keep the local parts of addresses hashed (default true); applies to reports received from now on' }) });

/** The failure report routes. */
export const failureReportRoutes: FastifyPluginAsyncTypebox<{ stores: Stores; now?: () => Date }> = async (app, { stores, now }) => {
  const common = { tags: ['reports'], security: API_SECURITY };
  const errors = errorResponses(...COMMON_ERROR_STATUSES);
  const clock = now ?? (() => new Date());

  app.get(
    FAILURE_REPORTS_PATH,
    {
      config: { audit: audit('summarise', 'summarised') },
      schema: {
        ...common,
        summary: 'A domain\'s failure reports, grouped by sending source',
        description: 'The failure reports (RFC 6591, DMARC ruf) received for the domain in the last `days` days (default 30), grouped by the address that sent the reported message, most reports first.',
        querystring: Type.Object(
          { domain: Type.String({ minLength: 1, maxLength: 255 }), days: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_FAILURE_WINDOW_DAYS })) },
          { additionalProperties: false },
        ),
        response: { 200: SummarySchema, ...errors },
      },
    },
    async (request) => {
      const domain = normaliseDomainInput(request.query.domain);
      if (!domain.ok) throw new ApiError('INVALID_DOMAIN', { message: domain.message, fix: domain.fix });
      const since = new Date(clock().getTime() - (request.query.days ?? DEFAULT_FAILURE_WINDOW_DAYS) * 86_400_000).toISOString();
      const summary = await failureReportsBySource(stores.failureReports, principalOf(request).organizationId, domain.domain, since);
      return { object: 'failure_report_summary' as const, ...summary };
    },
  );

  app.get(
    `${FAILURE_REPORTS_PATH}/settings`,
    { config: { audit: audit('view_settings', 'viewed_settings') }, schema: { ...common, summary: 'Failure report settings', response: { 200: SettingsSchema, ...errors } } },
    async (request) => ({ object: 'failure_report_settings' as const, ...(await stores.failureReports.settings(principalOf(request).organizationId)) }),
  );

  app.patch(
    `${FAILURE_REPORTS_PATH}/settings`,
    {
      config: { audit: audit('update_settings', 'updated_settings') },
      schema: {
        ...common,
        summary: 'Change the failure report settings',
        description: 'hashLocalParts: false keeps the local parts of addresses in clear in the reports received from now on (those stored stay as they are).',
        body: Type.Object({ hashLocalParts: Type.Boolean() }, { additionalProperties: false }),
        response: { 200: SettingsSchema, ...errors },
      },
    },
    async (request) => {
      const organizationId = principalOf(request).organizationId;
      await stores.failureReports.setSettings(organizationId, { hashLocalParts: request.body.hashLocalParts });
      return { object: 'failure_report_settings' as const, ...(await stores.failureReports.settings(organizationId)) };
    },
  );

  app.get(
    `${FAILURE_REPORTS_PATH}/:id`,
    {
      config: { audit: audit('view', 'viewed', 'id') },
      schema: { ...common, summary: 'One failure report (headers only)', params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false }), response: { 200: FailureReportSchema, ...errors } },
    },
    async (request) => {
      const report = await stores.failureReports.get(principalOf(request).organizationId, request.params.id);
      if (!report) throw notFound('Failure report', request.params.id);
      return reportBody(report);
    },
  );
};
