/**
 * A batch as the stores keep it: the batch with its counters, the names as submitted and the
 * result rows. The batch service and queue (src/jobs/batches/) build on these; the store does not know them.
 */

/** Where a batch is in its life. `done` and `cancelled` are final. */
export type BatchStatus = 'queued' | 'running' | 'done' | 'cancelled';

/** A batch as stored (the counters are maintained by the store as results are written). */
export interface Batch {
  id: string;
  organizationId: string;
  status: BatchStatus;
  /** Names submitted (valid or not). */
  total: number;
  /** Names with a result row: checked, or recorded as an error. */
  done: number;
  /** The error rows among `done`. */
  failed: number;
  createdAt: string;
  /** When the first chunk started; null while queued. */
  startedAt: string | null;
  /** When the last result was written, or when the batch was cancelled. */
  finishedAt: string | null;
  /** Whether every chunk has been handed to the queue (false until the enqueue succeeds: the sweeper retries). */
  enqueued: boolean;
}

/** One submitted name: its index in the submission (the result's key) and the text as sent. */
export interface BatchName {
  seq: number;
  name: string;
}

/** One result row: `line` is the JSON of a result or of an error, without the cursor. */
export interface BatchResultRow {
  seq: number;
  line: string;
  failed: boolean;
}
