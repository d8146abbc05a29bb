/**
 * The overview's rows: one per monitored domain, read from what each monitor keeps (its latest
 * check and confirmed state: one query for the organisation, never a check per view), with the
 * last 7 days' DMARC pass rate and readiness where the organisation has reports: the same figures
 * the domain's report page (`showReports`) gives for that window, from one read of every domain's
 * daily totals (`ReportStore.domainDailyTotals`), never a summary per domain; after a report, only
 * the day totals of the domains whose reports arrived since (`ReportStore.arrivals`). Sorted and
 * filtered by the query; the worst first by default.
 */
import { analyzeSpf, parseDmarcRecord, readiness, shippedRanges, summariseDigestSenders, type Resolver, type SpfAnalysis } from '@spoof-checker/engine';
import { reportWindow } from '../summaries/summary.js';
import type { Monitor, MonitorStore } from '../store/monitors.js';
import type { DayRange, DomainDayTotals, ReportStore } from '../store/reports.js';

/** The columns one can sort by, in the table's order. */
export const SORT_KEYS = ['domain', 'verdict', 'dmarc', 'transport', 'dnssec', 'bimi', 'lookalikes', 'passrate', 'readiness', 'checked'] as const;
export type SortKey = (typeof SORT_KEYS)[number];
/** The verdict filter's values. */
export const VERDICT_FILTERS = ['spoofable', 'partially_protected', 'protected', 'unchecked'] as const;
/** Days of reports the pass rate and readiness cover. */
export const OVERVIEW_REPORT_DAYS = 7;
/** Monitors read per store query (an organisation keeps at most MAX_MONITORS_PER_ORGANIZATION). */
export const OVERVIEW_PAGE_SIZE = 1_000;
/** Rows shown per page of the overview (the summary above it counts them all). */
export const OVERVIEW_ROWS_PER_PAGE = 100;
/** Longest name filter accepted. */
export const MAX_FILTER_LENGTH = 253;

/** The overview's query: sort, order, filters. */
export interface OverviewQuery {
  sort: SortKey;
  order: 'asc' | 'desc';
  q: string;
  verdict: (typeof VERDICT_FILTERS)[number] | '';
  /** The page of rows, from 1. */
  page: number;
}

/** The query from the URL's parameters; anything unknown falls back to the default (the worst first). */
export function overviewQuery(query: Record<string, unknown>): OverviewQuery {
  const one = (v: unknown) => (typeof v === 'string' ? v : '');
  const sort = one(query['sort']);
  const verdict = one(query['verdict']);
  return {
    sort: (SORT_KEYS as readonly string[]).includes(sort) ? (sort as SortKey) : 'verdict',
    order: one(query['order']) === 'desc' ? 'desc' : 'asc',
    q: one(query['q']).trim().toLowerCase().slice(0, MAX_FILTER_LENGTH),
    verdict: (VERDICT_FILTERS as readonly string[]).includes(verdict) ? (verdict as OverviewQuery['verdict']) : '',
    page: /^[1-9][0-9]{0,4}$/.test(one(query['page'])) ? Number(one(query['page'])) : 1,
  };
}

/** One domain's row. */
export interface DomainRow {
  monitorId: string;
  domain: string;
  outcome: 'checked' | 'domain-not-found' | 'could-not-check' | null;
  verdict: string | null;
  dmarcPolicy: string | null;
  transport: string | null;
  dnssec: string | null;
  bimi: string | null;
  lookalikes: { critical: number; high: number } | null;
  passRate: number | null;
  /**
   * Ready to enforce or not; `checking-spf` while the SPF record's analysis the verdict needs has not
   * arrived within the view's budget (OVERVIEW_SPF_WAIT_MS); `spf-unreadable` when it could not be read
   * (a DNS temperror, RFC 7208 §2.6.6): neither verdict, as the record could make it not ready. Null: no reports.
   */
  readiness: Readiness;
  checkedAt: string | null;
}

/** A row's readiness to enforce (null: no reports in the window). */
export type Readiness = 'ready' | 'not-ready' | 'checking-spf' | 'spf-unreadable' | null;
/** The readiness states that are no verdict yet (the SPF record the verdict needs is not known). */
export const PENDING_READINESS = ['checking-spf', 'spf-unreadable'] as const;
/** How the readiness column sorts, ascending: the domains to work on first, pending ones next, ready ones last. */
const READINESS_ORDER: Readonly<Record<Exclude<Readiness, null>, number>> = { 'not-ready': 0, 'spf-unreadable': 1, 'checking-spf': 2, ready: 3 };

/** Policies of DMARC records already read (bounded: cleared when full). */
const POLICY_MEMO = new Map<string, string>();
/** Records remembered by {@link dmarcPolicy}. */
export const POLICY_MEMO_ENTRIES = 10_000;

/** `p=…` of a DMARC record, as the engine's parser reads it (RFC 9989 §4.7), remembered by text. */
function dmarcPolicy(record: string): string {
  let policy = POLICY_MEMO.get(record);
  if (policy === undefined) {
    const parsed = parseDmarcRecord(record);
    policy = parsed.kind === 'record' ? `p=${parsed.record.policy ?? 'none'}` : 'not a DMARC record';
    if (POLICY_MEMO.size >= POLICY_MEMO_ENTRIES) POLICY_MEMO.clear();
    POLICY_MEMO.set(record, policy);
  }
  return policy;
}

/** The row of a monitor, from its confirmed state (else the state last seen) and its latest check. */
export function rowOf(monitor: Monitor): DomainRow {
  const snapshot = monitor.machine.confirmed?.snapshot ?? monitor.machine.candidate?.snapshot ?? null;
  const last = monitor.lastResult;
  const checked = snapshot?.kind === 'checked' ? snapshot : null;
  let dmarcPolicyText: string | null = null;
  if (checked) {
    if (checked.dmarc.record === null) dmarcPolicyText = 'none published';
    else dmarcPolicyText = dmarcPolicy(checked.dmarc.record);
  }
  let lookalikes: DomainRow['lookalikes'] = null;
  if (checked?.lookalikes) {
    lookalikes = { critical: 0, high: 0 };
    for (const entry of checked.lookalikes) {
      const grade = entry.slice(entry.lastIndexOf(' ') + 1);
      if (grade === 'critical') lookalikes.critical++;
      else if (grade === 'high') lookalikes.high++;
    }
  }
  return {
    monitorId: monitor.id,
    domain: monitor.domain,
    outcome: last?.outcome ?? null,
    verdict: last?.verdict ?? checked?.verdict ?? null,
    dmarcPolicy: dmarcPolicyText,
    transport: last?.transportVerdict ?? checked?.transport?.verdict ?? null,
    dnssec: checked?.dnssec?.status ?? null,
    bimi: checked?.bimi?.grade ?? null,
    lookalikes,
    passRate: null,
    readiness: null,
    checkedAt: last?.checkedAt ?? null,
  };
}

/** How bad a row is: lower is worse (a domain anyone can spoof first; one that could not be checked next). */
function badness(row: DomainRow): number {
  if (row.outcome === 'domain-not-found') return 0;
  if (row.verdict === 'spoofable') return 1;
  if (row.outcome === 'could-not-check') return 2;
  if (row.verdict === 'partially_protected') return 3;
  if (row.verdict === null) return 4;
  return 5;
}

const compareText = (a: string | null, b: string | null) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? -1 : 1);
const compareNumber = (a: number | null, b: number | null) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a - b);

function compare(key: SortKey, a: DomainRow, b: DomainRow): number {
  switch (key) {
    case 'domain':
      return compareText(a.domain, b.domain);
    case 'verdict':
      // Worst first; then the most critical lookalikes; then by name.
      return badness(a) - badness(b) || compareNumber(b.lookalikes?.critical ?? 0, a.lookalikes?.critical ?? 0);
    case 'dmarc':
      return compareText(a.dmarcPolicy, b.dmarcPolicy);
    case 'transport':
      return compareText(a.transport, b.transport);
    case 'dnssec':
      return compareText(a.dnssec, b.dnssec);
    case 'bimi':
      return compareText(a.bimi, b.bimi);
    case 'lookalikes':
      return compareNumber(a.lookalikes ? a.lookalikes.critical * 1e6 + a.lookalikes.high : null, b.lookalikes ? b.lookalikes.critical * 1e6 + b.lookalikes.high : null);
    case 'passrate':
      return compareNumber(a.passRate, b.passRate);
    case 'readiness':
      return compareNumber(a.readiness === null ? null : READINESS_ORDER[a.readiness], b.readiness === null ? null : READINESS_ORDER[b.readiness]);
    case 'checked':
      return compareText(a.checkedAt, b.checkedAt);
  }
}

/** How many rows are in each state (the summary at the top of the overview). */
export function countStates(rows: readonly DomainRow[]): Record<(typeof VERDICT_FILTERS)[number], number> {
  const counts = { spoofable: 0, partially_protected: 0, protected: 0, unchecked: 0 };
  for (const row of rows) {
    if (row.verdict === null || row.outcome !== 'checked') counts.unchecked++;
    else if (row.verdict in counts) counts[row.verdict as 'spoofable' | 'partially_protected' | 'protected']++;
  }
  return counts;
}

/** The rows filtered and sorted (ties by domain name, always ascending). */
export function arrange(rows: DomainRow[], query: OverviewQuery): DomainRow[] {
  const kept = rows.filter((row) => {
    if (query.q && !row.domain.includes(query.q)) return false;
    if (query.verdict === 'unchecked') return row.verdict === null || row.outcome !== 'checked';
    if (query.verdict) return row.verdict === query.verdict && row.outcome === 'checked';
    return true;
  });
  const sign = query.order === 'asc' ? 1 : -1;
  return kept.sort((a, b) => sign * compare(query.sort, a, b) || compareText(a.domain, b.domain));
}

/**
 * Readiness verdicts worked out from a domain's senders, per store, by organisation, domain and its
 * window's trusted totals (bounded: cleared when full). A report changes the totals, so a verdict is
 * never read back after its domain's reports changed.
 */
const READINESS_MEMO = new WeakMap<ReportStore, Map<string, Judged>>();
/** Verdicts remembered by the overview's readiness. */
export const READINESS_MEMO_ENTRIES = 10_000;
/** Domains whose senders are read at once when their readiness is not remembered. */
export const READINESS_READS_AT_ONCE = 8;

/** A domain's trusted messages and DMARC passes of the window, and the key of its readiness. */
interface DomainFigures {
  messages: number;
  dmarcPass: number;
  failing: number;
  /** The window's trusted day totals as text: a new report changes them, and the remembered readiness with them. */
  fingerprint: string;
}

/** Each domain's trusted figures from the organisation's day totals (the untrusted never count, as on the report page). */
function figuresOf(totals: readonly DomainDayTotals[]): Map<string, DomainFigures> {
  const out = new Map<string, DomainFigures>();
  for (const t of totals) {
    if (!t.trusted) continue;
    let f = out.get(t.domain);
    if (!f) out.set(t.domain, (f = { messages: 0, dmarcPass: 0, failing: 0, fingerprint: '' }));
    f.messages += t.messages;
    f.dmarcPass += t.dmarcPass;
    f.failing += t.failing;
    f.fingerprint += `${t.day}:${t.messages}:${t.dmarcPass}:${t.failing}:${t.spfAligned}:${t.dkimAligned};`;
  }
  return out;
}

/** A readiness verdict, and until when it holds when the domain's SPF record took part (its analysis is read again after). */
interface Judged {
  verdict: 'ready' | 'not-ready';
  /** Epoch ms the SPF analysis it was judged with expires (0: judged without the record, which could change it; 1: with an expired one, while it is read again); null when the record could not change it. */
  spfUntil: number | null;
}

/** How long the overview keeps a domain's SPF analysis (read through the report resolver) before reading it again. */
export const OVERVIEW_SPF_MEMO_MS = 10 * 60_000;
/** SPF analyses remembered per resolver (bounded: cleared when full). */
export const OVERVIEW_SPF_MEMO_ENTRIES = 10_000;
/**
 * How long one view of the overview waits, in all (the page's budget, not a domain's), for the SPF
 * analyses its readiness verdicts need: a row whose analysis has not arrived by then shows
 * `checking-spf`, the analysis going on in the background for a later view. A page never hangs on
 * other people's DNS.
 */
export const OVERVIEW_SPF_WAIT_MS = 300;
/** SPF analyses run at once per resolver, every view together (the others wait their turn, in order). */
export const OVERVIEW_SPF_AT_ONCE = 8;
/** How long an analysis that could not read the record (a temperror, RFC 7208 §2.6.6, or a failure) is kept before it is read again. */
export const OVERVIEW_SPF_RETRY_MS = 60_000;

/** A domain's SPF analysis: null when the record could not be read (the verdict cannot be judged with it). */
interface SpfRead {
  until: number;
  analysis: Promise<SpfAnalysis | null>;
  /** Whether `analysis` has settled (a view need not wait for it). */
  settled: boolean;
}
/** Per resolver: the analyses remembered, and the queue of those waiting for one of the OVERVIEW_SPF_AT_ONCE places. */
interface SpfReads {
  memo: Map<string, SpfRead>;
  running: number;
  waiting: (() => void)[];
}
const SPF_READS = new WeakMap<Resolver, SpfReads>();

/**
 * `domain`'s SPF analysis through `resolver`, as the report page reads it (`showReports`), remembered
 * OVERVIEW_SPF_MEMO_MS (OVERVIEW_SPF_RETRY_MS when the record could not be read), OVERVIEW_SPF_AT_ONCE
 * running at once. It goes on when the view that asked stops waiting for it.
 */
function spfOf(resolver: Resolver, domain: string, now: number): SpfRead {
  let reads = SPF_READS.get(resolver);
  if (!reads) SPF_READS.set(resolver, (reads = { memo: new Map(), running: 0, waiting: [] }));
  const { memo } = reads;
  const known = memo.get(domain);
  if (known !== undefined && known.until > now) return known;
  if (memo.size >= OVERVIEW_SPF_MEMO_ENTRIES) memo.clear();
  const queue = reads;
  const analysis = new Promise<SpfAnalysis | null>((resolve) => {
    const run = () => {
      queue.running++;
      analyzeSpf(domain, resolver)
        // A temperror (RFC 7208 §2.6.6) or a failure: the record is not known; read again sooner.
        .then((a) => (a.status === 'temperror' ? null : a), () => null)
        .then((a) => {
          if (a === null) made.until = Math.min(made.until, now + OVERVIEW_SPF_RETRY_MS);
          made.settled = true;
          resolve(a);
        })
        .finally(() => {
          queue.running--;
          queue.waiting.shift()?.();
        });
    };
    if (queue.running < OVERVIEW_SPF_AT_ONCE) run();
    else queue.waiting.push(run);
  });
  const made: SpfRead = { until: now + OVERVIEW_SPF_MEMO_MS, analysis, settled: false };
  memo.set(domain, made);
  return made;
}

/**
 * The domain's readiness as its report page judges it: the engine's `readiness` over the senders the
 * digest classes, with the domain's SPF record when the service has a report resolver (`resolver`,
 * the one the report page reads it through), without it when it has none (as `showReports` then).
 * No failing message: ready without reading a sender. Else its senders are read and classed once per
 * change. The SPF record can only make a failing sender legitimate (its address passes the record:
 * the engine's `ownRanges`), so it is read only when the verdict without it is `ready` and some
 * failing sender is unauthorised; that verdict holds OVERVIEW_SPF_MEMO_MS, then the record is read again.
 * The analysis is waited for until `deadline` (the view's budget): not there by then, `checking-spf`;
 * the record could not be read, `spf-unreadable` (the report page would judge without it and could say
 * ready where the record makes it not ready: no verdict rather than a wrong one). That wait is handed
 * back (`withSpf`) rather than awaited, so that the caller's reads of other domains go on meanwhile.
 */
async function readinessOf(
  reports: ReportStore,
  organizationId: string,
  domain: string,
  figures: DomainFigures,
  dayRange: DayRange,
  now: Date,
  resolver: Resolver | undefined,
  deadline: Promise<void>,
): Promise<Judged | { withSpf: Promise<Judged | (typeof PENDING_READINESS)[number]> }> {
  if (figures.failing === 0) return { verdict: 'ready', spfUntil: null };
  const key = `${organizationId}\u0000${domain}\u0000${dayRange.from}\u0000${dayRange.to}\u0000${figures.fingerprint}`;
  let memo = READINESS_MEMO.get(reports);
  if (!memo) READINESS_MEMO.set(reports, (memo = new Map()));
  const remember = (k: string, judged: Judged): Judged => {
    if (memo.size >= READINESS_MEMO_ENTRIES) memo.clear();
    memo.set(k, judged);
    return judged;
  };
  // The senders are read once per call, whether judged without the record, with it, or both.
  let read: ReturnType<ReportStore['senderDays']> | undefined;
  const judge = async (spf: SpfAnalysis | null) => {
    const entries = await (read ??= reports.senderDays(organizationId, domain, dayRange, true));
    const senders = summariseDigestSenders(entries, { domain, days: OVERVIEW_REPORT_DAYS, now, spf, ranges: shippedRanges() });
    return { verdict: readiness(senders, { domain, days: OVERVIEW_REPORT_DAYS }).verdict, spfMatters: spf === null && senders.some((x) => x.failing > 0 && x.class === 'unauthorised') };
  };
  let without = memo.get(key);
  if (without === undefined) {
    const { verdict, spfMatters } = await judge(null);
    // Marked with spfUntil 0 when the SPF record could change it (judged again with the record below).
    without = remember(key, { verdict, spfUntil: spfMatters && verdict === 'ready' ? 0 : null });
  }
  // Without a resolver the record takes no part (as on the report page without one); still marked as
  // one the record could change, so that it is never kept for a view with a resolver.
  if (without.spfUntil === null || resolver === undefined) return without;
  const spf = spfOf(resolver, domain, now.getTime());
  const withKey = `${key}\u0000spf\u0000${spf.until}`;
  const known = memo.get(withKey);
  if (known !== undefined) return known;
  // The verdict judged with the record's previous analysis (the same figures): shown, without waiting,
  // while the record is read again after OVERVIEW_SPF_MEMO_MS (marked expired: judged again next view).
  const latestKey = `${key}\u0000spf-latest`;
  const previous = memo.get(latestKey);
  if (!spf.settled && previous !== undefined) return { verdict: previous.verdict, spfUntil: 1 };
  const withSpf = async () => {
    // An analysis already there wins the race (its reaction is queued before the deadline's).
    const analysis = await Promise.race([spf.analysis, deadline.then(() => undefined)]);
    if (analysis === undefined) return 'checking-spf';
    if (analysis === null) return 'spf-unreadable';
    const judged = remember(withKey, { verdict: (await judge(analysis)).verdict, spfUntil: spf.until });
    return remember(latestKey, judged);
  };
  return { withSpf: withSpf() };
}

/**
 * Rows already made, per store, by monitor id, each with the stamp of the state it was made from
 * (`MonitorStore.stamps`: a run's commit moves the version, so a row is never shown after its
 * monitor's state changed). Bounded: cleared when full.
 */
const ROW_MEMO = new WeakMap<MonitorStore, Map<string, { stamp: string; row: DomainRow }>>();
/** Rows remembered by the overview, all organisations together. */
export const ROW_MEMO_ENTRIES = 50_000;
/** Changed monitors read by id; more than this, and the organisation's monitors are read page by page. */
export const OVERVIEW_READS_BY_ID = 200;

const stampOf = (m: { id: string; version: number; createdAt: string }) => `${m.version}\u0000${m.createdAt}`;

/**
 * The organisation's rows from the monitors' states: each monitor's id and version read, and only
 * the monitors whose state is not the one a remembered row was made from read whole (a row depends
 * on the monitor's state alone: its domain, `machine` and `lastResult`).
 */
async function monitorRows(monitors: MonitorStore, organizationId: string): Promise<DomainRow[]> {
  let memo = ROW_MEMO.get(monitors);
  if (!memo) ROW_MEMO.set(monitors, (memo = new Map()));
  const stamps = await monitors.stamps(organizationId);
  const rows: DomainRow[] = [];
  const changed: string[] = [];
  for (const s of stamps) {
    const known = memo.get(s.id);
    if (known?.stamp === stampOf(s)) rows.push({ ...known.row });
    else changed.push(s.id);
  }
  if (changed.length === 0) return rows;
  const read: Monitor[] = [];
  if (changed.length <= OVERVIEW_READS_BY_ID) read.push(...(await monitors.getMany(organizationId, changed)));
  else {
    // Most rows changed (the first view): every monitor, page by page, those not wanted left out.
    const wanted = new Set(changed);
    for (let page = 1, seen = 0; ; page++) {
      const batch = await monitors.list(organizationId, { page, limit: OVERVIEW_PAGE_SIZE });
      read.push(...batch.items.filter((m) => wanted.has(m.id)));
      seen += batch.items.length;
      if (batch.items.length < OVERVIEW_PAGE_SIZE || seen >= batch.total) break;
    }
  }
  for (const monitor of read) {
    const row = rowOf(monitor);
    if (memo.size >= ROW_MEMO_ENTRIES) memo.clear();
    memo.set(monitor.id, { stamp: stampOf(monitor), row });
    rows.push({ ...row });
  }
  return rows;
}

/** An organisation's figures of a window, as of a revision of its reports, with the readiness verdicts worked out from them so far. */
interface WindowFigures {
  revision: string;
  /** The reports in all and their latest arrival when the figures were read (`ReportStore.arrivals`): what changed since is read again, the rest kept. */
  total: number;
  latest: string | null;
  figures: Map<string, DomainFigures>;
  verdicts: Map<string, Judged>;
}

/**
 * Figures per store, by organisation and window, under the revision of the organisation's reports
 * they were read at (`ReportStore.revision`: it moves with every report stored, so figures are never
 * shown after a report changed them). Bounded: cleared when full.
 */
const WINDOW_MEMO = new WeakMap<ReportStore, Map<string, WindowFigures>>();
/** Organisations' windows remembered by the overview. */
export const WINDOW_MEMO_ENTRIES = 200;

/**
 * The organisation's figures of the window: remembered ones while its reports' revision holds; else
 * the day totals of the domains whose reports arrived since they were read (`ReportStore.arrivals`),
 * the other domains' figures kept; every domain's read again when that cannot be told (the first
 * view, or a report that arrived out of order).
 */
async function windowFigures(reports: ReportStore, organizationId: string, dayRange: DayRange): Promise<WindowFigures> {
  let memo = WINDOW_MEMO.get(reports);
  if (!memo) WINDOW_MEMO.set(reports, (memo = new Map()));
  const key = `${organizationId}\u0000${dayRange.from}\u0000${dayRange.to}`;
  // The revision first: figures read after it are at least as new as it says.
  const revision = await reports.revision(organizationId);
  const known = memo.get(key);
  if (known?.revision === revision) return known;
  // The arrivals before the day totals, in the same way: the totals read are at least as new as the arrivals say.
  const arrivals = await reports.arrivals(organizationId, known?.latest ?? null);
  const added = arrivals.after.reduce((n, a) => n + a.reports, 0);
  let figures: Map<string, DomainFigures>;
  if (known !== undefined && known.latest !== null && arrivals.total - known.total === added) {
    // Every report since arrived after the latest one known: only their domains changed.
    const changed = arrivals.after.map((a) => a.domain);
    figures = new Map(known.figures);
    for (const domain of changed) figures.delete(domain);
    for (const [domain, f] of figuresOf(await reports.domainDailyTotals(organizationId, dayRange, changed))) figures.set(domain, f);
  } else figures = figuresOf(await reports.domainDailyTotals(organizationId, dayRange));
  // A domain whose day totals did not change keeps its verdict (what the readiness memo would give).
  const verdicts = new Map<string, Judged>();
  if (known) {
    for (const [domain, judged] of known.verdicts) if (figures.get(domain)?.fingerprint === known.figures.get(domain)?.fingerprint) verdicts.set(domain, judged);
  }
  const made: WindowFigures = { revision, total: arrivals.total, latest: arrivals.latest, figures, verdicts };
  if (memo.size >= WINDOW_MEMO_ENTRIES) memo.clear();
  memo.set(key, made);
  return made;
}

/**
 * Whether a verdict kept with the figures holds for a view with `resolver` (or none) at `now`: one the
 * SPF record could not change always; one judged without the record only without a resolver; one
 * judged with it while its analysis is kept.
 */
function holds(judged: Judged, resolver: Resolver | undefined, now: Date): boolean {
  if (judged.spfUntil === null) return true;
  return resolver === undefined ? judged.spfUntil === 0 : judged.spfUntil > now.getTime();
}

/**
 * Every monitored domain of the organisation as a row, with the reports' figures where there are
 * reports. SPF analyses are waited for OVERVIEW_SPF_WAIT_MS in all (the page's budget); a row whose
 * analysis is not there by then is `checking-spf`, and a later view shows its verdict.
 */
export async function overviewRows(monitors: MonitorStore, reports: ReportStore, organizationId: string, now: Date, resolver?: Resolver): Promise<DomainRow[]> {
  const { dayRange } = reportWindow(OVERVIEW_REPORT_DAYS, now);
  // The monitors and the reports' figures are read at once.
  const figuresRead = windowFigures(reports, organizationId, dayRange);
  let rows: DomainRow[] = [];
  try {
    rows = await monitorRows(monitors, organizationId);
  } finally {
    // Never left unawaited (its failure would be unhandled).
    await figuresRead.catch(() => undefined);
  }
  const { figures, verdicts } = await figuresRead;
  const unjudged: DomainRow[] = [];
  // The trusted daily totals: every message, not only the senders a summary lists.
  for (const row of rows) {
    const f = figures.get(row.domain);
    if (!f || f.messages === 0) continue;
    row.passRate = f.dmarcPass / f.messages;
    const judged = verdicts.get(row.domain);
    row.readiness = judged !== undefined && holds(judged, resolver, now) ? judged.verdict : null;
    if (row.readiness === null) unjudged.push(row);
  }
  // The SPF analyses are waited for OVERVIEW_SPF_WAIT_MS in all, from here; the store's reads are not bounded by it.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, OVERVIEW_SPF_WAIT_MS);
  });
  const settle = (row: DomainRow, judged: Judged | (typeof PENDING_READINESS)[number]) => {
    if (typeof judged === 'string') row.readiness = judged;
    else {
      row.readiness = judged.verdict;
      verdicts.set(row.domain, judged);
    }
  };
  // The waits for SPF analyses, apart from the store's reads (READINESS_READS_AT_ONCE at a time), which go on meanwhile.
  const waits: Promise<void>[] = [];
  try {
    let next = 0;
    const worker = async () => {
      while (next < unjudged.length) {
        const row = unjudged[next++]!;
        const judged = await readinessOf(reports, organizationId, row.domain, figures.get(row.domain)!, dayRange, now, resolver, deadline);
        if ('withSpf' in judged) waits.push(judged.withSpf.then((j) => settle(row, j)));
        else settle(row, judged);
      }
    };
    // Every wait awaited, even when a read fails (a failed wait would be unhandled).
    const reads = await Promise.allSettled(Array.from({ length: Math.min(READINESS_READS_AT_ONCE, unjudged.length) }, worker));
    const waited = await Promise.allSettled(waits);
    for (const r of [...reads, ...waited]) if (r.status === 'rejected') throw r.reason;
  } finally {
    clearTimeout(timer);
  }
  return rows;
}
