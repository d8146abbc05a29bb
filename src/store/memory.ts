import { randomUUID } from 'node:crypto';
import { digestsEqual } from './api-keys.js';
import { MemoryBatchStore } from './batches-memory.js';
import { MemoryConsoleStore } from './console-memory.js';
import { MemoryShareLinkStore } from './share-links-memory.js';
import { MemoryLookalikeJobStore } from './lookalike-jobs-memory.js';
import { MemoryMonitorStore } from './monitors-memory.js';
import { MemoryAlertStore } from './alerts-memory.js';
import { MemoryRememberedLookalikeStore } from './remembered-lookalikes-memory.js';
import { MemoryFailureReportStore } from './failure-reports-memory.js';
import { MemoryReportStore } from './reports-memory.js';
import { newestFirst, paginate } from './pagination.js';
import { buildTemplateVersion, nextVersionNumbers } from './template-numbering.js';
import type {
  ApiKeyRecord,
  ApiKeyStore,
  Contact,
  ContactChannel,
  ContactGroup,
  ContactPage,
  ContactQuery,
  ContactStore,
  ContactView,
  Domain,
  DomainPatch,
  DomainStore,
  EmailLog,
  EmailLogStore,
  NewTemplateVersion,
  Organization,
  Page,
  PageRequest,
  RecordLog,
  RecordLogStore,
  Stores,
  Template,
  TemplateStore,
  TemplateVersion,
  Timestamp,
} from './types.js';

// Every read returns a copy, so a caller that edits what it got cannot edit the store behind it.
const copy = <T>(value: T): T => structuredClone(value);

/** Organisations and keys held in memory. Digests are compared against every key, without early exit. */
export class MemoryApiKeyStore implements ApiKeyStore {
  readonly #organizations = new Map<string, Organization>();
  readonly #keys: ApiKeyRecord[] = [];

  async addOrganization(organization: Organization): Promise<void> {
    this.#organizations.set(organization.id, { ...organization });
  }

  async getOrganization(id: string): Promise<Organization | undefined> {
    const found = this.#organizations.get(id);
    return found && { ...found };
  }

  /** How many organisations are stored. */
  get organizationCount(): number {
    return this.#organizations.size;
  }

  /** The ids of every organisation, sorted (report routing, src/store/reports-memory.ts). */
  organizationIds(): string[] {
    return [...this.#organizations.keys()].sort();
  }

  async addKey(key: ApiKeyRecord): Promise<void> {
    if (this.#keys.some((k) => k.id === key.id)) throw new Error(`duplicate API key id "${key.id}"`);
    this.#keys.push({ ...key, sha256: Buffer.from(key.sha256), owner: { ...key.owner } });
  }

  async findByDigest(sha256: Buffer): Promise<ApiKeyRecord | undefined> {
    let match: ApiKeyRecord | undefined;
    // Every stored digest is compared, so the time taken does not tell which key (if any) was close.
    for (const key of this.#keys) {
      if (digestsEqual(key.sha256, sha256) && match === undefined) match = key;
    }
    return match && { ...match, sha256: Buffer.from(match.sha256), owner: { ...match.owner } };
  }

  async hasAnyKey(): Promise<boolean> {
    return this.#keys.length > 0;
  }

  async removeKey(organizationId: string, id: string): Promise<boolean> {
    const index = this.#keys.findIndex((k) => k.id === id && k.organizationId === organizationId);
    if (index === -1) return false;
    this.#keys.splice(index, 1);
    return true;
  }
}

/** Email logs held in memory. */
export class MemoryEmailLogStore implements EmailLogStore {
  readonly #logs = new Map<string, EmailLog>();

  async add(log: EmailLog): Promise<void> {
    this.#logs.set(log.id, copy(log));
  }

  async get(organizationId: string, id: string): Promise<EmailLog | undefined> {
    const log = this.#logs.get(id);
    if (!log || log.organizationId !== organizationId) return undefined;
    return withEventsInOrder(copy(log));
  }

  async list(organizationId: string, page: PageRequest): Promise<Page<EmailLog>> {
    const rows = [...this.#logs.values()].filter((log) => log.organizationId === organizationId).sort(newestFirst);
    const result = paginate(rows, page);
    return { items: result.items.map((log) => withEventsInOrder(copy(log))), total: result.total };
  }
}

/** Events in lifecycle order: `createdAt` ascending, ties kept in the order they were stored. Sorts in place. */
export function withEventsInOrder(log: EmailLog): EmailLog {
  log.events = log.events
    .map((event, index) => ({ event, index }))
    .sort((a, b) => (a.event.createdAt < b.event.createdAt ? -1 : a.event.createdAt > b.event.createdAt ? 1 : a.index - b.index))
    .map(({ event }) => event);
  return log;
}

/**
 * Most record-log entries the memory store keeps: past this the oldest is dropped, so a
 * long-running in-memory service does not grow without bound (the SQL stores prune by age instead).
 */
export const MEMORY_RECORD_LOG_CAPACITY = 10_000;

/**
 * The audit trail held in memory: bounded rings, oldest entries dropped first. Records without an
 * organisation (no valid key) have a ring of their own, so a flood of unauthenticated requests
 * cannot push the organisations' records out.
 */
export class MemoryRecordLogStore implements RecordLogStore {
  // A Map iterates in insertion order, so its first key is always the oldest record.
  readonly #records = new Map<string, { organizationId: string | null; record: RecordLog }>();
  readonly #unattributed = new Map<string, { organizationId: string | null; record: RecordLog }>();
  readonly #capacity: number;

  constructor(capacity: number = MEMORY_RECORD_LOG_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`record log capacity must be a positive integer, got ${capacity}`);
    this.#capacity = capacity;
  }

  async append(organizationId: string | null, record: RecordLog): Promise<void> {
    this.#records.delete(record.uuid);
    this.#unattributed.delete(record.uuid);
    const ring = organizationId === null ? this.#unattributed : this.#records;
    ring.set(record.uuid, { organizationId, record: copy(record) });
    while (ring.size > this.#capacity) {
      const oldest = ring.keys().next().value as string;
      ring.delete(oldest);
    }
  }

  async get(organizationId: string, uuid: string): Promise<RecordLog | undefined> {
    const row = this.#records.get(uuid);
    // A record written without an organisation (no valid key) has no owner and is readable by nobody.
    if (!row || row.organizationId === null || row.organizationId !== organizationId) return undefined;
    return copy(row.record);
  }

  /** How many records are held, with and without an organisation (for tests and diagnostics). */
  get size(): number {
    return this.#records.size + this.#unattributed.size;
  }
}

/** Templates and versions held in memory. */
export class MemoryTemplateStore implements TemplateStore {
  readonly #templates = new Map<string, Template>();
  readonly #versions = new Map<string, TemplateVersion[]>();
  readonly #newId: () => string;

  constructor(newId: () => string = randomUUID) {
    this.#newId = newId;
  }

  async addTemplate(template: Template): Promise<void> {
    this.#templates.set(template.id, copy(template));
    if (!this.#versions.has(template.id)) this.#versions.set(template.id, []);
  }

  async addVersion(organizationId: string, version: TemplateVersion): Promise<void> {
    const template = this.#templates.get(version.templateId);
    if (!template || template.organizationId !== organizationId) {
      throw new Error(`template "${version.templateId}" is not a template of organisation "${organizationId}"`);
    }
    this.#versions.get(version.templateId)?.push(copy(version));
  }

  async getTemplate(organizationId: string, id: string): Promise<Template | undefined> {
    const template = this.#templates.get(id);
    return template && template.organizationId === organizationId ? copy(template) : undefined;
  }

  async listTemplates(organizationId: string, page: PageRequest): Promise<Page<Template>> {
    const rows = [...this.#templates.values()].filter((t) => t.organizationId === organizationId).sort(newestFirst);
    const result = paginate(rows, page);
    return { items: result.items.map(copy), total: result.total };
  }

  async listVersions(organizationId: string, templateId: string): Promise<TemplateVersion[] | undefined> {
    const template = this.#templates.get(templateId);
    if (!template || template.organizationId !== organizationId) return undefined;
    return copy(this.#versions.get(templateId) ?? []).sort((a, b) => a.version - b.version);
  }

  async createVersion(organizationId: string, templateId: string, input: NewTemplateVersion): Promise<TemplateVersion | undefined> {
    // No `await` from here to the push: reading the numbers and storing the version is one step on
    // the event loop, so concurrent creations never see the same highest version.
    const template = this.#templates.get(templateId);
    if (!template || template.organizationId !== organizationId) return undefined;
    const versions = this.#versions.get(templateId) ?? [];
    const isMajor = input.isMajor ?? false;
    const numbers = nextVersionNumbers(versions, isMajor);
    const version = buildTemplateVersion(this.#newId(), template, input, numbers);
    versions.push(copy(version));
    this.#versions.set(templateId, versions);
    if (input.variables) template.variables = copy(input.variables);
    if (isMajor) {
      template.status = 'published';
      template.currentVersion = version.version;
    }
    template.updatedAt = input.createdAt;
    return copy(version);
  }
}

/** Domains held in memory. */
export class MemoryDomainStore implements DomainStore {
  readonly #domains = new Map<string, Domain>();

  async add(domain: Domain): Promise<void> {
    this.#domains.set(domain.id, copy(domain));
  }

  /** Organisations with a live (not deleted) domain named `name`, sorted (report routing). */
  organizationsWithDomain(name: string): string[] {
    const ids = new Set<string>();
    for (const d of this.#domains.values()) if (d.domain === name && d.deletedAt === null) ids.add(d.organizationId);
    return [...ids].sort();
  }

  #live(organizationId: string, id: string): Domain | undefined {
    const domain = this.#domains.get(id);
    if (!domain || domain.organizationId !== organizationId || domain.deletedAt !== null) return undefined;
    return domain;
  }

  async get(organizationId: string, id: string): Promise<Domain | undefined> {
    const domain = this.#live(organizationId, id);
    return domain && withLiveRecords(copy(domain));
  }

  async list(organizationId: string, page: PageRequest): Promise<Page<Domain>> {
    const rows = [...this.#domains.values()]
      .filter((d) => d.organizationId === organizationId && d.deletedAt === null)
      .sort(newestFirst);
    const result = paginate(rows, page);
    return { items: result.items.map((d) => withLiveRecords(copy(d))), total: result.total };
  }

  async update(organizationId: string, id: string, patch: DomainPatch, now: Timestamp): Promise<Domain | undefined> {
    const domain = this.#live(organizationId, id);
    if (!domain) return undefined;
    // Only the fields given change; `updatedAt` is always set.
    if (patch.isClickTrackingEnabled !== undefined) domain.isClickTrackingEnabled = patch.isClickTrackingEnabled;
    if (patch.isOpenTrackingEnabled !== undefined) domain.isOpenTrackingEnabled = patch.isOpenTrackingEnabled;
    if (patch.isSendingEmailEnabled !== undefined) domain.isSendingEmailEnabled = patch.isSendingEmailEnabled;
    if (patch.isReceivingEmailEnabled !== undefined) domain.isReceivingEmailEnabled = patch.isReceivingEmailEnabled;
    if (patch.tls !== undefined) domain.tls = patch.tls;
    domain.updatedAt = now;
    return withLiveRecords(copy(domain));
  }

  async softDelete(organizationId: string, id: string, now: Timestamp): Promise<Domain | undefined> {
    const domain = this.#live(organizationId, id);
    if (!domain) return undefined;
    const removed = domain.dnsRecords.filter((r) => r.deletedAt === null);
    for (const record of removed) {
      record.deletedAt = now;
      record.updatedAt = now;
    }
    domain.deletedAt = now;
    domain.updatedAt = now;
    return { ...copy(domain), dnsRecords: copy(removed) };
  }
}

function withLiveRecords(domain: Domain): Domain {
  domain.dnsRecords = domain.dnsRecords.filter((r) => r.deletedAt === null);
  return domain;
}

/** Contacts, groups and channels held in memory. */
export class MemoryContactStore implements ContactStore {
  readonly #contacts = new Map<string, Contact>();
  readonly #groups = new Map<string, ContactGroup>();
  readonly #channels = new Map<string, ContactChannel>();

  async addGroup(group: ContactGroup): Promise<void> {
    this.#groups.set(group.id, { ...group });
  }

  async addChannel(channel: ContactChannel): Promise<void> {
    this.#channels.set(channel.id, { ...channel });
  }

  async addContact(contact: Contact): Promise<void> {
    this.#contacts.set(contact.id, copy(contact));
  }

  async list(organizationId: string, query: ContactQuery): Promise<ContactPage> {
    const all = [...this.#contacts.values()].filter((c) => c.organizationId === organizationId);
    const search = query.search?.toLowerCase();
    const matching = all
      .filter((c) => (query.status === undefined || c.status === query.status) && (search === undefined || c.email.toLowerCase().includes(search)))
      .sort(newestFirst);
    const page = paginate(matching, query);
    const channels = [...this.#channels.values()]
      .filter((ch) => ch.organizationId === organizationId)
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return {
      items: page.items.map((c) => this.#view(c, channels)),
      total: page.total,
      // Organisation-wide: the filters of the query do not apply (spec: Pagination rule 7).
      totalContacts: all.length,
      subscribedContacts: all.filter((c) => c.status === 'subscribed').length,
      unsubscribedContacts: all.filter((c) => c.status === 'unsubscribed').length,
    };
  }

  #view(contact: Contact, channels: ContactChannel[]): ContactView {
    const { groupIds, enrolments, organizationId, ...rest } = copy(contact);
    return {
      ...rest,
      groups: groupIds.flatMap((id) => {
        const group = this.#groups.get(id);
        return group && group.organizationId === organizationId ? [{ id: group.id, name: group.name }] : [];
      }),
      // Every channel of the organisation: an explicit enrolment wins, otherwise the channel's default.
      channels: channels.map((ch) => {
        const enrolment = enrolments[ch.id];
        const subscription = enrolment === 'enrolled' ? 'opt_in' : enrolment === 'unenrolled' ? 'opt_out' : ch.defaultSubscription;
        return { id: ch.id, name: ch.name, subscription };
      }),
    };
  }
}

/**
 * A fresh set of empty in-memory stores. `newId` names created template versions;
 * `recordLogCapacity` bounds the record log (default {@link MEMORY_RECORD_LOG_CAPACITY}).
 */
export function createMemoryStores(options: { newId?: () => string; recordLogCapacity?: number } = {}): Stores {
  const apiKeys = new MemoryApiKeyStore();
  const domains = new MemoryDomainStore();
  return {
    apiKeys,
    emailLogs: new MemoryEmailLogStore(),
    recordLogs: new MemoryRecordLogStore(options.recordLogCapacity),
    templates: new MemoryTemplateStore(options.newId),
    domains,
    contacts: new MemoryContactStore(),
    batches: new MemoryBatchStore(),
    monitors: new MemoryMonitorStore(),
    reports: new MemoryReportStore(async (domain) => ({ withDomain: domains.organizationsWithDomain(domain), organizations: apiKeys.organizationIds() })),
    lookalikeJobs: new MemoryLookalikeJobStore(),
    alerts: new MemoryAlertStore(),
    rememberedLookalikes: new MemoryRememberedLookalikeStore(),
    failureReports: new MemoryFailureReportStore(),
    console: new MemoryConsoleStore(),
    shareLinks: new MemoryShareLinkStore(),
    // Memory is always reachable; closing has nothing to release.
    health: async () => ({ ok: true }),
    isEmpty: async () => apiKeys.organizationCount === 0,
    close: async () => {},
  };
}
