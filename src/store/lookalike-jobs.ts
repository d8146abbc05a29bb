/**
 * Deep lookalike runs as jobs (`POST /api/tools/v1/lookalikes` with `"deep": true`): the job, its
 * progress and, once it is over, the report or the reason it failed. One interface, a memory
 * implementation (src/store/lookalike-jobs-memory.ts) and a SQL one (src/store/lookalike-jobs-sql.ts).
 *
 * Reads a client makes are scoped by organisation (a job of another organisation is not found);
 * the calls the runners and workers make take the job id alone (they act for the service). Every
 * write that moves a job on names the states it may move from, so a job that is over never changes
 * again, whichever runner writes late.
 */
import type { LookalikeReport } from '@spoof-checker/engine';

/** Where a job is in its life. `completed` and `failed` are final. */
export type LookalikeJobStatus = 'queued' | 'running' | 'completed' | 'failed';

/** Why a job failed: a stable code (`INTERNAL`, `INTERRUPTED`, or the engine's refusal in upper case) and a sentence. */
export interface LookalikeJobError {
  code: string;
  message: string;
}

/** A deep lookalike run as stored. */
export interface LookalikeJob {
  id: string;
  organizationId: string;
  /** The registrable domain searched, in A-labels. */
  domain: string;
  status: LookalikeJobStatus;
  /** Candidates probed so far. */
  done: number;
  /** Candidates the run makes (0 until the run has generated them). */
  total: number;
  /** Times a runner took the job (a run interrupted by a dying process counts). */
  runs: number;
  createdAt: string;
  /** The last change: a state, or progress written. */
  updatedAt: string;
  /** When a runner first took it; null while queued. */
  startedAt: string | null;
  /** When it completed or failed. */
  finishedAt: string | null;
  /** Whether the job has been handed to the queue (false until the enqueue succeeds: the sweeper retries). */
  enqueued: boolean;
  /** The report, once completed. */
  report: LookalikeReport | null;
  /** Why it failed, once failed. */
  error: LookalikeJobError | null;
}

/** What a new job is made of (it starts `queued`, not yet `enqueued`). */
export interface NewLookalikeJob {
  id: string;
  organizationId: string;
  domain: string;
  createdAt: string;
}

/** Storage of lookalike jobs. */
export interface LookalikeJobStore {
  /** Stores a new job: `queued`, no progress, not yet `enqueued`. */
  create(job: NewLookalikeJob): Promise<LookalikeJob>;
  /** A job of the organisation, or undefined. */
  get(organizationId: string, id: string): Promise<LookalikeJob | undefined>;
  /** A job by id alone (runners and workers). */
  getById(id: string): Promise<LookalikeJob | undefined>;
  /** Notes that the job is on the queue. */
  markEnqueued(id: string): Promise<void>;
  /**
   * A runner takes the job: a queued or running job becomes `running` with one more run (a running
   * one was left by a runner that died). Returns the job as it now is (a final job unchanged), or
   * undefined if there is none.
   */
  claim(id: string, at: string): Promise<LookalikeJob | undefined>;
  /** Writes the progress of a running job (nothing otherwise). */
  progress(id: string, done: number, total: number, at: string): Promise<void>;
  /** A queued or running job completes with its report (`done` and `total` become the candidates made). */
  complete(id: string, report: LookalikeReport, at: string): Promise<void>;
  /** A queued or running job fails with `error`. */
  fail(id: string, error: LookalikeJobError, at: string): Promise<void>;
  /** A running job goes back to `queued`, its run not counted (the runner stopped it to shut down). */
  release(id: string, at: string): Promise<void>;
  /** Jobs not yet final, oldest first: `onlyUnenqueued` for those whose enqueue has not succeeded. */
  unfinished(onlyUnenqueued: boolean, limit: number): Promise<LookalikeJob[]>;
  /**
   * Fails every running job with no change since before `before` (its runner is gone and nothing
   * took it back); returns how many.
   */
  failStale(before: string, error: LookalikeJobError, at: string): Promise<number>;
  /** Deletes the jobs that finished before `before` (retention: the SQL stores' record-log days); returns how many. */
  prune(before: string): Promise<number>;
}
