/**
 * Alert channels in SQL (SQLite or PostgreSQL) on Kysely, and the migration `0011_alerts`, which
 * also creates the tables of the lookalikes each monitor remembers and of failure reports (RFC 6591),
 * so that the three parts of issue 41 that this branch builds share one migration number.
 * A channel is one row: its organisation and kind as columns, the whole channel as JSON.
 */
import type { Kysely } from 'kysely';
import { createTable } from './sql-tables.js';
import type { AlertChannel, AlertChannelPatch, AlertStore } from './alerts.js';
import type { MigrationFactory } from './migration-types.js';
import type { Timestamp } from './page-types.js';
import { json, parse, toColumns } from './sql-values.js';

/** The alert tables, as Kysely sees them. */
export interface AlertTables {
  alert_channels: {
    id: string;
    organization_id: string;
    kind: string;
    created_at: string;
    /** The whole channel as JSON. */
    document: string;
  };
}

/** The migration `0011_alerts` (forward-only): alert channels, remembered lookalikes, failure reports. */
export const createAlertTables: MigrationFactory = (context) => ({
  async up(db: Kysely<any>): Promise<void> {
    await createTable(db, context, 'alert_channels', { id: 'key', organization_id: 'text', kind: 'text', created_at: 'text', document: 'text' }).execute();
    await db.schema.createIndex('alert_channels_by_organization').on('alert_channels').columns(['organization_id', 'created_at', 'id']).execute();
    // The lookalikes a monitor remembers: one row per monitor and name, its history in the document.
    await createTable(db, context, 'monitor_lookalikes', {
      monitor_id: { type: 'text', references: 'monitors.id', onDelete: 'cascade' }, domain: 'text', organization_id: 'text', first_seen: 'text?',
      last_seen: 'text?', document: 'text',
    })
      .addPrimaryKeyConstraint('monitor_lookalikes_pk', ['monitor_id', 'domain'])
      .execute();
    // Failure reports (RFC 6591): headers and authentication results only, never a body.
    // `identity` is the SHA-256 of what was reported: the same report received twice is stored once per organisation.
    await createTable(db, context, 'failure_reports', { id: 'key', organization_id: 'text', domain: 'text', source_ip: 'text?', arrived_at: 'text', identity: 'text', document: 'text' })
      .addUniqueConstraint('failure_reports_unique_identity', ['organization_id', 'identity'])
      .execute();
    await db.schema.createIndex('failure_reports_by_domain').on('failure_reports').columns(['organization_id', 'domain', 'arrived_at']).execute();
    await db.schema.createIndex('failure_reports_by_age').on('failure_reports').column('arrived_at').execute();
    // Per-organisation settings of this area (whether local parts are hashed, and the salt).
    await createTable(db, context, 'alert_settings', { organization_id: 'key', document: 'text' }).execute();
  },
});

/** The SQL implementation of {@link AlertStore}. */
export class SqlAlertStore implements AlertStore {
  readonly #db: Kysely<AlertTables>;

  constructor(db: Kysely<any>) {
    this.#db = db as Kysely<AlertTables>;
  }

  async createChannel(channel: AlertChannel): Promise<void> {
    await this.#db.insertInto('alert_channels').values({ ...toColumns(channel, ['id', 'organizationId', 'kind', 'createdAt']), document: json(channel) }).execute();
  }

  async listChannels(organizationId: string): Promise<AlertChannel[]> {
    const rows = await this.#db.selectFrom('alert_channels').select('document').where('organization_id', '=', organizationId).orderBy('created_at').orderBy('id').execute();
    return rows.map((r) => parse<AlertChannel>(r.document));
  }

  async getChannel(organizationId: string, id: string): Promise<AlertChannel | undefined> {
    const row = await this.#db.selectFrom('alert_channels').select('document').where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst();
    return row && parse<AlertChannel>(row.document);
  }

  async getChannelById(id: string): Promise<AlertChannel | undefined> {
    const row = await this.#db.selectFrom('alert_channels').select('document').where('id', '=', id).executeTakeFirst();
    return row && parse<AlertChannel>(row.document);
  }

  async updateChannel(organizationId: string, id: string, patch: AlertChannelPatch, now: Timestamp): Promise<AlertChannel | undefined> {
    return this.#db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('alert_channels').select('document').where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst();
      if (!row) return undefined;
      const next: AlertChannel = { ...parse<AlertChannel>(row.document), ...patch, updatedAt: now };
      await trx.updateTable('alert_channels').set({ document: json(next) }).where('id', '=', id).execute();
      return next;
    });
  }

  async deleteChannel(organizationId: string, id: string): Promise<boolean> {
    const result = await this.#db.deleteFrom('alert_channels').where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
