/**
 * Failure reports in SQL (SQLite or PostgreSQL) on Kysely: `failure_reports` and `alert_settings`
 * of migration `0011_alerts` (src/store/alerts-sql.ts). A report is one row: the columns queries
 * select by, the whole report as JSON; one copy per organisation and identity (a unique key).
 */
import type { Kysely } from 'kysely';
import type { Page, PageRequest, Timestamp } from './page-types.js';
import { json, newestFirstPage, parse } from './sql-values.js';
import { DEFAULT_FAILURE_REPORT_SETTINGS, type FailureReport, type FailureReportSettings, type FailureReportStore } from './failure-reports.js';

interface Tables {
  failure_reports: { id: string; organization_id: string; domain: string; source_ip: string | null; arrived_at: string; identity: string; document: string };
  alert_settings: { organization_id: string; document: string };
}

/** Rows one prune DELETE removes at most. */
export const FAILURE_REPORT_PRUNE_BATCH = 1_000;

/** The SQL implementation of {@link FailureReportStore}. */
export class SqlFailureReportStore implements FailureReportStore {
  readonly #db: Kysely<Tables>;
  readonly #isUniqueViolation: (error: unknown) => boolean;

  constructor(db: Kysely<any>, isUniqueViolation: (error: unknown) => boolean) {
    this.#db = db as Kysely<Tables>;
    this.#isUniqueViolation = isUniqueViolation;
  }

  async add(report: FailureReport): Promise<'stored' | 'duplicate'> {
    try {
      await this.#db
        .insertInto('failure_reports')
        .values({ id: report.id, organization_id: report.organizationId, domain: report.domain, source_ip: report.sourceIp, arrived_at: report.receivedAt, identity: report.identity, document: json(report) })
        .execute();
      return 'stored';
    } catch (error) {
      if (this.#isUniqueViolation(error)) return 'duplicate';
      throw error;
    }
  }

  async forDomain(organizationId: string, domain: string, since: Timestamp, limit: number): Promise<FailureReport[]> {
    const rows = await this.#db
      .selectFrom('failure_reports')
      .select('document')
      .where('organization_id', '=', organizationId)
      .where('domain', '=', domain)
      .where('arrived_at', '>=', since)
      .orderBy('arrived_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((r) => parse<FailureReport>(r.document));
  }

  async list(organizationId: string, page: PageRequest): Promise<Page<FailureReport>> {
    const matching = this.#db.selectFrom('failure_reports').where('organization_id', '=', organizationId);
    return newestFirstPage(matching, page, (r: { document: string }) => parse<FailureReport>(r.document), { select: ['document'], by: 'arrived_at' });
  }

  /** Deletes reports received before `before`, in bounded batches (the record log's retention); how many went. */
  async prune(before: Timestamp): Promise<number> {
    let removed = 0;
    for (;;) {
      const result = await this.#db
        .deleteFrom('failure_reports')
        .where('id', 'in', this.#db.selectFrom('failure_reports').select('id').where('arrived_at', '<', before).orderBy('arrived_at').limit(FAILURE_REPORT_PRUNE_BATCH))
        .executeTakeFirst();
      const batch = Number(result.numDeletedRows);
      removed += batch;
      if (batch < FAILURE_REPORT_PRUNE_BATCH) return removed;
    }
  }

  async get(organizationId: string, id: string): Promise<FailureReport | undefined> {
    const row = await this.#db.selectFrom('failure_reports').select('document').where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst();
    return row && parse<FailureReport>(row.document);
  }

  async settings(organizationId: string): Promise<FailureReportSettings> {
    const row = await this.#db.selectFrom('alert_settings').select('document').where('organization_id', '=', organizationId).executeTakeFirst();
    const stored = row ? (JSON.parse(row.document) as Partial<FailureReportSettings>) : {};
    return { hashLocalParts: stored.hashLocalParts ?? DEFAULT_FAILURE_REPORT_SETTINGS.hashLocalParts };
  }

  async setSettings(organizationId: string, settings: FailureReportSettings): Promise<void> {
    await this.#change(organizationId, (document) => ({ ...document, hashLocalParts: settings.hashLocalParts }));
  }

  async salt(organizationId: string, create: () => string): Promise<string> {
    const document = await this.#change(organizationId, (current) => (typeof current['salt'] === 'string' ? current : { ...current, salt: create() }));
    return document['salt'] as string;
  }

  /** Changes the settings row by compare-and-set on its text (two writers at once: one wins, the other reads it and tries again). */
  async #change(organizationId: string, change: (document: Record<string, unknown>) => Record<string, unknown>): Promise<Record<string, unknown>> {
    for (let attempt = 0; ; attempt++) {
      const row = await this.#db.selectFrom('alert_settings').select('document').where('organization_id', '=', organizationId).executeTakeFirst();
      const current = row ? (JSON.parse(row.document) as Record<string, unknown>) : {};
      const next = change(current);
      const text = JSON.stringify(next);
      if (row && text === row.document) return next;
      const written = row
        ? Number((await this.#db.updateTable('alert_settings').set({ document: text }).where('organization_id', '=', organizationId).where('document', '=', row.document).executeTakeFirst()).numUpdatedRows)
        : Number((await this.#db.insertInto('alert_settings').values({ organization_id: organizationId, document: text }).onConflict((oc) => oc.column('organization_id').doNothing()).executeTakeFirst()).numInsertedOrUpdatedRows ?? 0);
      if (written === 1) return next;
      if (attempt >= 5) throw new Error(`the settings of ${organizationId} changed under six writes in a row`);
    }
  }
}
