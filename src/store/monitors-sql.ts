/**
 * Monitors in SQL (SQLite or PostgreSQL) on Kysely: the store `serve`, every replica and every
 * worker share.
 *
 * Four tables: the monitors (one per domain and organisation: a unique key), their history (one row
 * per check or change, numbered per monitor; a run id is unique per monitor, so a run committed
 * twice is refused by the key), the webhook deliveries, and the server key that seals webhook
 * secrets. A run is written in one transaction that first moves the monitor's `version` from the
 * value the run read (compare-and-set): of two runs of one monitor at once, one commits and the
 * other is told `conflict` and recomputes. Timestamps are ISO 8601 text in UTC; nested values JSON.
 */
import { sql, type Kysely } from 'kysely';
import { createTable } from './sql-tables.js';
import type { MigrationFactory } from './migration-types.js';
import type { CommitOutcome, DeliveryAttempt, DeliveryStatus, Monitor, MonitorChangeEntry, MonitorHistoryEntry, MonitorPatch, MonitorRunCommit, MonitorStamp, MonitorStore, NewMonitorHistoryEntry, RecentActivity, RecentActivityLimits, WebhookDelivery } from './monitors.js';
import type { Page, PageRequest, Timestamp } from './page-types.js';
import { count, findById, fromColumns, json, newestFirstPage, numbersFromColumns, offsetOf, parse, toColumns } from './sql-values.js';

/** Rows one prune DELETE removes at most. */
export const MONITOR_PRUNE_BATCH = 1_000;

/** The monitor tables, as Kysely sees them. */
export interface MonitorTables {
  monitors: {
    id: string;
    organization_id: string;
    domain: string;
    interval_minutes: number;
    webhook_url: string | null;
    /** JSON MonitorCheckKind[]. */
    checks: string;
    sealed_secret: string;
    /** JSON MonitorMachine. */
    machine: string;
    /** JSON MonitorCheckSummary or null. */
    last_result: string | null;
    next_run_at: string;
    lease_until: string | null;
    version: number;
    history_seq: number;
    created_at: string;
    updated_at: string;
  };
  monitor_history: {
    monitor_id: string;
    seq: number;
    type: string;
    at: string;
    /** Null for a change entry. */
    run_id: string | null;
    /** The whole entry as JSON. */
    document: string;
  };
  monitor_deliveries: {
    id: string;
    monitor_id: string;
    organization_id: string;
    status: string;
    next_attempt_at: string | null;
    created_at: string;
    /** The whole delivery as JSON (attempts included). */
    document: string;
  };
  server_secrets: { name: string; value: Buffer };
}

/** The migration that creates the monitor tables (`0003_monitors`; forward-only). */
export const createMonitorTables: MigrationFactory = (context) => ({
  async up(db: Kysely<any>): Promise<void> {
    await createTable(db, context, 'monitors', {
      id: 'key', organization_id: 'text', domain: 'text', interval_minutes: 'integer', webhook_url: 'text?', checks: 'text', sealed_secret: 'text',
      machine: 'text', last_result: 'text?', next_run_at: 'text', lease_until: 'text?', version: 'integer', history_seq: 'integer', created_at: 'text',
      updated_at: 'text',
    })
      // One monitor per domain and organisation (a second is a 409), whatever process adds it.
      .addUniqueConstraint('monitors_unique_domain', ['organization_id', 'domain'])
      .execute();
    await db.schema.createIndex('monitors_by_organization').on('monitors').columns(['organization_id', 'created_at', 'id']).execute();
    await db.schema.createIndex('monitors_by_next_run').on('monitors').columns(['next_run_at']).execute();
    await db.schema.createIndex('monitors_by_domain').on('monitors').columns(['domain', 'created_at']).execute();
    await createTable(db, context, 'monitor_history', {
      monitor_id: { type: 'text', references: 'monitors.id', onDelete: 'cascade' }, seq: 'integer', type: 'text', at: 'text', run_id: 'text?', document: 'text',
    })
      .addPrimaryKeyConstraint('monitor_history_pk', ['monitor_id', 'seq'])
      .execute();
    // A run is written once (NULLs, the change rows, are distinct in both databases).
    await db.schema.createIndex('monitor_history_unique_run').on('monitor_history').columns(['monitor_id', 'run_id']).unique().execute();
    await db.schema.createIndex('monitor_history_by_age').on('monitor_history').column('at').execute();
    await createTable(db, context, 'monitor_deliveries', {
      id: 'key', monitor_id: { type: 'text', references: 'monitors.id', onDelete: 'cascade' }, organization_id: 'text', status: 'text',
      next_attempt_at: 'text?', created_at: 'text', document: 'text',
    }).execute();
    await db.schema.createIndex('monitor_deliveries_due').on('monitor_deliveries').columns(['status', 'next_attempt_at']).execute();
    await db.schema.createIndex('monitor_deliveries_by_monitor').on('monitor_deliveries').columns(['monitor_id', 'created_at', 'id']).execute();
    await createTable(db, context, 'server_secrets', { name: 'key', value: 'bytes' }).execute();
  },
});

type MonitorRow = MonitorTables['monitors'];

/** Ids per query of {@link SqlMonitorStore.getMany} (within SQLite's and PostgreSQL's bound parameters). */
export const MONITORS_PER_READ = 500;

/** The fields of a monitor its row holds as they are. */
const MONITOR_FIELDS = ['id', 'organizationId', 'domain', 'webhookUrl', 'sealedSecret', 'nextRunAt', 'leaseUntil', 'createdAt', 'updatedAt'] as const;
/** Its numbers (integer columns). */
const MONITOR_NUMBERS = ['intervalMinutes', 'version'] as const;

function toMonitor(row: MonitorRow): Monitor {
  return {
    ...fromColumns(row, MONITOR_FIELDS),
    ...numbersFromColumns(row, MONITOR_NUMBERS),
    checks: parse(row.checks),
    machine: parse(row.machine),
    lastResult: row.last_result === null ? null : parse(row.last_result),
  };
}

function toRow(monitor: Monitor): MonitorRow {
  return {
    ...toColumns(monitor, [...MONITOR_FIELDS, ...MONITOR_NUMBERS]),
    checks: json(monitor.checks),
    machine: json(monitor.machine),
    last_result: monitor.lastResult === null ? null : json(monitor.lastResult),
    history_seq: 0,
  };
}

function deliveryRow(d: WebhookDelivery): MonitorTables['monitor_deliveries'] {
  return { id: d.id, monitor_id: d.monitorId, organization_id: d.organizationId, status: d.status, next_attempt_at: d.nextAttemptAt, created_at: d.createdAt, document: json(d) };
}

/** The SQL implementation of {@link MonitorStore}, on a database that has run {@link createMonitorTables}. */
export class SqlMonitorStore implements MonitorStore {
  readonly #db: Kysely<MonitorTables>;
  readonly #isUniqueViolation: (error: unknown) => boolean;

  constructor(db: Kysely<any>, isUniqueViolation: (error: unknown) => boolean) {
    this.#db = db as Kysely<MonitorTables>;
    this.#isUniqueViolation = isUniqueViolation;
  }

  async create(monitor: Monitor): Promise<'created' | 'duplicate-domain'> {
    const existing = await this.#db
      .selectFrom('monitors')
      .select('id')
      .where('organization_id', '=', monitor.organizationId)
      .where('domain', '=', monitor.domain)
      .executeTakeFirst();
    if (existing) return 'duplicate-domain';
    try {
      await this.#db.insertInto('monitors').values(toRow(monitor)).execute();
      return 'created';
    } catch (error) {
      // Two creations at once: the unique key decides, the loser is a duplicate.
      if (this.#isUniqueViolation(error)) {
        const again = await this.#db.selectFrom('monitors').select('id').where('organization_id', '=', monitor.organizationId).where('domain', '=', monitor.domain).executeTakeFirst();
        if (again && again.id !== monitor.id) return 'duplicate-domain';
      }
      throw error;
    }
  }

  async get(organizationId: string, id: string): Promise<Monitor | undefined> {
    return findById(this.#db, 'monitors', toMonitor, id, organizationId);
  }

  async getByDomain(organizationId: string, domain: string): Promise<Monitor | undefined> {
    // By the unique key (organization_id, domain).
    const row = await this.#db.selectFrom('monitors').selectAll().where('organization_id', '=', organizationId).where('domain', '=', domain).executeTakeFirst();
    return row && toMonitor(row);
  }

  async getById(id: string): Promise<Monitor | undefined> {
    return findById(this.#db, 'monitors', toMonitor, id);
  }

  async list(organizationId: string, page: PageRequest): Promise<Page<Monitor>> {
    return newestFirstPage(this.#db.selectFrom('monitors').where('organization_id', '=', organizationId), page, toMonitor);
  }

  async stamps(organizationId: string): Promise<MonitorStamp[]> {
    const rows = await this.#db.selectFrom('monitors').select(['id', 'version', 'created_at']).where('organization_id', '=', organizationId).execute();
    return rows.map((r) => ({ id: r.id, version: Number(r.version), createdAt: r.created_at }));
  }

  async getMany(organizationId: string, ids: readonly string[]): Promise<Monitor[]> {
    const out: Monitor[] = [];
    for (let at = 0; at < ids.length; at += MONITORS_PER_READ) {
      const rows = await this.#db.selectFrom('monitors').selectAll().where('organization_id', '=', organizationId).where('id', 'in', ids.slice(at, at + MONITORS_PER_READ)).execute();
      out.push(...rows.map(toMonitor));
    }
    return out;
  }

  async update(organizationId: string, id: string, patch: MonitorPatch, now: Timestamp): Promise<Monitor | undefined> {
    const set: Partial<MonitorRow> = { updated_at: now };
    if (patch.intervalMinutes !== undefined) set.interval_minutes = patch.intervalMinutes;
    if (patch.webhookUrl !== undefined) set.webhook_url = patch.webhookUrl;
    if (patch.checks !== undefined) set.checks = json(patch.checks);
    if (patch.sealedSecret !== undefined) set.sealed_secret = patch.sealedSecret;
    if (patch.nextRunAt !== undefined) set.next_run_at = patch.nextRunAt;
    const result = await this.#db.updateTable('monitors').set(set).where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return undefined;
    return this.get(organizationId, id);
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      // Children first (a write, so SQLite's write lock is taken at once), only if the monitor is the organisation's.
      const own = trx.selectFrom('monitors').select('id').where('id', '=', id).where('organization_id', '=', organizationId);
      await trx.deleteFrom('monitor_history').where('monitor_id', 'in', own).execute();
      await trx.deleteFrom('monitor_deliveries').where('monitor_id', 'in', own).execute();
      const result = await trx.deleteFrom('monitors').where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    });
  }

  async commitRun(run: MonitorRunCommit): Promise<CommitOutcome> {
    try {
      return await this.#db.transaction().execute(async (trx) => {
        const set: Partial<MonitorRow> = {
          version: run.expectedVersion + 1,
          machine: json(run.machine),
          last_result: json(run.lastResult),
        };
        if (run.nextRunAt !== undefined) {
          set.next_run_at = run.nextRunAt;
          set.lease_until = null;
        }
        // The write comes first (compare-and-set on the version): it takes SQLite's write lock at
        // once (a read first would have to upgrade its lock, and two such transactions fail with
        // SQLITE_BUSY instead of waiting), and on PostgreSQL it locks the row.
        const updated = await trx
          .updateTable('monitors')
          .set({ ...set, history_seq: sql<number>`history_seq + ${run.entries.length}` })
          .where('id', '=', run.monitorId)
          .where('version', '=', run.expectedVersion)
          .returning('history_seq')
          .executeTakeFirst();
        if (!updated) {
          const row = await trx.selectFrom('monitors').select('id').where('id', '=', run.monitorId).executeTakeFirst();
          if (!row) return 'gone';
          const seen = await trx.selectFrom('monitor_history').select('seq').where('monitor_id', '=', run.monitorId).where('run_id', '=', run.runId).executeTakeFirst();
          return seen ? 'duplicate' : 'conflict';
        }
        const firstSeq = Number(updated.history_seq) - run.entries.length + 1;
        // A run already committed under an earlier version (a retried job that read the new one)
        // breaks the unique (monitor, run) key here: the transaction rolls back, and it is a duplicate.
        if (run.entries.length > 0) {
          await trx
            .insertInto('monitor_history')
            .values(run.entries.map((entry: NewMonitorHistoryEntry, i) => ({
              monitor_id: run.monitorId,
              seq: firstSeq + i,
              type: entry.type,
              at: entry.at,
              run_id: entry.type === 'check' ? entry.runId : null,
              document: json(entry),
            })))
            .execute();
        }
        if (run.deliveries.length > 0) await trx.insertInto('monitor_deliveries').values(run.deliveries.map(deliveryRow)).execute();
        return 'committed' as const;
      });
    } catch (error) {
      if (this.#isUniqueViolation(error)) return 'duplicate';
      throw error;
    }
  }

  async #historyOf(monitorId: string, page: PageRequest): Promise<Page<MonitorHistoryEntry>> {
    const [rows, total] = await Promise.all([
      this.#db.selectFrom('monitor_history').select(['seq', 'document']).where('monitor_id', '=', monitorId).orderBy('seq', 'desc').limit(page.limit).offset(offsetOf(page)).execute(),
      this.#db.selectFrom('monitor_history').select((eb) => eb.fn.countAll().as('n')).where('monitor_id', '=', monitorId).executeTakeFirst(),
    ]);
    return { items: rows.map((r) => ({ ...parse<NewMonitorHistoryEntry>(r.document), seq: Number(r.seq) })), total: count(total?.n) };
  }

  async history(organizationId: string, monitorId: string, page: PageRequest): Promise<Page<MonitorHistoryEntry> | undefined> {
    const own = await this.#db.selectFrom('monitors').select('id').where('id', '=', monitorId).where('organization_id', '=', organizationId).executeTakeFirst();
    return own ? this.#historyOf(monitorId, page) : undefined;
  }

  async publicHistory(domain: string, page: PageRequest): Promise<Page<MonitorHistoryEntry> | undefined> {
    const oldest = await this.#db.selectFrom('monitors').select('id').where('domain', '=', domain).orderBy('created_at').orderBy('id').limit(1).executeTakeFirst();
    return oldest ? this.#historyOf(oldest.id, page) : undefined;
  }

  async due(now: Timestamp, limit: number): Promise<Monitor[]> {
    const rows = await this.#db
      .selectFrom('monitors')
      .selectAll()
      .where('next_run_at', '<=', now)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
      .orderBy('next_run_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(toMonitor);
  }

  async lease(id: string, expectedLeaseUntil: Timestamp | null, leaseUntil: Timestamp, now: Timestamp): Promise<boolean> {
    let query = this.#db.updateTable('monitors').set({ lease_until: leaseUntil }).where('id', '=', id).where('next_run_at', '<=', now);
    query = expectedLeaseUntil === null ? query.where('lease_until', 'is', null) : query.where('lease_until', '=', expectedLeaseUntil);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async listAll(afterId: string, limit: number): Promise<Monitor[]> {
    const rows = await this.#db.selectFrom('monitors').selectAll().where('id', '>', afterId).orderBy('id').limit(limit).execute();
    return rows.map(toMonitor);
  }

  async addDelivery(delivery: WebhookDelivery): Promise<void> {
    await this.#db.insertInto('monitor_deliveries').values(deliveryRow(delivery)).execute();
  }

  async deliveries(organizationId: string, monitorId: string, page: PageRequest): Promise<Page<WebhookDelivery> | undefined> {
    const own = await this.#db.selectFrom('monitors').select('id').where('id', '=', monitorId).where('organization_id', '=', organizationId).executeTakeFirst();
    if (!own) return undefined;
    const matching = this.#db.selectFrom('monitor_deliveries').where('monitor_id', '=', monitorId);
    return newestFirstPage(matching, page, (r: { document: string }) => parse<WebhookDelivery>(r.document), { select: ['document'] });
  }

  async recentActivity(organizationId: string, monitorId: string, limits: RecentActivityLimits): Promise<RecentActivity | undefined> {
    // One statement: the monitor (whether it is the organisation's), the changes among the latest
    // entries (the checks' documents never leave the database) and the latest deliveries.
    const { rows } = await sql<{ kind: 'monitor' | 'change' | 'delivery'; seq: number | string; created_at: string; id: string; document: string | null }>`
      select 'monitor' as kind, 0 as seq, '' as created_at, id, null as document from monitors where id = ${monitorId} and organization_id = ${organizationId}
      union all
      select * from (
        select 'change' as kind, h.seq, '' as created_at, '' as id, h.document from (
          select seq, type, document from monitor_history where monitor_id = ${monitorId} order by seq desc limit ${limits.entries}
        ) h where h.type = 'change' order by h.seq desc limit ${limits.changes}
      ) c
      union all
      select * from (
        select 'delivery' as kind, 0 as seq, created_at, id, document from monitor_deliveries where monitor_id = ${monitorId} order by created_at desc, id desc limit ${limits.deliveries}
      ) d`.execute(this.#db);
    if (!rows.some((r) => r.kind === 'monitor')) return undefined;
    const changes = rows
      .filter((r) => r.kind === 'change')
      .map((r) => ({ ...parse<MonitorChangeEntry>(r.document!), seq: Number(r.seq) }))
      .sort((a, b) => b.seq - a.seq);
    const deliveries = rows
      .filter((r) => r.kind === 'delivery')
      .sort((a, b) => (a.created_at !== b.created_at ? (a.created_at < b.created_at ? 1 : -1) : a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
      .map((r) => parse<WebhookDelivery>(r.document!));
    return { changes, deliveries };
  }

  async getDelivery(organizationId: string, monitorId: string, id: string): Promise<WebhookDelivery | undefined> {
    const own = this.#db.selectFrom('monitor_deliveries').select('document').where('monitor_id', '=', monitorId).where('organization_id', '=', organizationId);
    const row = await own.where('id', '=', id).executeTakeFirst();
    return row && parse<WebhookDelivery>(row.document);
  }

  async claimDueDeliveries(now: Timestamp, leaseUntil: Timestamp, limit: number): Promise<WebhookDelivery[]> {
    const candidates = await this.#db
      .selectFrom('monitor_deliveries')
      .select(['id', 'next_attempt_at', 'document'])
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .orderBy('next_attempt_at')
      .limit(limit)
      .execute();
    const claimed: WebhookDelivery[] = [];
    for (const row of candidates) {
      const delivery = { ...parse<WebhookDelivery>(row.document), nextAttemptAt: leaseUntil };
      // Compare-and-set on the due time: of two pumps, one moves it and takes the delivery.
      const result = await this.#db
        .updateTable('monitor_deliveries')
        .set({ next_attempt_at: leaseUntil, document: json(delivery) })
        .where('id', '=', row.id)
        .where('status', '=', 'pending')
        .where('next_attempt_at', '=', row.next_attempt_at)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 1) claimed.push(delivery);
    }
    return claimed;
  }

  async recordAttempt(id: string, attempt: DeliveryAttempt, status: DeliveryStatus, nextAttemptAt: Timestamp | null): Promise<void> {
    // Only the pump holding the delivery's lease writes it: no transaction needed between read and write.
    const row = await this.#db.selectFrom('monitor_deliveries').select('document').where('id', '=', id).executeTakeFirst();
    if (!row) return;
    const delivery = parse<WebhookDelivery>(row.document);
    const next: WebhookDelivery = { ...delivery, attempts: [...delivery.attempts, attempt], status, nextAttemptAt };
    await this.#db.updateTable('monitor_deliveries').set({ status, next_attempt_at: nextAttemptAt, document: json(next) }).where('id', '=', id).execute();
  }

  async prune(before: Timestamp): Promise<number> {
    let removed = 0;
    for (;;) {
      const result = await this.#db
        .deleteFrom('monitor_history')
        .where((eb) =>
          eb(
            eb.refTuple('monitor_id', 'seq'),
            'in',
            eb.selectFrom('monitor_history').select(['monitor_id', 'seq']).where('at', '<', before).orderBy('at').limit(MONITOR_PRUNE_BATCH) as never,
          ),
        )
        .executeTakeFirst();
      const n = Number(result.numDeletedRows);
      removed += n;
      if (n < MONITOR_PRUNE_BATCH) break;
    }
    const deliveries = await this.#db.deleteFrom('monitor_deliveries').where('status', '!=', 'pending').where('created_at', '<', before).executeTakeFirst();
    return removed + Number(deliveries.numDeletedRows);
  }

  async serverKey(create: () => Buffer): Promise<Buffer> {
    const name = 'webhook-secret-key';
    const found = await this.#db.selectFrom('server_secrets').select('value').where('name', '=', name).executeTakeFirst();
    if (found) return Buffer.from(found.value);
    // Two processes starting together: the first insert wins, both read it back.
    await this.#db.insertInto('server_secrets').values({ name, value: create() }).onConflict((oc) => oc.column('name').doNothing()).execute();
    const row = await this.#db.selectFrom('server_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
    return Buffer.from(row.value);
  }
}
