/**
 * Reports in SQL (SQLite or PostgreSQL) on Kysely.
 *
 * Four tables: the reports (unique per organisation and identity: a second receipt is refused by
 * the key and counted in `report_duplicates`), their records (one row per aggregate record, with
 * the report's own date range copied in so that the range query needs no join), and the refused
 * files. A report and its records are written in one transaction (or one savepoint of a batch's
 * transaction, `addMany`): all of it or none of it.
 * Epoch seconds are `bigint`; timestamps ISO 8601 text; nested values JSON text.
 */
import { digestReports, mergeDigestEntries, type AggregateRecord, type AggregateReport, type SenderDigestEntry } from '@spoof-checker/engine';
import { CompiledQuery, sql, type CreateTableBuilder, type Kysely, type RawBuilder, type SqliteDatabase } from 'kysely';
import { CloseHooks } from './close-hooks.js';
import type { MigrationFactory, SqlDialectName } from './migration-types.js';
import { createTable } from './sql-tables.js';
import type { Page, PageRequest } from './page-types.js';
import {
  MAX_REPORT_RECORDS_PER_ORGANIZATION_PER_DAY,
  assertBatchSize,
  mergeDigestDay,
  OTHER_SOURCES,
  REPORT_LIMIT_WINDOW_MS,
  emptyDigestEntry,
  identityBaseOf,
  reportDay,
  reportingSource,
  sourceLimit,
  REPORT_KINDS,
  sourceRollups,
  sourceWindowEntries,
  blockHalves,
  dayBlocks,
  epochDay,
  type DayBlock,
  type SourceWindowPart,
  type SourceWindowSums,
  type AddReportOutcome,
  type DayRange,
  type ReportArrivals,
  type ReportDayTotals,
  type ReportSourceTotals,
  type NewReport,
  type ReportCounts,
  type ReportKind,
  type ReportOrigin,
  type ReportQuery,
  type ReportRange,
  type ReportRejection,
  type ReportRouting,
  type ReportStore,
  type StoredReport,
} from './reports.js';

/** Records written by one INSERT (14 values each: well under both databases' parameter limits). */
export const REPORT_RECORD_INSERT_CHUNK = 500;
/** Digest entries read or written by one statement (12 values each). */
export const REPORT_DIGEST_CHUNK = 500;
/**
 * Merges of two digest entries' rests (sets, words, additive maps: the entry's JSON) remembered by
 * the two texts: a domain's sources carry the same few rests day after day, so most of a report's
 * merge is a lookup. Forgotten all at once when full (a forged report of distinct rests costs what
 * merging them costs, never memory).
 */
export const REST_MERGES_REMEMBERED = 4_096;
/** Domains whose day totals one read asks for by name (`domainDailyTotals` with `only`): well inside every dialect's bound parameters. */
export const DAY_TOTALS_DOMAINS_PER_READ = 500;
/** The advisory-lock class of a domain's digest (PostgreSQL): one report's merge at a time per organisation and domain. */
const DIGEST_LOCK_CLASS = 0x5250_4454; // "RPDT"
/** The advisory-lock class of a domain's blocks of days (PostgreSQL): one build at a time per organisation and domain. */
const BLOCK_LOCK_CLASS = 0x5250_424b; // "RPBK"

/** The columns of one record, in INSERT order. */
const RECORD_COLUMNS = ['report_pk', 'seq', 'organization_id', 'domain', 'begin_at', 'end_at', 'day', 'source_ip', 'header_from', 'disposition', 'dkim_aligned', 'spf_aligned', 'count', 'detail'] as const;
/** The columns of one report, in INSERT order (identity_base: migration 0013). */
const REPORT_COLUMNS = ['id', 'organization_id', 'kind', 'identity', 'domain', 'begin_at', 'end_at', 'reporter', 'org_name', 'report_id', 'authenticated', 'trusted', 'reporting_source', 'received_at', 'origin', 'document', 'record_count', 'message_count', 'identity_base'] as const;
/** The columns of one digest entry, in INSERT order. */
const DIGEST_COLUMNS = ['organization_id', 'domain', 'day', 'trusted', 'source', 'messages', 'dmarc_pass', 'spf_aligned', 'dkim_aligned', 'failing', 'entry'] as const;
/** The parameters of the `add-day` statement (a day's totals: its key and five counts). */
const DAY_TOTALS_PARAMETERS = 9;
/** The columns of one block row (migration 0014), in INSERT order. */
const BLOCK_COLUMNS = ['organization_id', 'domain', 'trusted', 'block_days', 'start_day', 'source', 'first_day', 'last_day', 'messages', 'dmarc_pass', 'spf_aligned', 'dkim_aligned', 'failing', 'entry'] as const;

/** A report counted against the record limits beyond what a batch read at its start ({@link LimitTally}). */
type CountedReport = { receivedAt: string; source: string | null; records: number };

/**
 * The records of one organisation's reports received in the last day, as #overLimit counts them,
 * read once a batch (addMany) rather than twice a report: the sums over the window of the batch's
 * latest report, the reports received between the earliest report's window start and
 * that one, and each report the batch has stored so far. A report's counts are the sums plus those
 * of `counted` received after its own window start: what the two sums read in its savepoint gave.
 */
interface LimitTally {
  organization: number;
  sources: Map<string, number>;
  counted: CountedReport[];
}

/** The start of the window the record limits count (REPORT_LIMIT_WINDOW_MS before the report's receipt); throws on a receipt time that is not one. */
function limitWindowStart(report: NewReport): string {
  return new Date(Date.parse(report.origin.receivedAt) - REPORT_LIMIT_WINDOW_MS).toISOString();
}

/** The summed counts of the roll-up tables (PostgreSQL gives bigint as text). */
type CountColumns = { messages: number | string; dmarc_pass: number | string; spf_aligned: number | string; dkim_aligned: number | string; failing: number | string };

/** The report tables, as Kysely sees them. */
export interface ReportTables {
  reports: {
    id: string;
    organization_id: string;
    kind: string;
    identity: string;
    domain: string;
    begin_at: number | string;
    end_at: number | string;
    reporter: string;
    org_name: string | null;
    report_id: string;
    /** 1 when the report message was authenticated. */
    authenticated: number;
    /** 1 when the origin vouches for the report (isTrustedOrigin; migration 0008). */
    trusted: number;
    /** The reporting source its records count against (reportingSource; migration 0008), null for the operator's files. */
    reporting_source: string | null;
    received_at: string;
    /** JSON ReportOrigin. */
    origin: string;
    document: string;
    record_count: number | string;
    message_count: number | string;
    /** The identity base of an unauthenticated report (ReportOrigin.identityBase; migration 0013), else null. */
    identity_base: string | null;
  };
  report_records: {
    report_pk: string;
    seq: number;
    organization_id: string;
    domain: string;
    begin_at: number | string;
    end_at: number | string;
    day: string;
    source_ip: string;
    header_from: string;
    disposition: string;
    dkim_aligned: number;
    spf_aligned: number;
    count: number | string;
    detail: string;
  };
  report_sender_days: {
    organization_id: string;
    domain: string;
    day: string;
    /** 1 when the reports it sums are trusted (isTrustedOrigin). */
    trusted: number;
    source: string;
    messages: number | string;
    dmarc_pass: number | string;
    spf_aligned: number | string;
    dkim_aligned: number | string;
    failing: number | string;
    /** The rest of the engine's SenderDigestEntry, JSON (sets and forwarding evidence). */
    entry: string;
  };
  /**
   * A domain's messages per day, trusted and untrusted apart, added to as each report is merged, and
   * how many times the day changed (migration 0014): the daily series and what a block's stamp sums.
   */
  report_day_totals: {
    organization_id: string;
    domain: string;
    day: string;
    trusted: number;
    revision: number | string;
  } & CountColumns;
  /** A source's roll-up over an aligned block of days (SENDER_BLOCK_SIZES; migration 0014). */
  report_sender_blocks: {
    organization_id: string;
    domain: string;
    trusted: number;
    block_days: number;
    start_day: string;
    source: string;
    first_day: string;
    last_day: string;
    entry: string;
  } & CountColumns;
  /** The sum of its days' revisions each block was built at (migration 0014). */
  report_sender_block_stamps: {
    organization_id: string;
    domain: string;
    trusted: number;
    block_days: number;
    start_day: string;
    stamp: number | string;
  };
  /**
   * Reports stored per organisation and domain (migration 0015): bumped in the transaction that
   * stores them; an organisation's revision is the sum over its domains ({@link SqlReportStore.revision}).
   */
  report_revisions: {
    organization_id: string;
    domain: string;
    revision: number | string;
  };
  report_duplicates: {
    organization_id: string;
    identity: string;
    domain: string;
    kind: string;
    begin_at: number | string;
    end_at: number | string;
    times: number | string;
  };
  report_rejections: {
    id: string;
    organization_id: string;
    received_at: string;
    channel: string;
    file_name: string | null;
    sender: string | null;
    reason: string;
    detail: string;
  };
}

/** The migration that creates the report tables (`0005_reports`; forward-only). */
export const createReportTables: MigrationFactory = ({ text }) => ({
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('reports')
      .addColumn('id', text, (c) => c.primaryKey())
      .addColumn('organization_id', text, (c) => c.notNull())
      .addColumn('kind', text, (c) => c.notNull())
      .addColumn('identity', text, (c) => c.notNull())
      .addColumn('domain', text, (c) => c.notNull())
      .addColumn('begin_at', 'bigint', (c) => c.notNull())
      .addColumn('end_at', 'bigint', (c) => c.notNull())
      .addColumn('reporter', text, (c) => c.notNull())
      .addColumn('org_name', text)
      .addColumn('report_id', text, (c) => c.notNull())
      .addColumn('authenticated', 'integer', (c) => c.notNull())
      .addColumn('received_at', text, (c) => c.notNull())
      .addColumn('origin', text, (c) => c.notNull())
      .addColumn('document', text, (c) => c.notNull())
      .addColumn('record_count', 'bigint', (c) => c.notNull())
      .addColumn('message_count', 'bigint', (c) => c.notNull())
      // A report is stored once per organisation, whatever process received it.
      .addUniqueConstraint('reports_unique_identity', ['organization_id', 'identity'])
      .execute();
    await db.schema.createIndex('reports_by_domain').on('reports').columns(['organization_id', 'domain', 'kind', 'begin_at']).execute();
    await db.schema.createIndex('reports_by_begin').on('reports').columns(['organization_id', 'begin_at', 'id']).execute();
    await db.schema
      .createTable('report_records')
      .addColumn('report_pk', text, (c) => c.notNull().references('reports.id').onDelete('cascade'))
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('organization_id', text, (c) => c.notNull())
      .addColumn('domain', text, (c) => c.notNull())
      .addColumn('begin_at', 'bigint', (c) => c.notNull())
      .addColumn('end_at', 'bigint', (c) => c.notNull())
      .addColumn('day', text, (c) => c.notNull())
      .addColumn('source_ip', text, (c) => c.notNull())
      .addColumn('header_from', text, (c) => c.notNull())
      .addColumn('disposition', text, (c) => c.notNull())
      .addColumn('dkim_aligned', 'integer', (c) => c.notNull())
      .addColumn('spf_aligned', 'integer', (c) => c.notNull())
      .addColumn('count', 'bigint', (c) => c.notNull())
      .addColumn('detail', text, (c) => c.notNull())
      .addPrimaryKeyConstraint('report_records_pk', ['report_pk', 'seq'])
      .execute();
    // `reports show`: one domain, by the reports' own date range.
    await db.schema.createIndex('report_records_by_domain').on('report_records').columns(['organization_id', 'domain', 'begin_at']).execute();
    await db.schema
      .createTable('report_duplicates')
      .addColumn('organization_id', text, (c) => c.notNull())
      .addColumn('identity', text, (c) => c.notNull())
      .addColumn('domain', text, (c) => c.notNull())
      .addColumn('kind', text, (c) => c.notNull())
      .addColumn('begin_at', 'bigint', (c) => c.notNull())
      .addColumn('end_at', 'bigint', (c) => c.notNull())
      .addColumn('times', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('report_duplicates_pk', ['organization_id', 'identity'])
      .execute();
    await db.schema
      .createTable('report_rejections')
      .addColumn('id', text, (c) => c.primaryKey())
      .addColumn('organization_id', text, (c) => c.notNull())
      .addColumn('received_at', text, (c) => c.notNull())
      .addColumn('channel', text, (c) => c.notNull())
      .addColumn('file_name', text)
      .addColumn('sender', text)
      .addColumn('reason', text, (c) => c.notNull())
      .addColumn('detail', text, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('report_rejections_by_organization').on('report_rejections').columns(['organization_id', 'received_at', 'id']).execute();
  },
});

/**
 * Migration `0008_report_digests` (forward-only): the engine's per-source, per-day digest of each
 * domain's aggregate reports, trusted and untrusted apart, and the `trusted` mark of each report.
 * Reports stored before it are digested here, so their summaries read the same.
 */
export const createReportDigestTables: MigrationFactory = ({ text, dialect }) => ({
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('reports').addColumn('trusted', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    // JSON.stringify(origin) writes `channel` first: a file imported by the operator, an upload with the organisation's key.
    await sql`update reports set trusted = case when authenticated = 1 or origin like '{"channel":"file"%' or origin like '{"channel":"upload"%' then 1 else 0 end`.execute(db);
    // The record limits (reportingSource): the records of the last day, per organisation and per reporting source.
    await db.schema.alterTable('reports').addColumn('reporting_source', text).execute();
    await sql`update reports set reporting_source = case when origin like '{"channel":"file"%' then null when trusted = 0 then 'unauthenticated' when authenticated = 1 then reporter else 'organization' end`.execute(db);
    await db.schema.createIndex('reports_by_received').on('reports').columns(['organization_id', 'received_at', 'record_count']).execute();
    await db.schema.createIndex('reports_by_reporting_source').on('reports').columns(['organization_id', 'reporting_source', 'received_at', 'record_count']).execute();
    await db.schema
      .createTable('report_sender_days')
      .addColumn('organization_id', text, (c) => c.notNull())
      .addColumn('domain', text, (c) => c.notNull())
      .addColumn('day', text, (c) => c.notNull())
      .addColumn('trusted', 'integer', (c) => c.notNull())
      .addColumn('source', text, (c) => c.notNull())
      .addColumn('messages', 'bigint', (c) => c.notNull())
      .addColumn('dmarc_pass', 'bigint', (c) => c.notNull())
      .addColumn('spf_aligned', 'bigint', (c) => c.notNull())
      .addColumn('dkim_aligned', 'bigint', (c) => c.notNull())
      .addColumn('failing', 'bigint', (c) => c.notNull())
      .addColumn('entry', text, (c) => c.notNull())
      // Summaries read one domain's days in order: the key is the index.
      .addPrimaryKeyConstraint('report_sender_days_pk', ['organization_id', 'domain', 'day', 'trusted', 'source'])
      // SQLite: the rows stored in the key's own B-tree (one tree to update per merge, not a table and its key's index).
      .$call((builder) => (dialect === 'sqlite' ? builder.modifyEnd(sql`without rowid`) : builder))
      .execute();
    await digestStoredReports(db, dialect);
  },
});

/**
 * Migration `0013_report_identity_base` (forward-only): each report's identity base in a column
 * (from its origin's `identityBase`), indexed, so that whether a report is contested (another report
 * of the organisation under the same base) is a fact of the store, read with the list.
 */
export const createReportIdentityBase: MigrationFactory = ({ text, dialect }) => ({
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('reports').addColumn('identity_base', text).execute();
    if (dialect === 'postgres') await sql`update reports set identity_base = (origin::jsonb) ->> 'identityBase' where origin like '%"identityBase"%'`.execute(db);
    else await sql`update reports set identity_base = json_extract(origin, '$.identityBase') where origin like '%"identityBase"%'`.execute(db);
    await db.schema.createIndex('reports_by_identity_base').on('reports').columns(['organization_id', 'identity_base']).execute();
  },
});

/**
 * Migration `0014_report_sender_blocks` (forward-only): the day roll-up's days rolled up again per
 * source into aligned blocks of 2 to 64 days (SENDER_BLOCK_SIZES), so that a window reads about a
 * dozen rows per source, not one per day; each block stamped with the sum of its days' revisions
 * (bumped as each report is merged), so that a block whose days changed is built again, from its two
 * halves, before it is read. Nothing to backfill: a block not yet built has no stamp and is built
 * from `report_sender_days` on its first read, as a changed one is.
 */
export const createReportSenderBlocks: MigrationFactory = (context) => ({
  async up(db: Kysely<any>): Promise<void> {
    const withoutRowid = (builder: CreateTableBuilder<any, any>) => (context.dialect === 'sqlite' ? builder.modifyEnd(sql`without rowid`) : builder);
    const counts = { messages: 'bigint', dmarc_pass: 'bigint', spf_aligned: 'bigint', dkim_aligned: 'bigint', failing: 'bigint' } as const;
    await createTable(db, context, 'report_day_totals', { organization_id: 'text', domain: 'text', day: 'text', trusted: 'integer', revision: 'bigint', ...counts })
      // The day roll-up's key order: one domain's days in order, and the organisation's domains walked (domainDailyTotals).
      .addPrimaryKeyConstraint('report_day_totals_pk', ['organization_id', 'domain', 'day', 'trusted'])
      .$call(withoutRowid)
      .execute();
    await totalStoredDays(db);
    // The window's counts (`counts`: the reports overlapping it, by kind, authentication and trust) read from this index alone, never the reports' rows.
    await db.schema.createIndex('reports_by_domain_range').on('reports').columns(['organization_id', 'domain', 'kind', 'begin_at', 'end_at', 'authenticated', 'trusted', 'message_count']).execute();
    const block = { organization_id: 'text', domain: 'text', trusted: 'integer', block_days: 'integer', start_day: 'text' } as const;
    await createTable(db, context, 'report_sender_blocks', { ...block, source: 'text', first_day: 'text', last_day: 'text', ...counts, entry: 'text' })
      .addPrimaryKeyConstraint('report_sender_blocks_pk', ['organization_id', 'domain', 'trusted', 'block_days', 'start_day', 'source'])
      .$call(withoutRowid)
      .execute();
    await createTable(db, context, 'report_sender_block_stamps', { ...block, stamp: 'bigint' })
      .addPrimaryKeyConstraint('report_sender_block_stamps_pk', ['organization_id', 'domain', 'trusted', 'block_days', 'start_day'])
      .$call(withoutRowid)
      .execute();
  },
});

/**
 * Migration `0015_report_revisions` (forward-only): the reports stored per organisation and domain,
 * bumped as each batch of reports is stored, so that an organisation's revision (what the console's
 * overview remembers its figures under) is read from a few rows, never by counting its reports. One
 * row per domain, not per organisation: batches of one organisation's domains run side by side on
 * PostgreSQL (the writer's lanes), and one row would hold each of them until the one before committed.
 * The reports stored before it are counted here.
 */
export const createReportRevisions: MigrationFactory = (context) => ({
  async up(db: Kysely<any>): Promise<void> {
    await createTable(db, context, 'report_revisions', { organization_id: 'text', domain: 'text', revision: 'bigint' })
      .addPrimaryKeyConstraint('report_revisions_pk', ['organization_id', 'domain'])
      .$call((builder) => (context.dialect === 'sqlite' ? builder.modifyEnd(sql`without rowid`) : builder))
      .execute();
    await sql`insert into report_revisions (organization_id, domain, revision) select organization_id, domain, count(*) from reports group by organization_id, domain`.execute(db);
  },
});

/**
 * The indexes no read needs, dropped by migration `0016_report_write_indexes` (forward-only): every
 * report stored wrote them, a row of `reports` and each of its records. `reports_by_domain`
 * (organization_id, domain, kind, begin_at) is a prefix of `reports_by_domain_range` (migration 0014),
 * which serves each of its reads (`documents`, `latestEnd`, `domains`, `counts`: EXPLAIN QUERY PLAN
 * picks the longer one, or `reports_by_begin`, with or without it); nothing reads `report_records` by
 * `report_records_by_domain` (organization_id, domain, begin_at): its records are read by their report
 * (the key, report_pk then seq), and deleted with it.
 */
export const REPORT_INDEXES_DROPPED = ['reports_by_domain', 'report_records_by_domain'] as const;

/** Migration `0016_report_write_indexes`: drops {@link REPORT_INDEXES_DROPPED} (the same on both dialects). */
export const dropReportWriteIndexes: MigrationFactory = () => ({
  async up(db: Kysely<any>): Promise<void> {
    for (const name of REPORT_INDEXES_DROPPED) await db.schema.dropIndex(name).ifExists().execute();
  },
});

/**
 * The day totals of the days stored before migration 0014, from the day roll-up (revision 0: their
 * blocks, never built, are built from the days when first read).
 */
export async function totalStoredDays(db: Kysely<any>): Promise<void> {
  await sql`insert into report_day_totals (organization_id, domain, day, trusted, revision, messages, dmarc_pass, spf_aligned, dkim_aligned, failing)
    select organization_id, domain, day, trusted, 0, sum(messages), sum(dmarc_pass), sum(spf_aligned), sum(dkim_aligned), sum(failing) from report_sender_days group by organization_id, domain, day, trusted`.execute(db);
}

/**
 * Digests every stored aggregate report into `report_sender_days`, one report at a time (memory stays
 * flat): what migration 0008 does for the reports stored before it. Each report's rows are read back
 * into the engine's shape and merged as ingestion would have merged them.
 */
export async function digestStoredReports(db: Kysely<any>, dialect: SqlDialectName): Promise<void> {
  const store = new SqlReportStore(db, dialect);
  let after = '';
  for (;;) {
    const batch = await db
      .selectFrom('reports')
      .select(['id', 'organization_id', 'domain', 'document', 'begin_at', 'end_at', 'trusted'])
      .where('kind', '=', 'aggregate')
      .where('id', '>', after)
      .orderBy('id')
      .limit(100)
      .execute();
    if (batch.length === 0) break;
    for (const row of batch) {
      const records = await db.selectFrom('report_records').select(['source_ip', 'count', 'header_from', 'disposition', 'detail']).where('report_pk', '=', row.id).orderBy('seq').execute();
      const report = { ...(JSON.parse(row.document) as Omit<AggregateReport, 'records'>), records: records.map((r) => ({ sourceIp: r.source_ip, count: Number(r.count), headerFrom: r.header_from, disposition: r.disposition, ...(JSON.parse(r.detail) as object) }) as AggregateRecord) };
      await store.mergeDigest(db, row.organization_id, row.domain, Number(row.trusted) === 1, digestReports([report], row.domain).senders);
    }
    after = batch[batch.length - 1]!.id;
  }
}

/** A digest entry less what the row holds in columns (day, source, the counts), and less its empty fields: its JSON. */
export function digestRestJson(e: SenderDigestEntry): string {
  const rest: Record<string, unknown> = {};
  if (e.forwardedFailing !== 0) rest.forwardedFailing = e.forwardedFailing;
  if (e.selectors.length > 0) rest.selectors = e.selectors;
  if (e.dkimDomains.length > 0) rest.dkimDomains = e.dkimDomains;
  if (e.spfDomains.length > 0) rest.spfDomains = e.spfDomains;
  if (e.verified.length > 0) rest.verified = e.verified;
  if (e.ownFailed.length > 0) rest.ownFailed = e.ownFailed;
  if (e.ownFailedNoSelector) rest.ownFailedNoSelector = true;
  if (e.broken.length > 0) rest.broken = e.broken;
  if (e.brokenNoSelector !== 0) rest.brokenNoSelector = e.brokenNoSelector;
  if (e.unalignedDkimPass !== null) rest.unalignedDkimPass = e.unalignedDkimPass;
  if (e.unalignedSpfPass !== null) rest.unalignedSpfPass = e.unalignedSpfPass;
  if (e.ownSpfFailed !== null) rest.ownSpfFailed = e.ownSpfFailed;
  return JSON.stringify(rest);
}

/** The columns of a stored digest row a summary reads. */
type DigestRow = { day: string; source: string; messages: number | string; dmarc_pass: number | string; spf_aligned: number | string; dkim_aligned: number | string; failing: number | string; entry: string };

/** A stored digest row back as the engine's entry. */
function entryOf(row: DigestRow): SenderDigestEntry {
  return {
    ...emptyDigestEntry(row.source, row.day),
    messages: Number(row.messages),
    dmarcPass: Number(row.dmarc_pass),
    spfAligned: Number(row.spf_aligned),
    dkimAligned: Number(row.dkim_aligned),
    failing: Number(row.failing),
    ...(JSON.parse(row.entry) as Partial<SenderDigestEntry>),
  };
}

/** `insert into <table> (<columns>) values (…), (…)` for `rows` rows, in the dialect's placeholders, built once per size. */
function multiRowInsert(dialect: SqlDialectName, table: string, columns: readonly string[], rows: number, suffix = '', offset = 0): string {
  const width = columns.length;
  const tuples: string[] = [];
  for (let r = 0; r < rows; r++) {
    const marks: string[] = [];
    for (let c = 0; c < width; c++) marks.push(dialect === 'postgres' ? `$${offset + r * width + c + 1}` : '?');
    tuples.push(`(${marks.join(', ')})`);
  }
  return `insert into ${table} (${columns.join(', ')}) values ${tuples.join(', ')}${suffix}`;
}

/** A row of `report_day_totals` as the store's day totals. */
function dayTotalsOf(r: { day: string; trusted: number | string; messages: number | string; dmarc_pass: number | string; spf_aligned: number | string; dkim_aligned: number | string; failing: number | string }): ReportDayTotals {
  return { day: r.day, trusted: Number(r.trusted) === 1, messages: Number(r.messages), dmarcPass: Number(r.dmarc_pass), spfAligned: Number(r.spf_aligned), dkimAligned: Number(r.dkim_aligned), failing: Number(r.failing) };
}

type ReportRow = ReportTables['reports'] & { contested: number | boolean | string | null };

function toStored(row: ReportRow): StoredReport {
  return {
    id: row.id,
    organizationId: row.organization_id,
    kind: row.kind as ReportKind,
    identity: row.identity,
    domain: row.domain,
    begin: Number(row.begin_at),
    end: Number(row.end_at),
    reporter: row.reporter,
    orgName: row.org_name,
    reportId: row.report_id,
    origin: JSON.parse(row.origin) as ReportOrigin,
    document: row.document,
    recordCount: Number(row.record_count),
    messageCount: Number(row.message_count),
    contested: row.contested === true || Number(row.contested) === 1,
  };
}

/** The SQL implementation of {@link ReportStore}, on a database that has run {@link createReportTables}. */
export class SqlReportStore implements ReportStore {
  readonly #db: Kysely<ReportTables>;
  readonly #dialect: SqlDialectName;
  /** Statement texts by table and row count: a report's chunks reuse the same few texts. */
  readonly #statements = new Map<string, string>();
  /** Merged rests by the two rests' texts ({@link REST_MERGES_REMEMBERED}). */
  readonly #restMerges = new Map<string, { entry: SenderDigestEntry; text: string }>();
  /** Stored rests parsed, by text ({@link REST_MERGES_REMEMBERED}). */
  readonly #rests = new Map<string, SenderDigestEntry>();
  readonly closing = new CloseHooks();
  /**
   * SQLite: the connection under Kysely (sqlite-driver.ts: its prepared statements, cached by text).
   * The statements of a batch (about ten a report: savepoints, the limits, the report, its records,
   * its digest) run straight on it, not through Kysely's driver and connection provider (about 10 µs
   * a statement: docs/benchmarks.md, "Ingestion, sixth pass"). Only inside the transaction `addMany` holds from Kysely
   * ({@link SqlReportStore.#rawTrx}): SQLite has one connection, lent to one transaction at a time,
   * and a statement run on it synchronously runs in that transaction.
   */
  readonly #raw: SqliteDatabase | undefined;
  /** The transaction of the batch being stored when its statements may run on {@link SqlReportStore.#raw}. */
  #rawTrx: Kysely<any> | null = null;

  /** SQLite writes on its one connection: one transaction at a time (ReportStore.serialWrites). */
  readonly serialWrites: boolean;

  constructor(db: Kysely<any>, dialect: SqlDialectName = 'sqlite', sqlite?: SqliteDatabase) {
    this.#db = db as Kysely<ReportTables>;
    this.#dialect = dialect;
    this.serialWrites = dialect === 'sqlite';
    this.#raw = dialect === 'sqlite' ? sqlite : undefined;
  }

  /** The rows of one statement run in `trx`: on SQLite's connection itself inside addMany's transaction (#raw), else through Kysely. */
  async #query<R>(trx: Kysely<any>, text: string, parameters: readonly unknown[] = []): Promise<R[]> {
    if (trx === this.#rawTrx && this.#raw !== undefined) {
      const statement = this.#raw.prepare(text);
      if (statement.reader) return statement.all(parameters) as R[];
      statement.run(parameters);
      return [];
    }
    return (await trx.executeQuery<R>(CompiledQuery.raw(text, [...parameters]))).rows;
  }

  /**
   * The rests (`entry`) of one day's (organisation, domain, day, trusted) stored entries among
   * `sources` sources, and, with `counted`, one more row (source null) giving the number of sources
   * the day holds: one statement, where the merge needs the count (a source new to the day may take a place).
   */
  #digestRead(sources: number, counted: boolean): string {
    const key = `read ${sources} ${counted}`;
    let text = this.#statements.get(key);
    if (text === undefined) {
      const postgres = this.#dialect === 'postgres';
      const mark = (i: number) => (postgres ? `$${i}` : '?');
      // SQLite's placeholders are positional: the count's key is bound a second time (digestReadParameters).
      const day = (first: number) => `organization_id = ${mark(first)} and domain = ${mark(first + 1)} and day = ${mark(first + 2)} and trusted = ${mark(first + 3)}`;
      text =
        `select source, entry, 0 as n from report_sender_days where ${day(1)} and source in (` +
        Array.from({ length: sources }, (_, i) => mark(i + 5)).join(', ') +
        ')' +
        (counted ? ` union all select null, null, count(*) from report_sender_days where ${day(postgres ? 1 : sources + 5)}` : '');
      this.#statements.set(key, text);
    }
    return text;
  }

  /** The multi-row INSERT of `rows` records. */
  #recordInsert(rows: number): string {
    const key = `report_records ${rows}`;
    let text = this.#statements.get(key);
    if (text === undefined) this.#statements.set(key, (text = multiRowInsert(this.#dialect, 'report_records', RECORD_COLUMNS, rows)));
    return text;
  }

  /**
   * The multi-row upsert of `rows` digest rows: the counts added to the stored row's (SQL arithmetic:
   * the merge never reads them), the rest replaced by the merged one. On PostgreSQL, with `withDay`,
   * the day's totals (`add-day`, parameters 1–9) in the same statement: one round trip, not two.
   */
  #digestUpsert(rows: number, withDay: boolean): string {
    const key = `report_sender_days ${rows} ${withDay}`;
    let text = this.#statements.get(key);
    if (text === undefined) {
      const upsert = multiRowInsert(
        this.#dialect,
        'report_sender_days',
        DIGEST_COLUMNS,
        rows,
        ' on conflict (organization_id, domain, day, trusted, source) do update set messages = report_sender_days.messages + excluded.messages, dmarc_pass = report_sender_days.dmarc_pass + excluded.dmarc_pass, ' +
          'spf_aligned = report_sender_days.spf_aligned + excluded.spf_aligned, dkim_aligned = report_sender_days.dkim_aligned + excluded.dkim_aligned, failing = report_sender_days.failing + excluded.failing, entry = excluded.entry',
        withDay ? DAY_TOTALS_PARAMETERS : 0,
      );
      text = withDay ? `with day_totals as (${this.#text('add-day')}) ${upsert}` : upsert;
      this.#statements.set(key, text);
    }
    return text;
  }

  /**
   * A held entry's rest merged with an incoming entry of its source (the engine's
   * `mergeDigestEntries`), remembered by the two rests' texts: the merged entry carries the incoming
   * counts (the held entry's are added in SQL), its text set in `texts`.
   */
  #mergeRests(held: SenderDigestEntry, incoming: SenderDigestEntry, texts: Map<SenderDigestEntry, string>): SenderDigestEntry {
    let incomingText = texts.get(incoming);
    if (incomingText === undefined) texts.set(incoming, (incomingText = digestRestJson(incoming)));
    const key = `${texts.get(held)!}\u0000${incomingText}`;
    let merged = this.#restMerges.get(key);
    if (merged === undefined) {
      if (this.#restMerges.size >= REST_MERGES_REMEMBERED) this.#restMerges.clear();
      const entry = mergeDigestEntries(held, incoming);
      this.#restMerges.set(key, (merged = { entry, text: digestRestJson(entry) }));
    }
    const out: SenderDigestEntry = { ...merged.entry, day: incoming.day, source: incoming.source, messages: incoming.messages, dmarcPass: incoming.dmarcPass, spfAligned: incoming.spfAligned, dkimAligned: incoming.dkimAligned, failing: incoming.failing };
    texts.set(out, merged.text);
    return out;
  }

  /**
   * Merges `entries` (one report's digest) into the stored digest of the domain, inside the caller's
   * transaction: the rests of the stored entries of the same day and sources are read (with the
   * day's number of sources), the rests merged (`mergeDigestDay`: sets unite, words the lesser,
   * additive maps add, a day's sources beyond MAX_DIGEST_SOURCES_PER_DAY summed into one), and
   * written back in a few multi-row upserts whose counts add to the stored ones in SQL: the stored
   * counts are never read. What is stored is what merging the whole entries gives.
   * PostgreSQL runs transactions side by side, so the read-merge-write of one organisation and domain
   * is made one at a time by a transaction-scoped advisory lock (taken here unless `locked`: addMany
   * takes its batch's at once); SQLite runs one transaction at a time.
   */
  async mergeDigest(trx: Kysely<any>, organizationId: string, domain: string, trusted: boolean, entries: readonly SenderDigestEntry[], locked = false): Promise<void> {
    if (entries.length === 0) return;
    const db = trx as Kysely<ReportTables>;
    const postgres = this.#dialect === 'postgres';
    if (postgres && !locked) await sql`select pg_advisory_xact_lock(${DIGEST_LOCK_CLASS}, hashtext(${`${organizationId} ${domain}`}))`.execute(db);
    const t = trusted ? 1 : 0;
    const byDay = new Map<string, SenderDigestEntry[]>();
    for (const e of entries) {
      const list = byDay.get(e.day);
      if (list) list.push(e);
      else byDay.set(e.day, [e]);
    }
    // Every entry's rest as the row holds it (JSON text), held and merged ones alike.
    const texts = new Map<SenderDigestEntry, string>();
    const merge = (held: SenderDigestEntry, incoming: SenderDigestEntry) => this.#mergeRests(held, incoming, texts);
    const merged: SenderDigestEntry[] = [];
    for (const [day, list] of byDay) {
      // The held entries with counts of 0: the merge adds the incoming counts to nothing, SQL adds them to the stored ones.
      const held = new Map<string, SenderDigestEntry>();
      let stored = 0;
      const key = [organizationId, domain, day, t];
      const sources = [...list.map((e) => e.source), OTHER_SOURCES];
      // Raw statements, their texts built once per size: a report's merge compiles no query.
      for (let start = 0; start < sources.length; start += REPORT_DIGEST_CHUNK) {
        const some = sources.slice(start, start + REPORT_DIGEST_CHUNK);
        const counted = start === 0;
        const parameters = counted && !postgres ? [...key, ...some, ...key] : [...key, ...some];
        const rows = await this.#query<{ source: string | null; entry: string | null; n: number | string }>(db, this.#digestRead(some.length, counted), parameters);
        for (const row of rows) {
          if (row.source === null) stored = Number(row.n);
          else {
            const entry: SenderDigestEntry = { ...this.#heldOf(row.entry!), source: row.source, day };
            texts.set(entry, row.entry!);
            held.set(row.source, entry);
          }
        }
      }
      merged.push(...mergeDigestDay(list, held, () => stored, domain, merge));
    }
    // Each day's totals added to, and its revision bumped: the blocks of days holding it are built again before they are next read (senderWindow).
    const dayTotals = [...byDay].map(([day, list]) => {
      let messages = 0, dmarcPass = 0, spfAligned = 0, dkimAligned = 0, failing = 0;
      for (const e of list) {
        messages += e.messages;
        dmarcPass += e.dmarcPass;
        spfAligned += e.spfAligned;
        dkimAligned += e.dkimAligned;
        failing += e.failing;
      }
      return [organizationId, domain, day, t, messages, dmarcPass, spfAligned, dkimAligned, failing];
    });
    // PostgreSQL: a report of one day and one chunk (the usual) writes its digest and its day's totals in one statement.
    const withDay = postgres && dayTotals.length === 1 && merged.length <= REPORT_DIGEST_CHUNK;
    for (let start = 0; start < merged.length; start += REPORT_DIGEST_CHUNK) {
      const chunk = merged.slice(start, start + REPORT_DIGEST_CHUNK);
      const parameters: unknown[] = withDay ? [...dayTotals[0]!] : [];
      for (const e of chunk) parameters.push(organizationId, domain, e.day, t, e.source, e.messages, e.dmarcPass, e.spfAligned, e.dkimAligned, e.failing, texts.get(e) ?? digestRestJson(e));
      await this.#query(db, this.#digestUpsert(chunk.length, withDay), parameters);
    }
    if (!withDay) for (const parameters of dayTotals) await this.#query(db, this.#text('add-day'), parameters);
  }

  /**
   * A stored rest parsed into an entry of counts 0 (its source and day to be set), remembered by its
   * text: the merge only reads it, so the held rows of one rest share one parse and one set of arrays.
   */
  #heldOf(text: string): SenderDigestEntry {
    let held = this.#rests.get(text);
    if (held === undefined) {
      if (this.#rests.size >= REST_MERGES_REMEMBERED) this.#rests.clear();
      this.#rests.set(text, (held = { ...emptyDigestEntry('', ''), ...(JSON.parse(text) as Partial<SenderDigestEntry>) }));
    }
    return held;
  }

  /**
   * Which limit storing `report` would pass (records of the reports received in the last day, of the
   * organisation and of the report's reporting source), or null. Counted from the batch's tally of
   * the organisation ({@link LimitTally}, read at the batch's start), so it counts the reports stored
   * before it in the same batch; on PostgreSQL two transactions at once (two processes) may each fit
   * alone and pass together, by at most one batch.
   */
  #overLimit(tallies: ReadonlyMap<string, LimitTally>, report: NewReport): AddReportOutcome | null {
    const source = reportingSource(report);
    if (source === null || report.records.length === 0) return null;
    const since = limitWindowStart(report);
    const tally = tallies.get(report.organizationId)!;
    let organization = tally.organization;
    let ofSource = tally.sources.get(source) ?? 0;
    // Received after this report's window start (ISO 8601 text compares as the column does).
    for (const c of tally.counted)
      if (c.receivedAt > since) {
        organization += c.records;
        if (c.source === source) ofSource += c.records;
      }
    if (ofSource + report.records.length > sourceLimit(source)) return 'over-source-limit';
    if (organization + report.records.length > MAX_REPORT_RECORDS_PER_ORGANIZATION_PER_DAY) return 'over-organization-limit';
    return null;
  }

  /**
   * The limit tallies of the batch's organisations (those of its reports that the limits apply to),
   * read before any report is stored: per organisation, the two sums over the latest window of the
   * batch's reports (one per reporting source), and the reports received between the earliest
   * window start and that one.
   */
  async #limitTallies(trx: Kysely<ReportTables>, reports: readonly NewReport[]): Promise<Map<string, LimitTally>> {
    const windows = new Map<string, { from: string; to: string; sources: Set<string> }>();
    for (const report of reports) {
      const source = reportingSource(report);
      if (source === null || report.records.length === 0) continue;
      let since: string;
      try {
        since = limitWindowStart(report);
      } catch {
        continue; // #overLimit throws for it again, in its savepoint: the report fails alone.
      }
      const held = windows.get(report.organizationId);
      if (held === undefined) windows.set(report.organizationId, { from: since, to: since, sources: new Set([source]) });
      else {
        if (since < held.from) held.from = since;
        if (since > held.to) held.to = since;
        held.sources.add(source);
      }
    }
    const tallies = new Map<string, LimitTally>();
    const sum = async (text: string, parameters: unknown[]) => Number((await this.#query<{ n: number | string | null }>(trx, text, parameters))[0]?.n ?? 0);
    for (const [organizationId, { from, to, sources }] of windows) {
      const tally: LimitTally = { organization: await sum(this.#text('organization-sum'), [organizationId, to]), sources: new Map(), counted: [] };
      for (const source of sources) tally.sources.set(source, await sum(this.#text('source-sum'), [organizationId, to, source]));
      if (from < to) {
        const rows = await this.#query<{ received_at: string; reporting_source: string | null; record_count: number | string }>(trx, this.#text('between'), [organizationId, from, to]);
        for (const r of rows) tally.counted.push({ receivedAt: r.received_at, source: r.reporting_source, records: Number(r.record_count) });
      }
      tallies.set(organizationId, tally);
    }
    return tallies;
  }

  /** The fixed statements of `add`, in the dialect's placeholders, built once. */
  #text(name: 'source-sum' | 'organization-sum' | 'between' | 'insert-report' | 'held' | 'add-day'): string {
    let text = this.#statements.get(name);
    if (text === undefined) {
      const n = { i: 0 };
      const mark = () => (this.#dialect === 'postgres' ? `$${++n.i}` : '?');
      if (name === 'source-sum') text = `select sum(record_count) as n from reports where organization_id = ${mark()} and received_at > ${mark()} and reporting_source = ${mark()}`;
      else if (name === 'organization-sum') text = `select sum(record_count) as n from reports where organization_id = ${mark()} and received_at > ${mark()}`;
      else if (name === 'between') text = `select received_at, reporting_source, record_count from reports where organization_id = ${mark()} and received_at > ${mark()} and received_at <= ${mark()}`;
      else if (name === 'held') text = `select id from reports where organization_id = ${mark()} and identity = ${mark()}`;
      else if (name === 'add-day')
        text =
          `insert into report_day_totals (organization_id, domain, day, trusted, revision, messages, dmarc_pass, spf_aligned, dkim_aligned, failing) values (${mark()}, ${mark()}, ${mark()}, ${mark()}, 1, ${mark()}, ${mark()}, ${mark()}, ${mark()}, ${mark()}) ` +
          'on conflict (organization_id, domain, day, trusted) do update set revision = report_day_totals.revision + 1, messages = report_day_totals.messages + excluded.messages, dmarc_pass = report_day_totals.dmarc_pass + excluded.dmarc_pass, ' +
          'spf_aligned = report_day_totals.spf_aligned + excluded.spf_aligned, dkim_aligned = report_day_totals.dkim_aligned + excluded.dkim_aligned, failing = report_day_totals.failing + excluded.failing';
      // The key decides (ON CONFLICT): of two receipts at once, one inserts and the other is a duplicate.
      else text = `${multiRowInsert(this.#dialect, 'reports', REPORT_COLUMNS, 1)} on conflict (organization_id, identity) do nothing returning id`;
      this.#statements.set(name, text);
    }
    return text;
  }

  async add(report: NewReport): Promise<AddReportOutcome> {
    const [outcome] = await this.addMany([report]);
    if (outcome!.status === 'rejected') throw outcome!.reason;
    return outcome!.value;
  }

  async addMany(reports: readonly NewReport[]): Promise<PromiseSettledResult<AddReportOutcome>[]> {
    assertBatchSize(reports);
    if (reports.length === 0) return [];
    try {
      return await this.#db.transaction().execute(async (trx) => {
        // SQLite: the batch's statements straight on the connection Kysely lends this transaction (#raw).
        if (this.#raw !== undefined) this.#rawTrx = trx;
        try {
          return await this.#addInTransaction(trx, reports);
        } finally {
          this.#rawTrx = null;
        }
      });
    } catch (reason) {
      // The transaction did not commit: nothing of the batch is stored, every report failed.
      return reports.map(() => ({ status: 'rejected', reason }));
    }
  }

  /** The body of addMany's transaction: each report in its savepoint, then the revisions. */
  async #addInTransaction(trx: Kysely<ReportTables>, reports: readonly NewReport[]): Promise<PromiseSettledResult<AddReportOutcome>[]> {
    if (this.#dialect === 'postgres') await this.#lockDigests(trx, reports);
    const step = (text: string) => this.#query(trx, text);
    const tallies = await this.#limitTallies(trx, reports);
    const outcomes: PromiseSettledResult<AddReportOutcome>[] = [];
    // One savepoint per report: a report that fails is rolled back alone, the batch goes on.
    await step('savepoint report');
    for (const [index, report] of reports.entries()) {
      try {
        const value = await this.#addOne(trx, report, tallies);
        outcomes.push({ status: 'fulfilled', value });
        // Counted against the limits of the reports after it in the batch.
        if (value === 'stored') tallies.get(report.organizationId)?.counted.push({ receivedAt: report.origin.receivedAt, source: reportingSource(report), records: report.records.length });
      } catch (reason) {
        await step('rollback to savepoint report');
        outcomes.push({ status: 'rejected', reason });
      }
      if (index === reports.length - 1) await step('release savepoint report');
      // PostgreSQL: the next savepoint in the same round trip (a simple query of two statements, no parameters).
      else if (this.#dialect === 'postgres') await step('release savepoint report; savepoint report');
      else {
        await step('release savepoint report');
        await step('savepoint report');
      }
    }
    await this.#bumpRevisions(trx, reports, outcomes);
    return outcomes;
  }

  /**
   * PostgreSQL: the digest locks of every organisation and domain of the batch (mergeDigest's
   * advisory lock, taken again there at no cost), at once and in the order of the lock keys, so that
   * two batches that merge the same domains never wait on each other in a cycle.
   */
  async #lockDigests(trx: Kysely<ReportTables>, reports: readonly NewReport[]): Promise<void> {
    const keys = [...new Set(reports.filter((r) => r.digest.length > 0).map((r) => `${r.organizationId} ${r.domain}`))];
    if (keys.length === 0) return;
    await sql`select count(pg_advisory_xact_lock(${DIGEST_LOCK_CLASS}, h)) from (select distinct hashtext(k) as h from unnest(${keys}::text[]) as k order by h) as ordered`.execute(trx);
  }

  /**
   * The revision of each organisation and domain the batch stored reports of, bumped by their number
   * (one statement a batch, in the batch's transaction; rows in key order, so that two batches lock
   * them in one order).
   */
  async #bumpRevisions(trx: Kysely<ReportTables>, reports: readonly NewReport[], outcomes: readonly PromiseSettledResult<AddReportOutcome>[]): Promise<void> {
    const stored = new Map<string, [string, string, number]>();
    reports.forEach((r, i) => {
      const outcome = outcomes[i]!;
      if (outcome.status !== 'fulfilled' || outcome.value !== 'stored') return;
      const key = `${r.organizationId}\u0000${r.domain}`;
      const held = stored.get(key);
      if (held === undefined) stored.set(key, [r.organizationId, r.domain, 1]);
      else held[2] += 1;
    });
    if (stored.size === 0) return;
    const rows = [...stored].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
    const key = `report_revisions ${rows.length}`;
    let text = this.#statements.get(key);
    if (text === undefined) {
      text = multiRowInsert(this.#dialect, 'report_revisions', ['organization_id', 'domain', 'revision'], rows.length, ' on conflict (organization_id, domain) do update set revision = report_revisions.revision + excluded.revision');
      this.#statements.set(key, text);
    }
    await this.#query(trx, text, rows.flat());
  }

  /** One report of a batch, inside its savepoint: refused, stored, or counted as a duplicate. */
  async #addOne(trx: Kysely<ReportTables>, report: NewReport, tallies: ReadonlyMap<string, LimitTally>): Promise<AddReportOutcome> {
    const refused = this.#overLimit(tallies, report);
    if (refused !== null) {
      // A resend of a report already stored is a duplicate, whatever the limits say.
      const held = await this.#query(trx, this.#text('held'), [report.organizationId, report.identity]);
      if (held.length === 0) return refused;
      return this.#duplicate(trx, report);
    }
    const messages = report.records.reduce((sum, r) => sum + r.count, 0);
    const row: unknown[] = [
      report.id,
      report.organizationId,
      report.kind,
      report.identity,
      report.domain,
      report.begin,
      report.end,
      report.reporter,
      report.orgName,
      report.reportId,
      report.origin.authenticatedDomain === null ? 0 : 1,
      report.trusted ? 1 : 0,
      reportingSource(report),
      report.origin.receivedAt,
      JSON.stringify(report.origin),
      report.document,
      report.records.length,
      messages,
      identityBaseOf(report.origin),
    ];
    const inserted = await this.#query(trx, this.#text('insert-report'), row);
    if (inserted.length === 0) return this.#duplicate(trx, report);
    const day = reportDay(report.begin);
    // One prepared multi-row INSERT per chunk, its text built once per size (no query builder per row).
    for (let start = 0; start < report.records.length; start += REPORT_RECORD_INSERT_CHUNK) {
      const chunk = report.records.slice(start, start + REPORT_RECORD_INSERT_CHUNK);
      const parameters: unknown[] = [];
      chunk.forEach((r, i) => parameters.push(report.id, start + i, report.organizationId, report.domain, report.begin, report.end, day, r.sourceIp, r.headerFrom, r.disposition, r.dkimAligned ? 1 : 0, r.spfAligned ? 1 : 0, r.count, r.detail));
      await this.#query(trx, this.#recordInsert(chunk.length), parameters);
    }
    // The batch's digest locks are held (addMany, #lockDigests).
    await this.mergeDigest(trx, report.organizationId, report.domain, report.trusted, report.digest, true);
    return 'stored';
  }

  /** Counts a receipt of a report the organisation holds (nothing else is stored). */
  async #duplicate(trx: Kysely<ReportTables>, report: NewReport): Promise<'duplicate'> {
    await trx
      .insertInto('report_duplicates')
      .values({ organization_id: report.organizationId, identity: report.identity, domain: report.domain, kind: report.kind, begin_at: report.begin, end_at: report.end, times: 1 })
      .onConflict((oc) => oc.columns(['organization_id', 'identity']).doUpdateSet((eb) => ({ times: eb(eb.ref('report_duplicates.times'), '+', 1) })))
      .execute();
    return 'duplicate';
  }

  async reject(r: ReportRejection): Promise<void> {
    await this.#db
      .insertInto('report_rejections')
      .values({ id: r.id, organization_id: r.organizationId, received_at: r.receivedAt, channel: r.channel, file_name: r.fileName, sender: r.sender, reason: r.reason, detail: r.detail })
      .execute();
  }

  async list(organizationId: string, query: ReportQuery): Promise<Page<StoredReport>> {
    let base = this.#db.selectFrom('reports').where('organization_id', '=', organizationId);
    if (query.domain !== undefined) base = base.where('domain', '=', query.domain);
    if (query.kind !== undefined) base = base.where('kind', '=', query.kind);
    const [rows, total] = await Promise.all([
      base
        .selectAll('reports')
        // Contested across every report of the organisation, whatever page it is on (the index on identity_base).
        .select((eb) =>
          eb
            .exists(eb.selectFrom('reports as other').select('other.id').whereRef('other.organization_id', '=', 'reports.organization_id').whereRef('other.identity_base', '=', 'reports.identity_base').whereRef('other.id', '<>', 'reports.id'))
            .as('contested'),
        )
        .orderBy('begin_at', 'desc')
        .orderBy('id', 'desc')
        .limit(query.limit)
        .offset((query.page - 1) * query.limit)
        .execute(),
      base.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst(),
    ]);
    return { items: rows.map(toStored), total: Number(total?.n ?? 0) };
  }

  async rejections(organizationId: string, page: PageRequest): Promise<Page<ReportRejection>> {
    const base = this.#db.selectFrom('report_rejections').where('organization_id', '=', organizationId);
    const [rows, total] = await Promise.all([
      base.selectAll().orderBy('received_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset((page.page - 1) * page.limit).execute(),
      base.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst(),
    ]);
    return {
      items: rows.map((r) => ({
        id: r.id,
        organizationId: r.organization_id,
        receivedAt: r.received_at,
        channel: r.channel as ReportRejection['channel'],
        fileName: r.file_name,
        sender: r.sender,
        reason: r.reason,
        detail: r.detail,
      })),
      total: Number(total?.n ?? 0),
    };
  }

  async senderDays(organizationId: string, domain: string, days: DayRange, trusted: boolean): Promise<SenderDigestEntry[]> {
    const rows = await this.#db
      .selectFrom('report_sender_days')
      .select(['day', 'source', 'messages', 'dmarc_pass', 'spf_aligned', 'dkim_aligned', 'failing', 'entry'])
      .where('organization_id', '=', organizationId)
      .where('domain', '=', domain)
      .where('day', '>=', days.from)
      .where('day', '<=', days.to)
      .where('trusted', '=', trusted ? 1 : 0)
      .orderBy('day')
      .orderBy('source')
      .execute();
    return rows.map(entryOf);
  }

  /** The day roll-up's rows of one domain, window and trust. */
  #dayRows(organizationId: string, domain: string, days: DayRange, trusted: boolean) {
    return this.#db
      .selectFrom('report_sender_days')
      .where('organization_id', '=', organizationId)
      .where('domain', '=', domain)
      .where('day', '>=', days.from)
      .where('day', '<=', days.to)
      .where('trusted', '=', trusted ? 1 : 0);
  }

  /** The rows of `parts` (days of the day roll-up, blocks of the block roll-up) of one domain and trust, as one relation. */
  #partRows(organizationId: string, domain: string, trusted: boolean, parts: readonly DayBlock[]): RawBuilder<unknown> {
    const t = trusted ? 1 : 0;
    const days = parts.filter((p) => p.size === 1).map((p) => p.start);
    const blocks = parts.filter((p) => p.size > 1);
    const selects: RawBuilder<unknown>[] = [];
    if (days.length > 0)
      selects.push(
        sql`select source, day as first_day, day as last_day, messages, dmarc_pass, spf_aligned, dkim_aligned, failing, entry from report_sender_days where organization_id = ${organizationId} and domain = ${domain} and trusted = ${t} and day in (${sql.join(days)})`,
      );
    // One select per block: each a range of the key.
    for (const b of blocks)
      selects.push(
        sql`select source, first_day, last_day, messages, dmarc_pass, spf_aligned, dkim_aligned, failing, entry from report_sender_blocks where organization_id = ${organizationId} and domain = ${domain} and trusted = ${t} and block_days = ${b.size} and start_day = ${b.start}`,
      );
    return sql.join(selects, sql` union all `);
  }

  /** `parts`' rows read once and added up per source: the counts summed, the first and last day, and each distinct rest with how many rows have it. */
  async #grouped(db: Kysely<any>, organizationId: string, domain: string, trusted: boolean, parts: readonly DayBlock[]): Promise<{ sums: SourceWindowSums[]; parts: SourceWindowPart[] }> {
    const { rows } = await sql<{ source: string; entry: string; first_day: string; last_day: string; messages: number | string; dmarc_pass: number | string; spf_aligned: number | string; dkim_aligned: number | string; failing: number | string }>`${this.#partRows(organizationId, domain, trusted, parts)}`.execute(db);
    const sums = new Map<string, SourceWindowSums>();
    const rests = new Map<string, Map<string, number>>();
    for (const r of rows) {
      let s = sums.get(r.source);
      if (s === undefined) sums.set(r.source, (s = { source: r.source, firstDay: r.first_day, lastDay: r.last_day, messages: 0, dmarcPass: 0, spfAligned: 0, dkimAligned: 0, failing: 0 }));
      if (r.first_day < s.firstDay) s.firstDay = r.first_day;
      if (r.last_day > s.lastDay) s.lastDay = r.last_day;
      s.messages += Number(r.messages);
      s.dmarcPass += Number(r.dmarc_pass);
      s.spfAligned += Number(r.spf_aligned);
      s.dkimAligned += Number(r.dkim_aligned);
      s.failing += Number(r.failing);
      if (r.entry === '{}') continue;
      let times = rests.get(r.source);
      if (times === undefined) rests.set(r.source, (times = new Map()));
      times.set(r.entry, (times.get(r.entry) ?? 0) + 1);
    }
    // Sources share rests (the same sets): each text parsed once.
    const parsed = new Map<string, Partial<SenderDigestEntry>>();
    const parse = (text: string) => {
      let rest = parsed.get(text);
      if (rest === undefined) parsed.set(text, (rest = JSON.parse(text) as Partial<SenderDigestEntry>));
      return rest;
    };
    return {
      sums: [...sums.values()].sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0)),
      parts: [...rests].flatMap(([source, times]) => [...times].map(([text, n]) => ({ source, rest: parse(text), times: n }))),
    };
  }

  /**
   * Builds again every block of `blocks` whose days changed since it was built (its stamp is not the
   * sum of its days' revisions), and so on down its halves, each block in one transaction with its
   * stamp (on PostgreSQL one build at a time per domain: no two builds' rows mix). The stamp written
   * is the one read before the build read the days: a report merged meanwhile leaves the block stale,
   * never wrong. Answers the number of blocks built.
   */
  async #freshen(organizationId: string, domain: string, trusted: boolean, days: DayRange, blocks: readonly DayBlock[]): Promise<number> {
    const t = trusted ? 1 : 0;
    const [revisionRows, stampRows] = await Promise.all([
      this.#db.selectFrom('report_day_totals').select(['day', 'revision']).where('organization_id', '=', organizationId).where('domain', '=', domain).where('trusted', '=', t).where('day', '>=', days.from).where('day', '<=', days.to).execute(),
      this.#db.selectFrom('report_sender_block_stamps').select(['block_days', 'start_day', 'stamp']).where('organization_id', '=', organizationId).where('domain', '=', domain).where('trusted', '=', t).where('start_day', '>=', days.from).where('start_day', '<=', days.to).execute(),
    ]);
    const revisions = new Map(revisionRows.map((r) => [epochDay(r.day), Number(r.revision)]));
    const held = new Map(stampRows.map((r) => [`${Number(r.block_days)} ${r.start_day}`, Number(r.stamp)]));
    const stampOf = (b: DayBlock) => {
      let sum = 0;
      for (let d = epochDay(b.start), end = d + b.size; d < end; d++) sum += revisions.get(d) ?? 0;
      return sum;
    };
    const stale = (b: DayBlock) => b.size > 1 && held.get(`${b.size} ${b.start}`) !== stampOf(b);
    if (!blocks.some(stale)) return 0;
    let built = 0;
    // Each block built in its own short transaction (its rows and its stamp together), after its halves.
    const build = async (block: DayBlock): Promise<void> => {
      if (!stale(block)) return;
      const halves = blockHalves(block);
      for (const half of halves) await build(half);
      const stamp = stampOf(block);
      await this.#db.transaction().execute(async (trx) => {
        if (this.#dialect === 'postgres') await sql`select pg_advisory_xact_lock(${BLOCK_LOCK_CLASS}, hashtext(${`${organizationId} ${domain}`}))`.execute(trx);
        const grouped = await this.#grouped(trx, organizationId, domain, trusted, halves);
        const rollups = sourceRollups(grouped.sums, grouped.parts);
        for (let start = 0; start < rollups.length; start += REPORT_DIGEST_CHUNK) {
          const chunk = rollups.slice(start, start + REPORT_DIGEST_CHUNK);
          const parameters: unknown[] = [];
          for (const { entry: e, lastDay } of chunk) parameters.push(organizationId, domain, t, block.size, block.start, e.source, e.day, lastDay, e.messages, e.dmarcPass, e.spfAligned, e.dkimAligned, e.failing, digestRestJson(e));
          await trx.executeQuery(CompiledQuery.raw(this.#blockUpsert(chunk.length), parameters));
        }
        await trx
          .insertInto('report_sender_block_stamps')
          .values({ organization_id: organizationId, domain, trusted: t, block_days: block.size, start_day: block.start, stamp })
          .onConflict((oc) => oc.columns(['organization_id', 'domain', 'trusted', 'block_days', 'start_day']).doUpdateSet({ stamp }))
          .execute();
      });
      held.set(`${block.size} ${block.start}`, stamp);
      built += 1;
    };
    for (const block of blocks) await build(block);
    return built;
  }

  async freshenBlocks(organizationId: string, domain: string, days: DayRange): Promise<number> {
    if (days.from > days.to) return 0;
    const blocks = dayBlocks(days);
    // One after the other: on PostgreSQL each build takes the domain's block lock, on SQLite the one connection.
    let built = 0;
    for (const trusted of [true, false]) built += await this.#freshen(organizationId, domain, trusted, days, blocks);
    return built;
  }

  /** The multi-row upsert of `rows` block rows (a source's rows of a block only grow: each replaces the one held). */
  #blockUpsert(rows: number): string {
    const key = `report_sender_blocks ${rows}`;
    let text = this.#statements.get(key);
    if (text === undefined) {
      text = multiRowInsert(
        this.#dialect,
        'report_sender_blocks',
        BLOCK_COLUMNS,
        rows,
        ' on conflict (organization_id, domain, trusted, block_days, start_day, source) do update set first_day = excluded.first_day, last_day = excluded.last_day, messages = excluded.messages, dmarc_pass = excluded.dmarc_pass, spf_aligned = excluded.spf_aligned, dkim_aligned = excluded.dkim_aligned, failing = excluded.failing, entry = excluded.entry',
      );
      this.#statements.set(key, text);
    }
    return text;
  }

  async senderWindow(organizationId: string, domain: string, days: DayRange, trusted: boolean): Promise<SenderDigestEntry[]> {
    if (days.from > days.to) return [];
    // The window as aligned blocks of days (about a dozen per source for 90 days), those whose days changed built again first.
    const blocks = dayBlocks(days);
    await this.#freshen(organizationId, domain, trusted, days, blocks);
    const { sums, parts } = await this.#grouped(this.#db, organizationId, domain, trusted, blocks);
    return sourceWindowEntries(sums, parts);
  }

  async dailyTotals(organizationId: string, domain: string, days: DayRange): Promise<ReportDayTotals[]> {
    // The day totals kept as reports are merged: one row per day and trust, never the day roll-up's sources.
    const rows = await this.#db
      .selectFrom('report_day_totals')
      .select(['day', 'trusted', 'messages', 'dmarc_pass', 'spf_aligned', 'dkim_aligned', 'failing'])
      .where('organization_id', '=', organizationId)
      .where('domain', '=', domain)
      .where('day', '>=', days.from)
      .where('day', '<=', days.to)
      .orderBy('day')
      .orderBy('trusted', 'desc')
      .execute();
    return rows.map(dayTotalsOf);
  }

  async sourceTotals(organizationId: string, domain: string, days: DayRange, trusted: boolean, limit: number): Promise<{ sources: ReportSourceTotals[]; count: number }> {
    const base = this.#dayRows(organizationId, domain, days, trusted);
    const [rows, count] = await Promise.all([
      base
        .select('source')
        .select((eb) => [eb.fn.sum<number | string>('messages').as('messages'), eb.fn.sum<number | string>('dmarc_pass').as('dmarc_pass'), eb.fn.sum<number | string>('failing').as('failing')])
        .groupBy('source')
        .orderBy('messages', 'desc')
        .orderBy('source')
        .limit(limit)
        .execute(),
      base.select((eb) => eb.fn.count<number | string>('source').distinct().as('n')).executeTakeFirst(),
    ]);
    return { sources: rows.map((r) => ({ source: r.source, messages: Number(r.messages), dmarcPass: Number(r.dmarc_pass), failing: Number(r.failing) })), count: Number(count?.n ?? 0) };
  }

  async documents(organizationId: string, domain: string, kind: ReportKind, range: ReportRange): Promise<string[]> {
    const rows = await this.#db
      .selectFrom('reports')
      .select('document')
      .where('organization_id', '=', organizationId)
      .where('domain', '=', domain)
      .where('kind', '=', kind)
      .where('begin_at', '<', range.to)
      .where('end_at', '>', range.from)
      .orderBy('begin_at')
      .orderBy('id')
      .execute();
    return rows.map((r) => r.document);
  }

  async counts(organizationId: string, domain: string | null, range: ReportRange | null): Promise<ReportCounts> {
    let reports = this.#db.selectFrom('reports').where('organization_id', '=', organizationId);
    let duplicates = this.#db.selectFrom('report_duplicates').where('organization_id', '=', organizationId);
    if (domain !== null) {
      // Every kind named: each kind's range of reports_by_domain_range (migration 0014), read from the index alone.
      reports = reports.where('domain', '=', domain).where('kind', 'in', REPORT_KINDS);
      duplicates = duplicates.where('domain', '=', domain);
    }
    if (range !== null) {
      reports = reports.where('begin_at', '<', range.to).where('end_at', '>', range.from);
      duplicates = duplicates.where('begin_at', '<', range.to).where('end_at', '>', range.from);
    }
    const [byKind, dup] = await Promise.all([
      reports
        .select(['kind', 'authenticated', 'trusted'])
        .select((eb) => [eb.fn.countAll<number | string>().as('n'), eb.fn.sum<number | string>('message_count').as('messages')])
        .groupBy(['kind', 'authenticated', 'trusted'])
        .execute(),
      duplicates.select((eb) => eb.fn.sum<number | string>('times').as('n')).executeTakeFirst(),
    ]);
    const counts: ReportCounts = { aggregate: 0, tls: 0, unauthenticated: 0, untrusted: 0, duplicates: Number(dup?.n ?? 0), messages: 0 };
    for (const row of byKind) {
      const n = Number(row.n);
      if (row.kind === 'tls') {
        counts.tls += n;
        continue;
      }
      counts.aggregate += n;
      counts.messages += Number(row.messages ?? 0);
      if (Number(row.authenticated) === 0) counts.unauthenticated += n;
      if (Number(row.trusted) === 0) counts.untrusted += n;
    }
    return counts;
  }

  async latestEnd(organizationId: string, domain: string): Promise<number | null> {
    const row = await this.#db
      .selectFrom('reports')
      .select((eb) => eb.fn.max<number | string | null>('end_at').as('latest'))
      .where('organization_id', '=', organizationId)
      .where('domain', '=', domain)
      .executeTakeFirst();
    return row?.latest === null || row?.latest === undefined ? null : Number(row.latest);
  }

  async domains(organizationId: string): Promise<string[]> {
    const rows = await this.#db.selectFrom('reports').select('domain').distinct().where('organization_id', '=', organizationId).orderBy('domain').execute();
    return rows.map((r) => r.domain);
  }

  async organizationsWithReports(domain: string): Promise<string[]> {
    const rows = await this.#db.selectFrom('reports').select('organization_id').distinct().where('domain', '=', domain).orderBy('organization_id').execute();
    return rows.map((r) => r.organization_id);
  }

  async routing(domain: string): Promise<ReportRouting> {
    // The tables of migration 0001 (organizations, domains), read here for routing only.
    const db = this.#db as unknown as Kysely<{ organizations: { id: string }; domains: { organization_id: string; domain: string; deleted_at: string | null } }>;
    const [withDomain, organizations] = await Promise.all([
      db.selectFrom('domains').select('organization_id').distinct().where('domain', '=', domain).where('deleted_at', 'is', null).orderBy('organization_id').execute(),
      db.selectFrom('organizations').select('id').orderBy('id').execute(),
    ]);
    return { withDomain: withDomain.map((r) => r.organization_id), organizations: organizations.map((r) => r.id) };
  }

  async rejectionCount(organizationId: string): Promise<number> {
    const row = await this.#db.selectFrom('report_rejections').select((eb) => eb.fn.countAll().as('n')).where('organization_id', '=', organizationId).executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async revision(organizationId: string): Promise<string> {
    // The organisation's counters (migration 0015): one row per domain, a range of the key, never its reports.
    const row = await this.#db.selectFrom('report_revisions').select((eb) => eb.fn.sum<number | string | null>('revision').as('n')).where('organization_id', '=', organizationId).executeTakeFirst();
    return String(Number(row?.n ?? 0));
  }

  async arrivals(organizationId: string, since: string | null): Promise<ReportArrivals> {
    // One statement (one snapshot): the totals from the index reports_by_received (organization_id,
    // received_at, …), and the reports after `since` as a range of it (the rows read for their domain).
    const totals = sql`select 0 as part, null as domain, count(*) as n, max(received_at) as latest from reports where organization_id = ${organizationId}`;
    const query =
      since === null
        ? totals
        : sql`${totals} union all select 1 as part, domain, count(*) as n, max(received_at) as latest from reports where organization_id = ${organizationId} and received_at > ${since} group by domain`;
    const { rows } = await sql<{ part: number | string; domain: string | null; n: number | string; latest: string | null }>`${query}`.execute(this.#db);
    const total = rows.find((r) => Number(r.part) === 0);
    const after = rows.filter((r) => Number(r.part) === 1).map((r) => ({ domain: r.domain!, reports: Number(r.n) }));
    return { total: Number(total?.n ?? 0), latest: total?.latest ?? null, after: after.sort((a, b) => (a.domain < b.domain ? -1 : 1)) };
  }

  async domainDailyTotals(organizationId: string, days: DayRange, only?: readonly string[]): Promise<(ReportDayTotals & { domain: string })[]> {
    if (only !== undefined) {
      // The domains asked for (those whose reports changed), a chunk of keys at a time: each a range of the key.
      const out: (ReportDayTotals & { domain: string })[] = [];
      for (let at = 0; at < only.length; at += DAY_TOTALS_DOMAINS_PER_READ) {
        const rows = await this.#db
          .selectFrom('report_day_totals')
          .select(['domain', 'day', 'trusted', 'messages', 'dmarc_pass', 'spf_aligned', 'dkim_aligned', 'failing'])
          .where('organization_id', '=', organizationId)
          .where('domain', 'in', only.slice(at, at + DAY_TOTALS_DOMAINS_PER_READ))
          .where('day', '>=', days.from)
          .where('day', '<=', days.to)
          .orderBy('domain')
          .orderBy('day')
          .orderBy('trusted', 'desc')
          .execute();
        for (const r of rows) out.push({ domain: r.domain, ...dayTotalsOf(r) });
      }
      return out.sort((a, b) => (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0));
    }
    // What dailyTotals reads, every domain at once. The key leads with (organization_id, domain, day):
    // the organisation's domains are walked one index seek each (a loose index scan, `d`), and each
    // domain's days of the window read as a range of the key, never its days outside the window.
    const { rows } = await sql<{ domain: string; day: string; trusted: number | string; messages: number | string; dmarc_pass: number | string; spf_aligned: number | string; dkim_aligned: number | string; failing: number | string }>`
      with recursive d(domain) as (
        select min(domain) from report_day_totals where organization_id = ${organizationId}
        union all
        select (select s.domain from report_day_totals s where s.organization_id = ${organizationId} and s.domain > d.domain order by s.domain limit 1) from d where d.domain is not null
      )
      select r.domain, r.day, r.trusted, r.messages, r.dmarc_pass, r.spf_aligned, r.dkim_aligned, r.failing
      from d join report_day_totals r on r.organization_id = ${organizationId} and r.domain = d.domain and r.day >= ${days.from} and r.day <= ${days.to}
      order by r.domain, r.day, r.trusted desc`.execute(this.#db);
    return rows.map((r) => ({ domain: r.domain, ...dayTotalsOf(r) }));
  }
}
