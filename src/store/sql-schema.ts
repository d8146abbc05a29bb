/**
 * The tables of the SQL stores (SQLite and PostgreSQL), as Kysely sees them. Created by the
 * migrations in src/store/migrations.ts; the two must change together.
 *
 * Portable choices, so that one query layer serves both databases:
 * - timestamps are ISO 8601 UTC text (they sort as dates, exactly as in the memory store);
 * - booleans are integers 0/1 (node:sqlite cannot bind a boolean);
 * - nested values (owners, variables, content, headers…) are JSON text;
 * - append-only documents (email logs, record logs) are one JSON column plus the indexed columns
 *   the queries filter and order on.
 */
import type { Generated } from 'kysely';
import type { DnsRecord } from './domains.js';
import type { AsColumns } from './sql-values.js';

/** A boolean as stored: 0 or 1. */
export type SqlBoolean = number;

export interface OrganizationsTable {
  id: string;
  name: string;
}

export interface ApiKeysTable {
  id: string;
  organization_id: string;
  /** SHA-256 of the key (32 bytes); the key itself is never stored. */
  sha256: Buffer;
  /** JSON KeyOwner. */
  owner: string;
}

export interface EmailLogsTable {
  id: string;
  organization_id: string;
  created_at: string;
  /** The whole EmailLog as JSON. */
  document: string;
}

export interface RecordLogsTable {
  uuid: string;
  /** Null for a request without a valid key: such a record is readable by nobody. */
  organization_id: string | null;
  created_at: string;
  /** The whole RecordLog as JSON. */
  document: string;
}

export interface TemplatesTable {
  id: string;
  organization_id: string;
  name: string;
  description: string | null;
  subject: string | null;
  from_email: string | null;
  reply_to: string | null;
  preview_text: string | null;
  status: string;
  current_version: number | null;
  /** JSON TemplateVariable[]. */
  variables: string;
  created_at: string;
  updated_at: string;
}

export interface TemplateVersionsTable {
  id: string;
  template_id: string;
  version: number;
  name: string;
  is_major: SqlBoolean;
  subject: string | null;
  from_email: string | null;
  reply_to: string | null;
  preview_text: string | null;
  description: string | null;
  /** JSON unknown[]. */
  content: string;
  /** JSON TemplateVariable[]. */
  variables: string;
  rendered_html: string | null;
  created_by_user_id: string;
  /** JSON KeyOwner. */
  created_by: string;
  created_at: string;
  draft_number: number | null;
  publish_number: number | null;
}

export interface DomainsTable {
  id: string;
  organization_id: string;
  domain: string;
  status: string;
  user_verified_domain: SqlBoolean;
  system_verified: SqlBoolean;
  custom_return_path: string | null;
  tracking_subdomain: string | null;
  is_click_tracking_enabled: SqlBoolean;
  is_open_tracking_enabled: SqlBoolean;
  tls: string;
  is_tracking_domain: SqlBoolean;
  is_sending_email_enabled: SqlBoolean;
  is_receiving_email_enabled: SqlBoolean;
  verification_failed_reason: string | null;
  last_verified_at: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

/** A DNS record's row: the record's fields under their column names, and its place. */
export interface DnsRecordsTable extends AsColumns<DnsRecord> {
  domain_id: string;
  /** The record's place in its domain's list (the order the API shows). */
  position: number;
}

export interface ContactGroupsTable {
  id: string;
  organization_id: string;
  name: string;
}

export interface ContactChannelsTable {
  id: string;
  organization_id: string;
  name: string;
  default_subscription: string;
}

export interface ContactsTable {
  id: string;
  organization_id: string;
  email: string;
  /**
   * `email` lowercased by JavaScript (full Unicode, as the memory store compares): SQL's lower() is
   * ASCII-only in SQLite and under COLLATE "C".
   */
  email_lower: string;
  first_name: string | null;
  last_name: string | null;
  status: string;
  /** JSON Record<string, string>. */
  properties: string;
  /** JSON string[]. */
  group_ids: string;
  /** JSON Record<channelId, 'enrolled' | 'unenrolled'>. */
  enrolments: string;
  suppression_reason: string | null;
  suppressed_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Every table of the SQL stores. */
export interface StoreDatabase {
  organizations: OrganizationsTable;
  api_keys: ApiKeysTable;
  email_logs: EmailLogsTable;
  record_logs: RecordLogsTable;
  templates: TemplatesTable;
  template_versions: TemplateVersionsTable;
  domains: DomainsTable;
  dns_records: DnsRecordsTable;
  contact_groups: ContactGroupsTable;
  contact_channels: ContactChannelsTable;
  contacts: ContactsTable;
}

// `Generated` is re-exported for tables that later migrations add with database-assigned columns.
export type { Generated };
