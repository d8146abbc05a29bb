/**
 * The report store in memory (the default store of `serve` without `--data`/`--database`, and the
 * reference the SQL store is tested against).
 */
import type { Page, PageRequest } from './page-types.js';
import {
  reportDay,
  type AddReportOutcome,
  type NewReport,
  type ReportCounts,
  type ReportKind,
  type ReportQuery,
  type ReportRange,
  type ReportRecordGroup,
  type ReportRejection,
  type ReportRouting,
  type ReportStore,
  type StoredReport,
} from './reports.js';

interface Duplicate {
  domain: string;
  kind: ReportKind;
  begin: number;
  end: number;
  times: number;
}

const overlaps = (report: { begin: number; end: number }, range: ReportRange | null): boolean =>
  range === null || (report.end > range.from && report.begin < range.to);

/** Newest first: the report's own begin, then id, both descending. */
const newestFirst = (a: StoredReport, b: StoredReport): number => b.begin - a.begin || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/** {@link ReportStore} in memory. */
export class MemoryReportStore implements ReportStore {
  readonly #reports = new Map<string, { report: StoredReport; records: NewReport['records'] }>();
  /** organisation → identity → report id. */
  readonly #identities = new Map<string, Map<string, string>>();
  /** organisation → identity → duplicate receipts. */
  readonly #duplicates = new Map<string, Map<string, Duplicate>>();
  readonly #rejections: ReportRejection[] = [];
  readonly #routing: (domain: string) => Promise<ReportRouting>;

  /** `routing` answers {@link ReportStore.routing} from the organisations and domains held beside this store. */
  constructor(routing: (domain: string) => Promise<ReportRouting> = async () => ({ withDomain: [], organizations: [] })) {
    this.#routing = routing;
  }

  routing(domain: string): Promise<ReportRouting> {
    return this.#routing(domain);
  }

  async add(report: NewReport): Promise<AddReportOutcome> {
    let identities = this.#identities.get(report.organizationId);
    if (!identities) this.#identities.set(report.organizationId, (identities = new Map()));
    if (identities.has(report.identity)) {
      let duplicates = this.#duplicates.get(report.organizationId);
      if (!duplicates) this.#duplicates.set(report.organizationId, (duplicates = new Map()));
      const seen = duplicates.get(report.identity);
      if (seen) seen.times += 1;
      else duplicates.set(report.identity, { domain: report.domain, kind: report.kind, begin: report.begin, end: report.end, times: 1 });
      return 'duplicate';
    }
    const { records, ...rest } = report;
    const stored: StoredReport = {
      ...structuredClone(rest),
      recordCount: records.length,
      messageCount: records.reduce((sum, r) => sum + r.count, 0),
    };
    this.#reports.set(report.id, { report: stored, records: structuredClone(records) });
    identities.set(report.identity, report.id);
    return 'stored';
  }

  async reject(rejection: ReportRejection): Promise<void> {
    this.#rejections.push(structuredClone(rejection));
  }

  #own(organizationId: string): { report: StoredReport; records: NewReport['records'] }[] {
    return [...this.#reports.values()].filter((entry) => entry.report.organizationId === organizationId);
  }

  async list(organizationId: string, query: ReportQuery): Promise<Page<StoredReport>> {
    const all = this.#own(organizationId)
      .map((e) => e.report)
      .filter((r) => (query.domain === undefined || r.domain === query.domain) && (query.kind === undefined || r.kind === query.kind))
      .sort(newestFirst);
    const start = (query.page - 1) * query.limit;
    return { items: structuredClone(all.slice(start, start + query.limit)), total: all.length };
  }

  async rejections(organizationId: string, page: PageRequest): Promise<Page<ReportRejection>> {
    const all = this.#rejections
      .filter((r) => r.organizationId === organizationId)
      .sort((a, b) => (a.receivedAt < b.receivedAt ? 1 : a.receivedAt > b.receivedAt ? -1 : a.id < b.id ? 1 : -1));
    const start = (page.page - 1) * page.limit;
    return { items: structuredClone(all.slice(start, start + page.limit)), total: all.length };
  }

  async recordGroups(organizationId: string, domain: string, range: ReportRange): Promise<ReportRecordGroup[]> {
    const groups = new Map<string, ReportRecordGroup>();
    for (const { report, records } of this.#own(organizationId)) {
      if (report.kind !== 'aggregate' || report.domain !== domain || !overlaps(report, range)) continue;
      const day = reportDay(report.begin);
      for (const r of records) {
        const key = JSON.stringify([day, r.sourceIp, r.headerFrom, r.disposition, r.dkimAligned, r.spfAligned, r.detail]);
        const group = groups.get(key);
        if (group) group.count += r.count;
        else groups.set(key, { day, ...r });
      }
    }
    return sortGroups([...groups.values()]);
  }

  async documents(organizationId: string, domain: string, kind: ReportKind, range: ReportRange): Promise<string[]> {
    return this.#own(organizationId)
      .map((e) => e.report)
      .filter((r) => r.kind === kind && r.domain === domain && overlaps(r, range))
      .sort((a, b) => a.begin - b.begin || (a.id < b.id ? -1 : 1))
      .map((r) => r.document);
  }

  async counts(organizationId: string, domain: string | null, range: ReportRange | null): Promise<ReportCounts> {
    const counts: ReportCounts = { aggregate: 0, tls: 0, unauthenticated: 0, duplicates: 0, messages: 0 };
    for (const { report } of this.#own(organizationId)) {
      if ((domain !== null && report.domain !== domain) || !overlaps(report, range)) continue;
      if (report.kind === 'tls') {
        counts.tls += 1;
        continue;
      }
      counts.aggregate += 1;
      counts.messages += report.messageCount;
      if (report.origin.authenticatedDomain === null) counts.unauthenticated += 1;
    }
    for (const d of this.#duplicates.get(organizationId)?.values() ?? []) {
      if ((domain === null || d.domain === domain) && overlaps(d, range)) counts.duplicates += d.times;
    }
    return counts;
  }

  async latestEnd(organizationId: string, domain: string): Promise<number | null> {
    let latest: number | null = null;
    for (const { report } of this.#own(organizationId)) {
      if (report.domain === domain && (latest === null || report.end > latest)) latest = report.end;
    }
    return latest;
  }

  async domains(organizationId: string): Promise<string[]> {
    return [...new Set(this.#own(organizationId).map((e) => e.report.domain))].sort();
  }

  async organizationsWithReports(domain: string): Promise<string[]> {
    return [...new Set([...this.#reports.values()].filter((e) => e.report.domain === domain).map((e) => e.report.organizationId))].sort();
  }

  async rejectionCount(organizationId: string): Promise<number> {
    return this.#rejections.filter((r) => r.organizationId === organizationId).length;
  }
}

/** The order every store returns groups in: day, then source, then the other columns. */
export function sortGroups(groups: ReportRecordGroup[]): ReportRecordGroup[] {
  // One key per group, built once (a comparison that built its keys would allocate n log n times).
  const keyed = groups.map((g) => ({ g, key: `${g.day}\u0000${g.sourceIp}\u0000${g.headerFrom}\u0000${g.disposition}\u0000${g.dkimAligned ? 1 : 0}${g.spfAligned ? 1 : 0}\u0000${g.detail}` }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return keyed.map((k) => k.g);
}
