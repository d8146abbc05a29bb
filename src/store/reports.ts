/**
 * The report store: DMARC aggregate reports (RFC 7489 Appendix C, RFC 9990) and SMTP TLS reports
 * (RFC 8460) received by the service, per organisation. One interface, a memory implementation
 * (src/store/reports-memory.ts) and a SQL one (src/store/reports-sql.ts); the contract suite
 * (test/store/reports-contract.test.ts) runs against memory, SQLite and PostgreSQL.
 *
 * - A report is taken whole or not at all: its metadata and every record are written in one
 *   transaction (or one savepoint of a batch's transaction: `addMany`), so a failure leaves no row behind.
 * - A report is stored once per organisation, keyed by its identity (the engine's
 *   `reportIdentity`: reporter, report id and date range). A second receipt is counted as a
 *   duplicate and adds no row, whatever its bytes.
 * - Records are kept as columns the queries group by (source, header From, disposition, the two
 *   aligned results, the report's own date range) plus the rest of the record as opaque JSON
 *   (`detail`), which the store never interprets.
 * - With each aggregate report, in the same transaction, the engine's digest of it (one entry per
 *   source and UTC day: `digestReports`) is merged into the domain's stored digest
 *   (`report_sender_days`), kept apart for trusted and untrusted reports ({@link isTrustedOrigin}).
 *   Summaries, selectors and monitor signals read the digest, never the rows.
 * - A file that could not be taken is kept as a rejection with its reason (counted, listed).
 */
import { emptySenderRests, mergeDigestEntries, mergeSenderDigests, type SenderDigestEntry, type SenderRests } from '@spoof-checker/engine';
import type { CloseHooks } from './close-hooks.js';
import type { Page, PageRequest, Timestamp } from './page-types.js';

/** The two kinds of report. `aggregate` is DMARC (rua); `tls` is TLS-RPT. */
export type ReportKind = 'aggregate' | 'tls';
/** Every value of {@link ReportKind}. */
export const REPORT_KINDS: readonly ReportKind[] = ['aggregate', 'tls'];

/** How a report reached the service. */
export type ReportChannel = 'file' | 'smtp' | 'imap' | 'https' | 'upload';

/**
 * Where a report came from and whether the message that carried it was authenticated. Reports are
 * attacker-controlled (anyone can mail a `rua` address): an unauthenticated one is kept and marked,
 * and the reporter is named by the authenticated domain, never by the `org_name` inside.
 */
export interface ReportOrigin {
  channel: ReportChannel;
  /** The file or attachment name (base name only), when there was one. */
  fileName: string | null;
  /** The report message's From address (mail), the client address (HTTPS), or null (a file). */
  sender: string | null;
  /** The report message's Message-ID, when it came by mail. */
  messageId: string | null;
  /**
   * The domain that authenticated the report message (an aligned DKIM pass or a DMARC pass of its
   * From domain, RFC 7489 §7.2.1.1), or null when nothing did (or it was not a message).
   */
  authenticatedDomain: string | null;
  /** DKIM result of the report message (RFC 8601 words: `pass`, `fail`, `none`, …; `none` for a file). */
  dkim: string;
  /** SPF result of the report message (`none` when the connection was not seen: a file, IMAP). */
  spf: string;
  /** DMARC result of the report message's From domain. */
  dmarc: string;
  receivedAt: Timestamp;
  /**
   * An unauthenticated report's identity before its content was added (src/ingest/ingest.ts
   * `storedIdentity`): two reports under one base that say different things are both kept, and
   * each is marked {@link StoredReport.contested}. Absent for an authenticated report.
   */
  identityBase?: string;
}

/** The identity base of an origin ({@link ReportOrigin.identityBase}), or null. */
export function identityBaseOf(origin: Pick<ReportOrigin, 'identityBase'>): string | null {
  return typeof origin.identityBase === 'string' ? origin.identityBase : null;
}

/** One record of an aggregate report, as stored. */
export interface ReportRecordRow {
  /** The connecting address (normalised by the parser). */
  sourceIp: string;
  /** Messages this record stands for (RFC 7489 Appendix C `row/count`). */
  count: number;
  /** RFC5322.From domain, lower case. */
  headerFrom: string;
  /** `policy_evaluated/disposition`. */
  disposition: string;
  /** `policy_evaluated/dkim == pass`: aligned DKIM. */
  dkimAligned: boolean;
  /** `policy_evaluated/spf == pass`: aligned SPF. */
  spfAligned: boolean;
  /** The rest of the record (raw auth results, reasons, …) as JSON text; never interpreted here. */
  detail: string;
}

/** A report to store. */
export interface NewReport {
  id: string;
  organizationId: string;
  kind: ReportKind;
  /** The deduplication key (reporter + report id + date range), from the engine. */
  identity: string;
  /** The policy domain the report is about (`policy_published/domain`; TLS-RPT `policy-domain`). */
  domain: string;
  /** The report's own date range, epoch seconds (UTC). */
  begin: number;
  end: number;
  /** Who reported: the authenticated domain when there is one, else `unauthenticated`. */
  reporter: string;
  /** `org_name` / `organization-name` as the report says: shown, never trusted. */
  orgName: string | null;
  /** The report's own id. */
  reportId: string;
  origin: ReportOrigin;
  /**
   * The parsed report without its records (aggregate) or whole (TLS), as JSON text: what the
   * analysis reads back.
   */
  document: string;
  /** Aggregate records (empty for a TLS report). */
  records: ReportRecordRow[];
  /** Whether the origin vouches for it ({@link isTrustedOrigin}): untrusted digests are kept apart. */
  trusted: boolean;
  /**
   * The engine's digest of the records for `domain` (`digestReports([report], domain).senders`: one
   * entry per source, on the UTC day the report's period begins); empty for a TLS report.
   */
  digest: SenderDigestEntry[];
}

/**
 * Whether a report's origin vouches for it: the message that carried it was authenticated
 * (RFC 7489 §7.2.1.1, RFC 8460 §3), or the organisation handed it in itself (its API key, its
 * operator's `reports import`). Anyone can mail a `rua` address or POST to the public TLS-RPT route:
 * what comes that way unauthenticated is kept and shown apart, marked, and never raises an alert nor
 * names a DKIM selector to probe.
 */
export function isTrustedOrigin(origin: Pick<ReportOrigin, 'authenticatedDomain' | 'channel'>): boolean {
  return origin.authenticatedDomain !== null || origin.channel === 'file' || origin.channel === 'upload';
}

/**
 * Distinct sources kept apart in a domain's digest per UTC day (trusted and untrusted each): the
 * sources of a day beyond it are summed into one entry, {@link OTHER_SOURCES}. Real domains see
 * hundreds to a few thousand sources a day, busiest first; a forged report naming 200,000 addresses
 * costs the digest one day of 1,000 entries, so a summary reads a bounded number of rows.
 */
export const MAX_DIGEST_SOURCES_PER_DAY = 1_000;
/** The source of the entry that sums a day's sources beyond MAX_DIGEST_SOURCES_PER_DAY (never an address). */
export const OTHER_SOURCES = '*';

/**
 * One report's digest entries of one day merged into what the store holds for that day: `held` are
 * the stored entries of the same sources (and of {@link OTHER_SOURCES}), `stored` gives the distinct
 * sources the day holds (asked only when a source is new to the day). A source already held is merged into its entry; a new one takes a place
 * while the day has fewer than MAX_DIGEST_SOURCES_PER_DAY, the busiest first; the rest are summed
 * into OTHER_SOURCES. Returns the entries to write (each replaces the stored one of its source).
 * `merge` merges a held entry and an incoming one of its source (the engine's `mergeDigestEntries`;
 * the SQL store passes the same merge remembered by the entries' rests).
 */
export function mergeDigestDay(
  entries: readonly SenderDigestEntry[],
  held: ReadonlyMap<string, SenderDigestEntry>,
  stored: () => number,
  domain: string,
  merge: (held: SenderDigestEntry, incoming: SenderDigestEntry) => SenderDigestEntry = mergeDigestEntries,
): SenderDigestEntry[] {
  const out = new Map<string, SenderDigestEntry>();
  // The day's count is asked for only when a source is new to it.
  let places: number | null = null;
  const busiestFirst = [...entries].sort((a, b) => b.messages - a.messages || (a.source < b.source ? -1 : a.source > b.source ? 1 : 0));
  const overflow: SenderDigestEntry[] = [];
  for (const e of busiestFirst) {
    const before = held.get(e.source);
    if (before !== undefined) out.set(e.source, merge(before, e));
    else if (e.source !== OTHER_SOURCES && (places ??= MAX_DIGEST_SOURCES_PER_DAY - stored()) > 0) {
      out.set(e.source, e);
      places -= 1;
    } else overflow.push({ ...e, source: OTHER_SOURCES });
  }
  if (overflow.length > 0) {
    // OTHER_SOURCES is one row beyond the cap: a day holds at most MAX_DIGEST_SOURCES_PER_DAY + 1 rows.
    const other = out.get(OTHER_SOURCES) ?? held.get(OTHER_SOURCES);
    out.set(OTHER_SOURCES, mergeSenderDigests(other ? [other, ...overflow] : overflow, domain)[0]!);
  }
  return [...out.values()];
}

/** The counts of one source over a window, summed by the store: what {@link sourceWindowEntries} starts from. */
export interface SourceWindowSums {
  source: string;
  /** The first and last day the source has an entry in the window. */
  firstDay: string;
  lastDay: string;
  messages: number;
  dmarcPass: number;
  spfAligned: number;
  dkimAligned: number;
  failing: number;
}

/** One distinct rest of a source's entries (what is not summed in columns: sets, words, additive maps) and how many of its entries have it. */
export interface SourceWindowPart {
  source: string;
  rest: Partial<SenderDigestEntry>;
  times: number;
}

/** A digest entry of `source` on `day` that counts nothing. */
export const emptyDigestEntry = (source: string, day: string): SenderDigestEntry => ({
  day,
  source,
  messages: 0,
  spfAligned: 0,
  dkimAligned: 0,
  dmarcPass: 0,
  failing: 0,
  forwardedFailing: 0,
  selectors: [],
  dkimDomains: [],
  spfDomains: [],
  verified: [],
  ownFailed: [],
  ownFailedNoSelector: false,
  broken: [],
  brokenNoSelector: 0,
  unalignedDkimPass: null,
  unalignedSpfPass: null,
  ownSpfFailed: null,
});

/** One source's roll-up over some days: its entry (dated its first day: counts summed, sets united) and its last day. */
export interface SourceRollup {
  entry: SenderDigestEntry;
  lastDay: string;
}

/**
 * The roll-up per source of some days from the store's per-source sums and the distinct rests of
 * the rows it read (days or blocks of days): counts summed, sets united, the lesser word kept,
 * additive maps added `times` times (equal rests are counted once by the store). Sources in the
 * order of `sums`.
 */
export function sourceRollups(sums: readonly SourceWindowSums[], parts: readonly SourceWindowPart[]): SourceRollup[] {
  // Sets and maps per source, sorted once at the end: what folding mergeDigestEntries over the parts gives.
  const rests = new Map<string, SenderRests>();
  for (const part of parts) {
    let tally = rests.get(part.source);
    if (tally === undefined) rests.set(part.source, (tally = emptySenderRests()));
    addRest(tally, part.rest, part.times);
  }
  return sums.map((s) => {
    const tally = rests.get(s.source);
    const entry: SenderDigestEntry = { ...emptyDigestEntry(s.source, s.firstDay), messages: s.messages, dmarcPass: s.dmarcPass, spfAligned: s.spfAligned, dkimAligned: s.dkimAligned, failing: s.failing };
    return { entry: tally === undefined ? entry : { ...entry, ...restOf(tally) }, lastDay: s.lastDay };
  });
}

/** The lesser of two optional words (the engine's merge keeps it: the same whatever the order). */
const least = (a: string | null, b: string | null): string | null => (a === null ? b : b === null || a < b ? a : b);

/** `rest` added `times` times (sets united, words the lesser, additive counts and maps times over). */
function addRest(t: SenderRests, rest: Partial<SenderDigestEntry>, times: number): void {
  t.forwardedFailing += (rest.forwardedFailing ?? 0) * times;
  t.brokenNoSelector += (rest.brokenNoSelector ?? 0) * times;
  for (const x of rest.selectors ?? []) t.selectors.add(x);
  for (const x of rest.dkimDomains ?? []) t.dkimDomains.add(x);
  for (const x of rest.spfDomains ?? []) t.spfDomains.add(x);
  for (const x of rest.verified ?? []) t.verified.add(x);
  for (const [key, result] of rest.ownFailed ?? []) t.ownFailed.set(key, least(t.ownFailed.get(key) ?? null, result)!);
  for (const [key, count] of rest.broken ?? []) t.broken.set(key, (t.broken.get(key) ?? 0) + count * times);
  t.ownFailedNoSelector ||= rest.ownFailedNoSelector ?? false;
  t.unalignedDkimPass = least(t.unalignedDkimPass, rest.unalignedDkimPass ?? null);
  t.unalignedSpfPass = least(t.unalignedSpfPass, rest.unalignedSpfPass ?? null);
  t.ownSpfFailed = least(t.ownSpfFailed, rest.ownSpfFailed ?? null);
}

/** A tally's fields as the engine's entry holds them (sorted as its merge sorts them). */
function restOf(t: SenderRests): Omit<SenderDigestEntry, 'day' | 'source' | 'messages' | 'spfAligned' | 'dkimAligned' | 'dmarcPass' | 'failing'> {
  return {
    forwardedFailing: t.forwardedFailing,
    selectors: [...t.selectors].sort(),
    dkimDomains: [...t.dkimDomains].sort(),
    spfDomains: [...t.spfDomains].sort(),
    verified: [...t.verified].sort(),
    ownFailed: [...t.ownFailed.entries()].sort(),
    ownFailedNoSelector: t.ownFailedNoSelector,
    broken: [...t.broken.entries()].sort(),
    brokenNoSelector: t.brokenNoSelector,
    unalignedDkimPass: t.unalignedDkimPass,
    unalignedSpfPass: t.unalignedSpfPass,
    ownSpfFailed: t.ownSpfFailed,
  };
}

/**
 * A window's roll-up per source ({@link ReportStore.senderWindow}) from the store's per-source sums
 * and the distinct rests of the rows it read ({@link sourceRollups}): one entry per source on its
 * first day, and an empty one on its last day when that is later, so that the engine's
 * `summariseDigestSenders` gives from it what it gives from every day's entries.
 */
export function sourceWindowEntries(sums: readonly SourceWindowSums[], parts: readonly SourceWindowPart[]): SenderDigestEntry[] {
  const out: SenderDigestEntry[] = [];
  for (const { entry, lastDay } of sourceRollups(sums, parts)) {
    out.push(entry);
    if (lastDay !== entry.day) out.push(emptyDigestEntry(entry.source, lastDay));
  }
  return out;
}

/**
 * The sizes, in days, of the blocks of days the SQL store rolls a source's days up into (each
 * aligned on a multiple of its size counted from 1970-01-01, each the two halves of the next): a
 * window is read as at most two blocks of each size (about a dozen rows per source for 90 days), not
 * one row per day. The largest first; 1 is the day roll-up itself.
 */
export const SENDER_BLOCK_SIZES = [64, 32, 16, 8, 4, 2, 1] as const;

/** A block of days: `size` days from `start` (`YYYY-MM-DD`). */
export interface DayBlock {
  size: number;
  start: string;
}

const DAY_MS = 86_400_000;
/** Days since 1970-01-01 of a `YYYY-MM-DD` day. */
export const epochDay = (day: string): number => Math.round(Date.parse(`${day}T00:00:00Z`) / DAY_MS);
/** The `YYYY-MM-DD` day of a count of days since 1970-01-01. */
export const dayOfEpochDay = (n: number): string => new Date(n * DAY_MS).toISOString().slice(0, 10);

/**
 * `days` as the fewest aligned blocks of {@link SENDER_BLOCK_SIZES} (in order): from the first day,
 * each time the largest block that starts there and ends in the window.
 */
export function dayBlocks(days: DayRange): DayBlock[] {
  const out: DayBlock[] = [];
  const last = epochDay(days.to);
  for (let at = epochDay(days.from); at <= last; ) {
    const size = SENDER_BLOCK_SIZES.find((s) => at % s === 0 && at + s - 1 <= last)!;
    out.push({ size, start: dayOfEpochDay(at) });
    at += size;
  }
  return out;
}

/** The two halves of a block larger than a day. */
export function blockHalves(block: DayBlock): [DayBlock, DayBlock] {
  const size = block.size / 2;
  return [
    { size, start: block.start },
    { size, start: dayOfEpochDay(epochDay(block.start) + size) },
  ];
}

/** {@link sourceWindowEntries} of entries held in memory (every entry its own part). */
export function sourceWindowOf(entries: readonly SenderDigestEntry[]): SenderDigestEntry[] {
  const sums = new Map<string, SourceWindowSums>();
  for (const e of entries) {
    const s = sums.get(e.source);
    if (s === undefined) sums.set(e.source, { source: e.source, firstDay: e.day, lastDay: e.day, messages: e.messages, dmarcPass: e.dmarcPass, spfAligned: e.spfAligned, dkimAligned: e.dkimAligned, failing: e.failing });
    else {
      if (e.day < s.firstDay) s.firstDay = e.day;
      if (e.day > s.lastDay) s.lastDay = e.day;
      s.messages += e.messages;
      s.dmarcPass += e.dmarcPass;
      s.spfAligned += e.spfAligned;
      s.dkimAligned += e.dkimAligned;
      s.failing += e.failing;
    }
  }
  const ordered = [...sums.values()].sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0));
  return sourceWindowEntries(ordered, entries.map((e) => ({ source: e.source, rest: e, times: 1 })));
}

/** UTC days, both ends included (`YYYY-MM-DD`). */
export interface DayRange {
  from: string;
  to: string;
}

/** A domain's messages on one UTC day (the day each report's period begins), trusted and untrusted apart. */
export interface ReportDayTotals {
  day: string;
  trusted: boolean;
  messages: number;
  /** Messages that passed DMARC (an aligned SPF or DKIM pass, RFC 7489 §3.1). */
  dmarcPass: number;
  spfAligned: number;
  dkimAligned: number;
  failing: number;
}

/** What {@link ReportStore.arrivals} answers. */
export interface ReportArrivals {
  /** The organisation's reports in all. */
  total: number;
  /** The latest arrival (`receivedAt`) of any of them; null without reports. */
  latest: string | null;
  /** The reports received after `since`, counted by domain (sorted); empty when `since` was null. */
  after: { domain: string; reports: number }[];
}

/** One domain's messages on one UTC day ({@link ReportStore.domainDailyTotals}). */
export interface DomainDayTotals extends ReportDayTotals {
  domain: string;
}

/** One source's messages over a window (the untrusted reports' sources are shown this way: counted, never classed). */
export interface ReportSourceTotals {
  source: string;
  messages: number;
  dmarcPass: number;
  failing: number;
}

/** A stored report as lists show it. */
export interface StoredReport extends Omit<NewReport, 'records' | 'digest' | 'trusted'> {
  /** Records in the report (0 for TLS). */
  recordCount: number;
  /** Messages the records stand for (0 for TLS). */
  messageCount: number;
  /**
   * Another report of the organisation, anywhere in its store (not only on the same page), has the
   * same {@link ReportOrigin.identityBase}: unauthenticated reports that claim one identity and say
   * different things; one of them is forged, both are kept.
   */
  contested: boolean;
}

/** A file that was refused, and why. */
export interface ReportRejection {
  id: string;
  organizationId: string;
  receivedAt: Timestamp;
  channel: ReportChannel;
  fileName: string | null;
  sender: string | null;
  /** A stable reason code (e.g. `xml-entity`, `truncated`, `too-large`, `not-a-report`). */
  reason: string;
  /** What was wrong, in a sentence. */
  detail: string;
}

/** Reports whose own date range overlaps [from, to) (epoch seconds). */
export interface ReportRange {
  from: number;
  to: number;
}

/** The list query. */
export interface ReportQuery extends PageRequest {
  domain?: string;
  kind?: ReportKind;
}

/** Counts over a domain and a range. */
export interface ReportCounts {
  /** Aggregate reports stored. */
  aggregate: number;
  /** TLS reports stored. */
  tls: number;
  /** Aggregate reports among them whose message was not authenticated. */
  unauthenticated: number;
  /** Aggregate reports among them that are not trusted ({@link isTrustedOrigin}): shown apart. */
  untrusted: number;
  /** Receipts of a report already stored (each counted, none stored). */
  duplicates: number;
  /** Messages in the aggregate reports. */
  messages: number;
}

/** The answer of {@link ReportStore.routing}. */
export interface ReportRouting {
  /** Organisations with a live domain of that name, sorted. */
  withDomain: string[];
  /** Every organisation, sorted. */
  organizations: string[];
}

/**
 * The outcome of {@link ReportStore.add}: stored; a duplicate (counted, nothing stored); or refused,
 * nothing stored, because the organisation's records of the last day, or its reporting source's,
 * would pass their limit ({@link MAX_REPORT_RECORDS_PER_ORGANIZATION_PER_DAY},
 * {@link MAX_REPORT_RECORDS_PER_SOURCE_PER_DAY}, {@link MAX_UNTRUSTED_REPORT_RECORDS_PER_DAY}).
 */
export type AddReportOutcome = 'stored' | 'duplicate' | 'over-organization-limit' | 'over-source-limit';

/**
 * Reports stored by one {@link ReportStore.addMany} transaction: one commit (and, on PostgreSQL, one
 * flush of its log to disk) for all of them. A batch holds its reports' parsed records in memory
 * (about 100 KB for 100 records), so the bound keeps that small; the writer
 * (src/ingest/report-writer.ts) never waits to fill one. PostgreSQL keeps the subtransactions (one
 * savepoint a report) of a transaction in a cache of 64 per backend (PGPROC_MAX_CACHED_SUBXIDS):
 * past it every snapshot of every session looks them up on disk, so a batch stays well under it.
 */
export const MAX_REPORTS_PER_BATCH = 32;

/** Throws when `reports` is more than one batch ({@link MAX_REPORTS_PER_BATCH}): nothing is stored. */
export function assertBatchSize(reports: readonly NewReport[]): void {
  if (reports.length > MAX_REPORTS_PER_BATCH) throw new RangeError(`at most ${MAX_REPORTS_PER_BATCH} reports a batch (MAX_REPORTS_PER_BATCH), ${reports.length} given`);
}

/** The window of the record limits: records of the reports received in the last day (by the service's clock). */
export const REPORT_LIMIT_WINDOW_MS = 86_400_000;
/** Aggregate records one organisation takes in a day, whoever reports them (beyond: refused whole, nothing stored is lost). */
export const MAX_REPORT_RECORDS_PER_ORGANIZATION_PER_DAY = 2_000_000;
/** Aggregate records one reporting source (an authenticated reporter, or the organisation's own uploads) takes in a day. */
export const MAX_REPORT_RECORDS_PER_SOURCE_PER_DAY = 500_000;
/**
 * Aggregate records every untrusted report of an organisation takes in a day, together (one source:
 * anyone could have sent them, so they share one budget and cannot crowd out a real reporter).
 */
export const MAX_UNTRUSTED_REPORT_RECORDS_PER_DAY = 100_000;

/**
 * The reporting source a report counts against: its authenticated reporter, `organization` for what
 * the organisation handed in itself (an upload), `unauthenticated` for every untrusted report, and
 * null for the operator's own `reports import` (files: the operator's call, not limited).
 */
export function reportingSource(report: Pick<NewReport, 'origin' | 'trusted'>): string | null {
  if (report.origin.channel === 'file') return null;
  if (!report.trusted) return 'unauthenticated';
  return report.origin.authenticatedDomain ?? 'organization';
}

/** The limit of a reporting source's records a day. */
export function sourceLimit(source: string): number {
  return source === 'unauthenticated' ? MAX_UNTRUSTED_REPORT_RECORDS_PER_DAY : MAX_REPORT_RECORDS_PER_SOURCE_PER_DAY;
}

/** The report store. Every read and write is scoped by organisation. */
export interface ReportStore {
  /**
   * The stops the store's close awaits before it releases the database (src/store/close-hooks.ts):
   * the report writer's background refresh registers its own here (src/ingest/block-refresher.ts).
   */
  readonly closing: CloseHooks;
  /**
   * Stores the report and its records in one transaction, or, when the organisation already has a
   * report with this identity, stores nothing and counts a duplicate.
   */
  add(report: NewReport): Promise<AddReportOutcome>;
  /**
   * Stores several reports in one transaction, each as {@link ReportStore.add} would, in order (a
   * later one sees the earlier ones: a duplicate inside the batch is a duplicate, the record limits
   * count what the batch stored before it). Each report is whole or absent on its own (a savepoint
   * each): one that is refused or fails is rolled back alone and the others are kept. One outcome
   * per report, in order: `rejected` with that report's error when it failed, every one `rejected`
   * when the transaction could not commit (nothing of the batch is stored then). At most
   * {@link MAX_REPORTS_PER_BATCH} reports.
   */
  addMany(reports: readonly NewReport[]): Promise<PromiseSettledResult<AddReportOutcome>[]>;
  /**
   * True when the store runs one write transaction at a time (SQLite's one connection): its
   * writer (src/ingest/report-writer.ts) then puts reports of every organisation and domain in one
   * batch, since batches of different domains would only run one after the other anyway.
   */
  readonly serialWrites?: boolean;
  /** Records a refused file. */
  reject(rejection: ReportRejection): Promise<void>;
  /** Reports, newest first (by the report's own begin, then id). */
  list(organizationId: string, query: ReportQuery): Promise<Page<StoredReport>>;
  /** Refused files, newest first. */
  rejections(organizationId: string, page: PageRequest): Promise<Page<ReportRejection>>;
  /** The stored digest entries of `domain` on the days of `days`, of trusted or untrusted reports, by day then source. */
  senderDays(organizationId: string, domain: string, days: DayRange, trusted: boolean): Promise<SenderDigestEntry[]>;
  /**
   * The window's roll-up per source (sources sorted): one entry per source of the trusted or untrusted
   * reports of `domain` over `days`, as {@link sourceWindowEntries} makes it. What the dashboard and
   * `reports show` read: on SQL the window's aligned blocks of days ({@link dayBlocks}: about a dozen
   * rows per source for 90 days, those whose days changed built again first), never every day's entries. The engine's `summariseDigestSenders` gives from it what it gives from
   * {@link ReportStore.senderDays}.
   */
  senderWindow(organizationId: string, domain: string, days: DayRange, trusted: boolean): Promise<SenderDigestEntry[]>;
  /**
   * Builds again, ahead of a read, the blocks of days {@link ReportStore.senderWindow} reads for
   * `days` (trusted and untrusted) whose days changed since they were built: what senderWindow does
   * first, done off the request path as reports arrive (src/ingest/block-refresher.ts). Answers the
   * number of blocks built (0: every block was current). The memory store keeps no blocks: 0.
   */
  freshenBlocks(organizationId: string, domain: string, days: DayRange): Promise<number>;
  /** `domain`'s messages per day of `days` (trusted and untrusted apart), by day. */
  dailyTotals(organizationId: string, domain: string, days: DayRange): Promise<ReportDayTotals[]>;
  /**
   * Every domain's messages per day of `days` (trusted and untrusted apart), by domain then day: what
   * {@link ReportStore.dailyTotals} gives for each domain, in one read (the console's overview); of
   * the domains of `only` alone when given (those whose reports changed: {@link ReportStore.arrivals}).
   */
  domainDailyTotals(organizationId: string, days: DayRange, only?: readonly string[]): Promise<DomainDayTotals[]>;
  /**
   * The organisation's reports in all and their latest arrival, and the domains of those received
   * after `since` (an arrival, ISO 8601; none asked when null), as of one moment: a reader that
   * remembers figures per domain re-reads only those domains. When the reports in all grew by more
   * than those received after `since`, a report arrived out of order (a transaction stamped earlier
   * committed later) and the reader cannot tell which domains changed: it reads them all.
   */
  arrivals(organizationId: string, since: string | null): Promise<ReportArrivals>;
  /**
   * A text that moves whenever the organisation's reports change, and with them any figure read from
   * them (a reader remembers figures under it: the console's overview): a counter of the reports
   * stored, bumped in the transaction that stores them (SQL: per domain, migration 0015, summed),
   * read without counting the reports. Reports are only ever added (no retention or deletion removes
   * them; one that did would bump it too), each with its digest in one transaction.
   */
  revision(organizationId: string): Promise<string>;
  /**
   * The busiest `limit` sources of `domain` over `days`, of trusted or untrusted reports (most
   * messages first, then by address), and how many sources there are in all.
   */
  sourceTotals(organizationId: string, domain: string, days: DayRange, trusted: boolean, limit: number): Promise<{ sources: ReportSourceTotals[]; count: number }>;
  /** The documents of `domain`'s reports of `kind` overlapping `range`, oldest first. */
  documents(organizationId: string, domain: string, kind: ReportKind, range: ReportRange): Promise<string[]>;
  /** Counts for `domain` (every domain when null) over `range` (all time when null). */
  counts(organizationId: string, domain: string | null, range: ReportRange | null): Promise<ReportCounts>;
  /** The end (epoch seconds) of `domain`'s newest report of any kind, or null when it has none. */
  latestEnd(organizationId: string, domain: string): Promise<number | null>;
  /** Domains with reports, sorted. */
  domains(organizationId: string): Promise<string[]>;
  /** The organisations holding reports about `domain`, sorted (the CLI's `reports show` without `--org`). */
  organizationsWithReports(domain: string): Promise<string[]>;
  /**
   * Who may take a report about `domain`: the organisations that added it (the domains resource,
   * not deleted) and every organisation there is (with exactly one, it takes reports for any domain).
   */
  routing(domain: string): Promise<ReportRouting>;
  /** Refused files in all (for the organisation). */
  rejectionCount(organizationId: string): Promise<number>;
}

/** The UTC day (`YYYY-MM-DD`) of an epoch-seconds instant. */
export function reportDay(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString().slice(0, 10);
}
