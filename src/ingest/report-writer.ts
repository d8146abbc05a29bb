/**
 * The last step of ingestion: reports on their way into the store are stored several to a
 * transaction (`ReportStore.addMany`), the way a database groups commits. The first report that
 * arrives while nothing is being written is written at once, alone; the reports that arrive while a
 * batch is being written wait for it and go together in the next one (at most
 * MAX_REPORTS_PER_BATCH). A batch is never held back to fill it: it waits one turn of the event
 * loop (for what has already arrived), no longer.
 *
 * Every guarantee of `add` holds for each report: it is whole or absent (a savepoint each), a
 * duplicate inside a batch is a duplicate, the record limits count the reports stored before it, and
 * a report that fails (or is refused) fails alone: its caller gets the error, the others are kept.
 * Memory: the writer holds the reports its callers are waiting on and nothing else; how many there
 * are is bounded by the callers (the files being ingested at once: REPORT_INGEST_IN_FLIGHT for an
 * import, the connections of the SMTP receiver).
 */
import { MAX_REPORTS_PER_BATCH, type AddReportOutcome, type NewReport, type ReportStore } from '../store/reports.js';

/**
 * Report files an import keeps in flight at once (bench/reports.ts, as the service takes several
 * messages at once): each parser process busy with one while the parsed ones wait for the next batch.
 * A parsed report held here is about 1 KB a record (100 KB for 100 records): 32 of them a few MB.
 */
export const REPORT_INGEST_IN_FLIGHT = 32;

interface Waiting {
  report: NewReport;
  resolve: (outcome: AddReportOutcome) => void;
  reject: (reason: unknown) => void;
}

/** Stores reports through one store's `addMany`, one batch at a time. */
export class ReportWriter {
  readonly #store: ReportStore;
  readonly #waiting: Waiting[] = [];
  #writing = false;
  /** Batches written and reports in them (the benchmark's and the tests' view of the grouping). */
  readonly counters = { batches: 0, reports: 0 };

  constructor(store: ReportStore) {
    this.#store = store;
  }

  /** Stores `report` with the next batch: what `ReportStore.add` answers for it, or its error. */
  add(report: NewReport): Promise<AddReportOutcome> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ report, resolve, reject });
      if (this.#writing) return;
      this.#writing = true;
      void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    try {
      while (this.#waiting.length > 0) {
        // One turn of the event loop first: what arrived meanwhile joins the batch (SQLite's driver
        // writes a whole batch without yielding, so the files parsed during it are still unread).
        await new Promise((resolve) => setImmediate(resolve));
        const batch = this.#waiting.splice(0, MAX_REPORTS_PER_BATCH);
        this.counters.batches += 1;
        this.counters.reports += batch.length;
        let outcomes: PromiseSettledResult<AddReportOutcome>[];
        try {
          outcomes = await this.#store.addMany(batch.map((w) => w.report));
        } catch (reason) {
          outcomes = batch.map(() => ({ status: 'rejected', reason }));
        }
        batch.forEach((w, i) => {
          const outcome = outcomes[i];
          if (outcome?.status === 'fulfilled') w.resolve(outcome.value);
          else w.reject(outcome?.reason ?? new Error('the store gave no outcome for this report'));
        });
      }
    } finally {
      this.#writing = false;
    }
  }
}

const writers = new WeakMap<ReportStore, ReportWriter>();

/** The writer of `store`, one per store in the process: every path that stores reports into it shares its batches. */
export function reportWriter(store: ReportStore): ReportWriter {
  let writer = writers.get(store);
  if (writer === undefined) writers.set(store, (writer = new ReportWriter(store)));
  return writer;
}
