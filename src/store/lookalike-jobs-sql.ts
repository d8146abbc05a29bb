/**
 * Lookalike jobs in SQL (SQLite or PostgreSQL) on Kysely: one row per job, the report and the error
 * as JSON text. Every state change is one UPDATE guarded by the states it may move from, so two
 * runners of one job (a recovered stalled job) cannot move a final job again. Timestamps are
 * ISO 8601 text in UTC (they sort as text).
 */
import { sql, type Kysely } from 'kysely';
import { createTable } from './sql-tables.js';
import type { LookalikeReport } from '@spoof-checker/engine';
import type { LookalikeJob, LookalikeJobError, LookalikeJobStatus, LookalikeJobStore, NewLookalikeJob } from './lookalike-jobs.js';
import type { MigrationFactory } from './migration-types.js';
import { findById, fromColumns, numbersFromColumns, parse } from './sql-values.js';

/** The lookalike job table, as Kysely sees it. */
export interface LookalikeJobTables {
  lookalike_jobs: {
    id: string;
    organization_id: string;
    domain: string;
    status: LookalikeJobStatus;
    done: number;
    total: number;
    runs: number;
    created_at: string;
    updated_at: string;
    started_at: string | null;
    finished_at: string | null;
    /** 1 once the job is on the queue, else 0. */
    enqueued: number;
    /** JSON LookalikeReport, once completed. */
    report: string | null;
    /** JSON LookalikeJobError, once failed. */
    error: string | null;
  };
}

/** The migration that creates the lookalike job table (`0007_lookalike_jobs` in src/store/migrations.ts; forward-only). */
export const createLookalikeJobTables: MigrationFactory = (context) => ({
  async up(db: Kysely<any>): Promise<void> {
    await createTable(db, context, 'lookalike_jobs', {
      id: 'key', organization_id: 'text', domain: 'text', status: 'text', done: 'integer', total: 'integer', runs: 'integer', created_at: 'text',
      updated_at: 'text', started_at: 'text?', finished_at: 'text?', enqueued: 'integer', report: 'text?', error: 'text?',
    }).execute();
    // The sweeper and the start-up recovery look for unfinished jobs, oldest first.
    await db.schema.createIndex('lookalike_jobs_status').on('lookalike_jobs').columns(['status', 'created_at']).execute();
    // Retention deletes finished jobs by age.
    await db.schema.createIndex('lookalike_jobs_finished').on('lookalike_jobs').column('finished_at').execute();
  },
});

type Row = LookalikeJobTables['lookalike_jobs'];
const OPEN: LookalikeJobStatus[] = ['queued', 'running'];

/** The fields of a job its row holds as they are. */
const JOB_FIELDS = ['id', 'organizationId', 'domain', 'status', 'createdAt', 'updatedAt', 'startedAt', 'finishedAt'] as const;

function toJob(row: Row): LookalikeJob {
  return {
    ...fromColumns(row, JOB_FIELDS),
    ...numbersFromColumns(row, ['done', 'total', 'runs']),
    enqueued: Number(row.enqueued) === 1,
    report: row.report === null ? null : parse<LookalikeReport>(row.report),
    error: row.error === null ? null : parse<LookalikeJobError>(row.error),
  };
}

/** The SQL implementation of {@link LookalikeJobStore}, on a database that has run {@link createLookalikeJobTables}. */
export class SqlLookalikeJobStore implements LookalikeJobStore {
  readonly #db: Kysely<LookalikeJobTables>;

  constructor(db: Kysely<any>) {
    this.#db = db as Kysely<LookalikeJobTables>;
  }

  async create(input: NewLookalikeJob): Promise<LookalikeJob> {
    const row: Row = {
      id: input.id,
      organization_id: input.organizationId,
      domain: input.domain,
      status: 'queued',
      done: 0,
      total: 0,
      runs: 0,
      created_at: input.createdAt,
      updated_at: input.createdAt,
      started_at: null,
      finished_at: null,
      enqueued: 0,
      report: null,
      error: null,
    };
    await this.#db.insertInto('lookalike_jobs').values(row).execute();
    return toJob(row);
  }

  async get(organizationId: string, id: string): Promise<LookalikeJob | undefined> {
    return findById(this.#db, 'lookalike_jobs', toJob, id, organizationId);
  }

  async getById(id: string): Promise<LookalikeJob | undefined> {
    return findById(this.#db, 'lookalike_jobs', toJob, id);
  }

  async markEnqueued(id: string): Promise<void> {
    await this.#db.updateTable('lookalike_jobs').set({ enqueued: 1 }).where('id', '=', id).execute();
  }

  async claim(id: string, at: string): Promise<LookalikeJob | undefined> {
    await this.#db
      .updateTable('lookalike_jobs')
      .set({ status: 'running', runs: sql`runs + 1`, started_at: sql`coalesce(started_at, ${at})`, updated_at: at })
      .where('id', '=', id)
      .where('status', 'in', OPEN)
      .execute();
    return this.getById(id);
  }

  async progress(id: string, done: number, total: number, at: string): Promise<void> {
    await this.#db.updateTable('lookalike_jobs').set({ done, total, updated_at: at }).where('id', '=', id).where('status', '=', 'running').execute();
  }

  async complete(id: string, report: LookalikeReport, at: string): Promise<void> {
    await this.#db
      .updateTable('lookalike_jobs')
      .set({
        status: 'completed',
        done: report.generated,
        total: report.generated,
        report: JSON.stringify(report),
        updated_at: at,
        finished_at: at,
        started_at: sql`coalesce(started_at, ${at})`,
      })
      .where('id', '=', id)
      .where('status', 'in', OPEN)
      .execute();
  }

  async fail(id: string, error: LookalikeJobError, at: string): Promise<void> {
    await this.#db
      .updateTable('lookalike_jobs')
      .set({ status: 'failed', error: JSON.stringify({ code: error.code, message: error.message }), updated_at: at, finished_at: at })
      .where('id', '=', id)
      .where('status', 'in', OPEN)
      .execute();
  }

  async release(id: string, at: string): Promise<void> {
    await this.#db
      .updateTable('lookalike_jobs')
      .set({ status: 'queued', runs: sql`case when runs > 0 then runs - 1 else 0 end`, updated_at: at })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .execute();
  }

  async unfinished(onlyUnenqueued: boolean, limit: number): Promise<LookalikeJob[]> {
    let query = this.#db.selectFrom('lookalike_jobs').selectAll().where('status', 'in', OPEN);
    if (onlyUnenqueued) query = query.where('enqueued', '=', 0);
    const rows = await query.orderBy('created_at').orderBy('id').limit(Math.min(limit, Number.MAX_SAFE_INTEGER)).execute();
    return rows.map(toJob);
  }

  async failStale(before: string, error: LookalikeJobError, at: string): Promise<number> {
    const result = await this.#db
      .updateTable('lookalike_jobs')
      .set({ status: 'failed', error: JSON.stringify({ code: error.code, message: error.message }), updated_at: at, finished_at: at })
      .where('status', '=', 'running')
      .where('updated_at', '<', before)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async prune(before: string): Promise<number> {
    const result = await this.#db.deleteFrom('lookalike_jobs').where('status', 'in', ['completed', 'failed']).where('finished_at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
