/**
 * What a domain's stored reports say (`reports show`, the API's senders, readiness and TLS routes):
 * read from the store over the window (by the reports' own date range), handed to the engine's
 * analysis, with the counts only the store knows (reports, duplicates, unauthenticated reporters)
 * and the daily pass and fail series for the chart.
 */
import { analyzeSpf, lookupReverseNames, selectorsSeen, shippedRanges, summariseReports, type AggregateReport, type ReportsSummary, type Resolver, type SpfAnalysis, type TlsReport } from '@spoof-checker/engine';
import type { MonitorReportSignals } from '../store/monitors.js';
import type { ReportCounts, ReportRange, ReportStore } from '../store/reports.js';
import { recordFromRow } from './ingest.js';

/** Seconds in a day. */
export const DAY_SECONDS = 86_400;
/** The window `show` takes without `--days`. */
export const DEFAULT_REPORT_DAYS = 30;
/** The longest window. */
export const MAX_REPORT_DAYS = 366;

/** One UTC day of the chart. */
export interface DailyPoint {
  day: string;
  /** Messages that passed DMARC (an aligned SPF or DKIM pass). */
  pass: number;
  fail: number;
}

/** Reads a domain's reports for a window. */
export interface ReportWindow {
  domain: string;
  days: number;
  range: ReportRange;
  counts: ReportCounts;
  /** The aggregate reports, their records summed per report day (one synthetic report per day). */
  aggregate: AggregateReport[];
  tls: TlsReport[];
  daily: DailyPoint[];
}

/** Options of {@link readReportWindow}. */
export interface ReportWindowOptions {
  store: ReportStore;
  organizationId: string;
  domain: string;
  days: number;
  now?: Date;
}

/**
 * The domain's reports overlapping the last `days` days before now. Records come back summed per
 * report day by the store (so a month of reports is a few thousand rows whatever the number of
 * reports), and are handed on as one report per day, with the policy of the newest report of that day.
 */
export async function readReportWindow(options: ReportWindowOptions): Promise<ReportWindow> {
  const now = options.now ?? new Date();
  const to = Math.floor(now.getTime() / 1000);
  const range: ReportRange = { from: to - options.days * DAY_SECONDS, to };
  const { store, organizationId, domain } = options;
  const [counts, groups, documents, tlsDocuments] = await Promise.all([
    store.counts(organizationId, domain, range),
    store.recordGroups(organizationId, domain, range),
    store.documents(organizationId, domain, 'aggregate', range),
    store.documents(organizationId, domain, 'tls', range),
  ]);
  const metadata = documents.map((d) => JSON.parse(d) as Omit<AggregateReport, 'records'>);
  const policyOfDay = new Map<string, Omit<AggregateReport, 'records'>>();
  for (const m of metadata) policyOfDay.set(new Date(m.dateRange.begin * 1000).toISOString().slice(0, 10), m);
  const newest = metadata.at(-1);
  const byDay = new Map<string, AggregateReport>();
  // The same auth results repeat across days and sources: each distinct detail is parsed once.
  const details = new Map<string, object>();
  const daily = new Map<string, DailyPoint>();
  for (const group of groups) {
    let report = byDay.get(group.day);
    if (!report) {
      const begin = Date.parse(`${group.day}T00:00:00Z`) / 1000;
      const base = policyOfDay.get(group.day) ?? newest;
      report = {
        ...(base as Omit<AggregateReport, 'records'>),
        reportId: `day:${group.day}`,
        dateRange: { begin, end: begin + DAY_SECONDS - 1 },
        records: [],
      };
      byDay.set(group.day, report);
    }
    report.records.push(recordFromRow(group, group.count, details));
    let point = daily.get(group.day);
    if (!point) daily.set(group.day, (point = { day: group.day, pass: 0, fail: 0 }));
    if (group.dkimAligned || group.spfAligned) point.pass += group.count;
    else point.fail += group.count;
  }
  return {
    domain,
    days: options.days,
    range,
    counts,
    aggregate: [...byDay.values()],
    tls: tlsDocuments.map((d) => JSON.parse(d) as TlsReport),
    daily: [...daily.values()].sort((a, b) => (a.day < b.day ? -1 : 1)),
  };
}

/** Options of {@link showReports}. */
export interface ShowOptions extends ReportWindowOptions {
  /** The resolver for the domain's SPF record (the tightening needs it). */
  resolver?: Resolver;
}

/** The exact TXT record a domain must publish for receivers to send its reports to the service (RFC 7489 §7.1). */
export interface ExternalDestination {
  name: string;
  value: 'v=DMARC1';
}

/** `<domain>._report._dmarc.<service domain>`, or null when the service's domain is the domain's own. */
export function externalDestination(domain: string, serviceDomain: string | null): ExternalDestination | null {
  if (serviceDomain === null) return null;
  const d = domain.toLowerCase();
  const s = serviceDomain.toLowerCase();
  // Reports to an address in the domain itself (or under it) need no authorisation.
  if (s === d || s.endsWith(`.${d}`) || d.endsWith(`.${s}`)) return null;
  return { name: `${d}._report._dmarc.${s}`, value: 'v=DMARC1' };
}

/** `reports show`: the engine's summary plus what only the store and the receiver know. */
export interface ShownReports {
  summary: ReportsSummary & {
    /** Aggregate reports whose message was not authenticated (counted and marked, never dropped). */
    unauthenticatedReports: number;
    /** The SPF record the tightening was computed from, or why there is none (a DNS failure is said). */
    spf: { status: string; record: string | null };
    /** The record to publish when the reports go to the service at another domain; null when none is needed. */
    externalDestination: ExternalDestination | null;
  };
  daily: DailyPoint[];
}

/**
 * The summary of a domain's reports. The SPF record is read through `resolver` (`--zones`/`--resolver`)
 * when given; without it there is no tightening (`spf.status` says `not-looked-up`).
 */
export async function showReports(options: ShowOptions & { serviceDomain?: string | null }): Promise<ShownReports> {
  const now = options.now ?? new Date();
  const window = await readReportWindow({ ...options, now });
  let spf: SpfAnalysis | null = null;
  let spfState: { status: string; record: string | null } = { status: 'not-looked-up', record: null };
  let reverseNames: Awaited<ReturnType<typeof lookupReverseNames>> | undefined;
  if (options.resolver) {
    spf = await analyzeSpf(options.domain, options.resolver);
    spfState = { status: spf.status, record: spf.record };
    // Reports give addresses only: the busiest sources' reverse names (bounded by the engine, MAX_REVERSE_LOOKUPS).
    const volume = new Map<string, number>();
    for (const report of window.aggregate) for (const r of report.records) volume.set(r.sourceIp, (volume.get(r.sourceIp) ?? 0) + r.count);
    const busiest = [...volume.entries()].sort((a, b) => b[1] - a[1]).map(([source]) => source);
    reverseNames = await lookupReverseNames(busiest, options.resolver);
  }
  const summary = summariseReports({
    domain: options.domain,
    days: options.days,
    now,
    aggregate: window.aggregate,
    tls: window.tls,
    spf,
    ranges: shippedRanges(),
    ...(reverseNames ? { reverseNames } : {}),
  });
  return {
    summary: {
      ...summary,
      // The store's counts: real reports (the analysis saw one report per day) and every duplicate receipt.
      reports: window.counts.aggregate,
      duplicates: window.counts.duplicates,
      unauthenticatedReports: window.counts.unauthenticated,
      spf: spfState,
      externalDestination: externalDestination(options.domain, options.serviceDomain ?? null),
    },
    daily: window.daily,
  };
}

/** The window of reports whose DKIM selectors join the selectors a check probes. */
export const SELECTOR_WINDOW_DAYS = 90;
/** How long the selectors of one organisation and domain are remembered. */
export const SELECTOR_CACHE_MS = 5 * 60_000;
/** Organisation and domain pairs remembered at most. */
export const SELECTOR_CACHE_ENTRIES = 10_000;

/**
 * The DKIM selectors of `domain` that the organisation's aggregate reports have seen in the last
 * SELECTOR_WINDOW_DAYS days (the engine's `selectorsSeen`: valid labels, `d=` at or below the
 * domain), remembered for SELECTOR_CACHE_MS. A failure of the store gives none: a check never fails
 * for want of a hint.
 */
export function reportSelectorCache(store: ReportStore, now: () => Date = () => new Date()): (organizationId: string, domain: string) => Promise<string[]> {
  const cache = new Map<string, { selectors: string[]; until: number }>();
  return async (organizationId, domain) => {
    const key = `${organizationId} ${domain}`;
    const at = now().getTime();
    const held = cache.get(key);
    if (held && held.until > at) return held.selectors;
    let selectors: string[] = [];
    try {
      // Only domains with reports cost more than one indexed query.
      if ((await store.latestEnd(organizationId, domain)) !== null) {
        const window = await readReportWindow({ store, organizationId, domain, days: SELECTOR_WINDOW_DAYS, now: new Date(at) });
        selectors = selectorsSeen(window.aggregate, domain);
      }
    } catch {
      return [];
    }
    if (cache.size >= SELECTOR_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
    cache.set(key, { selectors, until: at + SELECTOR_CACHE_MS });
    return selectors;
  };
}

/** The recent window a monitor's report signals look at. */
export const SIGNAL_RECENT_DAYS = 7;
/** The weeks before it, the baseline of the pass rate. */
export const SIGNAL_BASELINE_DAYS = 28;
/** Messages an unauthorised source must have sent in the recent window to be alerted on (low volume is background noise). */
export const SIGNAL_MIN_UNAUTHORISED_MESSAGES = 10;
/** Messages each window needs before a pass rate is compared. */
export const SIGNAL_MIN_MESSAGES = 100;
/** A fall of the DMARC pass rate by this much (a fraction, 0.10 = ten points) is a drop. */
export const SIGNAL_PASS_RATE_DROP = 0.1;

/**
 * What a monitor of `domain` adds to its snapshot from the organisation's reports: the sources the
 * last SIGNAL_RECENT_DAYS days class as unauthorised (over SIGNAL_MIN_UNAUTHORISED_MESSAGES), and
 * whether the DMARC pass rate of those days fell SIGNAL_PASS_RATE_DROP below the SIGNAL_BASELINE_DAYS
 * before. Null when neither holds, so a monitor without reports keeps its snapshot (and its digest).
 * A new unauthorised sender, or a drop, is then a change the monitor confirms and sends to its webhook.
 */
export function monitorReportSignals(store: ReportStore, now: () => Date = () => new Date()): (organizationId: string, domain: string) => Promise<MonitorReportSignals | null> {
  return async (organizationId, domain) => {
    if ((await store.latestEnd(organizationId, domain)) === null) return null;
    const at = now();
    const window = await readReportWindow({ store, organizationId, domain, days: SIGNAL_RECENT_DAYS + SIGNAL_BASELINE_DAYS, now: at });
    const recentFrom = new Date(at.getTime() - SIGNAL_RECENT_DAYS * DAY_SECONDS * 1000).toISOString().slice(0, 10);
    const recent = window.aggregate.filter((r) => new Date(r.dateRange.begin * 1000).toISOString().slice(0, 10) >= recentFrom);
    const summary = summariseReports({ domain, days: SIGNAL_RECENT_DAYS, now: at, aggregate: recent, ranges: null });
    const unauthorised = summary.senders
      .filter((s) => s.class === 'unauthorised' && s.messages >= SIGNAL_MIN_UNAUTHORISED_MESSAGES)
      .map((s) => s.source)
      .sort();
    const rate = (points: DailyPoint[]) => {
      const total = points.reduce((n, p) => n + p.pass + p.fail, 0);
      return { total, rate: total === 0 ? 1 : points.reduce((n, p) => n + p.pass, 0) / total };
    };
    const now7 = rate(window.daily.filter((p) => p.day >= recentFrom));
    const before = rate(window.daily.filter((p) => p.day < recentFrom));
    const passRateDropped = now7.total >= SIGNAL_MIN_MESSAGES && before.total >= SIGNAL_MIN_MESSAGES && now7.rate < before.rate - SIGNAL_PASS_RATE_DROP;
    return unauthorised.length > 0 || passRateDropped ? { unauthorised, passRateDropped } : null;
  };
}
