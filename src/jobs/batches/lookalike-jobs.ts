/**
 * Deep lookalike runs as jobs. `POST /api/tools/v1/lookalikes` with `"deep": true` stores a job,
 * then hands it to the queue the batches use (the in-process runner, or the BullMQ queue that
 * `spoof-checker worker`s take it from: job name {@link LOOKALIKE_QUEUE_JOB_NAME}); the runner writes
 * its progress as it goes and the report at the end.
 *
 * Nothing accepted is lost. The job is stored before it is queued (the sweeper queues it again when
 * the queue refused it); in process, every unfinished job is queued again at start; on Redis, a
 * worker that dies mid-run stops renewing its lock and another worker takes the job back. A job
 * taken more than {@link MAX_LOOKALIKE_JOB_RUNS} times, or running with no sign of life for
 * {@link LOOKALIKE_JOB_STALE_MS}, fails with `INTERRUPTED`: never `running` for ever.
 */
import { randomUUID } from 'node:crypto';
import { isSpoofCheckError, type LookalikeReport } from '@spoof-checker/engine';
import type { LookalikeJob, LookalikeJobStore } from '../../store/lookalike-jobs.js';
import type { LookalikeJobQueue, QueueReadiness } from './queue-types.js';
import { StoredWorkSweeper } from './stored-queue.js';

/** The name of a lookalike job on the batch queue (chunks of batches are `chunk`). */
export const LOOKALIKE_QUEUE_JOB_NAME = 'lookalikes';
/** Shortest time between two progress writes of one run. */
export const LOOKALIKE_PROGRESS_INTERVAL_MS = 250;
/** Times a job may be taken by a runner (each start after a runner died counts) before it fails. */
export const MAX_LOOKALIKE_JOB_RUNS = 3;
/**
 * A running job with no write for this long has lost its runner: it fails. Far above the deep run's
 * DNS deadline (`DEEP_LOOKALIKE_DEADLINE_MS`, 120 s), and a live run writes progress every
 * {@link LOOKALIKE_PROGRESS_INTERVAL_MS} while it probes.
 */
export const LOOKALIKE_JOB_STALE_MS = 10 * 60_000;
/** How often unqueued and stale jobs are looked for. */
export const DEFAULT_LOOKALIKE_SWEEP_INTERVAL_MS = 5000;
/** Deep runs one in-process runner works on at once. */
export const DEFAULT_LOOKALIKE_JOB_CONCURRENCY = 2;

/** What a queue job carries: the stored job's id (the job itself stays in the store). */
export interface LookalikeQueueJob {
  lookalikeJobId: string;
}

/** Options of one deep run. */
export interface DeepLookalikeRunOptions {
  /** Called after each candidate probed (the engine's `onProgress`). */
  onProgress: (done: number, total: number) => void;
  /** Aborted when the runner shuts down. */
  signal: AbortSignal;
}

/** Runs one deep lookalike search (the service binds `findLookalikes` to its resolver and the API's cap). */
export type DeepLookalikeRun = (domain: string, options: DeepLookalikeRunOptions) => Promise<LookalikeReport>;

/** A new job id: `lookalike_job_` and 32 hex digits. */
export function newLookalikeJobId(): string {
  return `lookalike_job_${randomUUID().replaceAll('-', '')}`;
}

/** What running a job needs. */
export interface LookalikeJobDeps {
  store: LookalikeJobStore;
  run: DeepLookalikeRun;
  now?: () => Date;
  /** Aborted when the runner shuts down: the job goes back to `queued` (its report is not written). */
  signal?: AbortSignal;
  /** Shortest time between progress writes (default {@link LOOKALIKE_PROGRESS_INTERVAL_MS}). */
  progressIntervalMs?: number;
}

/** What became of a job. */
export type LookalikeJobOutcome =
  | { kind: 'completed' }
  | { kind: 'failed'; code: string }
  | { kind: 'released' }
  | { kind: 'skipped'; reason: 'missing' | 'finished' };

/**
 * Runs one stored job: takes it, runs the search writing its progress (throttled), and records the
 * report, or the failure. A store that fails throws (the queue tries again); a run that fails is
 * recorded as `failed` (`INTERNAL`, or the engine's refusal), never retried.
 */
export async function processLookalikeJob(id: string, deps: LookalikeJobDeps): Promise<LookalikeJobOutcome> {
  const now = deps.now ?? (() => new Date());
  const job = await deps.store.claim(id, now().toISOString());
  if (!job) return { kind: 'skipped', reason: 'missing' };
  if (job.status !== 'running') return { kind: 'skipped', reason: 'finished' };
  if (job.runs > MAX_LOOKALIKE_JOB_RUNS) {
    const message = `The run was interrupted ${job.runs - 1} times (its process stopped) and is not tried again.`;
    await deps.store.fail(id, { code: 'INTERRUPTED', message }, now().toISOString());
    return { kind: 'failed', code: 'INTERRUPTED' };
  }
  const progress = throttledProgress(deps.store, id, now, deps.progressIntervalMs ?? LOOKALIKE_PROGRESS_INTERVAL_MS);
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  deps.signal?.addEventListener('abort', stop, { once: true });
  let report: LookalikeReport;
  try {
    if (deps.signal?.aborted) throw new Error('aborted before the run');
    report = await deps.run(job.domain, { onProgress: progress.report, signal: controller.signal });
  } catch (error) {
    await progress.settle();
    if (deps.signal?.aborted) return release(deps.store, id, now);
    const code = isSpoofCheckError(error) ? error.code.toUpperCase() : 'INTERNAL';
    const message = isSpoofCheckError(error) ? `${error.message} ${error.fix}` : 'The lookalike search failed on our side.';
    await deps.store.fail(id, { code, message }, now().toISOString());
    return { kind: 'failed', code };
  } finally {
    deps.signal?.removeEventListener('abort', stop);
  }
  await progress.settle();
  // An aborted run still answers (what was left is graded unknown): that report is not the job's.
  if (deps.signal?.aborted) return release(deps.store, id, now);
  await deps.store.complete(id, report, now().toISOString());
  return { kind: 'completed' };
}

async function release(store: LookalikeJobStore, id: string, now: () => Date): Promise<LookalikeJobOutcome> {
  await store.release(id, now().toISOString());
  return { kind: 'released' };
}

/**
 * Progress writes at most every `intervalMs`, one at a time (a write still in flight makes the next
 * report wait for the following one). A failed write is dropped: progress is a hint, the report is not.
 */
function throttledProgress(store: LookalikeJobStore, id: string, now: () => Date, intervalMs: number) {
  let last = -Infinity;
  let inFlight: Promise<void> | undefined;
  return {
    report: (done: number, total: number): void => {
      const at = now();
      if (inFlight !== undefined || at.getTime() - last < intervalMs) return;
      last = at.getTime();
      inFlight = store
        .progress(id, done, total, at.toISOString())
        .catch(() => {})
        .finally(() => (inFlight = undefined));
    },
    settle: async (): Promise<void> => {
      await inFlight;
    },
  };
}

/** Options of the lookalike job service. */
export interface LookalikeJobServiceOptions {
  store: LookalikeJobStore;
  /** The queue the batches use. */
  queue: LookalikeJobQueue;
  sweepIntervalMs?: number;
  now?: () => Date;
  log?: (message: string, error?: unknown) => void;
}

/** Lookalike jobs for the API: submit goes to the store, then to the queue; the sweeper catches up. */
export class LookalikeJobService {
  readonly store: LookalikeJobStore;
  readonly queue: LookalikeJobQueue;
  readonly #now: () => Date;
  readonly #sweeper: StoredWorkSweeper<LookalikeJob>;

  constructor(options: LookalikeJobServiceOptions) {
    this.store = options.store;
    this.queue = options.queue;
    this.#now = options.now ?? (() => new Date());
    const log = options.log ?? (() => {});
    const { store, queue } = this;
    this.#sweeper = new StoredWorkSweeper<LookalikeJob>(
      {
        noun: 'lookalike job',
        queueKind: queue.kind,
        unfinished: (notQueuedOnly, limit) => store.unfinished(notQueuedOnly, limit),
        enqueue: async (job) => {
          await queue.enqueueLookalikeJob(job.id);
          await store.markEnqueued(job.id);
        },
        ready: () => queue.ready(),
        // A job whose runner died without a word fails, before the others are queued again.
        beforeSweep: async () => {
          const at = this.#now();
          const stale = await store.failStale(new Date(at.getTime() - LOOKALIKE_JOB_STALE_MS).toISOString(), staleError(), at.toISOString());
          if (stale > 0) log(`${stale} lookalike job(s) had no sign of life for ${LOOKALIKE_JOB_STALE_MS / 60_000} minutes and failed`);
        },
      },
      options.sweepIntervalMs ?? DEFAULT_LOOKALIKE_SWEEP_INTERVAL_MS,
      log,
    );
  }

  /** Whether the queue takes jobs now. */
  ready(): Promise<QueueReadiness> {
    return this.queue.ready();
  }

  /**
   * Picks up where the last process stopped (in process: every unfinished job, since the queue
   * died with it; with Redis: those never queued), then sweeps every interval.
   */
  start(): Promise<void> {
    return this.#sweeper.start();
  }

  /** Stores a new job for the organisation and queues it; the job as stored. */
  async submit(organizationId: string, domain: string): Promise<LookalikeJob> {
    const job = await this.store.create({ id: newLookalikeJobId(), organizationId, domain, createdAt: this.#now().toISOString() });
    // Stored first: if the queue refuses it now, the sweeper queues it later.
    await this.dispatch(job);
    return job;
  }

  /** Hands a stored job to the queue; false (and logged) when the queue refused it: the sweeper retries. */
  dispatch(job: LookalikeJob): Promise<boolean> {
    return this.#sweeper.dispatch(job);
  }

  /** Queues the stored jobs not queued yet and fails the stale ones; returns how many were queued. One sweep at a time. */
  sweep(): Promise<number> {
    return this.#sweeper.sweep();
  }

  /** Stops the sweeper (the queue belongs to the batch service, which closes it). */
  close(): Promise<void> {
    return this.#sweeper.stop();
  }
}

function staleError() {
  return { code: 'INTERRUPTED', message: `The run stopped with no sign of life for ${LOOKALIKE_JOB_STALE_MS / 60_000} minutes (its process stopped) and is not tried again.` };
}
