/**
 * The whole answer of `reports show <domain>`: what the service computes from the reports it stored
 * and the domain's SPF analysis, in the JSON shape of `reports show --json` (issue 30).
 */
import { isAtOrBelow } from '../dns/name.js';
import { selectorProblem } from '../dkim/probe.js';
import type { RangeData } from '../ranges/types.js';
import type { SpfAnalysis } from '../spf/analyze.js';
import { dailyFromTotals, type DailyCount } from './daily.js';
import { identityText } from './identity.js';
import { capList, readiness, type Readiness } from './readiness.js';
import { analyseSenders, atOrBelow, DAY_SECONDS, digestSenders, epochSecondsOf, mergeSenderDigests, reportsInWindow, summariseDigestSenders, type SenderDigestEntry, type SenderSummary } from './senders.js';
import { spfTighten, unusedSpfTerms, type SpfTightening, type UnusedSpfTerm } from './spf-tighten.js';
import { tlsSummary, type TlsPolicySummary } from './tls-summary.js';
import type { ReverseName } from './reverse-names.js';
import type { AggregateReport, TlsReport } from './types.js';

/** What `summariseReports` takes. */
export interface SummariseReportsInput {
  domain: string;
  /** The window in days, by the reports' own date ranges. */
  days: number;
  now: Date | number;
  /** The stored aggregate reports (any domain: those of `domain` are picked). Duplicates among them are counted once. */
  aggregate: readonly AggregateReport[];
  /**
   * Instead of the rows: the domain's digest (`digestReports`, merged with `mergeDigests` as reports
   * arrive), so a summary reads one entry per source and day. Used when given (then `aggregate` is
   * ignored, and `reportCount` says how many reports the window holds).
   */
  digest?: ReportsDigest;
  /** With `digest`: the aggregate reports in the window, as the store counts them. */
  reportCount?: number;
  /** The stored TLS reports (those whose policies name `domain` are picked). */
  tls?: readonly TlsReport[];
  /** Duplicates already refused when the reports were stored, added to those found here. */
  duplicates?: number;
  /** The domain's SPF analysis (`analyzeSpf`): needed for the tightening, own ranges and unused terms. */
  spf?: SpfAnalysis | null;
  /** Provider ranges (clouds and CDNs); `shippedRanges()` is the usual value; null skips cloud naming and tightening. */
  ranges?: RangeData | null;
  /** Reverse names of the sources, from `lookupReverseNames` (bounded DNS, done by the caller); absent ones are null. */
  reverseNames?: ReadonlyMap<string, ReverseName>;
}

/** The fields of a `SenderSummary` the summary shows (not the domains it authenticated as). */
type ShownSenderField = 'source' | 'provider' | 'messages' | 'spfAligned' | 'dkimAligned' | 'dmarcPass' | 'selectors' | 'class' | 'why' | 'fix' | 'failing' | 'firstDay' | 'lastDay';

/** One sender in the summary: the `SenderSummary` fields shown, and its reverse name. */
export interface ReportsSummarySender extends Pick<SenderSummary, ShownSenderField> {
  /** The source's reverse name when the caller looked it up (`lookupReverseNames`), else null. */
  reverseName: ReverseName | null;
}

/** The JSON of `reports show --json`. */
export interface ReportsSummary {
  domain: string;
  days: number;
  /** Aggregate reports in the window with rows for the domain (TLS reports are under `tls`). */
  reports: number;
  /** Reports received more than once, counted once. */
  duplicates: number;
  /** Messages in the window (every `row/count`). */
  messages: number;
  /** The senders, most messages first: at most MAX_SUMMARY_LIST. */
  senders: ReportsSummarySender[];
  /** Senders beyond the list (their messages are in `messages` and `readiness`). */
  sendersLeftOut: number;
  /** `readiness()`'s answer without its `total` (that is `messages`). */
  readiness: Omit<Readiness, 'total'>;
  spfTighten: SpfTightening | null;
  /** Top-level SPF terms no reported mail passed through in the window. */
  spfUnused: UnusedSpfTerm[];
  /** DKIM selectors of the domain seen in the reports: probe them (they cannot be guessed). At most MAX_SUMMARY_LIST. */
  selectors: string[];
  /** Selectors beyond the list. */
  selectorsLeftOut: number;
  tls: { reports: number; policies: TlsPolicySummary[] };
  /** The window: its first and last UTC day. */
  window: { from: string; to: string };
  /** Messages, passes and failures per UTC day, for the chart of pass and fail. */
  daily: DailyCount[];
}

/** The DKIM selectors seen in reports for signatures with a `d=` at or below `domain` (valid DNS labels only), sorted. */
export function selectorsSeen(reports: readonly AggregateReport[], domain: string): string[] {
  const wanted = domain.toLowerCase().replace(/\.$/, '');
  const seen = new Set<string>();
  const checked = new Set<string>();
  for (const report of reports) {
    for (const record of report.records) {
      for (const signature of record.auth.dkim) {
        if (signature.selector === null || checked.has(signature.selector) || !atOrBelow(signature.domain, wanted)) continue;
        checked.add(signature.selector);
        const selector = signature.selector.toLowerCase();
        if (selectorProblem(selector) === null) seen.add(selector);
      }
    }
  }
  return [...seen].sort();
}

function validSelectors(selectors: Iterable<string>): string[] {
  const seen = new Set<string>();
  for (const raw of selectors) {
    const selector = raw.toLowerCase();
    if (!seen.has(selector) && selectorProblem(selector) === null) seen.add(selector);
  }
  return [...seen].sort();
}

/** The DKIM selectors of digest entries (valid DNS labels only, lower case), sorted: what `selectorsSeen` gives from the reports. */
export function digestSelectors(entries: readonly Pick<SenderDigestEntry, 'selectors'>[]): string[] {
  return validSelectors(entries.flatMap((e) => e.selectors));
}

/** The digest of a domain's reports: one entry per source and UTC day, and the daily series (JSON as it is). */
export interface ReportsDigest {
  domain: string;
  senders: SenderDigestEntry[];
  daily: DailyCount[];
}

/**
 * The digest of `reports` for `domain` (every report given counts: de-duplicate first, as the store
 * does). A report's rows count on the UTC day its period begins.
 */
export function digestReports(reports: readonly AggregateReport[], domain: string): ReportsDigest {
  const canonical = domain.toLowerCase().replace(/\.$/, '');
  const picked = reports.filter((r) => atOrBelow(r.policyPublished.domain, canonical) || r.records.some((x) => atOrBelow(x.headerFrom, canonical)));
  const { senders, totals } = digestSenders(picked, canonical);
  return { domain: canonical, senders, daily: dailyFromTotals(totals) };
}

/** Digests of one domain merged into one: entries of the same source and day, and the same day's counts, added. */
export function mergeDigests(digests: readonly ReportsDigest[]): ReportsDigest {
  const domain = digests[0]?.domain ?? '';
  const days = new Map<string, DailyCount>();
  for (const digest of digests) {
    for (const d of digest.daily) {
      const at = days.get(d.day);
      if (at === undefined) days.set(d.day, { ...d });
      else {
        at.messages += d.messages;
        at.dmarcPass += d.dmarcPass;
        at.failing += d.failing;
      }
    }
  }
  return {
    domain,
    senders: mergeSenderDigests(
      digests.flatMap((d) => d.senders),
      domain,
    ),
    daily: [...days.values()].sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0)),
  };
}

/** Builds the summary of a domain's reports over a window. Pure: the caller stores and loads the reports. */
export function summariseReports(input: SummariseReportsInput): ReportsSummary {
  const domain = input.domain.toLowerCase().replace(/\.$/, '');
  let duplicates = input.duplicates ?? 0;
  const unique = new Map<string, AggregateReport>();
  for (const report of input.aggregate) {
    const key = identityText(report);
    if (unique.has(key)) duplicates++;
    else unique.set(key, report);
  }
  const options = { domain, days: input.days, now: input.now, spf: input.spf ?? null, ranges: input.ranges ?? null, reverseNames: input.reverseNames };
  const end = epochSecondsOf(input.now);
  const start = end - input.days * DAY_SECONDS;
  let senders: SenderSummary[];
  let daily: DailyCount[];
  let reportCount: number;
  if (input.digest !== undefined) {
    senders = summariseDigestSenders(input.digest.senders, options);
    daily = input.digest.daily.filter((d) => {
      const at = Date.parse(`${d.day}T00:00:00Z`) / 1000;
      return at + DAY_SECONDS > start && at <= end;
    });
    reportCount = input.reportCount ?? 0;
  } else {
    // The policy domain decides for almost every report; only a report of a parent domain needs its rows read.
    const inWindow = reportsInWindow([...unique.values()], input.days, input.now).filter((r) => atOrBelow(r.policyPublished.domain, domain) || r.records.some((x) => atOrBelow(x.headerFrom, domain)));
    const analysed = analyseSenders(inWindow, options);
    senders = analysed.senders;
    daily = dailyFromTotals(analysed.totals);
    reportCount = inWindow.length;
  }
  const ready = readiness(senders, { domain, days: input.days });
  const shownSenders = capList(senders);
  const selectors = capList(validSelectors(senders.flatMap((x) => x.selectors)));
  const tlsUnique = new Map<string, TlsReport>();
  for (const report of input.tls ?? []) {
    if (!report.policies.some((p) => isAtOrBelow(p.policy.domain, domain))) continue;
    const key = identityText(report);
    if (!tlsUnique.has(key)) tlsUnique.set(key, report);
  }
  const tlsReports = reportsInWindow([...tlsUnique.values()], input.days, input.now).map((r) => ({ ...r, policies: r.policies.filter((p) => isAtOrBelow(p.policy.domain, domain)) }));
  return {
    domain,
    days: input.days,
    reports: reportCount,
    duplicates,
    messages: ready.total,
    senders: shownSenders.items.map((s) => ({
      source: s.source,
      provider: s.provider,
      messages: s.messages,
      spfAligned: s.spfAligned,
      dkimAligned: s.dkimAligned,
      dmarcPass: s.dmarcPass,
      selectors: s.selectors,
      class: s.class,
      why: s.why,
      fix: s.fix,
      failing: s.failing,
      firstDay: s.firstDay,
      lastDay: s.lastDay,
      reverseName: input.reverseNames?.get(s.source) ?? null,
    })),
    sendersLeftOut: shownSenders.leftOut,
    readiness: { reject: ready.reject, quarantine: ready.quarantine, verdict: ready.verdict, blockers: ready.blockers, blockersLeftOut: ready.blockersLeftOut, summary: ready.summary },
    spfTighten: input.ranges ? spfTighten(input.spf ?? null, senders, { ranges: input.ranges, now: input.now }) : null,
    spfUnused: unusedSpfTerms(input.spf ?? null, senders),
    // The senders hold every selector of the domain already: one pass over the rows is enough.
    selectors: selectors.items,
    selectorsLeftOut: selectors.leftOut,
    tls: tlsSummary(tlsReports),
    daily,
    window: { from: new Date((end - input.days * DAY_SECONDS) * 1000).toISOString().slice(0, 10), to: new Date(end * 1000).toISOString().slice(0, 10) },
  };
}
