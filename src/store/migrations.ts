/**
 * Schema migrations of the SQL stores: forward-only, versioned, run at start by Kysely's Migrator
 * (which records each applied name in the `spoof_checker_migrations` table and, on PostgreSQL,
 * holds an advisory lock so that replicas starting together migrate once).
 *
 * To change the schema, add an entry to MIGRATIONS with the next number (`0002_…`); never edit or
 * remove an entry that has shipped. A migration gets the dialect's column types from
 * {@link MigrationContext}, so one definition serves SQLite and PostgreSQL.
 */
import { sql, type Kysely } from 'kysely';
import { type Migration, type MigrationProvider, Migrator } from 'kysely/migration';
import { createBatchTables } from './batches-sql.js';
import { createConsoleTables } from './console-sql.js';
import type { MigrationContext, MigrationFactory, SqlDialectName } from './migration-types.js';
import { createLookalikeJobTables } from './lookalike-jobs-sql.js';
import { createAlertTables } from './alerts-sql.js';
import { createShareLinkTables } from './share-links-sql.js';
import { createMonitorTables } from './monitors-sql.js';
import { createReportDigestTables, createReportIdentityBase, createReportTables } from './reports-sql.js';

// The shapes a migration is written against (in their own module, so that the modules that define
// tables — batches-sql.ts — import them without importing this list of migrations back).
export type { MigrationContext, MigrationFactory, SqlDialectName } from './migration-types.js';

/** Where Kysely records the applied migrations. */
export const MIGRATION_TABLE = 'spoof_checker_migrations';
/** Kysely's lock table for MIGRATION_TABLE. */
export const MIGRATION_LOCK_TABLE = 'spoof_checker_migrations_lock';

/** Every migration, by name; applied in name order. */
export const MIGRATIONS: Readonly<Record<string, MigrationFactory>> = {
  '0001_initial': ({ text, bytes }) => ({
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('organizations')
        .addColumn('id', text, (c) => c.primaryKey())
        .addColumn('name', text, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', text, (c) => c.primaryKey())
        .addColumn('organization_id', text, (c) => c.notNull())
        .addColumn('sha256', bytes, (c) => c.notNull().unique())
        .addColumn('owner', text, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('email_logs')
        .addColumn('id', text, (c) => c.primaryKey())
        .addColumn('organization_id', text, (c) => c.notNull())
        .addColumn('created_at', text, (c) => c.notNull())
        .addColumn('document', text, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('email_logs_by_organization').on('email_logs').columns(['organization_id', 'created_at', 'id']).execute();

      await db.schema
        .createTable('record_logs')
        .addColumn('uuid', text, (c) => c.primaryKey())
        .addColumn('organization_id', text)
        .addColumn('created_at', text, (c) => c.notNull())
        .addColumn('document', text, (c) => c.notNull())
        .execute();
      // Retention deletes the oldest first.
      await db.schema.createIndex('record_logs_by_age').on('record_logs').column('created_at').execute();

      await db.schema
        .createTable('templates')
        .addColumn('id', text, (c) => c.primaryKey())
        .addColumn('organization_id', text, (c) => c.notNull())
        .addColumn('name', text, (c) => c.notNull())
        .addColumn('description', text)
        .addColumn('subject', text)
        .addColumn('from_email', text)
        .addColumn('reply_to', text)
        .addColumn('preview_text', text)
        .addColumn('status', text, (c) => c.notNull())
        .addColumn('current_version', 'integer')
        .addColumn('variables', text, (c) => c.notNull())
        .addColumn('created_at', text, (c) => c.notNull())
        .addColumn('updated_at', text, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('templates_by_organization').on('templates').columns(['organization_id', 'created_at', 'id']).execute();

      await db.schema
        .createTable('template_versions')
        .addColumn('id', text, (c) => c.primaryKey())
        .addColumn('template_id', text, (c) => c.notNull().references('templates.id'))
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('name', text, (c) => c.notNull())
        .addColumn('is_major', 'integer', (c) => c.notNull())
        .addColumn('subject', text)
        .addColumn('from_email', text)
        .addColumn('reply_to', text)
        .addColumn('preview_text', text)
        .addColumn('description', text)
        .addColumn('content', text, (c) => c.notNull())
        .addColumn('variables', text, (c) => c.notNull())
        .addColumn('rendered_html', text)
        .addColumn('created_by_user_id', text, (c) => c.notNull())
        .addColumn('created_by', text, (c) => c.notNull())
        .addColumn('created_at', text, (c) => c.notNull())
        .addColumn('draft_number', 'integer')
        .addColumn('publish_number', 'integer')
        // Two versions of one template never share a number, whatever process wrote them.
        .addUniqueConstraint('template_versions_unique_number', ['template_id', 'version'])
        .execute();

      await db.schema
        .createTable('domains')
        .addColumn('id', text, (c) => c.primaryKey())
        .addColumn('organization_id', text, (c) => c.notNull())
        .addColumn('domain', text, (c) => c.notNull())
        .addColumn('status', text, (c) => c.notNull())
        .addColumn('user_verified_domain', 'integer', (c) => c.notNull())
        .addColumn('system_verified', 'integer', (c) => c.notNull())
        .addColumn('custom_return_path', text)
        .addColumn('tracking_subdomain', text)
        .addColumn('is_click_tracking_enabled', 'integer', (c) => c.notNull())
        .addColumn('is_open_tracking_enabled', 'integer', (c) => c.notNull())
        .addColumn('tls', text, (c) => c.notNull())
        .addColumn('is_tracking_domain', 'integer', (c) => c.notNull())
        .addColumn('is_sending_email_enabled', 'integer', (c) => c.notNull())
        .addColumn('is_receiving_email_enabled', 'integer', (c) => c.notNull())
        .addColumn('verification_failed_reason', text)
        .addColumn('last_verified_at', text)
        .addColumn('created_at', text, (c) => c.notNull())
        .addColumn('updated_at', text, (c) => c.notNull())
        .addColumn('deleted_at', text)
        .execute();
      await db.schema.createIndex('domains_by_organization').on('domains').columns(['organization_id', 'created_at', 'id']).execute();

      await db.schema
        .createTable('dns_records')
        .addColumn('id', text, (c) => c.primaryKey())
        .addColumn('domain_id', text, (c) => c.notNull().references('domains.id'))
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('record_type', text, (c) => c.notNull())
        .addColumn('record_type_name', text, (c) => c.notNull())
        .addColumn('domain', text, (c) => c.notNull())
        .addColumn('name', text, (c) => c.notNull())
        .addColumn('value', text, (c) => c.notNull())
        .addColumn('ttl', text, (c) => c.notNull())
        .addColumn('priority', 'double precision')
        .addColumn('status', text, (c) => c.notNull())
        .addColumn('created_at', text, (c) => c.notNull())
        .addColumn('updated_at', text, (c) => c.notNull())
        .addColumn('deleted_at', text)
        .execute();
      await db.schema.createIndex('dns_records_by_domain').on('dns_records').columns(['domain_id', 'position']).execute();

      await db.schema
        .createTable('contact_groups')
        .addColumn('id', text, (c) => c.primaryKey())
        .addColumn('organization_id', text, (c) => c.notNull())
        .addColumn('name', text, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('contact_groups_by_organization').on('contact_groups').column('organization_id').execute();

      await db.schema
        .createTable('contact_channels')
        .addColumn('id', text, (c) => c.primaryKey())
        .addColumn('organization_id', text, (c) => c.notNull())
        .addColumn('name', text, (c) => c.notNull())
        .addColumn('default_subscription', text, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('contact_channels_by_organization').on('contact_channels').column('organization_id').execute();

      await db.schema
        .createTable('contacts')
        .addColumn('id', text, (c) => c.primaryKey())
        .addColumn('organization_id', text, (c) => c.notNull())
        .addColumn('email', text, (c) => c.notNull())
        .addColumn('email_lower', text, (c) => c.notNull())
        .addColumn('first_name', text)
        .addColumn('last_name', text)
        .addColumn('status', text, (c) => c.notNull())
        .addColumn('properties', text, (c) => c.notNull())
        .addColumn('group_ids', text, (c) => c.notNull())
        .addColumn('enrolments', text, (c) => c.notNull())
        .addColumn('suppression_reason', text)
        .addColumn('suppressed_at', text)
        .addColumn('created_at', text, (c) => c.notNull())
        .addColumn('updated_at', text, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('contacts_by_organization').on('contacts').columns(['organization_id', 'created_at', 'id']).execute();
    },
  }),
  // Batch checks (src/store/batches-sql.ts).
  '0002_batches': createBatchTables,
  // Monitors, their history and webhook deliveries (src/store/monitors-sql.ts).
  '0003_monitors': createMonitorTables,
  // DMARC aggregate and TLS reports (src/store/reports-sql.ts).
  '0005_reports': createReportTables,
  // Deep lookalike runs as jobs (src/store/lookalike-jobs-sql.ts).
  '0007_lookalike_jobs': createLookalikeJobTables,
  // The per-source, per-day digest of each domain's aggregate reports, trusted and untrusted apart (src/store/reports-sql.ts).
  '0008_report_digests': createReportDigestTables,
  // The console: users, memberships, invitations, sessions, failed sign-ins, key names, latest results (src/store/console-sql.ts).
  '0010_console': createConsoleTables,
  // Alert channels, remembered lookalikes and failure reports (src/store/alerts-sql.ts).
  '0011_alerts': createAlertTables,
  // Read-only links to a domain's report dashboard (src/store/share-links-sql.ts).
  '0012_share_links': createShareLinkTables,
  // Each report's identity base in a column, so that `contested` is a fact of the store (src/store/reports-sql.ts).
  '0013_report_identity_base': createReportIdentityBase,
};

/** The column types of `dialect`. */
export function migrationContext(dialect: SqlDialectName): MigrationContext {
  return dialect === 'postgres'
    ? { dialect, text: sql`text collate "C"`, bytes: 'bytea' }
    : { dialect, text: 'text', bytes: 'blob' };
}

/** Serves MIGRATIONS to Kysely's Migrator for one dialect. */
class StaticMigrationProvider implements MigrationProvider {
  readonly #dialect: SqlDialectName;
  constructor(dialect: SqlDialectName) {
    this.#dialect = dialect;
  }
  async getMigrations(): Promise<Record<string, Migration>> {
    const context = migrationContext(this.#dialect);
    return Object.fromEntries(Object.entries(MIGRATIONS).map(([name, factory]) => [name, factory(context)]));
  }
}

/** The outcome of {@link migrateToLatest}: the names applied now (empty when already up to date). */
export interface MigrationOutcome {
  applied: string[];
}

/**
 * Applies every pending migration, in order. Throws the first failure (that migration's
 * transaction is rolled back; earlier ones stay applied).
 */
export async function migrateToLatest(db: Kysely<any>, dialect: SqlDialectName): Promise<MigrationOutcome> {
  const migrator = new Migrator({
    db,
    provider: new StaticMigrationProvider(dialect),
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: MIGRATION_LOCK_TABLE,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) throw error;
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}
