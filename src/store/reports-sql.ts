/**
 * Reports in SQL (SQLite or PostgreSQL) on Kysely.
 *
 * Four tables: the reports (unique per organisation and identity: a second receipt is refused by
 * the key and counted in `report_duplicates`), their records (one row per aggregate record, with
 * the report's own date range copied in so that the range query needs no join), and the refused
 * files. A report and its records are written in one transaction: all of it or none of it.
 * Epoch seconds are `bigint`; timestamps ISO 8601 text; nested values JSON text.
 */
import type { Kysely } from 'kysely';
import type { MigrationFactory } from './migration-types.js';
import type { Page, PageRequest } from './page-types.js';
import { sortGroups } from './reports-memory.js';
import {
  reportDay,
  type AddReportOutcome,
  type NewReport,
  type ReportCounts,
  type ReportKind,
  type ReportOrigin,
  type ReportQuery,
  type ReportRange,
  type ReportRecordGroup,
  type ReportRejection,
  type ReportRouting,
  type ReportStore,
  type StoredReport,
} from './reports.js';

/** Records written by one INSERT (13 values each: well under both databases' parameter limits). */
export const REPORT_RECORD_INSERT_CHUNK = 500;

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
    received_at: string;
    /** JSON ReportOrigin. */
    origin: string;
    document: string;
    record_count: number | string;
    message_count: number | string;
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

type ReportRow = ReportTables['reports'];

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
  };
}

/** The SQL implementation of {@link ReportStore}, on a database that has run {@link createReportTables}. */
export class SqlReportStore implements ReportStore {
  readonly #db: Kysely<ReportTables>;

  constructor(db: Kysely<any>) {
    this.#db = db as Kysely<ReportTables>;
  }

  async add(report: NewReport): Promise<AddReportOutcome> {
    const messages = report.records.reduce((sum, r) => sum + r.count, 0);
    const stored = await this.#db.transaction().execute(async (trx) => {
      // The key decides (ON CONFLICT): of two receipts at once, one inserts and the other is a duplicate.
      const inserted = await trx
        .insertInto('reports')
        .values({
          id: report.id,
          organization_id: report.organizationId,
          kind: report.kind,
          identity: report.identity,
          domain: report.domain,
          begin_at: report.begin,
          end_at: report.end,
          reporter: report.reporter,
          org_name: report.orgName,
          report_id: report.reportId,
          authenticated: report.origin.authenticatedDomain === null ? 0 : 1,
          received_at: report.origin.receivedAt,
          origin: JSON.stringify(report.origin),
          document: report.document,
          record_count: report.records.length,
          message_count: messages,
        })
        .onConflict((oc) => oc.columns(['organization_id', 'identity']).doNothing())
        .returning('id')
        .executeTakeFirst();
      if (!inserted) return false;
      const day = reportDay(report.begin);
      for (let start = 0; start < report.records.length; start += REPORT_RECORD_INSERT_CHUNK) {
        const chunk = report.records.slice(start, start + REPORT_RECORD_INSERT_CHUNK);
        await trx
          .insertInto('report_records')
          .values(chunk.map((r, i) => ({
            report_pk: report.id,
            seq: start + i,
            organization_id: report.organizationId,
            domain: report.domain,
            begin_at: report.begin,
            end_at: report.end,
            day,
            source_ip: r.sourceIp,
            header_from: r.headerFrom,
            disposition: r.disposition,
            dkim_aligned: r.dkimAligned ? 1 : 0,
            spf_aligned: r.spfAligned ? 1 : 0,
            count: r.count,
            detail: r.detail,
          })))
          .execute();
      }
      return true;
    });
    if (stored) return 'stored';
    await this.#db
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
      base.selectAll().orderBy('begin_at', 'desc').orderBy('id', 'desc').limit(query.limit).offset((query.page - 1) * query.limit).execute(),
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

  async recordGroups(organizationId: string, domain: string, range: ReportRange): Promise<ReportRecordGroup[]> {
    // The rows by the index, summed here: SQL's GROUP BY over the detail text sorted every row in a
    // temporary B-tree and was several times slower than one pass through a Map.
    const rows = await this.#db
      .selectFrom('report_records')
      .select(['day', 'source_ip', 'header_from', 'disposition', 'dkim_aligned', 'spf_aligned', 'detail', 'count'])
      .where('organization_id', '=', organizationId)
      .where('domain', '=', domain)
      .where('begin_at', '<', range.to)
      .where('end_at', '>', range.from)
      .execute();
    const groups = new Map<string, ReportRecordGroup>();
    for (const r of rows) {
      const dkimAligned = Number(r.dkim_aligned) === 1;
      const spfAligned = Number(r.spf_aligned) === 1;
      const key = `${r.day}\u0000${r.source_ip}\u0000${r.header_from}\u0000${r.disposition}\u0000${dkimAligned ? 1 : 0}${spfAligned ? 1 : 0}\u0000${r.detail}`;
      const group = groups.get(key);
      if (group) group.count += Number(r.count);
      else groups.set(key, { day: r.day, sourceIp: r.source_ip, headerFrom: r.header_from, disposition: r.disposition, dkimAligned, spfAligned, detail: r.detail, count: Number(r.count) });
    }
    return sortGroups([...groups.values()]);
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
      reports = reports.where('domain', '=', domain);
      duplicates = duplicates.where('domain', '=', domain);
    }
    if (range !== null) {
      reports = reports.where('begin_at', '<', range.to).where('end_at', '>', range.from);
      duplicates = duplicates.where('begin_at', '<', range.to).where('end_at', '>', range.from);
    }
    const [byKind, dup] = await Promise.all([
      reports
        .select(['kind', 'authenticated'])
        .select((eb) => [eb.fn.countAll<number | string>().as('n'), eb.fn.sum<number | string>('message_count').as('messages')])
        .groupBy(['kind', 'authenticated'])
        .execute(),
      duplicates.select((eb) => eb.fn.sum<number | string>('times').as('n')).executeTakeFirst(),
    ]);
    const counts: ReportCounts = { aggregate: 0, tls: 0, unauthenticated: 0, duplicates: Number(dup?.n ?? 0), messages: 0 };
    for (const row of byKind) {
      const n = Number(row.n);
      if (row.kind === 'tls') {
        counts.tls += n;
        continue;
      }
      counts.aggregate += n;
      counts.messages += Number(row.messages ?? 0);
      if (Number(row.authenticated) === 0) counts.unauthenticated += n;
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
}
