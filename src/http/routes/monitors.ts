/**
 * Monitors: watched domains, their history and their webhooks, under
 * `/api/tools/v1/spoof-checker/monitors`. Organisation-scoped like every resource (another
 * organisation's monitor is not found). The work (scheduling, checks, deliveries) is the monitor
 * service's (src/jobs/monitors/monitors.ts); these routes validate, call it and shape the answers.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { registerPagedList } from './paged-list.js';
import type { onRequestHookHandler } from 'fastify';
import { Type } from 'typebox';
import { DEFAULT_INTERVAL_MINUTES, MAX_INTERVAL_MINUTES, MIN_INTERVAL_MINUTES } from '../../jobs/monitors/monitor-schedule.js';
import { MAX_WEBHOOK_URL_LENGTH, type MonitorRefusal, type MonitorService } from '../../jobs/monitors/monitors.js';
import type { Monitor, MonitorHistoryEntry, WebhookDelivery } from '../../store/monitors.js';
import type { AuditSpec } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { API_SECURITY, COMMON_ERROR_STATUSES, CreatedMonitorSchema, errorResponses, type MonitorBody, type MonitorHistoryEntryBody, MonitorHistoryEntrySchema, MonitorSchema, routeSchema, type WebhookDeliveryBody, WebhookDeliverySchema } from '../schemas.js';
import { principalOf } from './logs.js';

/** Where the monitor routes live. */
export const MONITORS_PATH = '/api/tools/v1/spoof-checker/monitors';

const audit = (verb: string, past: string, idParam?: string): AuditSpec => ({ service: 'tools', resource: 'monitor', verb, past, ...(idParam ? { idParam } : {}) });

const IntervalField = Type.Integer({
  minimum: MIN_INTERVAL_MINUTES,
  maximum: MAX_INTERVAL_MINUTES,
  description: `Minutes between checks, ${MIN_INTERVAL_MINUTES} to ${MAX_INTERVAL_MINUTES} (default ${DEFAULT_INTERVAL_MINUTES}, once a day); start times are spread over the interval`,
});
const WebhookField = Type.Union([Type.String({ minLength: 1, maxLength: MAX_WEBHOOK_URL_LENGTH, format: 'uri' }), Type.Null()], {
  description: 'Where confirmed changes are POSTed (signed); a host that resolves to a private or reserved address is refused',
});
const ChecksField = Type.Array(Type.Enum(['transport', 'lookalikes', 'bimi']), {
  maxItems: 3,
  uniqueItems: true,
  description:
    'Extra checks: "transport" adds the transport verdict to what is compared; "lookalikes" adds the graded lookalike domains, and a webhook is sent when one appears or its grade rises; "bimi" the BIMI grade, whether the logo validates and whether the mark certificate is within 30 days of its end (each change alerts)',
});

const CreateBody = Type.Object(
  {
    domain: Type.String({ minLength: 1, maxLength: 255, description: 'The domain to watch (a URL or an address gives its domain)', examples: ['example.com'] }),
    intervalMinutes: Type.Optional(IntervalField),
    webhookUrl: Type.Optional(WebhookField),
    checks: Type.Optional(ChecksField),
  },
  { additionalProperties: false },
);
const PatchBody = Type.Object(
  { intervalMinutes: Type.Optional(IntervalField), webhookUrl: Type.Optional(WebhookField), checks: Type.Optional(ChecksField) },
  { additionalProperties: false, minProperties: 1 },
);
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
const DeliveryParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }), deliveryId: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });

/** A monitor as the API shows it: never its secret. */
export function monitorBody(monitor: Monitor): MonitorBody {
  const { machine } = monitor;
  const last = monitor.lastResult;
  const status =
    last === null
      ? 'pending'
      : last.outcome === 'could-not-check'
        ? 'could-not-check'
        : // A domain that does not exist is never "ok", however many checks agree that it does not.
          last.outcome === 'domain-not-found'
          ? 'domain-not-found'
          : machine.candidate !== null
            ? 'confirming'
            : machine.confirmed === null
              ? 'pending'
              : 'ok';
  return {
    object: 'monitor',
    id: monitor.id,
    domain: monitor.domain,
    intervalMinutes: monitor.intervalMinutes,
    webhookUrl: monitor.webhookUrl,
    checks: monitor.checks,
    state: {
      status,
      confirmedDigest: machine.confirmed?.digest ?? null,
      confirmedSince: machine.confirmed?.since ?? null,
      consecutiveFailures: machine.consecutiveFailures,
    },
    lastResult: last,
    nextRunAt: monitor.nextRunAt,
    createdAt: monitor.createdAt,
    updatedAt: monitor.updatedAt,
  };
}

/** A history entry as the API shows it. */
export function historyEntryBody(entry: MonitorHistoryEntry): MonitorHistoryEntryBody {
  if (entry.type === 'check') return { type: 'check', id: entry.id, at: entry.at, check: entry.summary, ...(entry.snapshot ? { snapshot: entry.snapshot } : {}) };
  return { type: 'change', id: entry.id, at: entry.at, before: entry.before, after: entry.after, changes: entry.changes };
}

/** A delivery as the API shows it (the body it sends is the change entry's). */
export function deliveryBody(delivery: WebhookDelivery): WebhookDeliveryBody {
  return {
    id: delivery.id,
    eventId: delivery.eventId,
    url: delivery.url,
    status: delivery.status,
    attempts: delivery.attempts,
    nextAttemptAt: delivery.nextAttemptAt,
    giveUpAt: delivery.giveUpAt,
    redeliveryOf: delivery.redeliveryOf,
    channelId: delivery.channelId ?? null,
    createdAt: delivery.createdAt,
  };
}

function refusal(refused: MonitorRefusal): ApiError {
  switch (refused.kind) {
    case 'invalid-domain':
      return new ApiError('INVALID_DOMAIN', { message: refused.message, fix: refused.fix });
    case 'duplicate-domain':
      return new ApiError('MONITOR_EXISTS', {
        message: refused.existingId === undefined ? `Your organisation already monitors ${refused.domain}.` : `Your organisation already monitors ${refused.domain}: monitor ${refused.existingId}.`,
        fix:
          refused.existingId === undefined
            ? 'Change the existing monitor with PATCH (find its id with GET …/monitors), or delete it first.'
            : `Change monitor ${refused.existingId} with PATCH ${MONITORS_PATH}/${refused.existingId}, or delete it first.`,
      });
    case 'webhook-refused':
      return new ApiError('WEBHOOK_URL_REFUSED', { message: `This webhook URL cannot be used: ${refused.message}` });
    case 'too-many-monitors':
      return new ApiError('MONITOR_LIMIT_REACHED', {
        message: `Your organisation already has ${refused.max} monitor(s), the most it may have.`,
        why: `Each organisation may keep at most ${refused.max} monitor(s) (SPOOF_CHECKER_MAX_MONITORS).`,
      });
    case 'no-webhook':
      return new ApiError('NO_WEBHOOK_URL', { message: `Monitor ${refused.monitorId} has no webhook URL: it was removed (webhookUrl: null), so there is nowhere to redeliver to.` });
  }
}

const isRefusal = (value: unknown): value is MonitorRefusal => typeof value === 'object' && value !== null && 'kind' in value;

/** Options of the monitor routes. */
export interface MonitorRouteOptions {
  monitors: MonitorService;
  /**
   * The transport check's limiter (per client address): a run of a monitor with the transport check
   * opens the same SMTP and HTTPS connections as a transport check, so it spends the same budget.
   */
  transportLimiter?: onRequestHookHandler | undefined;
}

/** The monitor routes. */
export const monitorRoutes: FastifyPluginAsyncTypebox<MonitorRouteOptions> = async (app, { monitors, transportLimiter }) => {
  const common = { tags: ['monitors'], security: API_SECURITY };
  const errors = errorResponses(...COMMON_ERROR_STATUSES);

  app.post(
    MONITORS_PATH,
    {
      config: { audit: audit('create', 'created') },
      schema: {
        ...common,
        summary: 'Watch a domain',
        description:
          'Creates a monitor: the domain is checked every intervalMinutes, and a confirmed change (two checks in a row agree) is POSTed to webhookUrl, signed with the secret returned here, once. A second monitor of the same domain in your organisation is a 409 (MONITOR_EXISTS), and so is a monitor past the organisation\'s cap (MONITOR_LIMIT_REACHED, 1,000 by default). Creating, changing, deleting, running and redelivering count against the organisation\'s write limit (429 with Retry-After).',
        body: CreateBody,
        response: { 201: CreatedMonitorSchema, ...errors, 409: errorResponses(409)[409]! },
      },
    },
    async (request, reply) => {
      request.auditResourceId = request.body.domain;
      const created = await monitors.create(principalOf(request).organizationId, request.body);
      if (isRefusal(created)) throw refusal(created);
      request.auditResourceId = created.monitor.id;
      void reply.code(201);
      return { ...monitorBody(created.monitor), secret: created.secret };
    },
  );

  registerPagedList(app, {
    path: MONITORS_PATH,
    audit: audit('list', 'listed'),
    tag: 'monitors',
    security: API_SECURITY,
    summary: 'List monitors (newest first)',
    key: 'monitors',
    item: MonitorSchema,
    event: 'monitor.list',
    list: (organizationId, page) => monitors.store.list(organizationId, page),
    body: monitorBody,
  });

  app.get(
    `${MONITORS_PATH}/:id`,
    {
      config: { audit: audit('view', 'viewed', 'id') },
      schema: { ...common, summary: 'Get a monitor, with its state and last result', params: IdParams, response: { 200: MonitorSchema, ...errors } },
    },
    async (request) => {
      const monitor = await monitors.store.get(principalOf(request).organizationId, request.params.id);
      if (!monitor) throw notFound('Monitor', request.params.id);
      return monitorBody(monitor);
    },
  );

  app.patch(
    `${MONITORS_PATH}/:id`,
    {
      config: { audit: audit('update', 'updated', 'id') },
      schema: routeSchema(common, 'Change a monitor', MonitorSchema, { description: 'Changes the interval, the webhook URL (checked again; the secret stays) or the extra checks. The domain cannot change: delete and create.', params: IdParams, body: PatchBody }),
    },
    async (request) => {
      const updated = await monitors.update(principalOf(request).organizationId, request.params.id, request.body);
      if (updated === undefined) throw notFound('Monitor', request.params.id);
      if (isRefusal(updated)) throw refusal(updated);
      return monitorBody(updated);
    },
  );

  app.delete(
    `${MONITORS_PATH}/:id`,
    {
      config: { audit: audit('delete', 'deleted', 'id') },
      schema: routeSchema(common, 'Stop watching a domain', Type.Object({ object: Type.Literal('monitor'), id: Type.String(), deleted: Type.Literal(true), event: Type.Literal('monitor.deleted') }), { description: 'Deletes the monitor, its schedule, its history and its deliveries.', params: IdParams }),
    },
    async (request) => {
      if (!(await monitors.delete(principalOf(request).organizationId, request.params.id))) throw notFound('Monitor', request.params.id);
      return { object: 'monitor' as const, id: request.params.id, deleted: true as const, event: 'monitor.deleted' as const };
    },
  );

  app.post(
    `${MONITORS_PATH}/:id/run`,
    {
      config: { audit: audit('run', 'run', 'id') },
      // One budget for every path that probes (issue 29): a run with the transport check counts
      // against the transport check's limit, as POST /api/tools/v1/spoof-checker with "checks": ["transport"] does.
      preHandler: async function transportLimit(request, reply) {
        if (!transportLimiter) return;
        const monitor = await monitors.store.get(principalOf(request).organizationId, request.params.id);
        if (monitor?.checks.includes('transport')) await (transportLimiter as unknown as (this: unknown, req: typeof request, rep: typeof reply) => Promise<void>).call(this, request, reply);
      },
      schema: {
        ...common,
        summary: 'Check a monitored domain now',
        description:
          'Queues a check at once (202); its result lands in the history, and counts towards confirming a change like any scheduled check. A monitor with the transport check spends the transport check\'s budget (the same counter as POST /api/tools/v1/spoof-checker with "checks": ["transport"]; 429 with Retry-After past it).',
        params: IdParams,
        response: { 202: Type.Object({ monitorId: Type.String(), runId: Type.String(), status: Type.Literal('queued') }), ...errors },
      },
    },
    async (request, reply) => {
      const runId = await monitors.runNow(principalOf(request).organizationId, request.params.id);
      if (runId === undefined) throw notFound('Monitor', request.params.id);
      void reply.code(202);
      return { monitorId: request.params.id, runId, status: 'queued' as const };
    },
  );

  registerPagedList(app, {
    path: `${MONITORS_PATH}/:id/history`,
    audit: audit('view_history', 'viewed_history', 'id'),
    tag: 'monitors',
    security: API_SECURITY,
    summary: 'A monitor’s checks and changes (newest first)',
    description: 'Every check (time, verdict, transport verdict when asked, the digest and snapshot of what was seen) and every confirmed change, newest first. Kept as long as the record log (--retention-days).',
    params: IdParams,
    owner: 'Monitor',
    key: 'history',
    item: MonitorHistoryEntrySchema,
    event: 'monitor.history',
    list: (organizationId, page, params) => monitors.store.history(organizationId, params['id']!, page),
    body: historyEntryBody,
  });

  registerPagedList(app, {
    path: `${MONITORS_PATH}/:id/deliveries`,
    audit: audit('view_deliveries', 'viewed_deliveries', 'id'),
    tag: 'monitors',
    security: API_SECURITY,
    summary: 'A monitor’s webhook deliveries and every attempt (newest first)',
    params: IdParams,
    owner: 'Monitor',
    key: 'deliveries',
    item: WebhookDeliverySchema,
    event: 'monitor.deliveries',
    list: (organizationId, page, params) => monitors.store.deliveries(organizationId, params['id']!, page),
    body: deliveryBody,
  });

  app.post(
    `${MONITORS_PATH}/:id/deliveries/:deliveryId/redeliver`,
    {
      config: { audit: audit('redeliver', 'redelivered', 'id') },
      schema: {
        ...common,
        summary: 'Send a webhook again',
        description:
          "Queues a new delivery of the same body (signed anew) to the monitor's current webhook URL; 202 with the new delivery. A monitor whose URL was removed (webhookUrl: null) answers 409 NO_WEBHOOK_URL: the old URL is never used again.",
        params: DeliveryParams,
        response: { 202: WebhookDeliverySchema, ...errors, 409: errorResponses(409)[409]! },
      },
    },
    async (request, reply) => {
      const delivery = await monitors.redeliver(principalOf(request).organizationId, request.params.id, request.params.deliveryId);
      if (delivery === undefined) throw notFound('Delivery', request.params.deliveryId);
      if (isRefusal(delivery)) throw refusal(delivery);
      void reply.code(202);
      return deliveryBody(delivery);
    },
  );
};
