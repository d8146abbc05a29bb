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
import { createTable } from './sql-tables.js';
import { type Migration, type MigrationProvider, Migrator } from 'kysely/migration';
import { createBatchTables } from './batches-sql.js';
import { createConsoleTables } from './console-sql.js';
import type { MigrationContext, MigrationFactory, SqlDialectName } from './migration-types.js';
import { createLookalikeJobTables } from './lookalike-jobs-sql.js';
import { createAlertTables } from './alerts-sql.js';
import { createShareLinkTables } from './share-links-sql.js';
import { createMonitorTables } from './monitors-sql.js';
import { createReportDigestTables, createReportIdentityBase, createReportRevisions, createReportSenderBlocks, createReportTables, dropReportWriteIndexes } from './reports-sql.js';

// The shapes a migration is written against (in their own module, so that the modules that define
// tables — batches-sql.ts — import them without importing this list of migrations back).
export type { MigrationContext, MigrationFactory, SqlDialectName } from './migration-types.js';

/** Where Kysely records the applied migrations. */
export const MIGRATION_TABLE = 'spoof_checker_migrations';
/** Kysely's lock table for MIGRATION_TABLE. */
export const MIGRATION_LOCK_TABLE = 'spoof_checker_migrations_lock';

/** Every migration, by name; applied in name order. */
export const MIGRATIONS: Readonly<Record<string, MigrationFactory>> = {
  '0001_initial': (context) => ({
    async up(db: Kysely<any>) {
      await createTable(db, context, 'organizations', { id: 'key', name: 'text' }).execute();

      await createTable(db, context, 'api_keys', { id: 'key', organization_id: 'text', sha256: { type: 'bytes', unique: true }, owner: 'text' }).execute();

      await createTable(db, context, 'email_logs', { id: 'key', organization_id: 'text', created_at: 'text', document: 'text' }).execute();
      await db.schema.createIndex('email_logs_by_organization').on('email_logs').columns(['organization_id', 'created_at', 'id']).execute();

      await createTable(db, context, 'record_logs', { uuid: 'key', organization_id: 'text?', created_at: 'text', document: 'text' }).execute();
      // Retention deletes the oldest first.
      await db.schema.createIndex('record_logs_by_age').on('record_logs').column('created_at').execute();

      await createTable(db, context, 'templates', {
        id: 'key', organization_id: 'text', name: 'text', description: 'text?', subject: 'text?', from_email: 'text?', reply_to: 'text?', preview_text: 'text?',
        status: 'text', current_version: 'integer?', variables: 'text', created_at: 'text', updated_at: 'text',
      }).execute();
      await db.schema.createIndex('templates_by_organization').on('templates').columns(['organization_id', 'created_at', 'id']).execute();

      await createTable(db, context, 'template_versions', {
        id: 'key', template_id: { type: 'text', references: 'templates.id' }, version: 'integer', name: 'text', is_major: 'integer', subject: 'text?',
        from_email: 'text?', reply_to: 'text?', preview_text: 'text?', description: 'text?', content: 'text', variables: 'text', rendered_html: 'text?',
        created_by_user_id: 'text', created_by: 'text', created_at: 'text', draft_number: 'integer?', publish_number: 'integer?',
      })
        // Two versions of one template never share a number, whatever process wrote them.
        .addUniqueConstraint('template_versions_unique_number', ['template_id', 'version'])
        .execute();

      await createTable(db, context, 'domains', {
        id: 'key', organization_id: 'text', domain: 'text', status: 'text', user_verified_domain: 'integer', system_verified: 'integer',
        custom_return_path: 'text?', tracking_subdomain: 'text?', is_click_tracking_enabled: 'integer', is_open_tracking_enabled: 'integer', tls: 'text',
        is_tracking_domain: 'integer', is_sending_email_enabled: 'integer', is_receiving_email_enabled: 'integer', verification_failed_reason: 'text?',
        last_verified_at: 'text?', created_at: 'text', updated_at: 'text', deleted_at: 'text?',
      }).execute();
      await db.schema.createIndex('domains_by_organization').on('domains').columns(['organization_id', 'created_at', 'id']).execute();

      await createTable(db, context, 'dns_records', {
        id: 'key', domain_id: { type: 'text', references: 'domains.id' }, position: 'integer', record_type: 'text', record_type_name: 'text', domain: 'text',
        name: 'text', value: 'text', ttl: 'text', priority: 'double precision?', status: 'text', created_at: 'text', updated_at: 'text', deleted_at: 'text?',
      }).execute();
      await db.schema.createIndex('dns_records_by_domain').on('dns_records').columns(['domain_id', 'position']).execute();

      await createTable(db, context, 'contact_groups', { id: 'key', organization_id: 'text', name: 'text' }).execute();
      await db.schema.createIndex('contact_groups_by_organization').on('contact_groups').column('organization_id').execute();

      await createTable(db, context, 'contact_channels', { id: 'key', organization_id: 'text', name: 'text', default_subscription: 'text' }).execute();
      await db.schema.createIndex('contact_channels_by_organization').on('contact_channels').column('organization_id').execute();

      await createTable(db, context, 'contacts', {
        id: 'key', organization_id: 'text', email: 'text', email_lower: 'text', first_name: 'text?', last_name: 'text?', status: 'text', properties: 'text',
        group_ids: 'text', enrolments: 'text', suppression_reason: 'text?', suppressed_at: 'text?', created_at: 'text', updated_at: 'text',
      }).execute();
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
  // Each source's days rolled up into aligned blocks of 2–64 days, stamped with their days' revisions (src/store/reports-sql.ts).
  '0014_report_sender_blocks': createReportSenderBlocks,
  // Reports stored per organisation and domain, bumped as they are stored: the reports' revision read from a few rows (src/store/reports-sql.ts).
  '0015_report_revisions': createReportRevisions,
  // Two indexes of the reports no read needs, written by every report stored (src/store/reports-sql.ts).
  '0016_report_write_indexes': dropReportWriteIndexes,
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
