/**
 * The report store: DMARC aggregate reports (RFC 7489 Appendix C, RFC 9990) and SMTP TLS reports
 * (RFC 8460) received by the service, per organisation. One interface, a memory implementation
 * (src/store/reports-memory.ts) and a SQL one (src/store/reports-sql.ts); the contract suite
 * (test/store/reports-contract.test.ts) runs against memory, SQLite and PostgreSQL.
 *
 * - A report is taken whole or not at all: its metadata and every record are written in one
 *   transaction, so a failure leaves no row behind.
 * - A report is stored once per organisation, keyed by its identity (the engine's
 *   `reportIdentity`: reporter, report id and date range). A second receipt is counted as a
 *   duplicate and adds no row, whatever its bytes.
 * - Records are kept as columns the queries group by (source, header From, disposition, the two
 *   aligned results, the report's own date range) plus the rest of the record as opaque JSON
 *   (`detail`), which the store never interprets.
 * - A file that could not be taken is kept as a rejection with its reason (counted, listed).
 */
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
}

/** A stored report as lists show it (its records are read through {@link ReportStore.recordGroups}). */
export interface StoredReport extends Omit<NewReport, 'records'> {
  /** Records in the report (0 for TLS). */
  recordCount: number;
  /** Messages the records stand for (0 for TLS). */
  messageCount: number;
}

/** Records summed over one report day: every column but `count` equal. */
export interface ReportRecordGroup extends Omit<ReportRecordRow, 'count'> {
  /** The UTC day the report's range begins on (`YYYY-MM-DD`). */
  day: string;
  /** The sum of `count`. */
  count: number;
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

/** The outcome of {@link ReportStore.add}. */
export type AddReportOutcome = 'stored' | 'duplicate';

/** The report store. Every read and write is scoped by organisation. */
export interface ReportStore {
  /**
   * Stores the report and its records in one transaction, or, when the organisation already has a
   * report with this identity, stores nothing and counts a duplicate.
   */
  add(report: NewReport): Promise<AddReportOutcome>;
  /** Records a refused file. */
  reject(rejection: ReportRejection): Promise<void>;
  /** Reports, newest first (by the report's own begin, then id). */
  list(organizationId: string, query: ReportQuery): Promise<Page<StoredReport>>;
  /** Refused files, newest first. */
  rejections(organizationId: string, page: PageRequest): Promise<Page<ReportRejection>>;
  /** Aggregate records of `domain` in reports overlapping `range`, summed per report day. */
  recordGroups(organizationId: string, domain: string, range: ReportRange): Promise<ReportRecordGroup[]>;
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
