/**
 * Alert channels: where an organisation's alerts go (a signed webhook, Slack, Microsoft Teams,
 * email) and which events each takes, under `/api/tools/v1/spoof-checker/alert-channels`.
 * Organisation-scoped (another organisation's channel is not found). The work is the alert
 * service's (src/jobs/monitors/alerts.ts): these routes validate, call it and shape the answers. A
 * channel's target is never shown again after it is given (only its host), nor a webhook's secret
 * after the 201.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { ALERT_TEST_COOLDOWN_MS, MAX_ALERT_CHANNEL_NAME_LENGTH, MAX_ALERT_RULE_DOMAINS, MAX_ALERT_URL_LENGTH, type AlertChannelRefusal, type AlertService } from '../../jobs/monitors/alerts.js';
import { MAX_ADDRESS_LENGTH, MAX_ALERT_RECIPIENTS } from '../../jobs/monitors/alert-email.js';
import { ALERT_CHANNEL_KINDS, ALERT_EVENT_KINDS, type AlertChannel } from '../../store/alerts.js';
import type { AuditSpec } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { API_SECURITY, COMMON_ERROR_STATUSES, errorResponses, routeSchema } from '../schemas.js';
import { principalOf } from './logs.js';

/** Where the alert channel routes live. */
export const ALERT_CHANNELS_PATH = '/api/tools/v1/spoof-checker/alert-channels';

const audit = (verb: string, past: string, idParam?: string): AuditSpec => ({ service: 'tools', resource: 'alert_channel', verb, past, ...(idParam ? { idParam } : {}) });

const AttemptSchema = Type.Object({
  at: Type.String({ format: 'date-time' }),
  outcome: Type.Enum(['delivered', 'http-error', 'smtp-error', 'timeout', 'network-error', 'refused-address']),
  statusCode: Type.Union([Type.Integer(), Type.Null()], { description: 'The receiver\'s HTTP status, or the relay\'s SMTP reply code' }),
  durationMs: Type.Number(),
  detail: Type.String(),
});

const EventsField = Type.Array(Type.Enum([...ALERT_EVENT_KINDS]), {
  minItems: 1,
  maxItems: ALERT_EVENT_KINDS.length,
  uniqueItems: true,
  description:
    'The kinds of confirmed change sent to the channel (default: all): authentication (verdict, DMARC, SPF, DKIM, MX, findings), availability (could not check, domain gone), transport, bimi, dnssec, reports (unauthorised senders, a pass-rate drop), lookalikes (newly registered, gaining mail, grade rising)',
});
const DomainsField = Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: MAX_ALERT_RULE_DOMAINS, description: 'Only these domains (empty or left out: every domain of the organisation)' });
const UrlField = Type.String({ minLength: 1, maxLength: MAX_ALERT_URL_LENGTH, format: 'uri', description: 'webhook, slack, teams: where the alert is POSTed (a Slack incoming-webhook URL, a Teams Workflows webhook URL); a host that resolves to a private or reserved address is refused' });
const RecipientsField = Type.Array(Type.String({ minLength: 3, maxLength: MAX_ADDRESS_LENGTH }), { minItems: 1, maxItems: MAX_ALERT_RECIPIENTS, description: 'email: the addresses alerts are sent to' });

const CreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: MAX_ALERT_CHANNEL_NAME_LENGTH, examples: ['#security on Slack'] }),
    kind: Type.Enum([...ALERT_CHANNEL_KINDS]),
    url: Type.Optional(UrlField),
    recipients: Type.Optional(RecipientsField),
    events: Type.Optional(EventsField),
    domains: Type.Optional(DomainsField),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const PatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_ALERT_CHANNEL_NAME_LENGTH })),
    url: Type.Optional(UrlField),
    recipients: Type.Optional(RecipientsField),
    events: Type.Optional(EventsField),
    domains: Type.Optional(DomainsField),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
const TestBody = Type.Object({ domain: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'The domain the test alert names (default: the first of the rule, else example.com)' })) }, { additionalProperties: false });
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });

/** A channel as the API shows it: never its target URL or secret, only the target's host. */
export const AlertChannelSchema = Type.Object({
  object: Type.Literal('alert_channel'),
  id: Type.String(),
  name: Type.String(),
  kind: Type.Enum([...ALERT_CHANNEL_KINDS]),
  targetHost: Type.Union([Type.String(), Type.Null()], { description: 'The host of the target URL (the URL itself is a credential and is not shown)' }),
  recipients: Type.Array(Type.String()),
  rules: Type.Object({ events: Type.Array(Type.Enum([...ALERT_EVENT_KINDS])), domains: Type.Array(Type.String()) }),
  enabled: Type.Boolean(),
  lastTest: Type.Union([AttemptSchema, Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
type AlertChannelBody = Static<typeof AlertChannelSchema>;

/** A channel as the API shows it. */
export function alertChannelBody(channel: AlertChannel): AlertChannelBody {
  return {
    object: 'alert_channel',
    id: channel.id,
    name: channel.name,
    kind: channel.kind,
    targetHost: channel.targetHost,
    recipients: channel.recipients,
    rules: channel.rules,
    enabled: channel.enabled,
    lastTest: channel.lastTest,
    createdAt: channel.createdAt,
    updatedAt: channel.updatedAt,
  };
}

function refusal(refused: AlertChannelRefusal): ApiError {
  switch (refused.kind) {
    case 'invalid':
      return new ApiError('ALERT_CHANNEL_REFUSED', { message: `This alert channel cannot be used: ${refused.message}.` });
    case 'url-refused':
      return new ApiError('ALERT_CHANNEL_REFUSED', { message: `This URL cannot be used: ${refused.message}.` });
    case 'email-not-configured':
      return new ApiError('ALERT_EMAIL_NOT_CONFIGURED', {});
    case 'too-many-channels':
      return new ApiError('ALERT_CHANNEL_LIMIT_REACHED', { message: `Your organisation already has ${refused.max} alert channel(s), the most it may have.` });
  }
}

const isRefusal = (value: unknown): value is AlertChannelRefusal => typeof value === 'object' && value !== null && 'kind' in value && !('object' in value) && !('organizationId' in value);

/** The alert channel routes. */
export const alertRoutes: FastifyPluginAsyncTypebox<{ alerts: AlertService }> = async (app, { alerts }) => {
  const common = { tags: ['alerts'], security: API_SECURITY };
  const errors = errorResponses(...COMMON_ERROR_STATUSES);

  app.post(
    ALERT_CHANNELS_PATH,
    {
      config: { audit: audit('create', 'created') },
      schema: {
        ...common,
        summary: 'Add an alert channel',
        description:
          'Adds a channel where confirmed changes of the organisation\'s monitors are sent: a signed webhook (its secret is returned here, once), Slack (an incoming-webhook URL), Microsoft Teams (a Workflows webhook URL: an Adaptive Card is posted) or email (through the operator\'s relay; 409 ALERT_EMAIL_NOT_CONFIGURED without one). `events` and `domains` are the rules: which changes go to this channel. Every alert goes through the delivery queue (retries for 24 h, every attempt recorded in the monitor\'s deliveries).',
        body: CreateBody,
        response: {
          201: Type.Object({ ...AlertChannelSchema.properties, secret: Type.Union([Type.String(), Type.Null()], { description: 'The signed webhook\'s secret, shown this once (null for the other kinds)' }) }),
          ...errors,
          409: errorResponses(409)[409]!,
        },
      },
    },
    async (request, reply) => {
      const created = await alerts.create(principalOf(request).organizationId, request.body);
      if (!('channel' in created)) throw refusal(created);
      request.auditResourceId = created.channel.id;
      void reply.code(201);
      return { ...alertChannelBody(created.channel), secret: created.secret };
    },
  );

  app.get(
    ALERT_CHANNELS_PATH,
    {
      config: { audit: audit('list', 'listed') },
      schema: {
        ...common,
        summary: 'List the alert channels (oldest first)',
        response: { 200: Type.Object({ channels: Type.Array(AlertChannelSchema), total: Type.Integer(), emailConfigured: Type.Boolean({ description: 'Whether this service can send email alerts' }), event: Type.Literal('alert_channel.list') }), ...errors },
      },
    },
    async (request) => {
      const channels = await alerts.store.listChannels(principalOf(request).organizationId);
      return { channels: channels.map(alertChannelBody), total: channels.length, emailConfigured: alerts.emailConfigured, event: 'alert_channel.list' as const };
    },
  );

  app.get(
    `${ALERT_CHANNELS_PATH}/:id`,
    { config: { audit: audit('view', 'viewed', 'id') }, schema: { ...common, summary: 'Get an alert channel', params: IdParams, response: { 200: AlertChannelSchema, ...errors } } },
    async (request) => {
      const channel = await alerts.store.getChannel(principalOf(request).organizationId, request.params.id);
      if (!channel) throw notFound('Alert channel', request.params.id);
      return alertChannelBody(channel);
    },
  );

  app.patch(
    `${ALERT_CHANNELS_PATH}/:id`,
    {
      config: { audit: audit('update', 'updated', 'id') },
      schema: routeSchema(common, 'Change an alert channel', AlertChannelSchema, { description: 'Changes the name, the target (checked again), the recipients, the rules, or turns the channel off and on. The kind cannot change. A disabled channel gets nothing: its queued alerts fail saying so.', params: IdParams, body: PatchBody }),
    },
    async (request) => {
      const updated = await alerts.update(principalOf(request).organizationId, request.params.id, request.body);
      if (updated === undefined) throw notFound('Alert channel', request.params.id);
      if (isRefusal(updated)) throw refusal(updated);
      return alertChannelBody(updated);
    },
  );

  app.delete(
    `${ALERT_CHANNELS_PATH}/:id`,
    {
      config: { audit: audit('delete', 'deleted', 'id') },
      schema: routeSchema(common, 'Remove an alert channel', Type.Object({ object: Type.Literal('alert_channel'), id: Type.String(), deleted: Type.Literal(true), event: Type.Literal('alert_channel.deleted') }), { description: 'Removes the channel; alerts already queued for it fail saying so, and nothing is sent to it again.', params: IdParams }),
    },
    async (request) => {
      if (!(await alerts.store.deleteChannel(principalOf(request).organizationId, request.params.id))) throw notFound('Alert channel', request.params.id);
      return { object: 'alert_channel' as const, id: request.params.id, deleted: true as const, event: 'alert_channel.deleted' as const };
    },
  );

  app.post(
    `${ALERT_CHANNELS_PATH}/:id/test`,
    {
      config: { audit: audit('test', 'tested', 'id') },
      schema: {
        ...common,
        summary: 'Send a test alert',
        description:
          'Sends a test alert to the channel now, through the same sender, address guard and timeout as real alerts, and answers with the outcome (200 whether or not it was delivered: `attempt.outcome` says). The outcome is kept as the channel\'s `lastTest`. A channel may be tested once every 10 seconds (429 RATE_LIMITED with Retry-After).',
        params: IdParams,
        body: Type.Optional(TestBody),
        response: { 200: Type.Object({ object: Type.Literal('alert_test'), channelId: Type.String(), delivered: Type.Boolean(), attempt: AttemptSchema }), ...errors, 429: errorResponses(429)[429]! },
      },
    },
    async (request) => {
      const attempt = await alerts.sendTest(principalOf(request).organizationId, request.params.id, request.body?.domain);
      if (attempt === undefined) throw notFound('Alert channel', request.params.id);
      if ('retryAfterSeconds' in attempt) {
        throw new ApiError('RATE_LIMITED', {
          message: 'This channel was tested a moment ago.',
          why: `A channel may be tested once every ${ALERT_TEST_COOLDOWN_MS / 1000} seconds.`,
          fix: `Wait ${attempt.retryAfterSeconds} second(s) before testing it again.`,
          retryAfter: attempt.retryAfterSeconds,
        });
      }
      return { object: 'alert_test' as const, channelId: request.params.id, delivered: attempt.outcome === 'delivered', attempt };
    },
  );
};
