/**
 * The batch store: batches, their names and their result rows. One interface, a memory
 * implementation (src/store/batches-memory.ts) and SQL ones (src/store/batches-sql.ts).
 *
 * Reads a client makes are scoped by organisation (an id of another organisation is not found);
 * the calls the runners and workers make take the batch id alone (they act for the service).
 * Result rows are keyed by (batch id, seq): writing a row that exists already changes nothing, so
 * a chunk processed twice (a retried or recovered job) never yields a second row, and the counters
 * only count rows actually inserted.
 */
import type { Batch, BatchName, BatchResultRow } from './batch-model.js';

/** What a new batch is made of. */
export interface NewBatch {
  id: string;
  organizationId: string;
  createdAt: string;
  /** Every name as sent, `seq` 0…n-1. */
  names: BatchName[];
  /** Rows known at submission (names refused by the normaliser); their seqs are among `names`. */
  errorRows: BatchResultRow[];
}

/** The daily names quota a new batch must fit in. */
export interface BatchQuota {
  /** Start of the quota window (ISO 8601, UTC). */
  since: string;
  /** Most names the organisation may submit in the window. */
  limit: number;
}

/** What {@link BatchStore.createWithinQuota} did: stored the batch, or refused it (nothing stored). */
export type QuotaOutcome = { ok: true; batch: Batch } | { ok: false; used: number };

/** Storage of batches. */
export interface BatchStore {
  /**
   * Stores a batch, its names and its error rows at once (status `queued`, or `done` when every
   * name was refused), not yet `enqueued`.
   */
  create(batch: NewBatch): Promise<Batch>;
  /**
   * Checks the organisation's quota and stores the batch as one step: the names the organisation
   * submitted since `quota.since` plus this batch's must not exceed `quota.limit`, else nothing is
   * stored and `{ ok: false, used }` says how many names were already taken. Concurrent calls for
   * one organisation are serialised (PostgreSQL: a transaction-scoped advisory lock per
   * organisation; SQLite: one connection, one transaction at a time; memory: no await between
   * the check and the insert), so two batches can never both fit in the same remainder.
   */
  createWithinQuota(batch: NewBatch, quota: BatchQuota): Promise<QuotaOutcome>;
  /** A batch of the organisation, or undefined. */
  get(organizationId: string, id: string): Promise<Batch | undefined>;
  /** A batch by id alone (runners and workers). */
  getById(id: string): Promise<Batch | undefined>;
  /** Names the organisation has submitted in batches created at or after `since` (the quota). */
  namesSubmittedSince(organizationId: string, since: string): Promise<number>;
  /** Names of the batch with `fromSeq <= seq < toSeq` that have no result row yet, by seq. */
  pendingNames(batchId: string, fromSeq: number, toSeq: number): Promise<BatchName[]>;
  /** Marks a queued batch running (no change otherwise). */
  markRunning(batchId: string, at: string): Promise<void>;
  /** Notes that every chunk of the batch is on the queue. */
  markEnqueued(batchId: string): Promise<void>;
  /**
   * Writes result rows idempotently and counts those inserted; the batch becomes `done` (with
   * `finishedAt`) when every name has a row. Rows for a cancelled batch are still kept.
   */
  recordResults(batchId: string, rows: BatchResultRow[], at: string): Promise<void>;
  /** Cancels a queued or running batch (a final batch is returned unchanged); undefined if not found. */
  cancel(organizationId: string, id: string, at: string): Promise<Batch | undefined>;
  /** Up to `limit` result rows with seq > `afterSeq`, by seq. */
  readResults(organizationId: string, id: string, afterSeq: number, limit: number): Promise<BatchResultRow[]>;
  /** Batches not yet final, oldest first: `onlyUnenqueued` for those whose enqueue has not succeeded. */
  unfinished(onlyUnenqueued: boolean, limit: number): Promise<Batch[]>;
}
