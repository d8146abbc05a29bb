/**
 * The seed file: organisations with their API keys, email logs, templates (with versions), domains
 * (with DNS records) and contacts (with groups and channels), loaded into the stores at start.
 *
 * The format is documented in the README (The HTTP service). It is nested by organisation, so that every row's
 * tenant is visible at a glance; ids must be unique within each kind of resource across the file.
 * The file is validated as a whole before anything is stored: an error names the JSON path of the
 * first bad values (`/organizations/0/domains/1/tls must be one of …`).
 */
import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { readJsonFile } from '@spoof-checker/engine';
import { apiKeyWeakness, STRONG_KEY_ADVICE } from './api-key-strength.js';
import { apiKeyIdFromDigest, digestApiKey } from './api-keys.js';
import { summarizeSchemaErrors } from './schema-errors.js';
import type { Domain, EmailLog, Stores, Template, TemplateVersion } from './types.js';

/** ISO 8601 in UTC with a `Z`, as every timestamp of the API. */
const TIMESTAMP_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?Z$';
const Timestamp = Type.String({ pattern: TIMESTAMP_PATTERN });
const Id = Type.String({ minLength: 1, maxLength: 255 });
const NullableString = Type.Optional(Type.Union([Type.String(), Type.Null()]));
const NullableTimestamp = Type.Optional(Type.Union([Timestamp, Type.Null()]));
const Strict = { additionalProperties: false } as const;

const KeyOwnerSeed = Type.Object({ id: Id, name: Type.String(), email: Type.String(), image: Type.String() }, Strict);

const ApiKeySeed = Type.Object(
  {
    id: Type.Optional(Id),
    /** The key in clear (demo files); hashed on load and never kept. */
    key: Type.Optional(Type.String({ minLength: 16, maxLength: 512 })),
    /** Or its SHA-256 digest in hex, for files that must not hold the key. */
    sha256: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
    owner: Type.Optional(KeyOwnerSeed),
  },
  Strict,
);

const EmailEventSeed = Type.Object(
  { id: Id, type: Type.String(), metadata: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])), createdAt: Timestamp },
  Strict,
);

const EmailLogSeed = Type.Object(
  {
    id: Id,
    messageId: Type.String(),
    domainId: Type.String(),
    fromEmail: Type.String(),
    fromName: NullableString,
    toEmails: Type.Array(Type.String()),
    ccEmails: Type.Optional(Type.Array(Type.String())),
    bccEmails: Type.Optional(Type.Array(Type.String())),
    replyTo: NullableString,
    subject: Type.String(),
    textBody: NullableString,
    htmlBody: NullableString,
    status: Type.String(),
    errorMessage: NullableString,
    provider: NullableString,
    size: Type.Number({ minimum: 0 }),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    sentAt: NullableTimestamp,
    deliveredAt: NullableTimestamp,
    failedAt: NullableTimestamp,
    createdAt: Timestamp,
    updatedAt: Timestamp,
    events: Type.Optional(Type.Array(EmailEventSeed)),
  },
  Strict,
);

const VariableSeed = Type.Object(
  { name: Type.String({ minLength: 1 }), type: Type.Enum(['string', 'number']), defaultValue: Type.Union([Type.String(), Type.Null()]) },
  Strict,
);

const TemplateVersionSeed = Type.Object(
  {
    id: Id,
    version: Type.Integer({ minimum: 1 }),
    name: Type.String({ maxLength: 255 }),
    isMajor: Type.Boolean(),
    subject: NullableString,
    fromEmail: NullableString,
    replyTo: NullableString,
    previewText: NullableString,
    description: NullableString,
    content: Type.Array(Type.Unknown()),
    variables: Type.Optional(Type.Array(VariableSeed)),
    renderedHtml: NullableString,
    createdBy: KeyOwnerSeed,
    createdAt: Timestamp,
    draftNumber: Type.Optional(Type.Integer({ minimum: 1 })),
    publishNumber: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  Strict,
);

const TemplateSeed = Type.Object(
  {
    id: Id,
    name: Type.String(),
    description: NullableString,
    subject: NullableString,
    fromEmail: NullableString,
    replyTo: NullableString,
    previewText: NullableString,
    variables: Type.Optional(Type.Array(VariableSeed)),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    versions: Type.Optional(Type.Array(TemplateVersionSeed)),
  },
  Strict,
);

const DnsRecordSeed = Type.Object(
  {
    id: Id,
    recordType: Type.String(),
    recordTypeName: Type.String(),
    domain: Type.String(),
    name: Type.String(),
    value: Type.String(),
    ttl: Type.String(),
    priority: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
    status: Type.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    deletedAt: NullableTimestamp,
  },
  Strict,
);

const DomainSeed = Type.Object(
  {
    id: Id,
    domain: Type.String({ minLength: 1, maxLength: 253 }),
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
    dnsRecords: Type.Optional(Type.Array(DnsRecordSeed)),
    lastVerifiedAt: NullableTimestamp,
    createdAt: Timestamp,
    updatedAt: Timestamp,
    deletedAt: NullableTimestamp,
  },
  Strict,
);

const GroupSeed = Type.Object({ id: Id, name: Type.String() }, Strict);
const ChannelSeed = Type.Object({ id: Id, name: Type.String(), defaultSubscription: Type.Enum(['opt_in', 'opt_out']) }, Strict);

const ContactSeed = Type.Object(
  {
    id: Id,
    email: Type.String({ minLength: 3 }),
    firstName: NullableString,
    lastName: NullableString,
    status: Type.Enum(['subscribed', 'unsubscribed', 'blocked']),
    properties: Type.Optional(Type.Record(Type.String(), Type.String())),
    groupIds: Type.Optional(Type.Array(Id)),
    enrolments: Type.Optional(Type.Record(Type.String(), Type.Enum(['enrolled', 'unenrolled']))),
    suppressionReason: NullableString,
    suppressedAt: NullableTimestamp,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  Strict,
);

const OrganizationSeed = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9_.-]+$' }),
    name: Type.String({ minLength: 1 }),
    apiKeys: Type.Optional(Type.Array(ApiKeySeed)),
    emailLogs: Type.Optional(Type.Array(EmailLogSeed)),
    templates: Type.Optional(Type.Array(TemplateSeed)),
    domains: Type.Optional(Type.Array(DomainSeed)),
    contactGroups: Type.Optional(Type.Array(GroupSeed)),
    contactChannels: Type.Optional(Type.Array(ChannelSeed)),
    contacts: Type.Optional(Type.Array(ContactSeed)),
  },
  Strict,
);

/** The JSON Schema of a seed file. */
export const SeedSchema = Type.Object(
  { $schema: Type.Optional(Type.String()), description: Type.Optional(Type.String()), organizations: Type.Array(OrganizationSeed) },
  Strict,
);

/** A validated seed file. */
export type Seed = Static<typeof SeedSchema>;

const checkSeed = Compile(SeedSchema);

/** Why a seed could not be loaded. `message` names the file and the JSON path of the bad value. */
export class SeedError extends Error {
  override readonly name = 'SeedError' as const;
}

/** How a seed is read. */
export interface SeedOptions {
  /**
   * Accept keys in clear that are too weak (`apiKeyWeakness`): only `serve --demo` sets it, for the
   * demo seed's published keys (which the API then accepts on loopback only). Default false.
   */
  allowWeakKeys?: boolean;
}

/**
 * Validates `data` (a parsed seed file) as a whole: the schema, then the cross-references the
 * schema cannot express (unique ids, exactly one of `key`/`sha256`, groups and channels known to
 * the contact's organisation, version numbers unique per template), and that every key given in
 * clear is strong (unless `options.allowWeakKeys`). Throws `SeedError`.
 */
export function parseSeed(data: unknown, source = 'seed', options: SeedOptions = {}): Seed {
  if (!checkSeed.Check(data)) {
    throw new SeedError(`${source}: ${summarizeSchemaErrors([...checkSeed.Errors(data)], data, '')}`);
  }
  const seed = data;
  const seen = new Map<string, string>();
  const unique = (kind: string, id: string, path: string): void => {
    const key = `${kind}\u0000${id}`;
    const first = seen.get(key);
    if (first !== undefined) throw new SeedError(`${source}: ${path} repeats the ${kind} id "${id}" already used at ${first}`);
    seen.set(key, path);
  };
  seed.organizations.forEach((org, o) => {
    const at = `/organizations/${o}`;
    unique('organization', org.id, `${at}/id`);
    org.apiKeys?.forEach((key, k) => {
      if ((key.key === undefined) === (key.sha256 === undefined)) {
        throw new SeedError(`${source}: ${at}/apiKeys/${k} must have exactly one of "key" and "sha256"`);
      }
      if (key.id !== undefined) unique('API key', key.id, `${at}/apiKeys/${k}/id`);
      const weakness = key.key !== undefined && !options.allowWeakKeys ? apiKeyWeakness(key.key) : null;
      if (weakness !== null) throw new SeedError(`${source}: ${at}/apiKeys/${k}/key is too weak: ${weakness}. ${STRONG_KEY_ADVICE} (weak keys, such as the published demo keys, load only with 'serve --demo', and work on loopback only).`);
    });
    org.emailLogs?.forEach((log, i) => {
      unique('email log', log.id, `${at}/emailLogs/${i}/id`);
      log.events?.forEach((event, e) => unique('email event', event.id, `${at}/emailLogs/${i}/events/${e}/id`));
    });
    org.templates?.forEach((template, t) => {
      unique('template', template.id, `${at}/templates/${t}/id`);
      const versions = new Set<number>();
      template.versions?.forEach((version, v) => {
        const vat = `${at}/templates/${t}/versions/${v}`;
        unique('template version', version.id, `${vat}/id`);
        if (versions.has(version.version)) throw new SeedError(`${source}: ${vat}/version repeats version ${version.version} of the template`);
        versions.add(version.version);
        const numbered = version.isMajor ? version.publishNumber !== undefined && version.draftNumber === undefined : version.draftNumber !== undefined && version.publishNumber === undefined;
        if (!numbered) {
          throw new SeedError(`${source}: ${vat} must have ${version.isMajor ? '"publishNumber" (it is major)' : '"draftNumber" (it is not major)'} and not the other number`);
        }
      });
    });
    org.domains?.forEach((domain, d) => {
      unique('domain', domain.id, `${at}/domains/${d}/id`);
      domain.dnsRecords?.forEach((record, r) => unique('DNS record', record.id, `${at}/domains/${d}/dnsRecords/${r}/id`));
    });
    const groups = new Set((org.contactGroups ?? []).map((g) => g.id));
    const channels = new Set((org.contactChannels ?? []).map((c) => c.id));
    org.contactGroups?.forEach((group, g) => unique('contact group', group.id, `${at}/contactGroups/${g}/id`));
    org.contactChannels?.forEach((channel, c) => unique('contact channel', channel.id, `${at}/contactChannels/${c}/id`));
    org.contacts?.forEach((contact, c) => {
      unique('contact', contact.id, `${at}/contacts/${c}/id`);
      contact.groupIds?.forEach((id, g) => {
        if (!groups.has(id)) throw new SeedError(`${source}: ${at}/contacts/${c}/groupIds/${g} names the group "${id}", which this organisation does not have`);
      });
      for (const id of Object.keys(contact.enrolments ?? {})) {
        if (!channels.has(id)) throw new SeedError(`${source}: ${at}/contacts/${c}/enrolments names the channel "${id}", which this organisation does not have`);
      }
    });
  });
  return seed;
}

/** Reads, parses and validates a seed file. Throws `SeedError` naming the file (and the JSON path). */
export async function loadSeedFile(path: string, options: SeedOptions = {}): Promise<Seed> {
  let data: unknown;
  try {
    data = await readJsonFile(path, 'seed file');
  } catch (error) {
    throw new SeedError(`${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return parseSeed(data, path, options);
}

/** Puts every row of a validated seed into the stores. Keys given in clear are hashed here. */
export async function applySeed(stores: Stores, seed: Seed): Promise<void> {
  for (const org of seed.organizations) {
    const organizationId = org.id;
    await stores.apiKeys.addOrganization({ id: organizationId, name: org.name });
    for (const key of org.apiKeys ?? []) {
      const sha256 = key.key !== undefined ? digestApiKey(key.key) : Buffer.from(key.sha256 ?? '', 'hex');
      const id = key.id ?? apiKeyIdFromDigest(sha256);
      await stores.apiKeys.addKey({ id, organizationId, sha256, owner: key.owner ?? { id, name: 'API key', email: '', image: '' } });
    }
    for (const log of org.emailLogs ?? []) await stores.emailLogs.add(emailLogFromSeed(log, organizationId));
    for (const template of org.templates ?? []) {
      const { versions, ...rest } = template;
      const majors = (versions ?? []).filter((v) => v.isMajor).sort((a, b) => b.version - a.version);
      const row: Template = {
        ...rest,
        ...nullWhereLeftOut(rest, ['description', 'subject', 'fromEmail', 'replyTo', 'previewText']),
        organizationId,
        variables: rest.variables ?? [],
        status: majors.length > 0 ? 'published' : 'draft',
        currentVersion: majors[0]?.version ?? null,
      };
      await stores.templates.addTemplate(row);
      for (const version of versions ?? []) await stores.templates.addVersion(organizationId, versionFromSeed(version, template.id));
    }
    for (const domain of org.domains ?? []) await stores.domains.add(domainFromSeed(domain, organizationId));
    for (const group of org.contactGroups ?? []) await stores.contacts.addGroup({ ...group, organizationId });
    for (const channel of org.contactChannels ?? []) await stores.contacts.addChannel({ ...channel, organizationId });
    for (const contact of org.contacts ?? []) {
      await stores.contacts.addContact({
        ...contact,
        ...nullWhereLeftOut(contact, ['firstName', 'lastName', 'suppressionReason', 'suppressedAt']),
        organizationId,
        properties: contact.properties ?? {},
        groupIds: contact.groupIds ?? [],
        enrolments: contact.enrolments ?? {},
      });
    }
  }
}

type OrganizationSeedRow = Seed['organizations'][number];

/** Each of `fields` of a seed row, null where the seed leaves it out (the stored shapes spell absence as null). */
function nullWhereLeftOut<T, K extends keyof T & string>(row: T, fields: readonly K[]): { [P in K]: Exclude<T[P], undefined> | null } {
  return Object.fromEntries(fields.map((field) => [field, row[field] ?? null])) as { [P in K]: Exclude<T[P], undefined> | null };
}

function emailLogFromSeed(log: NonNullable<OrganizationSeedRow['emailLogs']>[number], organizationId: string): EmailLog {
  return {
    ...log,
    ...nullWhereLeftOut(log, ['fromName', 'replyTo', 'textBody', 'htmlBody', 'errorMessage', 'provider', 'sentAt', 'deliveredAt', 'failedAt']),
    organizationId,
    ccEmails: log.ccEmails ?? [],
    bccEmails: log.bccEmails ?? [],
    headers: log.headers ?? {},
    events: (log.events ?? []).map((event) => ({ ...event, metadata: event.metadata ?? null })),
  };
}

function versionFromSeed(version: NonNullable<NonNullable<OrganizationSeedRow['templates']>[number]['versions']>[number], templateId: string): TemplateVersion {
  return {
    ...version,
    ...nullWhereLeftOut(version, ['subject', 'fromEmail', 'replyTo', 'previewText', 'description', 'renderedHtml']),
    templateId,
    variables: version.variables ?? [],
    createdByUserId: version.createdBy.id,
  };
}

function domainFromSeed(domain: NonNullable<OrganizationSeedRow['domains']>[number], organizationId: string): Domain {
  return {
    ...domain,
    organizationId,
    customReturnPath: domain.customReturnPath ?? null,
    trackingSubdomain: domain.trackingSubdomain ?? null,
    verificationFailedReason: domain.verificationFailedReason ?? null,
    lastVerifiedAt: domain.lastVerifiedAt ?? null,
    deletedAt: domain.deletedAt ?? null,
    dnsRecords: (domain.dnsRecords ?? []).map((record) => ({ ...record, priority: record.priority ?? null, deletedAt: record.deletedAt ?? null })),
  };
}
