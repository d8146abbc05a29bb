/**
 * The TypeBox schemas of the API's resources: one source for response validation types, for the
 * serializer and for the OpenAPI document. Field names, types and bounds follow
 * `spec/email-service-api.md`; nullability where the spec is silent is documented in the README (The HTTP service).
 */
import { Type, type Static, type TSchema } from 'typebox';
import type { ContactView, DnsRecord, Domain, EmailLog, RecordLog, Template, TemplateVersion } from '../store/types.js';
import { ERROR_CATALOGUE, type ErrorCode } from './errors.js';

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

const FindingSchema = Type.Object({ id: Type.String(), severity: Type.Enum(['critical', 'warning', 'info', 'success']), title: Type.String(), detail: Type.String() });
const NullableInteger = Type.Union([Type.Integer(), Type.Null()]);

const BimiViolationSchema = Type.Object({ rule: Type.String(), line: Type.Integer({ minimum: 1 }), detail: Type.String() });
const BimiFetchFailureSchema = Type.Union([
  Type.Object({
    error: Type.Enum(['dns-failure', 'no-address', 'refused-private', 'unreachable', 'tls-failed', 'cert-expired', 'cert-untrusted', 'cert-name-mismatch', 'redirect', 'http-status', 'content-type', 'too-large', 'timeout', 'http-error', 'bad-url', 'too-many-redirects']),
    httpStatus: NullableInteger,
    detail: Type.String(),
  }),
  Type.Null(),
]);
const ProviderSchema = Type.Object({ eligible: Type.Boolean(), why: Type.String() });

/**
 * `bimi` of a spoof check result (beyond the spec; only with `"checks": ["bimi"]`): the brand logo,
 * as `schema/spoof-check-result.schema.json` describes it (`$defs/BimiResult`).
 */
export const BimiResultSchema = Type.Object(
  {
    grade: Type.Enum(['ready-vmc', 'ready-cmc', 'ready-self-asserted', 'not-ready', 'declined', 'not-published', 'unknown'], {
      description: 'ready-vmc / ready-cmc / ready-self-asserted: every check passes; not-ready: something blocks the logo; declined: l= and a= empty; not-published: no record; unknown: a lookup or fetch failed',
    }),
    selector: Type.String(),
    record: Type.Union([Type.Object({ name: Type.String(), text: Type.String(), at: Type.Enum(['author-domain', 'organizational-domain']) }), Type.Null()]),
    tags: Type.Union([
      Type.Object({ l: Type.String(), a: NullableString, avp: Type.Union([Type.Enum(['brand', 'personal']), Type.Null()]), lps: Type.Union([Type.Array(Type.String()), Type.Null()]), unknown: Type.Array(Type.String()) }),
      Type.Null(),
    ]),
    queries: Type.Array(Type.Object({ name: Type.String(), outcome: Type.Enum(['record', 'none', 'multiple', 'error']), error: Type.Optional(Type.String()) })),
    dmarc: Type.Object({
      eligible: Type.Union([Type.Boolean(), Type.Null()]),
      records: Type.Array(Type.Object({ name: Type.String(), policy: NullableString, p: NullableString, sp: NullableString, pct: NullableInteger, t: Type.Boolean() })),
      blockedBy: Type.Array(Type.Object({ record: Type.String(), reason: Type.Enum(['no-record', 'p-none', 'sp-none', 'quarantine-pct', 't-y', 'multiple']), detail: Type.String() })),
    }),
    logo: Type.Union([
      Type.Object({
        url: Type.String(),
        fetch: BimiFetchFailureSchema,
        bytes: NullableInteger,
        compressed: Type.Boolean(),
        sha256: NullableString,
        title: NullableString,
        viewBox: Type.Union([Type.Array(Type.Number(), { minItems: 4, maxItems: 4 }), Type.Null()]),
        violations: Type.Array(BimiViolationSchema),
        warnings: Type.Array(BimiViolationSchema),
        dataUri: Type.Union([Type.String(), Type.Null()], { description: 'The logo as a data: URI, only when it passed every SVG Tiny PS rule: show it as an image, never inline' }),
      }),
      Type.Null(),
    ]),
    certificate: Type.Union([
      Type.Object({
        url: Type.String(),
        fetch: BimiFetchFailureSchema,
        kind: Type.Union([Type.Enum(['VMC', 'CMC']), Type.Null()]),
        markType: NullableString,
        subject: NullableString,
        issuer: NullableString,
        serial: NullableString,
        notBefore: NullableString,
        notAfter: NullableString,
        daysLeft: NullableInteger,
        chain: Type.Object({ trusted: Type.Boolean(), anchor: NullableString, problems: Type.Array(Type.String()) }),
        bimiEku: Type.Boolean(),
        san: Type.Array(Type.String()),
        sanMatch: Type.Boolean(),
        logotype: Type.Union([Type.Object({ mediaType: Type.String(), hashAlg: Type.String(), hashOk: Type.Boolean() }), Type.Null()]),
        sct: Type.Object({ present: Type.Boolean(), count: Type.Integer() }),
        crl: Type.Object({ present: Type.Boolean(), urls: Type.Array(Type.String()) }),
      }),
      Type.Null(),
    ]),
    providers: Type.Object({ gmail: ProviderSchema, apple: ProviderSchema, yahoo: ProviderSchema }),
    findings: Type.Array(FindingSchema),
    nextSteps: Type.Array(Type.String(), { description: 'What to do, in order: the first is the one to do now' }),
  },
  { description: 'BIMI, graded apart from the verdict (which never depends on it)' },
);

/**
 * `transport` of a spoof check result (beyond the spec; only with `"checks": ["transport"]`): mail
 * sent TO the domain, as `schema/spoof-check-result.schema.json` describes it (`$defs/TransportResult`).
 */
export const TransportResultSchema = Type.Object(
  {
    verdict: Type.Enum(['enforced', 'opportunistic', 'at-risk', 'broken', 'untested', 'no-mail'], {
      description:
        'enforced: MTA-STS enforce, every MX covered and ok; opportunistic: TLS offered, not required; at-risk: some MX offers no TLS; broken: an enforce policy under which compliant senders refuse to deliver; untested: no MX address could be probed (private, unreachable or refused); no-mail: a null MX (RFC 7505), the domain accepts no mail',
    }),
    mtaSts: Type.Object({
      status: Type.Enum(['enforce', 'testing', 'none', 'absent', 'invalid']),
      record: NullableString,
      id: NullableString,
      policy: Type.Union([Type.Object({ mode: Type.Enum(['enforce', 'testing', 'none']), maxAge: Type.Integer(), mx: Type.Array(Type.String()) }), Type.Null()]),
      fetch: Type.Union([
        Type.Object({
          url: Type.String(),
          httpStatus: NullableInteger,
          error: Type.Union([
            Type.Enum(['dns-failure', 'no-address', 'refused-private', 'unreachable', 'tls-failed', 'cert-expired', 'cert-untrusted', 'cert-name-mismatch', 'redirect', 'http-status', 'content-type', 'too-large', 'timeout', 'http-error']),
            Type.Null(),
          ]),
        }),
        Type.Null(),
      ]),
      problems: Type.Array(Type.String()),
    }),
    tlsRpt: Type.Object({ status: Type.Enum(['valid', 'absent', 'invalid']), record: NullableString, rua: Type.Array(Type.String()) }),
    mx: Type.Array(
      Type.Object({
        host: Type.String(),
        preference: Type.Integer(),
        mtaStsCovered: Type.Union([Type.Boolean(), Type.Null()]),
        tlsa: Type.Optional(
          Type.Object({
            status: Type.Enum(['secure', 'insecure', 'bogus', 'indeterminate', 'none', 'not-applicable']),
            records: Type.Array(Type.String()),
            usable: Type.Boolean(),
            rollover: Type.Enum(['current+next', 'current+issuer', 'none']),
          }),
        ),
        addresses: Type.Array(
          Type.Object({
            address: Type.String(),
            outcome: Type.Enum(['ok', 'unreachable', 'no-starttls', 'tls-failed', 'cert-expired', 'cert-untrusted', 'cert-name-mismatch', 'refused-private']),
            addressClass: Type.Enum(['public', 'unspecified', 'loopback', 'private', 'cgnat', 'link-local', 'unique-local', 'multicast', 'documentation', 'reserved', 'invalid'], {
              description: "The address guard's class: only public addresses are probed; for refused-private it says why in one word (documentation, private, loopback…)",
            }),
            tlsVersion: NullableString,
            certificate: Type.Union([
              Type.Object({ subject: Type.String(), san: Type.Array(Type.String()), issuer: Type.String(), notBefore: Type.String(), notAfter: Type.String() }),
              Type.Null(),
            ]),
            dane: Type.Optional(Type.Enum(['match', 'mismatch', 'no-usable-tlsa', 'not-applicable'])),
          }),
        ),
      }),
    ),
    dane: Type.Optional(Type.Enum(['valid', 'partial', 'broken', 'none'], { description: 'DANE (RFC 7672) over every MX; only when DNSSEC was validated' })),
    findings: Type.Array(FindingSchema),
  },
  { description: 'Mail sent to the domain: MTA-STS (RFC 8461), TLS-RPT (RFC 8460), STARTTLS of every MX address; its own verdict' },
);

const DnssecReasonSchema = Type.Object({ code: NullableInteger, text: Type.String() });
const DnssecStatusSchema = Type.Enum(['secure', 'insecure', 'bogus', 'indeterminate']);

/** `dnssec` of a spoof check result: the SPF TXT, `_dmarc` TXT and MX validated from a trust anchor (`$defs/DnssecResult`). */
export const DnssecResultSchema = Type.Object(
  {
    status: Type.Enum(['secure', 'insecure', 'bogus', 'indeterminate', 'not-checked'], {
      description: 'the weakest of the RRsets; not-checked (with the reason) when validation was off or no trust anchor covers the zones',
    }),
    reason: DnssecReasonSchema,
    rrsets: Type.Array(Type.Object({ name: Type.String(), type: Type.Enum(['TXT', 'MX']), status: DnssecStatusSchema, reason: DnssecReasonSchema })),
    signaturesExpire: Type.Union([Type.String(), Type.Null()], { description: 'when the first signature relied on expires (ISO 8601)' }),
  },
  { description: 'DNSSEC (RFC 4033–4035) of the records the verdict rests on; reason.code is the RFC 8914 Extended DNS Error unbound would give. The verdict never depends on it' },
);

/** Spec: "Spoof check result", with `details` an open object. */
export const SpoofCheckResultSchema = Type.Object(
  {
    domain: Type.String(),
    resolvedAt: TimestampSchema,
    source: Type.Enum(['dns', 'fixture-zones'], {
      description:
        'Beyond the spec: where the answers came from. dns: the DNS itself; fixture-zones: zone files loaded in memory (serve --zones, the demo), stand-in records that say nothing about the live domain, even for a real name',
    }),
    responseTimeMs: Type.Number(),
    spoofable: Type.Boolean(),
    verdict: Type.Enum(['spoofable', 'partially_protected', 'protected']),
    headline: Type.String(),
    summary: Type.String(),
    inboxOutcome: Type.Enum(['delivered', 'spam', 'rejected']),
    dmarc: Type.Object({
      published: Type.Boolean(),
      policy: NullableString,
      subdomainPolicy: NullableString,
      percentage: Type.Union([Type.Number(), Type.Null()]),
      rawRecord: NullableString,
    }),
    spf: Type.Object({ published: Type.Boolean(), qualifier: NullableString, lookupCount: Type.Number(), rawRecord: NullableString }),
    dkim: Type.Object({
      published: Type.Union([Type.Boolean(), Type.Null()], { description: 'null when a selector lookup failed and no usable key was found: unknown, not absent' }),
      status: Type.Enum(['ok', 'error'], { description: "'error' when a lookup failed (published is then null)" }),
      selector: NullableString,
      keyLength: Type.Union([Type.Number(), Type.Null()]),
    }),
    mx: Type.Object({
      published: Type.Union([Type.Boolean(), Type.Null()], { description: 'null when the MX lookup failed: unknown, not absent' }),
      status: Type.Enum(['ok', 'error'], { description: "'error' when the MX lookup failed (published is then null)" }),
      provider: NullableString,
    }),
    reasons: Type.Array(
      Type.Object({ id: Type.String(), severity: Type.Enum(['critical', 'warning', 'info', 'success']), title: Type.String(), detail: Type.String() }),
    ),
    nextStep: Type.Object({ title: Type.String(), body: Type.String(), href: Type.String() }),
    subdomainNote: NullableString,
    dnssec: Type.Optional(DnssecResultSchema),
    details: Type.Object(
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
    transport: Type.Optional(TransportResultSchema),
    bimi: Type.Optional(BimiResultSchema),
  },
);

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

export type SpoofCheckResultBody = Static<typeof SpoofCheckResultSchema>;
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
