/**
 * What a domain's stored reports say (`reports show`, the API's summary, senders, readiness and TLS
 * routes, and the console after them): the engine's per-source, per-day digest the store keeps as
 * reports arrive (`report_sender_days`), read over the window's days and handed to the engine's
 * `summariseReports`, which classes the senders and judges readiness from it; the counts only the
 * store knows (reports, duplicates); the daily series; and the untrusted reports apart, marked.
 * Never the rows: a month of a domain costs one digest entry per source and day, whatever the number
 * of reports or records.
 */
import { analyzeSpf, lookupReverseNames, MAX_SUMMARY_LIST, shippedRanges, summariseReports, type DailyCount, type ReportsSummary, type Resolver, type SenderDigestEntry, type SpfAnalysis, type TlsReport } from '@spoof-checker/engine';
import { reportDay, type DayRange, type ReportCounts, type ReportDayTotals, type ReportRange, type ReportSourceTotals, type ReportStore } from '../store/reports.js';

/** Seconds in a day. */
export const DAY_SECONDS = 86_400;
/** The window `show` takes without `--days`. */
export const DEFAULT_REPORT_DAYS = 30;
/** The windows the dashboard offers (the last 7, 30 and 90 days): what the block refresh keeps current (src/ingest/block-refresher.ts). */
export const REPORT_WINDOWS = [7, 30, 90] as const;
/** The longest window. */
export const MAX_REPORT_DAYS = 366;

/** One UTC day of the chart (trusted reports only). */
export interface DailyPoint {
  day: string;
  /** Messages that passed DMARC (an aligned SPF or DKIM pass). */
  pass: number;
  fail: number;
}

/** A domain's digest over a window. */
export interface ReportWindow {
  domain: string;
  days: number;
  /** The window by the reports' own date ranges (for the counts). */
  range: ReportRange;
  /** The window's UTC days (for the digest). */
  dayRange: DayRange;
  counts: ReportCounts;
  /**
   * The digest entries of the trusted reports: by day then source, or with `bySource` the window's
   * roll-up per source (`ReportStore.senderWindow`: what the summary needs, a few thousand entries
   * whatever the window's days).
   */
  senders: SenderDigestEntry[];
  /** Messages per day, trusted and untrusted apart. */
  totals: ReportDayTotals[];
}

/** Options of {@link readReportWindow}. */
export interface ReportWindowOptions {
  store: ReportStore;
  organizationId: string;
  domain: string;
  days: number;
  now?: Date;
  /** Read the trusted entries rolled up per source over the window (`senderWindow`), not per day. */
  bySource?: boolean;
}

/** The window of the last `days` days before `now`: by the reports' ranges, and as UTC days. */
export function reportWindow(days: number, now: Date): { range: ReportRange; dayRange: DayRange } {
  const to = Math.floor(now.getTime() / 1000);
  const from = to - days * DAY_SECONDS;
  // A day counts when it overlaps the window (as the engine's summariseDigestSenders picks entries).
  return { range: { from, to }, dayRange: { from: reportDay(from), to: reportDay(to) } };
}

/** The trusted digest and the day totals of the domain over the last `days` days. */
export async function readReportWindow(options: ReportWindowOptions): Promise<ReportWindow> {
  const now = options.now ?? new Date();
  const { range, dayRange } = reportWindow(options.days, now);
  const { store, organizationId, domain } = options;
  const [counts, senders, totals] = await Promise.all([
    store.counts(organizationId, domain, range),
    options.bySource ? store.senderWindow(organizationId, domain, dayRange, true) : store.senderDays(organizationId, domain, dayRange, true),
    store.dailyTotals(organizationId, domain, dayRange),
  ]);
  return { domain, days: options.days, range, dayRange, counts, senders, totals };
}

/** The engine's daily series of the trusted totals. */
function dailyOf(totals: readonly ReportDayTotals[]): DailyCount[] {
  return totals.filter((t) => t.trusted).map((t) => ({ day: t.day, messages: t.messages, dmarcPass: t.dmarcPass, failing: t.failing }));
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

/**
 * The untrusted reports of the window, apart and marked: anyone can mail a `rua` address or POST to
 * the public TLS-RPT route, so what they say is counted here and never in the figures beside it,
 * never classed, never alerted on, never probed. Sources at most MAX_SUMMARY_LIST, busiest first.
 */
export interface UntrustedReports {
  marked: 'untrusted';
  note: string;
  reports: number;
  messages: number;
  dmarcPass: number;
  failing: number;
  sources: ReportSourceTotals[];
  sourcesLeftOut: number;
}

/** What only the store and the receiver know, added to the engine's summary. */
export interface ShownSummary extends ReportsSummary {
  /** Aggregate reports whose message was not authenticated (counted and marked, never dropped). */
  unauthenticatedReports: number;
  /** The SPF record the tightening was computed from, or why there is none (a DNS failure is said). */
  spf: { status: string; record: string | null };
  /** The record to publish when the reports go to the service at another domain; null when none is needed. */
  externalDestination: ExternalDestination | null;
  /** Messages per UTC day with aligned SPF and DKIM apart, trusted and untrusted rows apart (for the console's chart and pass rates). */
  series: ReportDayTotals[];
  untrusted: UntrustedReports;
}

/** `reports show`: the engine's summary plus what only the store and the receiver know. */
export interface ShownReports {
  summary: ShownSummary;
  daily: DailyPoint[];
}

/** The note every untrusted section carries. */
export const UNTRUSTED_NOTE =
  'Reports no authenticated message carried and nobody of the organisation handed in (unauthenticated mail, the public TLS-RPT route): anyone could have sent them. Counted here apart, never in the figures above, never alerted on, and their DKIM selectors are never probed.';

/** The untrusted section of a window. */
async function untrustedOf(options: ReportWindowOptions, window: ReportWindow): Promise<UntrustedReports> {
  const untrustedDays = window.totals.filter((t) => !t.trusted);
  const sum = (pick: (t: ReportDayTotals) => number) => untrustedDays.reduce((n, t) => n + pick(t), 0);
  const { sources, count } =
    untrustedDays.length === 0 ? { sources: [], count: 0 } : await options.store.sourceTotals(options.organizationId, options.domain, window.dayRange, false, MAX_SUMMARY_LIST);
  return {
    marked: 'untrusted',
    note: UNTRUSTED_NOTE,
    reports: window.counts.untrusted,
    messages: sum((t) => t.messages),
    dmarcPass: sum((t) => t.dmarcPass),
    failing: sum((t) => t.failing),
    sources,
    sourcesLeftOut: Math.max(0, count - sources.length),
  };
}

/**
 * The summary of a domain's reports. The SPF record is read through `resolver` (`--zones`/`--resolver`)
 * when given; without it there is no tightening (`spf.status` says `not-looked-up`).
 */
export async function showReports(options: ShowOptions & { serviceDomain?: string | null }): Promise<ShownReports> {
  const now = options.now ?? new Date();
  // The senders rolled up per source: the engine's summariseDigestSenders gives from them what it gives from every day's entries.
  const window = await readReportWindow({ ...options, now, bySource: true });
  const tlsDocuments = await options.store.documents(options.organizationId, options.domain, 'tls', window.range);
  let spf: SpfAnalysis | null = null;
  let spfState: { status: string; record: string | null } = { status: 'not-looked-up', record: null };
  let reverseNames: Awaited<ReturnType<typeof lookupReverseNames>> | undefined;
  if (options.resolver) {
    spf = await analyzeSpf(options.domain, options.resolver);
    spfState = { status: spf.status, record: spf.record };
    // Reports give addresses only: the busiest sources' reverse names (bounded by the engine, MAX_REVERSE_LOOKUPS).
    const volume = new Map<string, number>();
    for (const e of window.senders) volume.set(e.source, (volume.get(e.source) ?? 0) + e.messages);
    const busiest = [...volume.entries()].sort((a, b) => b[1] - a[1]).map(([source]) => source);
    reverseNames = await lookupReverseNames(busiest, options.resolver);
  }
  const summary = summariseReports({
    domain: options.domain,
    days: options.days,
    now,
    aggregate: [],
    digest: { domain: options.domain, senders: window.senders, daily: dailyOf(window.totals) },
    reportCount: window.counts.aggregate - window.counts.untrusted,
    tls: tlsDocuments.map((d) => JSON.parse(d) as TlsReport),
    spf,
    ranges: shippedRanges(),
    ...(reverseNames ? { reverseNames } : {}),
  });
  return {
    summary: {
      ...summary,
      duplicates: window.counts.duplicates,
      unauthenticatedReports: window.counts.unauthenticated,
      spf: spfState,
      externalDestination: externalDestination(options.domain, options.serviceDomain ?? null),
      series: window.totals,
      untrusted: await untrustedOf(options, window),
    },
    daily: window.totals.filter((t) => t.trusted).map((t) => ({ day: t.day, pass: t.dmarcPass, fail: t.failing })),
  };
}

