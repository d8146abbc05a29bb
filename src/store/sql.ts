/**
 * The stores on a SQL database through Kysely: one implementation for SQLite and PostgreSQL
 * (src/store/sqlite.ts and src/store/postgres.ts open the connection and pass it here).
 *
 * Behaviour is the memory store's, row for row: the same tenancy (every query filters by
 * organisation), the same order (newest first by `createdAt`, then id), the same soft delete and
 * the same template numbering. The shared contract suite (test/store/contract.test.ts) runs
 * against all three.
 */
import { randomUUID } from 'node:crypto';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import { digestsEqual } from './api-keys.js';
import { SqlBatchStore } from './batches-sql.js';
import { SqlLookalikeJobStore } from './lookalike-jobs-sql.js';
import { SqlConsoleStore } from './console-sql.js';
import { SqlShareLinkStore } from './share-links-sql.js';
import { SqlMonitorStore } from './monitors-sql.js';
import { SqlAlertStore } from './alerts-sql.js';
import { SqlRememberedLookalikeStore } from './remembered-lookalikes-sql.js';
import { SqlFailureReportStore } from './failure-reports-sql.js';
import { SqlReportStore } from './reports-sql.js';
import { isStoreUnavailable, StoreUnavailableError } from './errors.js';
import { withEventsInOrder } from './memory.js';
import type { SqlDialectName } from './migrations.js';
import type { DnsRecordsTable, DomainsTable, StoreDatabase, TemplatesTable, TemplateVersionsTable } from './sql-schema.js';
import { buildTemplateVersion, versionNumbersFromTally } from './template-numbering.js';
import type {
  ApiKeyRecord,
  ApiKeyStore,
  ChannelSubscription,
  Contact,
  ContactChannel,
  ContactGroup,
  ContactPage,
  ContactQuery,
  ContactStatus,
  ContactStore,
  DnsRecord,
  Domain,
  DomainPatch,
  DomainStore,
  EmailLog,
  EmailLogStore,
  KeyOwner,
  NewTemplateVersion,
  Organization,
  Page,
  PageRequest,
  RecordLog,
  RecordLogStore,
  StoreHealth,
  Stores,
  Template,
  TemplateStore,
  TemplateVersion,
  TemplateVariable,
  Timestamp,
  TlsMode,
} from './types.js';

/** Default retention of record logs in the SQL stores (`--retention-days`). */

/** Failed console sign-ins are kept this long (the limits count 15 minutes), then pruned with the rest. */
export const CONSOLE_FAILURES_KEPT_MS = 86_400_000;
export const DEFAULT_RETENTION_DAYS = 30;
/** Rows one pruning DELETE removes at most, so that no single statement holds the database long. */
export const PRUNE_BATCH_SIZE = 1_000;
/** How often the SQL stores prune the record log while running (also once at start). */
export const PRUNE_INTERVAL_MS = 60 * 60 * 1000;
/** Attempts of a template version creation that lost a race on its number (unique constraint). */
export const VERSION_CREATE_ATTEMPTS = 8;

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

/** How a dialect differs where Kysely's query builder does not hide it. */
export interface SqlDialectTraits {
  dialect: SqlDialectName;
  /** Whether the database is unreachable (as opposed to a bad query), judged from the driver's error. */
  isUnavailable(error: unknown): boolean;
  /** Whether the error is a unique-constraint violation (a lost race on a key). */
  isUniqueViolation(error: unknown): boolean;
  /** A one-line description of the error for StoreUnavailableError. */
  describe(error: unknown): string;
  /** Releases the connection or pool. */
  destroy(): Promise<void>;
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

const json = (value: unknown): string => JSON.stringify(value);
const parse = <T>(text: string): T => JSON.parse(text) as T;
const bool = (value: boolean): number => (value ? 1 : 0);
const isTrue = (value: unknown): boolean => value === 1 || value === true || value === '1';
const count = (value: unknown): number => Number(value ?? 0);

function offsetOf(page: PageRequest): number {
  return (page.page - 1) * page.limit;
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
  const monitors = new SqlMonitorStore(db, (error) => traits.isUniqueViolation(error));
  // Monitor history and finished webhook deliveries follow the record log's retention.
  const pruneMonitors = async (now: Date = new Date()): Promise<number> => {
    if (closed) return 0;
    try {
      return await monitors.prune(new Date(now.getTime() - retentionDays * DAY_MS).toISOString());
    } catch (error) {
      throw mapError(error, traits);
    }
  };
  const lookalikeJobs = new SqlLookalikeJobStore(db);
  // Finished lookalike jobs (and their reports) follow the same retention.
  const pruneLookalikeJobs = async (now: Date = new Date()): Promise<number> => {
    if (closed) return 0;
    try {
      return await lookalikeJobs.prune(new Date(now.getTime() - retentionDays * DAY_MS).toISOString());
    } catch (error) {
      throw mapError(error, traits);
    }
  };
  const failureReports = new SqlFailureReportStore(db, (error) => traits.isUniqueViolation(error));
  // Failure reports follow the same retention (src/store/failure-reports-sql.ts).
  const pruneFailureReports = async (now: Date = new Date()): Promise<number> => {
    if (closed) return 0;
    try {
      return await failureReports.prune(new Date(now.getTime() - retentionDays * DAY_MS).toISOString());
    } catch (error) {
      throw mapError(error, traits);
    }
  };
  const consoleStore = new SqlConsoleStore(db, traits.dialect, (error) => traits.isUniqueViolation(error));
  // The console's ended sessions, expired invitations and failed sign-ins past the limits' window.
  const pruneConsole = async (now: Date = new Date()): Promise<number> => {
    if (closed) return 0;
    try {
      return await consoleStore.prune(now.toISOString(), new Date(now.getTime() - CONSOLE_FAILURES_KEPT_MS).toISOString());
    } catch (error) {
      throw mapError(error, traits);
    }
  };
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
    reports: guard(new SqlReportStore(db, traits.dialect)),
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

/** Organisations and keys. Keys are found by their SHA-256 digest (indexed) and compared in constant time. */
class SqlApiKeyStore implements ApiKeyStore {
  constructor(private readonly db: Kysely<StoreDatabase>) {}

  async addOrganization(organization: Organization): Promise<void> {
    await this.db
      .insertInto('organizations')
      .values({ id: organization.id, name: organization.name })
      .onConflict((oc) => oc.column('id').doUpdateSet({ name: organization.name }))
      .execute();
  }

  async getOrganization(id: string): Promise<Organization | undefined> {
    return this.db.selectFrom('organizations').select(['id', 'name']).where('id', '=', id).executeTakeFirst();
  }

  async addKey(key: ApiKeyRecord): Promise<void> {
    const existing = await this.db.selectFrom('api_keys').select('id').where('id', '=', key.id).executeTakeFirst();
    if (existing) throw new Error(`duplicate API key id "${key.id}"`);
    await this.db
      .insertInto('api_keys')
      .values({ id: key.id, organization_id: key.organizationId, sha256: Buffer.from(key.sha256), owner: json(key.owner) })
      .execute();
  }

  async findByDigest(sha256: Buffer): Promise<ApiKeyRecord | undefined> {
    // Looked up by the digest of the secret, not the secret: where an index lookup stops says
    // nothing an attacker can use, since they cannot choose digest prefixes. The match is then
    // confirmed in constant time.
    const row = await this.db.selectFrom('api_keys').selectAll().where('sha256', '=', Buffer.from(sha256)).executeTakeFirst();
    if (!row || !digestsEqual(Buffer.from(row.sha256), sha256)) return undefined;
    return { id: row.id, organizationId: row.organization_id, sha256: Buffer.from(row.sha256), owner: parse<KeyOwner>(row.owner) };
  }

  async hasAnyKey(): Promise<boolean> {
    return (await this.db.selectFrom('api_keys').select('id').limit(1).executeTakeFirst()) !== undefined;
  }

  async removeKey(organizationId: string, id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('api_keys').where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

/** Email logs: one JSON document per log, indexed by organisation and age. */
class SqlEmailLogStore implements EmailLogStore {
  constructor(private readonly db: Kysely<StoreDatabase>) {}

  async add(log: EmailLog): Promise<void> {
    const row = { id: log.id, organization_id: log.organizationId, created_at: log.createdAt, document: json(log) };
    await this.db
      .insertInto('email_logs')
      .values(row)
      .onConflict((oc) => oc.column('id').doUpdateSet({ organization_id: row.organization_id, created_at: row.created_at, document: row.document }))
      .execute();
  }

  async get(organizationId: string, id: string): Promise<EmailLog | undefined> {
    const row = await this.db.selectFrom('email_logs').select('document').where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst();
    return row && withEventsInOrder(parse<EmailLog>(row.document));
  }

  async list(organizationId: string, page: PageRequest): Promise<Page<EmailLog>> {
    const [rows, total] = await Promise.all([
      this.db
        .selectFrom('email_logs')
        .select('document')
        .where('organization_id', '=', organizationId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(page.limit)
        .offset(offsetOf(page))
        .execute(),
      this.db.selectFrom('email_logs').select((eb) => eb.fn.countAll().as('n')).where('organization_id', '=', organizationId).executeTakeFirst(),
    ]);
    return { items: rows.map((r) => withEventsInOrder(parse<EmailLog>(r.document))), total: count(total?.n) };
  }
}

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
class SqlRecordLogStore implements RecordLogStore {
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

function templateFromRow(row: Selectable<TemplatesTable>): Template {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    description: row.description,
    subject: row.subject,
    fromEmail: row.from_email,
    replyTo: row.reply_to,
    previewText: row.preview_text,
    status: row.status as Template['status'],
    currentVersion: row.current_version === null ? null : Number(row.current_version),
    variables: parse<TemplateVariable[]>(row.variables),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function versionFromRow(row: Selectable<TemplateVersionsTable>): TemplateVersion {
  return {
    id: row.id,
    templateId: row.template_id,
    version: Number(row.version),
    name: row.name,
    isMajor: isTrue(row.is_major),
    subject: row.subject,
    fromEmail: row.from_email,
    replyTo: row.reply_to,
    previewText: row.preview_text,
    description: row.description,
    content: parse<unknown[]>(row.content),
    variables: parse<TemplateVariable[]>(row.variables),
    renderedHtml: row.rendered_html,
    createdByUserId: row.created_by_user_id,
    createdBy: parse<KeyOwner>(row.created_by),
    createdAt: row.created_at,
    ...(row.draft_number !== null ? { draftNumber: Number(row.draft_number) } : {}),
    ...(row.publish_number !== null ? { publishNumber: Number(row.publish_number) } : {}),
  };
}

function versionToRow(version: TemplateVersion): TemplateVersionsTable {
  return {
    id: version.id,
    template_id: version.templateId,
    version: version.version,
    name: version.name,
    is_major: bool(version.isMajor),
    subject: version.subject,
    from_email: version.fromEmail,
    reply_to: version.replyTo,
    preview_text: version.previewText,
    description: version.description,
    content: json(version.content),
    variables: json(version.variables),
    rendered_html: version.renderedHtml,
    created_by_user_id: version.createdByUserId,
    created_by: json(version.createdBy),
    created_at: version.createdAt,
    draft_number: version.draftNumber ?? null,
    publish_number: version.publishNumber ?? null,
  };
}

/** Templates and versions. Version numbers are assigned under a row lock on the template, with a unique constraint behind it. */
class SqlTemplateStore implements TemplateStore {
  constructor(
    private readonly db: Kysely<StoreDatabase>,
    private readonly traits: SqlDialectTraits,
    private readonly newId: () => string,
  ) {}

  async addTemplate(template: Template): Promise<void> {
    const row: TemplatesTable = {
      id: template.id,
      organization_id: template.organizationId,
      name: template.name,
      description: template.description,
      subject: template.subject,
      from_email: template.fromEmail,
      reply_to: template.replyTo,
      preview_text: template.previewText,
      status: template.status,
      current_version: template.currentVersion,
      variables: json(template.variables),
      created_at: template.createdAt,
      updated_at: template.updatedAt,
    };
    const { id: _id, ...update } = row;
    await this.db.insertInto('templates').values(row).onConflict((oc) => oc.column('id').doUpdateSet(update)).execute();
  }

  async addVersion(organizationId: string, version: TemplateVersion): Promise<void> {
    const template = await this.db.selectFrom('templates').select('id').where('id', '=', version.templateId).where('organization_id', '=', organizationId).executeTakeFirst();
    if (!template) throw new Error(`template "${version.templateId}" is not a template of organisation "${organizationId}"`);
    await this.db.insertInto('template_versions').values(versionToRow(version)).execute();
  }

  async getTemplate(organizationId: string, id: string): Promise<Template | undefined> {
    const row = await this.db.selectFrom('templates').selectAll().where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst();
    return row && templateFromRow(row);
  }

  async listTemplates(organizationId: string, page: PageRequest): Promise<Page<Template>> {
    const [rows, total] = await Promise.all([
      this.db
        .selectFrom('templates')
        .selectAll()
        .where('organization_id', '=', organizationId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(page.limit)
        .offset(offsetOf(page))
        .execute(),
      this.db.selectFrom('templates').select((eb) => eb.fn.countAll().as('n')).where('organization_id', '=', organizationId).executeTakeFirst(),
    ]);
    return { items: rows.map(templateFromRow), total: count(total?.n) };
  }

  async listVersions(organizationId: string, templateId: string): Promise<TemplateVersion[] | undefined> {
    const template = await this.db.selectFrom('templates').select('id').where('id', '=', templateId).where('organization_id', '=', organizationId).executeTakeFirst();
    if (!template) return undefined;
    const rows = await this.db.selectFrom('template_versions').selectAll().where('template_id', '=', templateId).orderBy('version').execute();
    return rows.map(versionFromRow);
  }

  async createVersion(organizationId: string, templateId: string, input: NewTemplateVersion): Promise<TemplateVersion | undefined> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction().execute((trx) => this.#createVersionIn(trx, organizationId, templateId, input));
      } catch (error) {
        // Two writers that read the same highest version: one insert hits the unique constraint
        // (template_id, version); it starts over and reads the winner's number.
        if (!this.traits.isUniqueViolation(error) || attempt >= VERSION_CREATE_ATTEMPTS) throw error;
      }
    }
  }

  async #createVersionIn(trx: Transaction<StoreDatabase>, organizationId: string, templateId: string, input: NewTemplateVersion): Promise<TemplateVersion | undefined> {
    // On PostgreSQL the template row is locked until commit, so concurrent creations for one
    // template (from any replica) run one after another; SQLite has one writer at a time anyway.
    const row = await trx
      .selectFrom('templates')
      .selectAll()
      .where('id', '=', templateId)
      .where('organization_id', '=', organizationId)
      .$if(this.traits.dialect === 'postgres', (q) => q.forUpdate())
      .executeTakeFirst();
    if (!row) return undefined;
    const template = templateFromRow(row);
    const tally = await trx
      .selectFrom('template_versions')
      .where('template_id', '=', templateId)
      .select((eb) => [
        eb.fn.max('version').as('highest'),
        eb.fn.sum<number>(eb.case().when('is_major', '=', 1).then(1).else(0).end()).as('majors'),
        eb.fn.sum<number>(eb.case().when('is_major', '=', 1).then(0).else(1).end()).as('drafts'),
      ])
      .executeTakeFirst();
    const isMajor = input.isMajor ?? false;
    const numbers = versionNumbersFromTally({ highest: count(tally?.highest), majors: count(tally?.majors), drafts: count(tally?.drafts) }, isMajor);
    const version = buildTemplateVersion(this.newId(), template, input, numbers);
    await trx.insertInto('template_versions').values(versionToRow(version)).execute();
    await trx
      .updateTable('templates')
      .set({
        updated_at: input.createdAt,
        ...(input.variables ? { variables: json(input.variables) } : {}),
        ...(isMajor ? { status: 'published', current_version: version.version } : {}),
      })
      .where('id', '=', templateId)
      .execute();
    return version;
  }
}

function dnsRecordFromRow(row: Selectable<DnsRecordsTable>): DnsRecord {
  return {
    id: row.id,
    recordType: row.record_type,
    recordTypeName: row.record_type_name,
    domain: row.domain,
    name: row.name,
    value: row.value,
    ttl: row.ttl,
    priority: row.priority === null ? null : Number(row.priority),
    status: row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    deletedAt: row.deleted_at,
  };
}

function domainFromRow(row: Selectable<DomainsTable>, records: DnsRecord[]): Domain {
  return {
    id: row.id,
    organizationId: row.organization_id,
    domain: row.domain,
    status: row.status,
    userVerifiedDomain: isTrue(row.user_verified_domain),
    systemVerified: isTrue(row.system_verified),
    customReturnPath: row.custom_return_path,
    trackingSubdomain: row.tracking_subdomain,
    isClickTrackingEnabled: isTrue(row.is_click_tracking_enabled),
    isOpenTrackingEnabled: isTrue(row.is_open_tracking_enabled),
    tls: row.tls as TlsMode,
    isTrackingDomain: isTrue(row.is_tracking_domain),
    isSendingEmailEnabled: isTrue(row.is_sending_email_enabled),
    isReceivingEmailEnabled: isTrue(row.is_receiving_email_enabled),
    verificationFailedReason: row.verification_failed_reason,
    dnsRecords: records,
    lastVerifiedAt: row.last_verified_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    deletedAt: row.deleted_at,
  };
}

/** Domains, with their DNS records in their own table (soft delete marks both). */
class SqlDomainStore implements DomainStore {
  constructor(
    private readonly db: Kysely<StoreDatabase>,
    private readonly traits: SqlDialectTraits,
  ) {}

  async add(domain: Domain): Promise<void> {
    const row: DomainsTable = {
      id: domain.id,
      organization_id: domain.organizationId,
      domain: domain.domain,
      status: domain.status,
      user_verified_domain: bool(domain.userVerifiedDomain),
      system_verified: bool(domain.systemVerified),
      custom_return_path: domain.customReturnPath,
      tracking_subdomain: domain.trackingSubdomain,
      is_click_tracking_enabled: bool(domain.isClickTrackingEnabled),
      is_open_tracking_enabled: bool(domain.isOpenTrackingEnabled),
      tls: domain.tls,
      is_tracking_domain: bool(domain.isTrackingDomain),
      is_sending_email_enabled: bool(domain.isSendingEmailEnabled),
      is_receiving_email_enabled: bool(domain.isReceivingEmailEnabled),
      verification_failed_reason: domain.verificationFailedReason,
      last_verified_at: domain.lastVerifiedAt,
      created_at: domain.createdAt,
      updated_at: domain.updatedAt,
      deleted_at: domain.deletedAt,
    };
    const { id: _id, ...update } = row;
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('domains').values(row).onConflict((oc) => oc.column('id').doUpdateSet(update)).execute();
      // Adding a domain again replaces its records, as the memory store replaces the whole domain.
      await trx.deleteFrom('dns_records').where('domain_id', '=', domain.id).execute();
      if (domain.dnsRecords.length > 0) {
        await trx
          .insertInto('dns_records')
          .values(
            domain.dnsRecords.map((r, position) => ({
              id: r.id,
              domain_id: domain.id,
              position,
              record_type: r.recordType,
              record_type_name: r.recordTypeName,
              domain: r.domain,
              name: r.name,
              value: r.value,
              ttl: r.ttl,
              priority: r.priority,
              status: r.status,
              created_at: r.createdAt,
              updated_at: r.updatedAt,
              deleted_at: r.deletedAt,
            })),
          )
          .execute();
      }
    });
  }

  async #liveRecords(db: Kysely<StoreDatabase>, domainIds: string[]): Promise<Map<string, DnsRecord[]>> {
    const byDomain = new Map<string, DnsRecord[]>(domainIds.map((id) => [id, []]));
    if (domainIds.length === 0) return byDomain;
    const rows = await db.selectFrom('dns_records').selectAll().where('domain_id', 'in', domainIds).where('deleted_at', 'is', null).orderBy('domain_id').orderBy('position').execute();
    for (const row of rows) byDomain.get(row.domain_id)?.push(dnsRecordFromRow(row));
    return byDomain;
  }

  async get(organizationId: string, id: string): Promise<Domain | undefined> {
    const row = await this.db.selectFrom('domains').selectAll().where('id', '=', id).where('organization_id', '=', organizationId).where('deleted_at', 'is', null).executeTakeFirst();
    if (!row) return undefined;
    return domainFromRow(row, (await this.#liveRecords(this.db, [row.id])).get(row.id) ?? []);
  }

  async list(organizationId: string, page: PageRequest): Promise<Page<Domain>> {
    const live = this.db.selectFrom('domains').where('organization_id', '=', organizationId).where('deleted_at', 'is', null);
    const [rows, total] = await Promise.all([
      live.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(offsetOf(page)).execute(),
      live.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst(),
    ]);
    const records = await this.#liveRecords(
      this.db,
      rows.map((r) => r.id),
    );
    return { items: rows.map((r) => domainFromRow(r, records.get(r.id) ?? [])), total: count(total?.n) };
  }

  async update(organizationId: string, id: string, patch: DomainPatch, now: Timestamp): Promise<Domain | undefined> {
    const result = await this.db
      .updateTable('domains')
      .set({
        // Only the fields given change; `updatedAt` is always set.
        ...(patch.isClickTrackingEnabled !== undefined ? { is_click_tracking_enabled: bool(patch.isClickTrackingEnabled) } : {}),
        ...(patch.isOpenTrackingEnabled !== undefined ? { is_open_tracking_enabled: bool(patch.isOpenTrackingEnabled) } : {}),
        ...(patch.isSendingEmailEnabled !== undefined ? { is_sending_email_enabled: bool(patch.isSendingEmailEnabled) } : {}),
        ...(patch.isReceivingEmailEnabled !== undefined ? { is_receiving_email_enabled: bool(patch.isReceivingEmailEnabled) } : {}),
        ...(patch.tls !== undefined ? { tls: patch.tls } : {}),
        updated_at: now,
      })
      .where('id', '=', id)
      .where('organization_id', '=', organizationId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return undefined;
    return this.get(organizationId, id);
  }

  async softDelete(organizationId: string, id: string, now: Timestamp): Promise<Domain | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('domains')
        .selectAll()
        .where('id', '=', id)
        .where('organization_id', '=', organizationId)
        .where('deleted_at', 'is', null)
        .$if(this.traits.dialect === 'postgres', (q) => q.forUpdate())
        .executeTakeFirst();
      if (!row) return undefined;
      const removed = ((await this.#liveRecords(trx, [id])).get(id) ?? []).map((r) => ({ ...r, deletedAt: now, updatedAt: now }));
      await trx.updateTable('dns_records').set({ deleted_at: now, updated_at: now }).where('domain_id', '=', id).where('deleted_at', 'is', null).execute();
      await trx.updateTable('domains').set({ deleted_at: now, updated_at: now }).where('id', '=', id).execute();
      return domainFromRow({ ...row, deleted_at: now, updated_at: now }, removed);
    });
  }
}

/** Contacts, groups and channels. */
class SqlContactStore implements ContactStore {
  constructor(
    private readonly db: Kysely<StoreDatabase>,
    private readonly traits: SqlDialectTraits,
  ) {}

  async addGroup(group: ContactGroup): Promise<void> {
    await this.db
      .insertInto('contact_groups')
      .values({ id: group.id, organization_id: group.organizationId, name: group.name })
      .onConflict((oc) => oc.column('id').doUpdateSet({ organization_id: group.organizationId, name: group.name }))
      .execute();
  }

  async addChannel(channel: ContactChannel): Promise<void> {
    const row = { id: channel.id, organization_id: channel.organizationId, name: channel.name, default_subscription: channel.defaultSubscription };
    const { id: _id, ...update } = row;
    await this.db.insertInto('contact_channels').values(row).onConflict((oc) => oc.column('id').doUpdateSet(update)).execute();
  }

  async addContact(contact: Contact): Promise<void> {
    const row = {
      id: contact.id,
      organization_id: contact.organizationId,
      email: contact.email,
      email_lower: contact.email.toLowerCase(),
      first_name: contact.firstName,
      last_name: contact.lastName,
      status: contact.status,
      properties: json(contact.properties),
      group_ids: json(contact.groupIds),
      enrolments: json(contact.enrolments),
      suppression_reason: contact.suppressionReason,
      suppressed_at: contact.suppressedAt,
      created_at: contact.createdAt,
      updated_at: contact.updatedAt,
    };
    const { id: _id, ...update } = row;
    await this.db.insertInto('contacts').values(row).onConflict((oc) => oc.column('id').doUpdateSet(update)).execute();
  }

  async list(organizationId: string, query: ContactQuery): Promise<ContactPage> {
    const search = query.search?.toLowerCase();
    // Case-insensitive substring without LIKE, so '%' and '_' in the search are plain characters.
    const position = this.traits.dialect === 'postgres' ? 'strpos' : 'instr';
    const matching = this.db
      .selectFrom('contacts')
      .where('organization_id', '=', organizationId)
      .$if(query.status !== undefined, (q) => q.where('status', '=', query.status as ContactStatus))
      .$if(search !== undefined, (q) => q.where(sql<number>`${sql.raw(position)}(email_lower, ${search})`, '>', 0));
    const [rows, total, counts, groups, channels] = await Promise.all([
      matching.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).offset(offsetOf(query)).execute(),
      matching.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst(),
      // Organisation-wide: the filters of the query do not apply (spec: Pagination rule 7).
      this.db
        .selectFrom('contacts')
        .where('organization_id', '=', organizationId)
        .select((eb) => [
          eb.fn.countAll().as('all'),
          eb.fn.sum<number>(eb.case().when('status', '=', 'subscribed').then(1).else(0).end()).as('subscribed'),
          eb.fn.sum<number>(eb.case().when('status', '=', 'unsubscribed').then(1).else(0).end()).as('unsubscribed'),
        ])
        .executeTakeFirst(),
      this.db.selectFrom('contact_groups').select(['id', 'name']).where('organization_id', '=', organizationId).execute(),
      this.db.selectFrom('contact_channels').selectAll().where('organization_id', '=', organizationId).orderBy('id').execute(),
    ]);
    const groupNames = new Map(groups.map((g) => [g.id, g.name]));
    return {
      items: rows.map((c) => {
        const groupIds = parse<string[]>(c.group_ids);
        const enrolments = parse<Contact['enrolments']>(c.enrolments);
        return {
          id: c.id,
          email: c.email,
          firstName: c.first_name,
          lastName: c.last_name,
          status: c.status as ContactStatus,
          properties: parse<Record<string, string>>(c.properties),
          suppressionReason: c.suppression_reason,
          suppressedAt: c.suppressed_at,
          createdAt: c.created_at,
          updatedAt: c.updated_at,
          groups: groupIds.flatMap((id) => {
            const name = groupNames.get(id);
            return name === undefined ? [] : [{ id, name }];
          }),
          // Every channel of the organisation: an explicit enrolment wins, otherwise the channel's default.
          channels: channels.map((ch) => {
            const enrolment = enrolments[ch.id];
            const subscription: ChannelSubscription =
              enrolment === 'enrolled' ? 'opt_in' : enrolment === 'unenrolled' ? 'opt_out' : (ch.default_subscription as ChannelSubscription);
            return { id: ch.id, name: ch.name, subscription };
          }),
        };
      }),
      total: count(total?.n),
      totalContacts: count(counts?.all),
      subscribedContacts: count(counts?.subscribed),
      unsubscribedContacts: count(counts?.unsubscribed),
    };
  }
}
