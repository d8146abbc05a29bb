import type { Kysely } from 'kysely';
import type { RecordLog, RecordLogStore } from './record-logs.js';
import type { StoreDatabase } from './sql-schema.js';
import { json, parse } from './sql-values.js';

/**
 * Most record logs without an organisation (requests with no valid key) the SQL stores keep; the
 * newest are kept. Nobody can read them through the API, and without this bound a flood of
 * unauthenticated requests grew the database by about 1 KB a request for the whole retention.
 */
export const MAX_UNATTRIBUTED_RECORD_LOGS = 10_000;
/** Unattributed appends (in this process) between two trims back to MAX_UNATTRIBUTED_RECORD_LOGS. */
export const UNATTRIBUTED_TRIM_EVERY = 500;
/** Most rows one trim deletes (replicas each trim, so the excess is a few UNATTRIBUTED_TRIM_EVERY). */
const UNATTRIBUTED_TRIM_BATCH = 20_000;

/** The audit trail: one JSON document per record. */
/** Most records one group commit writes (one transaction); more wait for the next. */
export const MAX_RECORD_LOG_GROUP = 500;
/** Rows per INSERT statement inside a group commit (4 parameters each: far below both databases' limits). */
const RECORD_LOG_INSERT_ROWS = 100;

type RecordLogRow = { uuid: string; organization_id: string | null; created_at: string; document: string };

/** An append waiting for its group's commit. */
interface PendingAppend {
  row: RecordLogRow;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Record logs, written by group commit: an append joins the group of records waiting to be written,
 * and its promise settles when that group's transaction has committed (or failed). One group is
 * written at a time; appends that arrive meanwhile form the next group, so under load each commit
 * (the costly part: a WAL write on SQLite, a round trip and a flush on PostgreSQL) carries many
 * records, and with one request at a time a group is that one record, written at once. Since the
 * service answers a request only after its record's append has settled, a request whose answer was
 * sent has its record committed: a crash loses nothing acknowledged, only the records of requests
 * not yet answered. `flush()` (on close) waits for every group.
 */
export class SqlRecordLogStore implements RecordLogStore {
  #unattributedSinceTrim = 0;
  #pending: PendingAppend[] = [];
  #writing: Promise<void> | undefined;

  constructor(
    private readonly db: Kysely<StoreDatabase>,
    private readonly bound: { max: number; trimEvery: number },
  ) {}

  append(organizationId: string | null, record: RecordLog): Promise<void> {
    const row = { uuid: record.uuid, organization_id: organizationId, created_at: record.created_at ?? new Date().toISOString(), document: json(record) };
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ row, resolve, reject });
      // The first append of an idle store starts a group at the end of this turn of the event
      // loop, so that appends made in the same turn join it.
      this.#writing ??= new Promise<void>((started) => setImmediate(started)).then(() => this.#drain());
    });
  }

  /** Resolves when every append made so far has been written (or has failed). */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  /** Writes groups until nothing waits. */
  async #drain(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        const group = this.#pending.splice(0, MAX_RECORD_LOG_GROUP);
        try {
          await this.#commit(group.map((entry) => entry.row));
          for (const entry of group) entry.resolve();
        } catch (error) {
          for (const entry of group) entry.reject(error);
        }
      }
    } finally {
      this.#writing = undefined;
    }
  }

  /** One transaction for the group. A uuid written twice (a record rewritten) keeps its last row. */
  async #commit(rows: readonly RecordLogRow[]): Promise<void> {
    const byUuid = new Map<string, RecordLogRow>();
    for (const row of rows) byUuid.set(row.uuid, row);
    const unique = [...byUuid.values()];
    await this.db.transaction().execute(async (trx) => {
      for (let index = 0; index < unique.length; index += RECORD_LOG_INSERT_ROWS) {
        await trx
          .insertInto('record_logs')
          .values(unique.slice(index, index + RECORD_LOG_INSERT_ROWS))
          .onConflict((oc) =>
            oc.column('uuid').doUpdateSet((eb) => ({
              organization_id: eb.ref('excluded.organization_id'),
              created_at: eb.ref('excluded.created_at'),
              document: eb.ref('excluded.document'),
            })),
          )
          .execute();
      }
    });
    const unattributed = unique.filter((row) => row.organization_id === null).length;
    this.#unattributedSinceTrim += unattributed;
    if (unattributed > 0 && this.#unattributedSinceTrim >= this.bound.trimEvery) {
      this.#unattributedSinceTrim = 0;
      // The group is committed: a failed trim must not fail its appends (the next one retries).
      await this.trimUnattributed().catch(() => (this.#unattributedSinceTrim = this.bound.trimEvery));
    }
  }

  /** Deletes the unattributed records older than the newest `bound.max`; returns how many. */
  async trimUnattributed(): Promise<number> {
    const result = await this.db
      .deleteFrom('record_logs')
      .where('organization_id', 'is', null)
      .where(
        'uuid',
        'in',
        this.db
          .selectFrom('record_logs')
          .select('uuid')
          .where('organization_id', 'is', null)
          .orderBy('created_at', 'desc')
          .orderBy('uuid', 'desc')
          .limit(UNATTRIBUTED_TRIM_BATCH)
          .offset(this.bound.max),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async get(organizationId: string, uuid: string): Promise<RecordLog | undefined> {
    // A record without an organisation never matches: `organization_id = ?` is not true for NULL.
    const row = await this.db.selectFrom('record_logs').select('document').where('uuid', '=', uuid).where('organization_id', '=', organizationId).executeTakeFirst();
    return row && parse<RecordLog>(row.document);
  }
}
