/**
 * The report store in memory (the default store of `serve` without `--data`/`--database`, and the
 * reference the SQL store is tested against).
 */
import type { SenderDigestEntry } from '@spoof-checker/engine';
import { CloseHooks } from './close-hooks.js';
import type { Page, PageRequest } from './page-types.js';
import {
  identityBaseOf,
  isTrustedOrigin,
  MAX_REPORT_RECORDS_PER_ORGANIZATION_PER_DAY,
  assertBatchSize,
  mergeDigestDay,
  REPORT_LIMIT_WINDOW_MS,
  reportingSource,
  sourceLimit,
  sourceWindowOf,
  type AddReportOutcome,
  type DayRange,
  type ReportArrivals,
  type ReportDayTotals,
  type ReportSourceTotals,
  type NewReport,
  type ReportCounts,
  type ReportKind,
  type ReportQuery,
  type ReportRange,
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
  readonly #reports = new Map<string, { report: StoredReport; records: NewReport['records']; source: string | null }>();
  /** organisation → identity → report id. */
  readonly #identities = new Map<string, Map<string, string>>();
  /** organisation → identity → duplicate receipts. */
  readonly #duplicates = new Map<string, Map<string, Duplicate>>();
  readonly #rejections: ReportRejection[] = [];
  /** Reports stored per organisation ({@link MemoryReportStore.revision}). */
  readonly #revisions = new Map<string, number>();
  /** organisation + domain → "day trusted source" → the merged digest entry. */
  readonly #digests = new Map<string, Map<string, { trusted: boolean; entry: SenderDigestEntry }>>();
  readonly #routing: (domain: string) => Promise<ReportRouting>;
  readonly closing = new CloseHooks();

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
    const source = reportingSource(report);
    if (source !== null && report.records.length > 0) {
      const since = Date.parse(report.origin.receivedAt) - REPORT_LIMIT_WINDOW_MS;
      let organization = 0;
      let ofSource = 0;
      for (const { report: held, source: heldSource } of this.#reports.values()) {
        if (held.organizationId !== report.organizationId || Date.parse(held.origin.receivedAt) <= since) continue;
        organization += held.recordCount;
        if (heldSource === source) ofSource += held.recordCount;
      }
      if (ofSource + report.records.length > sourceLimit(source)) return 'over-source-limit';
      if (organization + report.records.length > MAX_REPORT_RECORDS_PER_ORGANIZATION_PER_DAY) return 'over-organization-limit';
    }
    const { records, digest, trusted, ...rest } = report;
    const digestKey = `${report.organizationId}\u0000${report.domain}`;
    let held = this.#digests.get(digestKey);
    if (!held) this.#digests.set(digestKey, (held = new Map()));
    const byDay = new Map<string, SenderDigestEntry[]>();
    for (const entry of digest) {
      const list = byDay.get(entry.day);
      if (list) list.push(structuredClone(entry));
      else byDay.set(entry.day, [structuredClone(entry)]);
    }
    for (const [day, list] of byDay) {
      const prefix = `${day} ${trusted ? 1 : 0} `;
      const sameDay = new Map<string, SenderDigestEntry>();
      let stored = 0;
      for (const [key, value] of held) {
        if (!key.startsWith(prefix)) continue;
        stored += 1;
        sameDay.set(value.entry.source, value.entry);
      }
      for (const entry of mergeDigestDay(list, sameDay, () => stored, report.domain)) held.set(`${prefix}${entry.source}`, { trusted, entry });
    }
    const stored: StoredReport = {
      ...structuredClone(rest),
      recordCount: records.length,
      messageCount: records.reduce((sum, r) => sum + r.count, 0),
      contested: false,
    };
    this.#reports.set(report.id, { report: stored, records: structuredClone(records), source });
    identities.set(report.identity, report.id);
    this.#revisions.set(report.organizationId, (this.#revisions.get(report.organizationId) ?? 0) + 1);
    return 'stored';
  }

  async addMany(reports: readonly NewReport[]): Promise<PromiseSettledResult<AddReportOutcome>[]> {
    assertBatchSize(reports);
    const outcomes: PromiseSettledResult<AddReportOutcome>[] = [];
    // In order, each whole or absent on its own (add copies a report in one step).
    for (const report of reports) outcomes.push(await this.add(report).then((value) => ({ status: 'fulfilled', value }) as const, (reason: unknown) => ({ status: 'rejected', reason }) as const));
    return outcomes;
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
    // Contested across every report of the organisation, whatever page it is on.
    const bases = new Map<string, number>();
    for (const { report } of this.#own(organizationId)) {
      const base = identityBaseOf(report.origin);
      if (base !== null) bases.set(base, (bases.get(base) ?? 0) + 1);
    }
    const items = all.slice(start, start + query.limit).map((r) => {
      const base = identityBaseOf(r.origin);
      return { ...structuredClone(r), contested: base !== null && (bases.get(base) ?? 0) > 1 };
    });
    return { items, total: all.length };
  }

  async rejections(organizationId: string, page: PageRequest): Promise<Page<ReportRejection>> {
    const all = this.#rejections
      .filter((r) => r.organizationId === organizationId)
      .sort((a, b) => (a.receivedAt < b.receivedAt ? 1 : a.receivedAt > b.receivedAt ? -1 : a.id < b.id ? 1 : -1));
    const start = (page.page - 1) * page.limit;
    return { items: structuredClone(all.slice(start, start + page.limit)), total: all.length };
  }

  #days(organizationId: string, domain: string, days: DayRange): { trusted: boolean; entry: SenderDigestEntry }[] {
    const held = this.#digests.get(`${organizationId}\u0000${domain}`);
    if (!held) return [];
    return [...held.values()]
      .filter((d) => d.entry.day >= days.from && d.entry.day <= days.to)
      .sort((a, b) => (a.entry.day < b.entry.day ? -1 : a.entry.day > b.entry.day ? 1 : a.entry.source < b.entry.source ? -1 : a.entry.source > b.entry.source ? 1 : 0));
  }

  async senderDays(organizationId: string, domain: string, days: DayRange, trusted: boolean): Promise<SenderDigestEntry[]> {
    return structuredClone(this.#days(organizationId, domain, days).filter((d) => d.trusted === trusted).map((d) => d.entry));
  }

  async senderWindow(organizationId: string, domain: string, days: DayRange, trusted: boolean): Promise<SenderDigestEntry[]> {
    return sourceWindowOf(await this.senderDays(organizationId, domain, days, trusted));
  }

  /** Nothing to build: the memory store rolls a window up from its days on each read. */
  async freshenBlocks(_organizationId: string, _domain: string, _days: DayRange): Promise<number> {
    return 0;
  }

  async dailyTotals(organizationId: string, domain: string, days: DayRange): Promise<ReportDayTotals[]> {
    const totals = new Map<string, ReportDayTotals>();
    for (const { trusted, entry } of this.#days(organizationId, domain, days)) {
      const key = `${entry.day} ${trusted ? 1 : 0}`;
      let t = totals.get(key);
      if (!t) totals.set(key, (t = { day: entry.day, trusted, messages: 0, dmarcPass: 0, spfAligned: 0, dkimAligned: 0, failing: 0 }));
      t.messages += entry.messages;
      t.dmarcPass += entry.dmarcPass;
      t.spfAligned += entry.spfAligned;
      t.dkimAligned += entry.dkimAligned;
      t.failing += entry.failing;
    }
    return [...totals.values()].sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : Number(b.trusted) - Number(a.trusted)));
  }

  async sourceTotals(organizationId: string, domain: string, days: DayRange, trusted: boolean, limit: number): Promise<{ sources: ReportSourceTotals[]; count: number }> {
    const sources = new Map<string, ReportSourceTotals>();
    for (const d of this.#days(organizationId, domain, days)) {
      if (d.trusted !== trusted) continue;
      let t = sources.get(d.entry.source);
      if (!t) sources.set(d.entry.source, (t = { source: d.entry.source, messages: 0, dmarcPass: 0, failing: 0 }));
      t.messages += d.entry.messages;
      t.dmarcPass += d.entry.dmarcPass;
      t.failing += d.entry.failing;
    }
    const all = [...sources.values()].sort((a, b) => b.messages - a.messages || (a.source < b.source ? -1 : a.source > b.source ? 1 : 0));
    return { sources: all.slice(0, limit), count: all.length };
  }

  async documents(organizationId: string, domain: string, kind: ReportKind, range: ReportRange): Promise<string[]> {
    return this.#own(organizationId)
      .map((e) => e.report)
      .filter((r) => r.kind === kind && r.domain === domain && overlaps(r, range))
      .sort((a, b) => a.begin - b.begin || (a.id < b.id ? -1 : 1))
      .map((r) => r.document);
  }

  async counts(organizationId: string, domain: string | null, range: ReportRange | null): Promise<ReportCounts> {
    const counts: ReportCounts = { aggregate: 0, tls: 0, unauthenticated: 0, untrusted: 0, duplicates: 0, messages: 0 };
    for (const { report } of this.#own(organizationId)) {
      if ((domain !== null && report.domain !== domain) || !overlaps(report, range)) continue;
      if (report.kind === 'tls') {
        counts.tls += 1;
        continue;
      }
      counts.aggregate += 1;
      counts.messages += report.messageCount;
      if (report.origin.authenticatedDomain === null) counts.unauthenticated += 1;
      if (!isTrustedOrigin(report.origin)) counts.untrusted += 1;
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

  async arrivals(organizationId: string, since: string | null): Promise<ReportArrivals> {
    let total = 0;
    let latest: string | null = null;
    const after = new Map<string, number>();
    for (const { report } of this.#reports.values()) {
      if (report.organizationId !== organizationId) continue;
      total += 1;
      const at = report.origin.receivedAt;
      if (latest === null || at > latest) latest = at;
      if (since !== null && at > since) after.set(report.domain, (after.get(report.domain) ?? 0) + 1);
    }
    return { total, latest, after: [...after].sort(([a], [b]) => (a < b ? -1 : 1)).map(([domain, reports]) => ({ domain, reports })) };
  }

  async revision(organizationId: string): Promise<string> {
    return String(this.#revisions.get(organizationId) ?? 0);
  }

  async domainDailyTotals(organizationId: string, days: DayRange, only?: readonly string[]): Promise<(ReportDayTotals & { domain: string })[]> {
    const prefix = `${organizationId}\u0000`;
    const wanted = only === undefined ? null : new Set(only);
    const domains = [...this.#digests.keys()]
      .filter((key) => key.startsWith(prefix))
      .map((key) => key.slice(prefix.length))
      .filter((domain) => wanted === null || wanted.has(domain))
      .sort();
    const out: (ReportDayTotals & { domain: string })[] = [];
    for (const domain of domains) for (const t of await this.dailyTotals(organizationId, domain, days)) out.push({ domain, ...t });
    return out;
  }
}
