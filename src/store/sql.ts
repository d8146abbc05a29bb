/**
 * The stores on a SQL database through Kysely: one implementation for SQLite and PostgreSQL
 * (src/store/sqlite.ts and src/store/postgres.ts open the connection and pass it here). Each
 * resource's store is in its own file (`<resource>-sql.ts`); this file composes them, guards every
 * method against a lost connection and prunes by age.
 *
 * Behaviour is the memory store's, row for row: the same tenancy (every query filters by
 * organisation), the same order (newest first by `createdAt`, then id), the same soft delete and
 * the same template numbering. The shared contract suite (test/store/contract.test.ts) runs
 * against all three.
 */
import { randomUUID } from 'node:crypto';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import { SqlApiKeyStore } from './api-keys-sql.js';
import { SqlBatchStore } from './batches-sql.js';
import { SqlContactStore } from './contacts-sql.js';
import { SqlDomainStore } from './domains-sql.js';
import { SqlEmailLogStore } from './email-logs-sql.js';
import { SqlLookalikeJobStore } from './lookalike-jobs-sql.js';
import { SqlConsoleStore } from './console-sql.js';
import { SqlShareLinkStore } from './share-links-sql.js';
import { SqlMonitorStore } from './monitors-sql.js';
import { SqlAlertStore } from './alerts-sql.js';
import { MAX_UNATTRIBUTED_RECORD_LOGS, SqlRecordLogStore, UNATTRIBUTED_TRIM_EVERY } from './record-logs-sql.js';
import { SqlRememberedLookalikeStore } from './remembered-lookalikes-sql.js';
import { SqlFailureReportStore } from './failure-reports-sql.js';
import { SqlReportStore } from './reports-sql.js';
import { isStoreUnavailable, StoreUnavailableError } from './errors.js';
import type { SqlDialectName } from './migrations.js';
import type { StoreDatabase } from './sql-schema.js';
import type { SqlDialectTraits } from './sql-values.js';
import { SqlTemplateStore } from './templates-sql.js';
import type { StoreHealth, Stores } from './types.js';

export type { SqlDialectTraits } from './sql-values.js';
export { MAX_RECORD_LOG_GROUP, MAX_UNATTRIBUTED_RECORD_LOGS, UNATTRIBUTED_TRIM_EVERY } from './record-logs-sql.js';
export { VERSION_CREATE_ATTEMPTS } from './templates-sql.js';

/** Failed console sign-ins are kept this long (the limits count 15 minutes), then pruned with the rest. */
export const CONSOLE_FAILURES_KEPT_MS = 86_400_000;
/** Default retention of record logs in the SQL stores (`--retention-days`). */
export const DEFAULT_RETENTION_DAYS = 30;
/** Rows one pruning DELETE removes at most, so that no single statement holds the database long. */
export const PRUNE_BATCH_SIZE = 1_000;
/** How often the SQL stores prune the record log while running (also once at start). */
export const PRUNE_INTERVAL_MS = 60 * 60 * 1000;

const DAY_MS = 24 * 60 * 60 * 1000;

/** The SQL stores: the Stores contract plus record-log retention. */
export interface SqlStores extends Stores {
  readonly dialect: SqlDialectName;
  /**
   * The migrated database, for stores that live beside these (e.g. batches, src/store/batches-sql.ts)
   * and share the connection. Closed by close().
   */
  readonly db: Kysely<StoreDatabase>;
  /**
   * Deletes record logs created before `now` minus the retention, in batches of PRUNE_BATCH_SIZE
   * (yielding to the event loop between batches). Returns how many were deleted.
   */
  pruneRecordLogs(now?: Date): Promise<number>;
  /** Deletes monitor history and finished deliveries older than the retention (run with the record-log pruning). */
  pruneMonitorHistory(now?: Date): Promise<number>;
}

/** Options of {@link createSqlStores}. */
export interface SqlStoresOptions {
  /** Record logs older than this many days are pruned (default DEFAULT_RETENTION_DAYS). */
  retentionDays?: number;
  /** Prune at start and every PRUNE_INTERVAL_MS (default true; tests call pruneRecordLogs themselves). */
  pruneAutomatically?: boolean;
  /** Names created template versions (default random UUIDs). */
  newId?: () => string;
  /** Where pruning failures are reported (default: nowhere; the next run tries again). */
  onPruneError?: (error: unknown) => void;
  /**
   * The bound on record logs without an organisation: keep the newest `max`, trimming after every
   * `trimEvery` such appends (default MAX_UNATTRIBUTED_RECORD_LOGS, UNATTRIBUTED_TRIM_EVERY).
   */
  unattributedRecordLogs?: { max: number; trimEvery: number };
}

/**
 * Stores on `db`, which must already be migrated (src/store/migrations.ts). Every method maps a
 * lost connection to {@link StoreUnavailableError}.
 */
export function createSqlStores(db: Kysely<StoreDatabase>, traits: SqlDialectTraits, options: SqlStoresOptions = {}): SqlStores {
  const retentionDays = options.retentionDays ?? DEFAULT_RETENTION_DAYS;
  if (!(retentionDays > 0)) throw new RangeError(`retention must be a positive number of days, got ${retentionDays}`);
  const newId = options.newId ?? randomUUID;
  let closed = false;
  const guard = <T extends object>(store: T): T => guardStore(store, traits, () => closed);
  let timer: NodeJS.Timeout | undefined;
  let pruning: Promise<number> | undefined;
  const recordLogs = new SqlRecordLogStore(db, options.unattributedRecordLogs ?? { max: MAX_UNATTRIBUTED_RECORD_LOGS, trimEvery: UNATTRIBUTED_TRIM_EVERY });

  const pruneRecordLogs = async (now: Date = new Date()): Promise<number> => {
    const cutoff = new Date(now.getTime() - retentionDays * DAY_MS).toISOString();
    let deleted = 0;
    for (;;) {
      // A bounded DELETE: the oldest PRUNE_BATCH_SIZE rows past the cutoff, by the created_at index.
      const result = await db
        .deleteFrom('record_logs')
        .where('uuid', 'in', db.selectFrom('record_logs').select('uuid').where('created_at', '<', cutoff).orderBy('created_at').limit(PRUNE_BATCH_SIZE))
        .executeTakeFirst();
      const batch = Number(result.numDeletedRows);
      deleted += batch;
      if (batch < PRUNE_BATCH_SIZE || closed) return deleted;
      await yieldToEventLoop();
    }
  };
  const guardedPrune = async (now?: Date): Promise<number> => {
    if (closed) throw new StoreUnavailableError('the store is closed (the service is shutting down)');
    try {
      return await pruneRecordLogs(now);
    } catch (error) {
      throw mapError(error, traits);
    }
  };
  /**
   * A store's own pruning run with the record log's: nothing once closed, a lost connection mapped.
   * `prune` is given the cutoff of the retention (and `now`).
   */
  const pruneBeside =
    (prune: (cutoff: string, now: Date) => Promise<number>) =>
    async (now: Date = new Date()): Promise<number> => {
      if (closed) return 0;
      try {
        return await prune(new Date(now.getTime() - retentionDays * DAY_MS).toISOString(), now);
      } catch (error) {
        throw mapError(error, traits);
      }
    };
  const reports = new SqlReportStore(db, traits.dialect, traits.sqlite);
  const monitors = new SqlMonitorStore(db, (error) => traits.isUniqueViolation(error));
  // Monitor history and finished webhook deliveries follow the record log's retention.
  const pruneMonitors = pruneBeside((cutoff) => monitors.prune(cutoff));
  const lookalikeJobs = new SqlLookalikeJobStore(db);
  // Finished lookalike jobs (and their reports) follow the same retention.
  const pruneLookalikeJobs = pruneBeside((cutoff) => lookalikeJobs.prune(cutoff));
  const failureReports = new SqlFailureReportStore(db, (error) => traits.isUniqueViolation(error));
  // Failure reports follow the same retention (src/store/failure-reports-sql.ts).
  const pruneFailureReports = pruneBeside((cutoff) => failureReports.prune(cutoff));
  const consoleStore = new SqlConsoleStore(db, traits.dialect, (error) => traits.isUniqueViolation(error));
  // The console's ended sessions, expired invitations and failed sign-ins past the limits' window.
  const pruneConsole = pruneBeside((_cutoff, now) => consoleStore.prune(now.toISOString(), new Date(now.getTime() - CONSOLE_FAILURES_KEPT_MS).toISOString()));
  const pruneInBackground = (): void => {
    if (pruning || closed) return;
    pruning = guardedPrune()
      .then(async (deleted) => deleted + (await pruneMonitors()) + (await pruneLookalikeJobs()) + (await pruneFailureReports()) + (await pruneConsole()))
      .catch((error) => {
        options.onPruneError?.(error);
        return 0;
      })
      .finally(() => (pruning = undefined));
  };
  if (options.pruneAutomatically ?? true) {
    pruneInBackground();
    timer = setInterval(pruneInBackground, PRUNE_INTERVAL_MS);
    timer.unref();
  }

  return {
    dialect: traits.dialect,
    db,
    apiKeys: guard(new SqlApiKeyStore(db)),
    emailLogs: guard(new SqlEmailLogStore(db)),
    recordLogs: guard(recordLogs),
    templates: guard(new SqlTemplateStore(db, traits, newId)),
    domains: guard(new SqlDomainStore(db, traits)),
    contacts: guard(new SqlContactStore(db, traits)),
    batches: guard(new SqlBatchStore(db, traits.dialect)),
    monitors: guard(monitors),
    reports: guard(reports),
    lookalikeJobs: guard(lookalikeJobs),
    alerts: guard(new SqlAlertStore(db)),
    rememberedLookalikes: guard(new SqlRememberedLookalikeStore(db)),
    failureReports: guard(failureReports),
    console: guard(consoleStore),
    shareLinks: guard(new SqlShareLinkStore(db)),
    pruneMonitorHistory: pruneMonitors,
    pruneRecordLogs: guardedPrune,
    async isEmpty() {
      if (closed) throw new StoreUnavailableError('the store is closed (the service is shutting down)');
      try {
        return (await db.selectFrom('organizations').select('id').limit(1).executeTakeFirst()) === undefined;
      } catch (error) {
        throw mapError(error, traits);
      }
    },
    async health(): Promise<StoreHealth> {
      if (closed) return { ok: false, reason: 'the store is closed' };
      try {
        await sql`select 1`.execute(db);
        return { ok: true };
      } catch (error) {
        return { ok: false, reason: traits.describe(error) };
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearInterval(timer);
      // Background work on the reports (the writer's refresh of the blocks of days) stops first.
      await reports.closing.run();
      // Records already appended are written before the database closes.
      await recordLogs.flush();
      await pruning;
      await db.destroy();
      await traits.destroy();
    },
  };
}

/** `error` as StoreUnavailableError when the database is unreachable; otherwise unchanged. */
function mapError(error: unknown, traits: SqlDialectTraits): unknown {
  if (isStoreUnavailable(error) || !traits.isUnavailable(error)) return error;
  return new StoreUnavailableError(`the database is unavailable: ${traits.describe(error)}`, { cause: error });
}

/**
 * Wraps every method of `store` so that a lost connection surfaces as StoreUnavailableError, as
 * does a call after close() (a request still in flight while the service shuts down).
 */
function guardStore<T extends object>(store: T, traits: SqlDialectTraits, isClosed: () => boolean): T {
  const closedError = () => new StoreUnavailableError('the store is closed (the service is shutting down)');
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      // A method's promise is mapped; anything else it returns (an iterator, a value) passes as is.
      return (...args: unknown[]) => {
        if (isClosed()) return Promise.reject(closedError());
        let result: unknown;
        try {
          result = (value as (...a: unknown[]) => unknown).apply(target, args);
        } catch (error) {
          throw mapError(error, traits);
        }
        if (result instanceof Promise) {
          return result.catch((error: unknown) => {
            throw mapError(error, traits);
          });
        }
        return result;
      };
    },
  });
}
