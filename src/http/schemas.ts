/**
 * The TypeBox schemas of the API's resources: one source for response validation types, for the
 * serializer and for the OpenAPI document. Field names, types and bounds follow
 * `spec/email-service-api.md`; nullability where the spec is silent is documented in the README (The HTTP service).
 */
import { Type, type Static, type TSchema } from 'typebox';
import type { ContactView, DnsRecord, Domain, EmailLog, RecordLog, Template, TemplateVersion } from '../store/types.js';
import type { BimiResult, DnssecResult, SpoofCheckResult, TransportResult } from '@spoof-checker/engine';
import { ERROR_CATALOGUE, type ErrorCode } from './errors.js';
import { ENGINE_RESULT_SCHEMA, inlineDefinitions, resultSchemaFromEngine } from './result-schema.js';

/** Largest page size of every list (spec: Pagination rule 3). */
export const MAX_PAGE_LIMIT = 100;
/** Page size of a list when `limit` is not sent (spec: Pagination rule 3). */
export const DEFAULT_PAGE_LIMIT = 20;
/** The contact list's own default page size (spec: List contacts, query parameters). */
export const CONTACT_LIST_DEFAULT_LIMIT = 100;

/** An ISO 8601 timestamp in UTC. */
export const TimestampSchema = Type.String({ format: 'date-time', description: 'ISO 8601 timestamp in UTC' });
const NullableTimestamp = Type.Union([TimestampSchema, Type.Null()]);
const NullableString = Type.Union([Type.String(), Type.Null()]);
const OpenObject = Type.Record(Type.String(), Type.Unknown());

/** The body of every error response (src/http/errors.ts). */
export const ErrorBodySchema = Type.Object(
  {
    statusCode: Type.Integer(),
    code: Type.Enum(Object.keys(ERROR_CATALOGUE) as ErrorCode[], { description: 'Stable error code' }),
    message: Type.String(),
    why: Type.String(),
    fix: Type.String(),
    query: Type.Optional(
      Type.Object({ name: Type.String(), type: Type.String(), reason: Type.String(), detail: Type.Optional(Type.String()) }, { description: 'The DNS lookup that failed' }),
    ),
    retryAfter: Type.Optional(Type.Integer({ description: 'Seconds to wait before retrying (429 only)' })),
  },
  { $id: 'ErrorBody', additionalProperties: false },
);

/**
 * A route's schema: its tags and security (`common`), its summary, its 200 response beside the
 * catalogue's common errors, and the rest (description, params, body) as given.
 */
export function routeSchema<T extends object>(common: { tags: string[]; security: { [scheme: string]: string[] }[] }, summary: string, ok: TSchema, rest: T) {
  return { ...common, summary, ...rest, response: { 200: ok, ...errorResponses(...COMMON_ERROR_STATUSES) } };
}

/** Response schemas for the given error statuses, each with the catalogue's body. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const codesByStatus = new Map<number, string[]>();
  for (const [code, entry] of Object.entries(ERROR_CATALOGUE)) codesByStatus.set(entry.status, [...(codesByStatus.get(entry.status) ?? []), code]);
  return Object.fromEntries(
    statuses.map((status) => [status, Type.Ref('ErrorBody', { description: `Error: ${(codesByStatus.get(status) ?? []).join(', ')}` })]),
  );
}

/** Both ways of sending the API key (OpenAPI security requirement: either scheme). */
export const API_SECURITY: { [scheme: string]: string[] }[] = [{ bearerAuth: [] }, { apiKeyHeader: [] }];

/** The errors every authenticated route can answer. */
export const COMMON_ERROR_STATUSES = [400, 401, 404, 413, 415, 429, 500] as const;

/** `page` and `limit` of a paginated list (spec: Pagination rules 1–3). */
export function pageQuery(defaultLimit: number) {
  return {
    page: Type.Optional(Type.Integer({ minimum: 1, default: 1, description: 'Page number, counted from 1' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_LIMIT, default: defaultLimit, description: `Page size, 1 to ${MAX_PAGE_LIMIT}` })),
  };
}

/** A count of addresses (IPv6 counts above 2^53 are rounded). */
const AddressCount = Type.Number({ minimum: 0 });
const SharedInfrastructureProvider = Type.Enum(['aws', 'google-cloud', 'azure', 'oracle', 'digitalocean', 'linode', 'github', 'cloudflare', 'fastly', 'akamai']);

/** `details.spf.sharedInfrastructure`: passing SPF addresses in cloud compute, CI runner and CDN edge space (src/ranges/types.ts). */
export const SharedInfrastructureReportSchema = Type.Object(
  {
    severity: Type.Enum(['critical', 'warning', 'none'], { description: 'critical makes an enforcing domain spoofable (finding spf-shared-infrastructure)' }),
    exposures: Type.Array(
      Type.Object({
        provider: SharedInfrastructureProvider,
        providerName: Type.String(),
        service: Type.String({ description: 'As the feed names it: EC2, AzureCloud, actions, edge…' }),
        label: Type.String(),
        kind: Type.Enum(['rent', 'runner', 'edge'], { description: 'rent a fixed address; start a runner anywhere in the pool; relay through an edge' }),
        checkedDomain: Type.String(),
        recordDomain: Type.String(),
        term: Type.String(),
        path: Type.String(),
        ipv4Addresses: AddressCount,
        ipv6Addresses: AddressCount,
        severity: Type.Enum(['critical', 'warning']),
        port25: Type.Object({ policy: Type.Enum(['blocked-until-lifted', 'always-blocked', 'no-raw-sockets', 'not-published']), source: Type.String() }),
      }),
    ),
    maybe: Type.Array(
      Type.Object({
        checkedDomain: Type.String(),
        provider: SharedInfrastructureProvider,
        providerName: Type.String(),
        service: Type.String(),
        label: Type.String(),
        ipv4Addresses: AddressCount,
        ipv6Addresses: AddressCount,
      }),
    ),
    data: Type.Object({ date: Type.String(), ageDays: Type.Integer({ minimum: 0 }), stale: Type.Boolean(), origin: Type.String() }),
  },
  { description: 'What of the SPF pass set lies in shared infrastructure; null when nothing passes, anyone does, or the classification is off' },
);


/**
 * The fields of a spoof check result as the API serializes them: every property of the engine's JSON
 * Schema (src/http/result-schema.ts), so none can be dropped; optional where the engine's are
 * (`dnssec`, and the optional sections `transport` and `bimi`); `details` the API's open object.
 */
const resultFields = (() => {
  const built = resultSchemaFromEngine(
    Type.Object(
      {
        spf: Type.Optional(
          Type.Object(
            { sharedInfrastructure: Type.Optional(Type.Union([SharedInfrastructureReportSchema, Type.Null()])) },
            { additionalProperties: true, description: 'SPF facts: records, lookup tree, pass set, and what of it is shared infrastructure' },
          ),
        ),
      },
      {
        additionalProperties: true,
        description: 'The facts behind the answer (beyond the spec); schema/spoof-check-result.schema.json describes every field',
      },
    ),
  );
  const required = new Set(ENGINE_RESULT_SCHEMA['required'] as string[]);
  const { details } = built.properties;
  // In the engine's order (details before the optional sections), as the OpenAPI document shows them:
  // `details` takes its place in the loop, and keeps it when the spread below gives it its type.
  const fields: Record<string, TSchema> = {};
  for (const [name, schema] of Object.entries(built.properties)) {
    if (name === 'details') fields[name] = details;
    else fields[name] = required.has(name) ? Type.Unsafe(schema as object) : Type.Optional(Type.Unsafe(schema as object));
  }
  return { ...fields, details };
})();

/** `bimi` of a spoof check result (beyond the spec; only with `"checks": ["bimi"]`): the engine's `$defs/BimiResult`. */
export const BimiResultSchema = Type.Unsafe<BimiResult>(inlineDefinitions(ENGINE_RESULT_SCHEMA.$defs['BimiResult'], ENGINE_RESULT_SCHEMA.$defs) as object);

/** `transport` of a spoof check result (beyond the spec; only with `"checks": ["transport"]`): the engine's `$defs/TransportResult`. */
export const TransportResultSchema = Type.Unsafe<TransportResult>(inlineDefinitions(ENGINE_RESULT_SCHEMA.$defs['TransportResult'], ENGINE_RESULT_SCHEMA.$defs) as object);

/** `dnssec` of a spoof check result: the engine's `$defs/DnssecResult`. */
export const DnssecResultSchema = Type.Unsafe<DnssecResult>(inlineDefinitions(ENGINE_RESULT_SCHEMA.$defs['DnssecResult'], ENGINE_RESULT_SCHEMA.$defs) as object);

/** Spec: "Spoof check result", with `details` an open object; every other field from the engine's JSON Schema. */
export const SpoofCheckResultSchema = Type.Object(resultFields);

/** Spec: "Email event". */
export const EmailEventSchema = Type.Object({ id: Type.String(), type: Type.String(), metadata: Type.Union([OpenObject, Type.Null()]), createdAt: TimestampSchema });

/** Spec: "Email log", events in lifecycle order. */
export const EmailLogSchema = Type.Object(
  {
    id: Type.String(),
    messageId: Type.String(),
    organizationId: Type.String(),
    domainId: Type.String(),
    fromEmail: Type.String(),
    fromName: NullableString,
    toEmails: Type.Array(Type.String()),
    ccEmails: Type.Array(Type.String()),
    bccEmails: Type.Array(Type.String()),
    replyTo: NullableString,
    subject: Type.String(),
    textBody: NullableString,
    htmlBody: NullableString,
    status: Type.String(),
    errorMessage: NullableString,
    provider: NullableString,
    size: Type.Number(),
    headers: Type.Record(Type.String(), Type.String()),
    sentAt: NullableTimestamp,
    deliveredAt: NullableTimestamp,
    failedAt: NullableTimestamp,
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
    events: Type.Array(EmailEventSchema),
  },
);

/** Spec: "Record log". */
export const RecordLogSchema = Type.Object(
  {
    uuid: Type.String(),
    event: Type.String(),
    level: Type.Enum(['info', 'warn', 'error']),
    trace_id: Type.String(),
    metadata: Type.Union([OpenObject, Type.Null()]),
    status_code: Type.Integer(),
    created_at: TimestampSchema,
    requestDetails: Type.Union([OpenObject, Type.Null()]),
    request_body: Type.Union([OpenObject, Type.Null()]),
    email: Type.Union([OpenObject, Type.Null()]),
    actor_type: Type.String(),
    actor_id: Type.String(),
    resource_type: Type.String(),
    resource_id: Type.String(),
    service: Type.String(),
    action: Type.String(),
    ip_address: Type.String(),
    user_agent: Type.String(),
    environment: Type.String(),
  },
);

/** Spec: Template version `variables[]`. */
export const TemplateVariableSchema = Type.Object(
  { name: Type.String({ minLength: 1 }), type: Type.Enum(['string', 'number']), defaultValue: Type.Union([Type.String(), Type.Null()]) },
  { additionalProperties: false },
);

const PersonSchema = Type.Object({ id: Type.String(), name: Type.String(), email: Type.String(), image: Type.String() });

/** Spec: "Template version". Exactly one of `draftNumber` and `publishNumber` is present. */
export const TemplateVersionSchema = Type.Object(
  {
    id: Type.String(),
    templateId: Type.String(),
    version: Type.Integer(),
    name: Type.String(),
    isMajor: Type.Boolean(),
    subject: NullableString,
    fromEmail: NullableString,
    replyTo: NullableString,
    previewText: NullableString,
    description: NullableString,
    content: Type.Array(Type.Unknown()),
    variables: Type.Array(TemplateVariableSchema),
    renderedHtml: NullableString,
    createdByUserId: Type.String(),
    createdBy: PersonSchema,
    createdAt: TimestampSchema,
    draftNumber: Type.Optional(Type.Integer()),
    publishNumber: Type.Optional(Type.Integer()),
  },
);

/** A template of the list (its shape is not in the spec; these are the fields a version inherits). */
export const TemplateSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: NullableString,
    subject: NullableString,
    fromEmail: NullableString,
    replyTo: NullableString,
    previewText: NullableString,
    status: Type.Enum(['draft', 'published']),
    currentVersion: Type.Union([Type.Integer(), Type.Null()]),
    variables: Type.Array(TemplateVariableSchema),
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  },
);

/** Spec: "DNS record". */
export const DnsRecordSchema = Type.Object({
  id: Type.String(),
  recordType: Type.String(),
  recordTypeName: Type.String(),
  domain: Type.String(),
  name: Type.String(),
  value: Type.String(),
  ttl: Type.String(),
  priority: Type.Union([Type.Number(), Type.Null()]),
  status: Type.String(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});

const DomainFields = {
  object: Type.Literal('domain'),
  id: Type.String(),
  domain: Type.String(),
  status: Type.String(),
  userVerifiedDomain: Type.Boolean(),
  systemVerified: Type.Boolean(),
  customReturnPath: NullableString,
  trackingSubdomain: NullableString,
  isClickTrackingEnabled: Type.Boolean(),
  isOpenTrackingEnabled: Type.Boolean(),
  tls: Type.Enum(['opportunistic', 'enforced']),
  isTrackingDomain: Type.Boolean(),
  isSendingEmailEnabled: Type.Boolean(),
  isReceivingEmailEnabled: Type.Boolean(),
  verificationFailedReason: NullableString,
  dnsRecords: Type.Array(DnsRecordSchema),
  lastVerifiedAt: NullableTimestamp,
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
};

/** A domain in a list (no `event`: the list carries it). */
export const DomainItemSchema = Type.Object(DomainFields);

/** Spec: "Domain", with the event the operation produced. */
export const DomainSchema = Type.Object({ ...DomainFields, event: Type.String() });

/** Spec: "Contact". */
export const ContactSchema = Type.Object(
  {
    object: Type.Literal('contact'),
    id: Type.String(),
    email: Type.String(),
    firstName: NullableString,
    lastName: NullableString,
    status: Type.Enum(['subscribed', 'unsubscribed', 'blocked']),
    properties: Type.Record(Type.String(), Type.String()),
    groups: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })),
    channels: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), subscription: Type.Enum(['opt_in', 'opt_out']) })),
    suppressionReason: NullableString,
    suppressedAt: NullableTimestamp,
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  },
);

/** What a monitor's check saw, normalised (no timestamps): compared across checks to find changes. */
export const MonitorSnapshotSchema = Type.Object(
  {
    kind: Type.Enum(['checked', 'domain-not-found', 'could-not-check'], {
      description: 'checked: a verdict; domain-not-found: DNS says the domain does not exist; could-not-check: a DNS failure (never read as "record removed")',
    }),
    verdict: Type.Optional(Type.String()),
    inboxOutcome: Type.Optional(Type.String()),
    dmarc: Type.Optional(Type.Object({ status: Type.String(), record: NullableString })),
    spf: Type.Optional(Type.Object({ status: Type.String(), record: NullableString })),
    dkim: Type.Optional(Type.Object({ status: Type.String(), keys: Type.Array(Type.String(), { description: 'selector:outcome of every key found' }) })),
    mx: Type.Optional(Type.Object({ status: Type.String(), hosts: Type.Array(Type.String(), { description: '"<preference> <host>", sorted' }) })),
    findings: Type.Optional(Type.Array(Type.String(), { description: 'Finding ids, sorted' })),
    transport: Type.Optional(Type.Object({ verdict: Type.String() })),
    bimi: Type.Optional(Type.Object({ grade: Type.String(), logoValid: Type.Union([Type.Boolean(), Type.Null()]), certificateExpiring: Type.Boolean() }, { description: 'With checks: ["bimi"]: the BIMI grade, whether the logo validates, whether the certificate is within 30 days of its end' })),
    dnssec: Type.Optional(Type.Object({ status: Type.String(), expiring: Type.Boolean() })),
    reason: Type.Optional(Type.String({ description: 'could-not-check: which lookups failed' })),
  },
  { description: 'The normalised state a check saw' },
);

/** One check's summary (`lastResult`, and each check of the history). */
export const MonitorCheckSummarySchema = Type.Object({
  checkedAt: TimestampSchema,
  outcome: Type.Enum(['checked', 'domain-not-found', 'could-not-check']),
  verdict: NullableString,
  inboxOutcome: NullableString,
  transportVerdict: Type.Union([Type.String(), Type.Null()], { description: 'The transport check verdict, when the monitor asks for checks: ["transport"]' }),
  digest: Type.String({ description: 'SHA-256 of the normalised snapshot: equal digests, same state' }),
  reason: Type.Union([Type.String(), Type.Null()], { description: 'Why the check could not be made (DNS failure)' }),
});

/** A field that changed. */
export const MonitorChangeSchema = Type.Object({ field: Type.String({ examples: ['dmarc.record'] }), before: Type.Unknown(), after: Type.Unknown() });

/** A monitor as the API shows it (never its secret, except once at creation). */
export const MonitorSchema = Type.Object({
  object: Type.Literal('monitor'),
  id: Type.String(),
  domain: Type.String(),
  intervalMinutes: Type.Integer(),
  webhookUrl: NullableString,
  checks: Type.Array(Type.Enum(['transport', 'lookalikes', 'bimi'])),
  state: Type.Object({
    status: Type.Enum(['pending', 'ok', 'confirming', 'could-not-check', 'domain-not-found'], {
      description: 'pending: no successful check yet; ok: the last check agrees with the confirmed state; confirming: a different state was seen and awaits a second check; could-not-check: the last check failed (DNS); domain-not-found: the last check found that the domain does not exist (NXDOMAIN), never ok',
    }),
    confirmedDigest: NullableString,
    confirmedSince: NullableTimestamp,
    consecutiveFailures: Type.Integer(),
  }),
  lastResult: Type.Union([MonitorCheckSummarySchema, Type.Null()]),
  nextRunAt: TimestampSchema,
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});

/** `POST …/monitors` → 201: the monitor and its webhook secret, shown this once. */
export const CreatedMonitorSchema = Type.Object({
  ...MonitorSchema.properties,
  secret: Type.String({ description: 'Signs every webhook (Spoof-Checker-Signature). Shown only in this response: store it now.' }),
});

/** An entry of a monitor's history: a check or a confirmed change. */
export const MonitorHistoryEntrySchema = Type.Object({
  type: Type.Enum(['check', 'change']),
  id: Type.String(),
  at: TimestampSchema,
  check: Type.Optional(MonitorCheckSummarySchema),
  before: Type.Optional(MonitorSnapshotSchema),
  after: Type.Optional(MonitorSnapshotSchema),
  changes: Type.Optional(Type.Array(MonitorChangeSchema)),
  /** A check's normalised snapshot, when its digest differs from the check before. */
  snapshot: Type.Optional(MonitorSnapshotSchema),
});

/** One webhook delivery and its attempts. */
export const WebhookDeliverySchema = Type.Object({
  id: Type.String(),
  eventId: Type.String({ description: 'The change entry the webhook reports' }),
  url: Type.String(),
  status: Type.Enum(['pending', 'delivered', 'failed']),
  attempts: Type.Array(
    Type.Object({
      at: TimestampSchema,
      outcome: Type.Enum(['delivered', 'http-error', 'smtp-error', 'timeout', 'network-error', 'refused-address']),
      statusCode: Type.Union([Type.Integer(), Type.Null()]),
      durationMs: Type.Number(),
      detail: Type.String(),
    }),
  ),
  nextAttemptAt: NullableTimestamp,
  giveUpAt: TimestampSchema,
  redeliveryOf: NullableString,
  channelId: Type.Optional(Type.Union([Type.String({ description: 'The alert channel this delivery goes to (null: the monitor\'s own webhook)' }), Type.Null()])),
  createdAt: TimestampSchema,
});

/** Shared schemas registered with `addSchema` (referenced by `$ref` from routes and OpenAPI). */
export const SHARED_SCHEMAS = [ErrorBodySchema] as const;

export type SpoofCheckResultBody = SpoofCheckResult;
export type EmailLogBody = Static<typeof EmailLogSchema>;
export type RecordLogBody = Static<typeof RecordLogSchema>;
export type TemplateVersionBody = Static<typeof TemplateVersionSchema>;
export type TemplateBody = Static<typeof TemplateSchema>;
export type DomainBody = Static<typeof DomainSchema>;
export type ContactBody = Static<typeof ContactSchema>;
export type MonitorBody = Static<typeof MonitorSchema>;
export type MonitorHistoryEntryBody = Static<typeof MonitorHistoryEntrySchema>;
export type WebhookDeliveryBody = Static<typeof WebhookDeliverySchema>;

// One model per resource: the stores' types (src/store/types.ts) must describe exactly what these
// schemas describe, so a field added to one and not the other fails `npm run typecheck` here.
// (Compared by mutual assignability; the store types are interfaces for their doc comments.)
type SameShape<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
/** Compile-time checks that the API models and the store types agree (no runtime value). */
export type ModelChecks = [
  Holds<SameShape<EmailLogBody, EmailLog>>,
  Holds<SameShape<RecordLogBody, RecordLog>>,
  Holds<SameShape<TemplateVersionBody, TemplateVersion>>,
  Holds<SameShape<TemplateBody, Omit<Template, 'organizationId'>>>,
  Holds<SameShape<Static<typeof DnsRecordSchema>, Omit<DnsRecord, 'deletedAt'>>>,
  // The API shows live DNS records only, without the store's `deletedAt`.
  Holds<SameShape<Static<typeof DomainItemSchema>, Omit<Domain, 'organizationId' | 'deletedAt' | 'dnsRecords'> & { object: 'domain'; dnsRecords: Omit<DnsRecord, 'deletedAt'>[] }>>,
  Holds<SameShape<ContactBody, ContactView & { object: 'contact' }>>,
];
