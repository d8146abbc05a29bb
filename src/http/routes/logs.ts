/**
 * Logs: `GET /api/logs/v1/emails/:id` (an email log with its events in lifecycle order),
 * `GET /api/logs/v1/emails` (the list, beyond the spec) and `GET /api/logs/v1/:log_id` (a record
 * log, scoped to the caller's organisation).
 *
 * Fastify's router prefers a static segment over a parameter, so `/api/logs/v1/emails/<id>` reaches
 * the email handler and never the record log's `:log_id` (tested in test/http/logs.test.ts).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { registerPagedList } from './paged-list.js';
import { Type } from 'typebox';
import type { EmailLog, Stores } from '../../store/types.js';
import { principalOf } from '../context.js';
import { notFound } from '../errors.js';
import { API_SECURITY, EmailLogSchema, RecordLogSchema, routeSchema, type EmailLogBody } from '../schemas.js';

/** Longest id accepted in a path. */
export const MAX_ID_LENGTH = 255;

const IdParam = Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH });
const security = API_SECURITY;

/** The email log as the API shows it (every field of the spec, in the spec's order). */
export function emailLogBody(log: EmailLog): EmailLogBody {
  return {
    id: log.id,
    messageId: log.messageId,
    organizationId: log.organizationId,
    domainId: log.domainId,
    fromEmail: log.fromEmail,
    fromName: log.fromName,
    toEmails: log.toEmails,
    ccEmails: log.ccEmails,
    bccEmails: log.bccEmails,
    replyTo: log.replyTo,
    subject: log.subject,
    textBody: log.textBody,
    htmlBody: log.htmlBody,
    status: log.status,
    errorMessage: log.errorMessage,
    provider: log.provider,
    size: log.size,
    headers: log.headers,
    sentAt: log.sentAt,
    deliveredAt: log.deliveredAt,
    failedAt: log.failedAt,
    createdAt: log.createdAt,
    updatedAt: log.updatedAt,
    events: log.events.map((e) => ({ id: e.id, type: e.type, metadata: e.metadata, createdAt: e.createdAt })),
  };
}

/** The principal of an authenticated route (the auth hook guarantees one): in context.ts, named here for the routes that take it from this module. */
export { principalOf } from '../context.js';

/** Options of the log routes. */
export interface LogRouteOptions {
  stores: Stores;
}

/** The log routes. */
export const logRoutes: FastifyPluginAsyncTypebox<LogRouteOptions> = async (app, { stores }) => {
  const common = { tags: ['logs'], security };
  registerPagedList(app, {
    path: '/api/logs/v1/emails',
    audit: { service: 'logs', resource: 'email_log' },
    tag: 'logs',
    summary: 'List email logs (newest first)',
    security,
    key: 'emails',
    item: EmailLogSchema,
    event: 'email.list',
    list: (organizationId, page) => stores.emailLogs.list(organizationId, page),
    body: emailLogBody,
  });

  app.get(
    '/api/logs/v1/emails/:id',
    {
      config: { audit: { service: 'logs', resource: 'email_log', verb: 'view', past: 'viewed', idParam: 'id' } },
      schema: routeSchema(common, 'Get email log details', EmailLogSchema, { description: 'One email log with its events in lifecycle order (createdAt ascending).', params: Type.Object({ id: IdParam }) }),
    },
    async (request) => {
      const log = await stores.emailLogs.get(principalOf(request).organizationId, request.params.id);
      if (!log) throw notFound('Email log', request.params.id);
      request.auditEmail = { id: log.id, messageId: log.messageId, status: log.status };
      return emailLogBody(log);
    },
  );

  app.get(
    '/api/logs/v1/:log_id',
    {
      config: { audit: { service: 'logs', resource: 'record_log', verb: 'view', past: 'viewed', idParam: 'log_id' } },
      schema: routeSchema(common, 'Get log', RecordLogSchema, {
        description: "One record of the audit trail, by the uuid a response carried in its x-log-id header. Only your organisation's records are visible.",
        params: Type.Object({ log_id: IdParam }),
      }),
    },
    async (request) => {
      const record = await stores.recordLogs.get(principalOf(request).organizationId, request.params.log_id);
      if (!record) throw notFound('Log', request.params.log_id);
      return record;
    },
  );
};
