/**
 * The service's resources as they are stored, and one store interface per resource.
 *
 * Every interface is async (Promise-returning) so that a database-backed store can replace the
 * in-memory one without touching the routes. Every read and write is scoped by `organizationId`:
 * a store never returns a row of another organisation, and an id of another organisation is
 * indistinguishable from an id that does not exist.
 *
 * Field names and types follow `spec/email-service-api.md`. Where the spec is silent on whether a
 * field may be null, fields that are often absent (bodies, optional addresses, timestamps of events
 * that have not happened) are `string | null`; the rest are always present.
 */

import type { BatchStore } from './batches.js';
import type { ConsoleStore } from './console.js';
import type { ShareLinkStore } from './share-links.js';
import type { LookalikeJobStore } from './lookalike-jobs.js';
import type { MonitorStore } from './monitors.js';
import type { AlertStore } from './alerts.js';
import type { RememberedLookalikeStore } from './remembered-lookalikes.js';
import type { FailureReportStore } from './failure-reports.js';
import type { ReportStore } from './reports.js';

// The shapes every resource's store shares (a resource's own file imports them from there, so that
// nothing imports this file back).
export type { Page, PageRequest, Timestamp } from './page-types.js';
import type { Page, PageRequest, Timestamp } from './page-types.js';

/** An organisation: the unit of tenancy. Every other resource belongs to exactly one. */
export interface Organization {
  id: string;
  name: string;
}

/** The person shown as the author of what an API key creates (`createdBy` of a template version). */
export interface KeyOwner {
  id: string;
  name: string;
  email: string;
  image: string;
}

/**
 * An API key as stored: never the key itself, only its SHA-256 digest. `id` is public (it is the
 * `actor_id` of the record log); the key is secret.
 */
export interface ApiKeyRecord {
  id: string;
  organizationId: string;
  /** SHA-256 of the key's UTF-8 bytes (32 bytes). */
  sha256: Buffer;
  owner: KeyOwner;
}

/** One entry of an email's lifecycle (spec: "Email event"). */
export interface EmailEvent {
  id: string;
  type: string;
  metadata: Record<string, unknown> | null;
  createdAt: Timestamp;
}

/** The log of one sent email (spec: "Email log"). */
export interface EmailLog {
  id: string;
  messageId: string;
  organizationId: string;
  domainId: string;
  fromEmail: string;
  fromName: string | null;
  toEmails: string[];
  ccEmails: string[];
  bccEmails: string[];
  replyTo: string | null;
  subject: string;
  textBody: string | null;
  htmlBody: string | null;
  status: string;
  errorMessage: string | null;
  provider: string | null;
  size: number;
  headers: Record<string, string>;
  sentAt: Timestamp | null;
  deliveredAt: Timestamp | null;
  failedAt: Timestamp | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  /** In lifecycle order: `createdAt` ascending. */
  events: EmailEvent[];
}

/** One audit record of an API request (spec: "Record log"). Field names as the spec spells them. */
export interface RecordLog {
  uuid: string;
  event: string;
  level: 'info' | 'warn' | 'error';
  trace_id: string;
  metadata: Record<string, unknown> | null;
  status_code: number;
  created_at: Timestamp;
  requestDetails: Record<string, unknown> | null;
  request_body: Record<string, unknown> | null;
  email: Record<string, unknown> | null;
  actor_type: string;
  actor_id: string;
  resource_type: string;
  resource_id: string;
  service: string;
  action: string;
  ip_address: string;
  user_agent: string;
  environment: string;
}

/** A template variable (spec: Template version `variables`). */
export interface TemplateVariable {
  name: string;
  type: 'string' | 'number';
  defaultValue: string | null;
}

/** An email template: the parent of its versions. Its fields are what a new version inherits. */
export interface Template {
  id: string;
  organizationId: string;
  name: string;
  description: string | null;
  subject: string | null;
  fromEmail: string | null;
  replyTo: string | null;
  previewText: string | null;
  /** `published` once a major version exists. */
  status: 'draft' | 'published';
  /** The `version` of the latest major version, null while there is none. */
  currentVersion: number | null;
  variables: TemplateVariable[];
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

/** One version of a template (spec: "Template version"). Exactly one of the two numbers is set. */
export interface TemplateVersion {
  id: string;
  templateId: string;
  version: number;
  name: string;
  isMajor: boolean;
  subject: string | null;
  fromEmail: string | null;
  replyTo: string | null;
  previewText: string | null;
  description: string | null;
  content: unknown[];
  variables: TemplateVariable[];
  renderedHtml: string | null;
  createdByUserId: string;
  createdBy: KeyOwner;
  createdAt: Timestamp;
  draftNumber?: number;
  publishNumber?: number;
}

/** What a caller supplies to create a version; the store assigns the numbers and the defaults. */
export interface NewTemplateVersion {
  content: unknown[];
  subject?: string;
  fromEmail?: string;
  replyTo?: string;
  previewText?: string;
  description?: string;
  name?: string;
  isMajor?: boolean;
  renderedHtml?: string;
  variables?: TemplateVariable[];
  createdBy: KeyOwner;
  createdAt: Timestamp;
}

/** A DNS record the service asks the domain's owner to publish (spec: "DNS record"). */
export interface DnsRecord {
  id: string;
  recordType: string;
  recordTypeName: string;
  domain: string;
  name: string;
  value: string;
  ttl: string;
  priority: number | null;
  status: string;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  deletedAt: Timestamp | null;
}

/** TLS mode of a sending domain (spec: Domain `tls`). */
export type TlsMode = 'opportunistic' | 'enforced';

/** A sending domain as stored (spec: "Domain", without `object` and `event`, plus `deletedAt`). */
export interface Domain {
  id: string;
  organizationId: string;
  domain: string;
  status: string;
  userVerifiedDomain: boolean;
  systemVerified: boolean;
  customReturnPath: string | null;
  trackingSubdomain: string | null;
  isClickTrackingEnabled: boolean;
  isOpenTrackingEnabled: boolean;
  tls: TlsMode;
  isTrackingDomain: boolean;
  isSendingEmailEnabled: boolean;
  isReceivingEmailEnabled: boolean;
  verificationFailedReason: string | null;
  dnsRecords: DnsRecord[];
  lastVerifiedAt: Timestamp | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  /** Set by a soft delete; a deleted domain is invisible to every read. */
  deletedAt: Timestamp | null;
}

/** The fields a domain update may change (all optional: only those given change). */
export interface DomainPatch {
  isClickTrackingEnabled?: boolean;
  isOpenTrackingEnabled?: boolean;
  isSendingEmailEnabled?: boolean;
  isReceivingEmailEnabled?: boolean;
  tls?: TlsMode;
}

/** Contact status (spec: Contact `status`). */
export type ContactStatus = 'subscribed' | 'unsubscribed' | 'blocked';

/** A channel subscription as the API shows it. */
export type ChannelSubscription = 'opt_in' | 'opt_out';

/** A contact group. */
export interface ContactGroup {
  id: string;
  organizationId: string;
  name: string;
}

/** A channel (a kind of mail a contact may subscribe to), with the subscription of contacts not enrolled. */
export interface ContactChannel {
  id: string;
  organizationId: string;
  name: string;
  defaultSubscription: ChannelSubscription;
}

/** A contact as stored: group ids and explicit channel enrolments, resolved into names on read. */
export interface Contact {
  id: string;
  organizationId: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  status: ContactStatus;
  properties: Record<string, string>;
  groupIds: string[];
  /** Explicit enrolments by channel id; a channel not listed gives its default subscription. */
  enrolments: Record<string, 'enrolled' | 'unenrolled'>;
  suppressionReason: string | null;
  suppressedAt: Timestamp | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

/** A contact as the list shows it: groups and every channel of the organisation resolved. */
export interface ContactView extends Omit<Contact, 'groupIds' | 'enrolments' | 'organizationId'> {
  groups: { id: string; name: string }[];
  channels: { id: string; name: string; subscription: ChannelSubscription }[];
}


/** The contact list query: pagination plus filters. */
export interface ContactQuery extends PageRequest {
  /** Case-insensitive substring of the email. */
  search?: string;
  status?: ContactStatus;
}

/** One page of contacts plus the organisation-wide counts (spec: Pagination rule 7). */
export interface ContactPage extends Page<ContactView> {
  totalContacts: number;
  subscribedContacts: number;
  unsubscribedContacts: number;
}

/** Organisations and their API keys. */
export interface ApiKeyStore {
  addOrganization(organization: Organization): Promise<void>;
  getOrganization(id: string): Promise<Organization | undefined>;
  addKey(key: ApiKeyRecord): Promise<void>;
  /**
   * The key whose digest equals `sha256`, or undefined. Timing reveals nothing usable: the memory
   * store compares in constant time against every stored digest (no early exit); the SQL stores
   * look the digest up by index (an attacker cannot choose digest prefixes, so where a lookup stops
   * tells them nothing) and confirm the match in constant time.
   */
  findByDigest(sha256: Buffer): Promise<ApiKeyRecord | undefined>;
  /** Whether any API key is stored (`serve` says how to add one when none is). */
  hasAnyKey(): Promise<boolean>;
  /** Deletes the organisation's key `id` (the console's revoke); false when it is not the organisation's. */
  removeKey(organizationId: string, id: string): Promise<boolean>;
}

/** Email logs. */
export interface EmailLogStore {
  add(log: EmailLog): Promise<void>;
  /** The log with its events in lifecycle order, or undefined (unknown id or another organisation's). */
  get(organizationId: string, id: string): Promise<EmailLog | undefined>;
  /** Newest first (`createdAt` descending). */
  list(organizationId: string, page: PageRequest): Promise<Page<EmailLog>>;
}

/** The audit trail. A record without an organisation (unauthenticated request) is readable by nobody. */
export interface RecordLogStore {
  append(organizationId: string | null, record: RecordLog): Promise<void>;
  get(organizationId: string, uuid: string): Promise<RecordLog | undefined>;
}

/** Templates and their versions. */
export interface TemplateStore {
  addTemplate(template: Template): Promise<void>;
  addVersion(organizationId: string, version: TemplateVersion): Promise<void>;
  getTemplate(organizationId: string, id: string): Promise<Template | undefined>;
  /** Newest first (`createdAt` descending). */
  listTemplates(organizationId: string, page: PageRequest): Promise<Page<Template>>;
  listVersions(organizationId: string, templateId: string): Promise<TemplateVersion[] | undefined>;
  /**
   * Creates a version, assigning `version`, `draftNumber`/`publishNumber` and the default name
   * atomically (two concurrent calls never share a number). Undefined when the template is unknown
   * to this organisation.
   */
  createVersion(organizationId: string, templateId: string, input: NewTemplateVersion): Promise<TemplateVersion | undefined>;
}

/** Sending domains and their DNS records. */
export interface DomainStore {
  add(domain: Domain): Promise<void>;
  /** A non-deleted domain, its DNS records filtered to the non-deleted ones. */
  get(organizationId: string, id: string): Promise<Domain | undefined>;
  /** Non-deleted domains, newest first. */
  list(organizationId: string, page: PageRequest): Promise<Page<Domain>>;
  /** Applies the fields given and sets `updatedAt`; undefined if not found (or deleted). */
  update(organizationId: string, id: string, patch: DomainPatch, now: Timestamp): Promise<Domain | undefined>;
  /**
   * Soft delete: sets `deletedAt` and `updatedAt` on the domain and on its live DNS records.
   * Returns the domain as deleted, with the records that the deletion removed; undefined if not found.
   */
  softDelete(organizationId: string, id: string, now: Timestamp): Promise<Domain | undefined>;
}

/** Contacts with their groups and channels. */
export interface ContactStore {
  addGroup(group: ContactGroup): Promise<void>;
  addChannel(channel: ContactChannel): Promise<void>;
  addContact(contact: Contact): Promise<void>;
  /** Filtered, newest first, with the organisation-wide unfiltered counts. */
  list(organizationId: string, query: ContactQuery): Promise<ContactPage>;
}

/** Every store the HTTP service needs. */
export interface Stores {
  apiKeys: ApiKeyStore;
  emailLogs: EmailLogStore;
  recordLogs: RecordLogStore;
  templates: TemplateStore;
  domains: DomainStore;
  contacts: ContactStore;
  /** Batch checks: batches, their names and result rows (src/store/batches.ts). */
  batches: BatchStore;
  /** Monitors: watched domains, their history and webhook deliveries (src/store/monitors.ts). */
  monitors: MonitorStore;
  /** DMARC aggregate and TLS reports received, their duplicates and refused files (src/store/reports.ts). */
  reports: ReportStore;
  /** Deep lookalike runs as jobs: their progress and reports (src/store/lookalike-jobs.ts). */
  lookalikeJobs: LookalikeJobStore;
  /** Alert channels and their rules (src/store/alerts.ts). */
  alerts: AlertStore;
  /** The lookalikes each monitor remembers (src/store/remembered-lookalikes.ts). */
  rememberedLookalikes: RememberedLookalikeStore;
  /** Failure reports (RFC 6591), headers only (src/store/failure-reports.ts). */
  failureReports: FailureReportStore;
  /** The console: users, memberships, invitations, sessions, failed sign-ins, key names, latest results (src/store/console.ts). */
  console: ConsoleStore;
  /** Read-only links to a domain's report dashboard (src/store/share-links.ts); without it the console makes none. */
  shareLinks?: ShareLinkStore;
  /**
   * Whether the store can serve requests now (a cheap round trip to the database; always ok in
   * memory). Never throws: an unreachable database is `{ ok: false, reason }`.
   */
  health(): Promise<StoreHealth>;
  /** True when no organisation is stored yet (a seed is applied only then). */
  isEmpty(): Promise<boolean>;
  /** Releases the database (closes the pool or file). Idempotent; no call may follow it. */
  close(): Promise<void>;
}

/** The answer of {@link Stores.health}. */
export type StoreHealth = { ok: true } | { ok: false; reason: string };
