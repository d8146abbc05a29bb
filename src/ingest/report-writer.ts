/**
 * The last step of ingestion: reports on their way into the store are stored several to a
 * transaction (`ReportStore.addMany`), the way a database groups commits. Reports wait in lanes,
 * one per organisation and domain (one lane for a store that writes one transaction at a time,
 * `ReportStore.serialWrites`: SQLite): the first report of a lane with nothing being written is written
 * at once; the ones that arrive while its lane's batch is being written go together in the next one
 * (at most MAX_REPORTS_PER_BATCH). A batch waits one turn of the event loop (for what has already
 * arrived); on a store that writes one transaction at a time, and only while reports are on their way
 * (`expect`: a file being parsed whose reports will come here), it gathers them, for at most
 * REPORT_WRITER_GATHER_MS: one commit for several reports. A report is never held when nothing else
 * is coming: with no parse in flight, it is written at once. Up to REPORT_WRITER_BATCHES_AT_ONCE lanes
 * are written at once.
 *
 * Every guarantee of `add` holds for each report: it is whole or absent (a savepoint each), a
 * duplicate inside a batch is a duplicate, the record limits count the reports stored before it, and
 * a report that fails (or is refused) fails alone: its caller gets the error, the others are kept.
 * Memory: the writer holds the reports its callers are waiting on and nothing else; how many there
 * are is bounded by the callers (the files being ingested at once: REPORT_INGEST_IN_FLIGHT for an
 * import, the connections of the SMTP receiver).
 * After a batch that stored reports commits, its domain's blocks of days are refreshed in the
 * background (`refresher`, src/ingest/block-refresher.ts); `close`, or the store's close, stops that.
 */
import { BlockRefresher, type BlockRefreshOptions } from './block-refresher.js';
import { MAX_REPORTS_PER_BATCH, type AddReportOutcome, type NewReport, type ReportStore } from '../store/reports.js';

/**
 * Report files an import keeps in flight at once (bench/reports.ts, as the service takes several
 * messages at once): each parser process busy with one while the parsed ones wait for the next batch.
 * A parsed report held here is about 1 KB a record (100 KB for 100 records): 32 of them a few MB.
 */
export const REPORT_INGEST_IN_FLIGHT = 32;

/**
 * Batches written at once, each by its own transaction (PostgreSQL: its own connection of the pool),
 * each of one organisation and domain: the digest of a domain is merged by one transaction at a time
 * (its advisory lock, held to the commit), so batches of different domains do not wait on each other,
 * while each waits for the database's answers. Three of the pool's POSTGRES_POOL_SIZE (10) connections
 * at most: the rest serve requests. SQLite runs them one after the other on its one connection.
 */
export const REPORT_WRITER_BATCHES_AT_ONCE = 3;

/**
 * How long, at most, SQLite's one lane (`ReportStore.serialWrites`) waits for reports on their way
 * (parses in flight, `ReportWriter.expect`) before it writes what it has, so that a commit serves
 * several reports (docs/benchmarks.md, "Ingestion, fifth pass": the store's CPU a report about 20 %
 * less at 16 reports a transaction than at 1). About the time between two parsed reports on a loaded
 * machine (50–100 a second from the parser processes): 5 ms gathered 3.8 reports a transaction in
 * `bench/reports.ts`, 20 ms 6–8. An import keeps REPORT_INGEST_IN_FLIGHT files in flight, so the
 * reports held never outnumber those: once every file in flight is parsed, nothing is on its way.
 */
export const REPORT_WRITER_GATHER_MS = 20;

interface Waiting {
  report: NewReport;
  resolve: (outcome: AddReportOutcome) => void;
  reject: (reason: unknown) => void;
}

/** The lane of a report: its organisation and domain (one batch of a lane is written at a time, in arrival order). */
const laneOf = (report: NewReport): string => `${report.organizationId}\u0000${report.domain}`;

/** The one lane of a store that writes one transaction at a time (`ReportStore.serialWrites`): every report in it. */
const SERIAL_LANE = '';

/** Stores reports through one store's `addMany`: a batch per organisation and domain, a few at once. */
export class ReportWriter {
  readonly #store: ReportStore;
  /** Reports waiting, by lane; a Map keeps the lanes in the order they filled (the oldest is served first). */
  readonly #lanes = new Map<string, Waiting[]>();
  /** Lanes with a batch being written. */
  readonly #writing = new Set<string>();
  #scheduled = false;
  /** Reports on their way (`expect`): parses in flight whose reports will be added here. */
  #expected = 0;
  /** The serial lane's gathering: its bound's timer while it waits, `expired` once the bound has passed. */
  #gather: { timer: NodeJS.Timeout | undefined; expired: boolean } = { timer: undefined, expired: false };
  /** Batches written and reports in them (the benchmark's and the tests' view of the grouping). */
  readonly counters = { batches: 0, reports: 0 };
  /** The background refresh of the blocks of days of the domains written. */
  readonly refresher: BlockRefresher;

  constructor(store: ReportStore, options: BlockRefreshOptions = {}) {
    this.#store = store;
    this.refresher = new BlockRefresher(store, options);
  }

  /** Stops the background refresh (awaiting the one running); the writer still writes. */
  close(): Promise<void> {
    return this.refresher.close();
  }

  /**
   * Says that reports are on their way (a file being parsed whose reports will be added here); the
   * answer says they have arrived or will not come (call it once the parse has answered, whatever it
   * answered: a second call does nothing). While any are on their way, a store that writes one
   * transaction at a time gathers the reports waiting, for at most REPORT_WRITER_GATHER_MS.
   */
  expect(): () => void {
    this.#expected += 1;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#expected -= 1;
      // Nothing more coming: what waits is written now.
      if (this.#lanes.size > 0) this.#schedule();
    };
  }

  /** Whether the serial lane `lane` waits for more: reports on their way, room in the batch, the bound not yet passed. */
  #gathering(lane: Waiting[]): boolean {
    if (!this.#store.serialWrites || this.#expected === 0 || lane.length >= MAX_REPORTS_PER_BATCH || this.#gather.expired) return false;
    this.#gather.timer ??= setTimeout(() => {
      this.#gather = { timer: undefined, expired: true };
      this.#schedule();
    }, REPORT_WRITER_GATHER_MS);
    return true;
  }

  /** Stores `report` with the next batch of its lane: what `ReportStore.add` answers for it, or its error. */
  add(report: NewReport): Promise<AddReportOutcome> {
    return new Promise((resolve, reject) => {
      // A store that writes one transaction at a time gains nothing from lanes: one batch takes every domain.
      const key = this.#store.serialWrites ? SERIAL_LANE : laneOf(report);
      const lane = this.#lanes.get(key);
      if (lane === undefined) this.#lanes.set(key, [{ report, resolve, reject }]);
      else lane.push({ report, resolve, reject });
      this.#schedule();
    });
  }

  /**
   * Starts what can start after one turn of the event loop: what arrived meanwhile joins the batch
   * (SQLite's driver writes a whole batch without yielding, so the files parsed during it are still
   * unread); the serial lane waits longer only while reports are on their way, within its bound
   * (`#gathering`).
   */
  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      for (const [key, lane] of this.#lanes) {
        if (this.#writing.size >= REPORT_WRITER_BATCHES_AT_ONCE) return;
        if (this.#writing.has(key)) continue;
        if (this.#gathering(lane)) continue;
        if (this.#store.serialWrites) {
          clearTimeout(this.#gather.timer);
          this.#gather = { timer: undefined, expired: false };
        }
        const batch = lane.splice(0, MAX_REPORTS_PER_BATCH);
        if (lane.length === 0) this.#lanes.delete(key);
        this.#writing.add(key);
        void this.#write(batch).finally(() => {
          this.#writing.delete(key);
          if (this.#lanes.size > 0) this.#schedule();
        });
      }
    });
  }

  /** Writes one batch and answers each of its callers; never rejects. */
  async #write(batch: Waiting[]): Promise<void> {
    this.counters.batches += 1;
    this.counters.reports += batch.length;
    let outcomes: PromiseSettledResult<AddReportOutcome>[];
    try {
      outcomes = await this.#store.addMany(batch.map((w) => w.report));
    } catch (reason) {
      outcomes = batch.map(() => ({ status: 'rejected', reason }));
    }
    // Committed: the domain's blocks are built again once its reports pause (never waited for here).
    const touched = new Map<string, NewReport>();
    batch.forEach((w, i) => {
      const outcome = outcomes[i];
      if (outcome?.status === 'fulfilled' && outcome.value === 'stored') touched.set(laneOf(w.report), w.report);
    });
    for (const report of touched.values()) this.refresher.touch(report.organizationId, report.domain);
    batch.forEach((w, i) => {
      const outcome = outcomes[i];
      if (outcome?.status === 'fulfilled') w.resolve(outcome.value);
      else w.reject(outcome?.reason ?? new Error('the store gave no outcome for this report'));
    });
  }
}

const writers = new WeakMap<ReportStore, ReportWriter>();

/**
 * The writer of `store`, one per store in the process: every path that stores reports into it shares
 * its batches. `options` count only for the call that makes it (the service's, at start).
 */
export function reportWriter(store: ReportStore, options: BlockRefreshOptions = {}): ReportWriter {
  let writer = writers.get(store);
  if (writer === undefined) writers.set(store, (writer = new ReportWriter(store, options)));
  return writer;
}

/** Runs now, and awaits, the background refreshes `store`'s writer has waiting (a CLI import leaves its blocks built). */
export async function flushReportWriter(store: ReportStore): Promise<void> {
  await writers.get(store)?.refresher.flush();
}

/** Stops the background refresh of `store`'s writer, if it has one (the store's close does this itself: `ReportStore.closing`). */
export async function closeReportWriter(store: ReportStore): Promise<void> {
  await writers.get(store)?.close();
}
