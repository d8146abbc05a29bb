/**
 * Batches in SQL (SQLite or PostgreSQL) on Kysely: the store `serve` and every queue worker share.
 *
 * Three tables: the batches with their counters, the names as submitted, and the result rows. A
 * result row's primary key is (batch_id, seq), and rows are written with INSERT … ON CONFLICT DO
 * NOTHING in the same transaction that adds the number actually inserted to the counters: a chunk
 * written twice (a recovered job) yields neither a second row nor a second count. PostgreSQL
 * serialises concurrent writers of one batch on its row lock, so `done = done + n` never loses an
 * update. Timestamps are ISO 8601 text in UTC (they sort as text).
 */
import { sql, type Kysely } from 'kysely';
import { createTable } from './sql-tables.js';
import type { Batch, BatchName, BatchResultRow, BatchStatus } from './batch-model.js';
import type { BatchQuota, BatchStore, NewBatch, QuotaOutcome } from './batches.js';
import { findById } from './sql-values.js';
import type { MigrationFactory, SqlDialectName } from './migration-types.js';

/** Rows per INSERT (3–4 parameters each: far below SQLite's and PostgreSQL's parameter limits). */
export const BATCH_INSERT_ROWS = 1000;

/** The batch tables, as Kysely sees them. */
export interface BatchTables {
  spoof_check_batches: {
    id: string;
    organization_id: string;
    status: BatchStatus;
    total: number;
    done: number;
    failed: number;
    created_at: string;
    started_at: string | null;
    finished_at: string | null;
    /** 1 once every chunk is on the queue, else 0. */
    enqueued: number;
  };
  spoof_check_batch_names: { batch_id: string; seq: number; name: string };
  spoof_check_batch_results: { batch_id: string; seq: number; line: string; failed: number };
}

/** The migration that creates the batch tables (`0002_batches` in src/store/migrations.ts; forward-only). */
export const createBatchTables: MigrationFactory = (context) => ({
  async up(db: Kysely<any>): Promise<void> {
    await createTable(db, context, 'spoof_check_batches', {
      id: 'key', organization_id: 'text', status: 'text', total: 'integer', done: 'integer', failed: 'integer', created_at: 'text', started_at: 'text?',
      finished_at: 'text?', enqueued: 'integer',
    }).execute();
    // The quota sums an organisation's batches of the day; the sweeper looks for unfinished ones.
    await db.schema.createIndex('spoof_check_batches_org_created').on('spoof_check_batches').columns(['organization_id', 'created_at']).execute();
    await db.schema.createIndex('spoof_check_batches_status').on('spoof_check_batches').columns(['status', 'created_at']).execute();
    await createTable(db, context, 'spoof_check_batch_names', {
      batch_id: { type: 'text', references: 'spoof_check_batches.id', onDelete: 'cascade' }, seq: 'integer', name: 'text',
    })
      .addPrimaryKeyConstraint('spoof_check_batch_names_pk', ['batch_id', 'seq'])
      .execute();
    // The key that makes a result write idempotent: one row per (batch, name index).
    await createTable(db, context, 'spoof_check_batch_results', {
      batch_id: { type: 'text', references: 'spoof_check_batches.id', onDelete: 'cascade' }, seq: 'integer', line: 'text', failed: 'integer',
    })
      .addPrimaryKeyConstraint('spoof_check_batch_results_pk', ['batch_id', 'seq'])
      .execute();
  },
});

type BatchRow = BatchTables['spoof_check_batches'];

/** First key of the PostgreSQL advisory lock that serialises one organisation's quota check (an arbitrary constant of ours). */
export const BATCH_QUOTA_LOCK_CLASS = 0x5c0b;

/** Names the organisation submitted in batches created at or after `since`. */
async function namesSince(db: Kysely<BatchTables>, organizationId: string, since: string): Promise<number> {
  const row = await db
    .selectFrom('spoof_check_batches')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('total'), sql<number>`0`).as('names'))
    .where('organization_id', '=', organizationId)
    .where('created_at', '>=', since)
    .executeTakeFirst();
  // PostgreSQL sums integers as bigint, which pg returns as text.
  return Number(row?.names ?? 0);
}

function toBatch(row: BatchRow): Batch {
  return {
    id: row.id,
    organizationId: row.organization_id,
    status: row.status,
    total: Number(row.total),
    done: Number(row.done),
    failed: Number(row.failed),
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    enqueued: Number(row.enqueued) === 1,
  };
}

/** The SQL implementation of {@link BatchStore}, on a Kysely instance whose database has run {@link createBatchTables}. */
export class SqlBatchStore implements BatchStore {
  readonly #db: Kysely<BatchTables>;

  readonly #dialect: SqlDialectName;

  constructor(db: Kysely<any>, dialect: SqlDialectName) {
    this.#db = db as Kysely<BatchTables>;
    this.#dialect = dialect;
  }

  async create(input: NewBatch): Promise<Batch> {
    return this.#db.transaction().execute((trx) => this.#insert(trx, input));
  }

  async createWithinQuota(input: NewBatch, quota: BatchQuota): Promise<QuotaOutcome> {
    return this.#db.transaction().execute(async (trx) => {
      // PostgreSQL runs transactions side by side: without a lock, two of them both read the same
      // sum, both fit, both insert. A transaction-scoped advisory lock keyed by the organisation
      // makes the check-and-take of one organisation one at a time (released at commit/rollback).
      // SQLite needs none: Kysely runs one transaction at a time on its one connection.
      if (this.#dialect === 'postgres') {
        await sql`select pg_advisory_xact_lock(${BATCH_QUOTA_LOCK_CLASS}, hashtext(${input.organizationId}))`.execute(trx);
      }
      const used = await namesSince(trx, input.organizationId, quota.since);
      if (used + input.names.length > quota.limit) return { ok: false as const, used };
      return { ok: true as const, batch: await this.#insert(trx, input) };
    });
  }

  async #insert(trx: Kysely<BatchTables>, input: NewBatch): Promise<Batch> {
    const total = input.names.length;
    const refused = input.errorRows.length;
    const allRefused = refused === total;
    const row: BatchRow = {
      id: input.id,
      organization_id: input.organizationId,
      status: allRefused ? 'done' : 'queued',
      total,
      done: refused,
      failed: refused,
      created_at: input.createdAt,
      started_at: null,
      finished_at: allRefused ? input.createdAt : null,
      enqueued: 0,
    };
    await trx.insertInto('spoof_check_batches').values(row).execute();
    for (let i = 0; i < input.names.length; i += BATCH_INSERT_ROWS) {
      const slice = input.names.slice(i, i + BATCH_INSERT_ROWS).map(({ seq, name }) => ({ batch_id: input.id, seq, name }));
      await trx.insertInto('spoof_check_batch_names').values(slice).execute();
    }
    for (let i = 0; i < input.errorRows.length; i += BATCH_INSERT_ROWS) {
      const slice = input.errorRows.slice(i, i + BATCH_INSERT_ROWS).map((r) => ({ batch_id: input.id, seq: r.seq, line: r.line, failed: r.failed ? 1 : 0 }));
      await trx.insertInto('spoof_check_batch_results').values(slice).execute();
    }
    return toBatch(row);
  }

  async get(organizationId: string, id: string): Promise<Batch | undefined> {
    return findById(this.#db, 'spoof_check_batches', toBatch, id, organizationId);
  }

  async getById(id: string): Promise<Batch | undefined> {
    return findById(this.#db, 'spoof_check_batches', toBatch, id);
  }

  async namesSubmittedSince(organizationId: string, since: string): Promise<number> {
    return namesSince(this.#db, organizationId, since);
  }

  async pendingNames(batchId: string, fromSeq: number, toSeq: number): Promise<BatchName[]> {
    // Two range reads on the primary keys (batch_id, seq), subtracted here: a join could be planned
    // as a scan of the whole results table, which grows with every batch ever run.
    const [names, written] = await Promise.all([
      this.#db
        .selectFrom('spoof_check_batch_names')
        .select(['seq', 'name'])
        .where('batch_id', '=', batchId)
        .where('seq', '>=', fromSeq)
        .where('seq', '<', toSeq)
        .orderBy('seq')
        .execute(),
      this.#db.selectFrom('spoof_check_batch_results').select('seq').where('batch_id', '=', batchId).where('seq', '>=', fromSeq).where('seq', '<', toSeq).execute(),
    ]);
    const done = new Set(written.map((row) => Number(row.seq)));
    return names.filter((row) => !done.has(Number(row.seq))).map((row) => ({ seq: Number(row.seq), name: row.name }));
  }

  async markRunning(batchId: string, at: string): Promise<void> {
    await this.#db.updateTable('spoof_check_batches').set({ status: 'running', started_at: at }).where('id', '=', batchId).where('status', '=', 'queued').execute();
  }

  async markEnqueued(batchId: string): Promise<void> {
    await this.#db.updateTable('spoof_check_batches').set({ enqueued: 1 }).where('id', '=', batchId).execute();
  }

  async recordResults(batchId: string, rows: BatchResultRow[], at: string): Promise<void> {
    if (rows.length === 0) return;
    // One statement per page, rows in seq order: two writers of overlapping rows then take their
    // row locks in the same order and cannot deadlock. RETURNING yields only the rows inserted.
    const sorted = [...rows].sort((a, b) => a.seq - b.seq);
    await this.#db.transaction().execute(async (trx) => {
      let inserted = 0;
      let failed = 0;
      for (let i = 0; i < sorted.length; i += BATCH_INSERT_ROWS) {
        const page = sorted.slice(i, i + BATCH_INSERT_ROWS).map((r) => ({ batch_id: batchId, seq: r.seq, line: r.line, failed: r.failed ? 1 : 0 }));
        const written = await trx
          .insertInto('spoof_check_batch_results')
          .values(page)
          .onConflict((oc) => oc.columns(['batch_id', 'seq']).doNothing())
          .returning(['failed'])
          .execute();
        inserted += written.length;
        failed += written.filter((row) => Number(row.failed) === 1).length;
      }
      if (inserted === 0) return;
      // Every SET expression reads the row as it was before the update (SQL standard), so `done` below is the old count.
      await trx
        .updateTable('spoof_check_batches')
        .set({
          done: sql`done + ${inserted}`,
          failed: sql`failed + ${failed}`,
          started_at: sql`coalesce(started_at, ${at})`,
          status: sql`case when status in ('queued', 'running') and done + ${inserted} >= total then 'done' else status end`,
          finished_at: sql`case when status in ('queued', 'running') and done + ${inserted} >= total then ${at} else finished_at end`,
        })
        .where('id', '=', batchId)
        .execute();
    });
  }

  async cancel(organizationId: string, id: string, at: string): Promise<Batch | undefined> {
    await this.#db
      .updateTable('spoof_check_batches')
      .set({ status: 'cancelled', finished_at: at })
      .where('id', '=', id)
      .where('organization_id', '=', organizationId)
      .where('status', 'in', ['queued', 'running'])
      .execute();
    return this.get(organizationId, id);
  }

  async readResults(organizationId: string, id: string, afterSeq: number, limit: number): Promise<BatchResultRow[]> {
    const rows = await this.#db
      .selectFrom('spoof_check_batch_results as r')
      .innerJoin('spoof_check_batches as b', 'b.id', 'r.batch_id')
      .select(['r.seq', 'r.line', 'r.failed'])
      .where('r.batch_id', '=', id)
      .where('b.organization_id', '=', organizationId)
      .where('r.seq', '>', afterSeq)
      .orderBy('r.seq')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ seq: Number(r.seq), line: r.line, failed: Number(r.failed) === 1 }));
  }

  async unfinished(onlyUnenqueued: boolean, limit: number): Promise<Batch[]> {
    let query = this.#db.selectFrom('spoof_check_batches').selectAll().where('status', 'in', ['queued', 'running']);
    if (onlyUnenqueued) query = query.where('enqueued', '=', 0);
    const rows = await query.orderBy('created_at').limit(Math.min(limit, Number.MAX_SAFE_INTEGER)).execute();
    return rows.map(toBatch);
  }
}
