/**
 * The service's stores composed: one interface per resource, each in its resource's own file
 * (`<resource>.ts`, beside `<resource>-memory.ts` and `<resource>-sql.ts`), re-exported here so
 * that a caller can take every stored shape from one place.
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

import type { ApiKeyStore } from './api-keys.js';
import type { BatchStore } from './batches.js';
import type { ConsoleStore } from './console.js';
import type { ContactStore } from './contacts.js';
import type { DomainStore } from './domains.js';
import type { EmailLogStore } from './email-logs.js';
import type { ShareLinkStore } from './share-links.js';
import type { LookalikeJobStore } from './lookalike-jobs.js';
import type { MonitorStore } from './monitors.js';
import type { AlertStore } from './alerts.js';
import type { RecordLogStore } from './record-logs.js';
import type { RememberedLookalikeStore } from './remembered-lookalikes.js';
import type { FailureReportStore } from './failure-reports.js';
import type { ReportStore } from './reports.js';
import type { TemplateStore } from './templates.js';

// The shapes every resource's store shares (a resource's own file imports them from there, so that
// nothing imports this file back).
export type { Page, PageRequest, Timestamp } from './page-types.js';
// Each resource's stored shapes and store, from its own file.
export type { ApiKeyRecord, ApiKeyStore, KeyOwner, Organization } from './api-keys.js';
export type { EmailEvent, EmailLog, EmailLogStore } from './email-logs.js';
export type { RecordLog, RecordLogStore } from './record-logs.js';
export type { NewTemplateVersion, Template, TemplateStore, TemplateVariable, TemplateVersion } from './templates.js';
export type { DnsRecord, Domain, DomainPatch, DomainStore, TlsMode } from './domains.js';
export type {
  ChannelSubscription,
  Contact,
  ContactChannel,
  ContactGroup,
  ContactPage,
  ContactQuery,
  ContactStatus,
  ContactStore,
  ContactView,
} from './contacts.js';

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
