/**
 * The monitor store: watched domains, their history (checks and confirmed changes) and the webhook
 * deliveries those changes caused. One interface, a memory implementation
 * (src/store/monitors-memory.ts) and SQL ones (src/store/monitors-sql.ts); the contract suite
 * (test/store/contract.test.ts) runs against all three.
 *
 * Reads a client makes are scoped by organisation (an id of another organisation is not found);
 * the calls schedulers, workers and the delivery pump make take ids alone (they act for the
 * service). A run is written once: `commitRun` refuses a run id it has seen (a retried job whose
 * first attempt had already committed) and a stale state version (two runs of one monitor at once:
 * the loser recomputes from the winner's state), so history, changes and deliveries never double.
 */
import type { Page, PageRequest, Timestamp } from './page-types.js';

/** Extra checks a monitor may ask for (the transport check, the lookalike search and the BIMI check are opt-in). */
export type MonitorCheckKind = 'transport' | 'lookalikes' | 'bimi';
/** Every value of {@link MonitorCheckKind}. */
export const MONITOR_CHECK_KINDS: readonly MonitorCheckKind[] = ['transport', 'lookalikes', 'bimi'];

/**
 * What a check saw, normalised so that two checks of an unchanged domain compare equal: no
 * timestamps, no timings, lists sorted. `could-not-check` is a DNS failure: its own state, never
 * "record removed".
 */
export type MonitorSnapshot =
  | {
      kind: 'checked';
      verdict: string;
      inboxOutcome: string;
      dmarc: { status: string; record: string | null };
      spf: { status: string; record: string | null };
      /** `selector:outcome` of every key found, sorted. */
      dkim: { status: string; keys: string[] };
      /** MX hosts, sorted, lower case. */
      mx: { status: string; hosts: string[] };
      /** Finding ids, sorted, each once. */
      findings: string[];
      /** Present when the monitor asked for the transport check and the result carried one. */
      transport?: { verdict: string };
      /**
       * Present when the monitor asked for the lookalike search: `domain grade` of every lookalike
       * graded above `none` (A-labels), sorted.
       */
      lookalikes?: string[];
      /**
       * Present when the monitor asked for the BIMI check: the grade, whether the logo passes SVG
       * Tiny PS (null when no logo was judged), and whether the mark certificate is within
       * BIMI_EXPIRY_WARNING_DAYS of its end (or past it). A flip of either is a change, and alerts.
       */
      bimi?: { grade: string; logoValid: boolean | null; certificateExpiring: boolean };
      /**
       * What the organisation's DMARC reports say (src/summaries/signals.ts `monitorReportSignals`);
       * present only when there is something to alert on: unauthorised senders above the volume
       * floor (sorted), or a drop of the DMARC pass rate.
       */
      reports?: MonitorReportSignals;
      /** Present when the result was DNSSEC-validated: its status, and whether signatures expire soon. */
      dnssec?: { status: string; expiring: boolean };
    }
  | { kind: 'domain-not-found' }
  | { kind: 'could-not-check'; reason: string };

/** The report-based part of a monitor's snapshot. */
export interface MonitorReportSignals {
  /** Sources classed unauthorised in the last week of trusted reports, over the volume floor, sorted: at most MAX_SUMMARY_LIST (100). */
  unauthorised: string[];
  /** Unauthorised sources beyond the list (absent when none were left out). */
  unauthorisedLeftOut?: number;
  /** True when the last week's DMARC pass rate fell well below the weeks before. */
  passRateDropped: boolean;
}

/** The kind of outcome of one check. */
export type MonitorOutcome = MonitorSnapshot['kind'];

/** One check of a monitor, as its history and `lastResult` show it. */
export interface MonitorCheckSummary {
  checkedAt: Timestamp;
  outcome: MonitorOutcome;
  verdict: string | null;
  inboxOutcome: string | null;
  /** The transport check's verdict, when the monitor asked for it. */
  transportVerdict: string | null;
  /** SHA-256 (hex) of the normalised snapshot: equal digests, same state. */
  digest: string;
  /** Why the check could not be made (a DNS failure), else null. */
  reason: string | null;
}

/**
 * The confirmation state: the state last confirmed, and a different state seen but not yet seen
 * often enough in a row to be believed (src/jobs/monitors/monitor-changes.ts).
 */
export interface MonitorMachine {
  confirmed: { digest: string; snapshot: MonitorSnapshot; since: Timestamp } | null;
  candidate: { digest: string; snapshot: MonitorSnapshot; seen: number } | null;
  /** Consecutive checks that could not be made. */
  consecutiveFailures: number;
}

/** A watched domain, as stored. */
export interface Monitor {
  id: string;
  organizationId: string;
  /** The domain checked (A-label form, lower case): one monitor per domain and organisation. */
  domain: string;
  intervalMinutes: number;
  webhookUrl: string | null;
  checks: MonitorCheckKind[];
  /** The webhook secret sealed with the server key (src/jobs/monitors/monitor-secrets.ts); never shown again. */
  sealedSecret: string;
  machine: MonitorMachine;
  lastResult: MonitorCheckSummary | null;
  /** The slot the scheduler runs next (ISO 8601). */
  nextRunAt: Timestamp;
  /** Until when a scheduler holds the due run (a lease; null when none). */
  leaseUntil: Timestamp | null;
  /** Bumped by every committed run: the optimistic lock of {@link MonitorStore.commitRun}. */
  version: number;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

/** One field that differs between two states. */
export interface MonitorChange {
  /** Dotted path in the snapshot, e.g. `dmarc.record`, `verdict`, `findings`, `state`. */
  field: string;
  before: unknown;
  after: unknown;
}

/** A check in the history. */
export interface MonitorCheckEntry {
  type: 'check';
  id: string;
  monitorId: string;
  at: Timestamp;
  /** Which run wrote it: `slot:<ms>` for a scheduled run, `manual:<uuid>` for POST …/run. */
  runId: string;
  summary: MonitorCheckSummary;
  /**
   * What was seen, when it differs from the check before (a new digest); absent when the digest is
   * the previous check's, which keeps the history of an unchanged domain small.
   */
  snapshot?: MonitorSnapshot;
}

/** A confirmed change in the history. */
export interface MonitorChangeEntry {
  type: 'change';
  id: string;
  monitorId: string;
  at: Timestamp;
  before: MonitorSnapshot;
  after: MonitorSnapshot;
  changes: MonitorChange[];
}

/** An entry of a monitor's history; `seq` orders a monitor's entries (the store assigns it). */
export type MonitorHistoryEntry = (MonitorCheckEntry | MonitorChangeEntry) & { seq: number };
/** An entry before the store has numbered it. */
export type NewMonitorHistoryEntry = MonitorCheckEntry | MonitorChangeEntry;

/** How one delivery attempt ended. */
/** `smtp-error`: the mail relay refused the alert (its reply code is the status). */
export type DeliveryAttemptOutcome = 'delivered' | 'http-error' | 'smtp-error' | 'timeout' | 'network-error' | 'refused-address';

/** One attempt at delivering a webhook. */
export interface DeliveryAttempt {
  at: Timestamp;
  outcome: DeliveryAttemptOutcome;
  /** The receiver's HTTP status (or the relay's SMTP reply code), when it answered. */
  statusCode: number | null;
  durationMs: number;
  /** One line for people: the error or the status text. */
  detail: string;
}

/** Where a delivery stands. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One webhook to deliver (the event's body, fixed when the change was confirmed) and its attempts. */
export interface WebhookDelivery {
  id: string;
  monitorId: string;
  organizationId: string;
  /** The change entry the webhook reports. */
  eventId: string;
  url: string;
  /** The exact JSON body sent (and signed) on every attempt. */
  body: string;
  status: DeliveryStatus;
  attempts: DeliveryAttempt[];
  /** When the next attempt is due (null once delivered or failed). */
  nextAttemptAt: Timestamp | null;
  /** Attempts stop after this (24 h after creation). */
  giveUpAt: Timestamp;
  /** The delivery this one repeats (redelivery), else null. */
  redeliveryOf: string | null;
  /**
   * The organisation's alert channel this goes to (src/store/alerts.ts), sent by kind (webhook,
   * Slack, Teams, email); absent or null for the monitor's own webhook. `url` is then
   * `channel:<id>`: the channel's target is a credential, read at each attempt.
   */
  channelId?: string | null;
  createdAt: Timestamp;
}

/** The fields a PATCH may change; `sealedSecret` comes with a new webhook URL. */
export interface MonitorPatch {
  intervalMinutes?: number;
  webhookUrl?: string | null;
  checks?: MonitorCheckKind[];
  sealedSecret?: string;
  nextRunAt?: Timestamp;
}

/** What a run writes at once. */
export interface MonitorRunCommit {
  monitorId: string;
  runId: string;
  /** The version the run read; a different stored version is a `conflict`. */
  expectedVersion: number;
  machine: MonitorMachine;
  lastResult: MonitorCheckSummary;
  /** For a scheduled run, the next slot (also clears the lease); unchanged when undefined. */
  nextRunAt?: Timestamp;
  at: Timestamp;
  /** The check first, then the change it confirmed (if any). */
  entries: NewMonitorHistoryEntry[];
  deliveries: WebhookDelivery[];
}

/** What names one state of a monitor ({@link MonitorStore.stamps}). */
export interface MonitorStamp {
  id: string;
  version: number;
  createdAt: Timestamp;
}

/** How much {@link MonitorStore.recentActivity} reads. */
export interface RecentActivityLimits {
  /** The latest history entries looked at. */
  entries: number;
  /** Changes kept of them. */
  changes: number;
  deliveries: number;
}

/** A monitor's recent changes and deliveries ({@link MonitorStore.recentActivity}). */
export interface RecentActivity {
  changes: (MonitorChangeEntry & { seq: number })[];
  deliveries: WebhookDelivery[];
}

/** The outcome of {@link MonitorStore.commitRun}. */
export type CommitOutcome = 'committed' | 'duplicate' | 'conflict' | 'gone';

/** Storage of monitors, their history and their deliveries. */
export interface MonitorStore {
  /** Stores a new monitor; `duplicate-domain` when its organisation already watches the domain. */
  create(monitor: Monitor): Promise<'created' | 'duplicate-domain'>;
  get(organizationId: string, id: string): Promise<Monitor | undefined>;
  /** A monitor by id alone (schedulers and workers). */
  getById(id: string): Promise<Monitor | undefined>;
  /** The organisation's monitor of `domain` (A-label, lower case), if it watches it (the console's domain page). */
  getByDomain(organizationId: string, domain: string): Promise<Monitor | undefined>;
  /** Newest first (`createdAt` descending, then id). */
  list(organizationId: string, page: PageRequest): Promise<Page<Monitor>>;
  /**
   * Each of the organisation's monitors as its id, version and creation time, in no order: what a
   * reader that remembers monitors' states (the console's overview) compares with what it holds. A
   * monitor's state (`machine`, `lastResult`) is written only by its creation and by
   * {@link MonitorStore.commitRun}, which moves the version, so an unchanged stamp means an unchanged state.
   */
  stamps(organizationId: string): Promise<MonitorStamp[]>;
  /** The organisation's monitors among `ids` (those that exist, in no order). */
  getMany(organizationId: string, ids: readonly string[]): Promise<Monitor[]>;
  /** Applies the fields given, sets `updatedAt`; undefined if not found. */
  update(organizationId: string, id: string, patch: MonitorPatch, now: Timestamp): Promise<Monitor | undefined>;
  /** Deletes the monitor with its history and deliveries; false if not found. */
  delete(organizationId: string, id: string): Promise<boolean>;
  /** Writes a run (history entries, state, deliveries) at once, or says why not. */
  commitRun(run: MonitorRunCommit): Promise<CommitOutcome>;
  /** The monitor's history, newest first; undefined if the monitor is not the organisation's. */
  history(organizationId: string, monitorId: string, page: PageRequest): Promise<Page<MonitorHistoryEntry> | undefined>;
  /** The history of the oldest monitor of `domain` in any organisation (the public history page). */
  publicHistory(domain: string, page: PageRequest): Promise<Page<MonitorHistoryEntry> | undefined>;
  /** Monitors whose `nextRunAt` has come and that no scheduler holds, soonest first. */
  due(now: Timestamp, limit: number): Promise<Monitor[]>;
  /** Takes the due run of a monitor until `leaseUntil`, if nobody else holds it; false when another took it. */
  lease(id: string, expectedLeaseUntil: Timestamp | null, leaseUntil: Timestamp, now: Timestamp): Promise<boolean>;
  /** Every monitor with id > `afterId`, by id (the Redis scheduler's start-up sync). */
  listAll(afterId: string, limit: number): Promise<Monitor[]>;
  /** Adds a delivery (a redelivery). */
  addDelivery(delivery: WebhookDelivery): Promise<void>;
  /** The monitor's deliveries, newest first; undefined if the monitor is not the organisation's. */
  deliveries(organizationId: string, monitorId: string, page: PageRequest): Promise<Page<WebhookDelivery> | undefined>;
  /**
   * What the console's domain page shows of a monitor, in one read: the changes among its latest
   * `limits.entries` history entries (at most `limits.changes`, newest first: what `history` gives
   * filtered to changes) and its latest `limits.deliveries` deliveries (newest first); only the
   * documents shown are read. Undefined if the monitor is not the organisation's.
   */
  recentActivity(organizationId: string, monitorId: string, limits: RecentActivityLimits): Promise<RecentActivity | undefined>;
  getDelivery(organizationId: string, monitorId: string, id: string): Promise<WebhookDelivery | undefined>;
  /**
   * Up to `limit` pending deliveries due at `now`, each taken until `leaseUntil` (its
   * `nextAttemptAt` moves there, so that no other pump takes it meanwhile).
   */
  claimDueDeliveries(now: Timestamp, leaseUntil: Timestamp, limit: number): Promise<WebhookDelivery[]>;
  /** Records an attempt and where the delivery stands after it. */
  recordAttempt(id: string, attempt: DeliveryAttempt, status: DeliveryStatus, nextAttemptAt: Timestamp | null): Promise<void>;
  /** Deletes history entries and finished deliveries older than `before`; how many rows went. */
  prune(before: Timestamp): Promise<number>;
  /** The server key that seals webhook secrets: created once (32 random bytes), then always the same. */
  serverKey(create: () => Buffer): Promise<Buffer>;
}
