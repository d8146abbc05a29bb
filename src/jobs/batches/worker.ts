/**
 * A queue worker: takes chunk jobs from the BullMQ queue and processes them against the shared
 * store. Any number run on any number of machines. A worker that dies mid-job (SIGKILL) stops
 * renewing the job's lock; after `lockDurationMs` another worker's stalled-job check puts the job
 * back on the queue, and processing it again only writes the rows still missing.
 */
import { redisModules } from '../redis-modules.js';
import pLimit from 'p-limit';
import type { BatchStore } from '../../store/batches.js';
import { chunksInFlight, DEFAULT_BATCH_CONCURRENCY, type BatchCheck, type ChunkJob } from './model.js';
import { processChunk, type ChunkDeps, type ChunkOutcome } from './process.js';
import { BATCH_QUEUE_NAME, checkRedisUrl, type BatchQueueJob } from './queue.js';
import { LOOKALIKE_QUEUE_JOB_NAME, processLookalikeJob, type LookalikeJobDeps, type LookalikeJobOutcome, type LookalikeQueueJob } from './lookalike-jobs.js';

/** How long a job's lock lasts without renewal before the job counts as stalled (BullMQ's default). */
export const DEFAULT_LOCK_DURATION_MS = 30_000;
/** How long a deep lookalike job stopped by a worker's shutdown waits before another worker may take it. */
export const LOOKALIKE_RELEASE_DELAY_MS = 500;
/** Times a job may stall (its worker died) and be recovered before it is failed. */
export const MAX_STALLED_COUNT = 10;

/** Options of a worker. */
export interface BatchWorkerOptions {
  redisUrl: string;
  store: BatchStore;
  check: BatchCheck;
  /** Names checked at once by this worker (default {@link DEFAULT_BATCH_CONCURRENCY}). */
  concurrency?: number;
  /** Lock duration; the stalled-job check runs every half of it. */
  lockDurationMs?: number;
  /** Key prefix in Redis (tests). */
  prefix?: string;
  retry?: ChunkDeps['retry'];
  /** Deep lookalike jobs (job name `lookalikes` on the same queue): their store and run. */
  lookalikes?: Pick<LookalikeJobDeps, 'store' | 'run' | 'progressIntervalMs'>;
  /** Called after each lookalike job. */
  onLookalikeJob?: (jobId: string, outcome: LookalikeJobOutcome) => void;
  /** Called after each chunk (progress on stderr). */
  onChunk?: (job: ChunkJob, outcome: ChunkOutcome) => void;
  /** Failures of jobs and of the connection. */
  log?: (message: string, error?: unknown) => void;
}

/** A running worker. */
export interface BatchWorker {
  /** Resolves once connected to Redis. */
  ready(): Promise<void>;
  /** Stops taking jobs and waits for those running. */
  close(): Promise<void>;
}

/** Starts a worker. */
export function startBatchWorker(options: BatchWorkerOptions): BatchWorker {
  const concurrency = options.concurrency ?? DEFAULT_BATCH_CONCURRENCY;
  const gate = pLimit(concurrency);
  const deps: ChunkDeps = { store: options.store, check: options.check, gate, ...(options.retry ? { retry: options.retry } : {}) };
  const log = options.log ?? (() => {});
  const { DelayedError, Redis, Worker } = redisModules();
  // BullMQ's blocking connection must retry forever (maxRetriesPerRequest: null).
  const connection = new Redis(checkRedisUrl(options.redisUrl), { maxRetriesPerRequest: null, retryStrategy: (times) => Math.min(times * 200, 2000) });
  connection.on('error', () => {});
  const lockDuration = options.lockDurationMs ?? DEFAULT_LOCK_DURATION_MS;
  // Aborted at close: deep lookalike runs in hand stop, go back to queued, and the job is retried.
  const closing = new AbortController();
  const worker = new Worker<BatchQueueJob, ChunkOutcome | LookalikeJobOutcome>(
    BATCH_QUEUE_NAME,
    async (job, token) => {
      if (job.name === LOOKALIKE_QUEUE_JOB_NAME) {
        const { lookalikeJobId } = job.data as LookalikeQueueJob;
        if (!options.lookalikes) throw new Error('this worker was not given a lookalike search');
        const outcome = await processLookalikeJob(lookalikeJobId, { ...options.lookalikes, signal: closing.signal });
        options.onLookalikeJob?.(lookalikeJobId, outcome);
        if (outcome.kind === 'released') {
          // Stopped by this worker's shutdown: back on the queue for another worker, the try not
          // counted (BullMQ's delayed set; a throw would spend one of the job's attempts).
          await job.moveToDelayed(Date.now() + LOOKALIKE_RELEASE_DELAY_MS, token);
          throw new DelayedError();
        }
        return outcome;
      }
      const chunk = job.data as ChunkJob;
      const outcome = await processChunk(chunk, deps);
      options.onChunk?.(chunk, outcome);
      return outcome;
    },
    {
      connection,
      ...(options.prefix ? { prefix: options.prefix } : {}),
      // Enough jobs at once to keep every name slot busy while chunks read and write the store.
      concurrency: chunksInFlight(concurrency),
      lockDuration,
      stalledInterval: Math.max(500, Math.floor(lockDuration / 2)),
      maxStalledCount: MAX_STALLED_COUNT,
    },
  );
  worker.on('failed', (job, error) => {
    log(`job ${job?.id ?? '?'} failed (attempt ${job?.attemptsMade ?? '?'})`, error);
    // A lookalike job BullMQ gives up on (its tries spent: the store kept failing) fails in the
    // store too, when the store answers, so that it does not wait as `queued` for ever.
    if (job?.name === LOOKALIKE_QUEUE_JOB_NAME && options.lookalikes && job.attemptsMade >= (job.opts.attempts ?? 1)) {
      const { lookalikeJobId } = job.data as LookalikeQueueJob;
      const message = `The run could not be completed after ${job.attemptsMade} tries.`;
      options.lookalikes.store.fail(lookalikeJobId, { code: 'INTERNAL', message }, new Date().toISOString()).catch((failure: unknown) => log(`lookalike job ${lookalikeJobId} could not be marked failed`, failure));
    }
  });
  worker.on('error', (error) => log('worker error', error));
  return {
    ready: () => worker.waitUntilReady().then(() => undefined),
    close: async () => {
      closing.abort();
      await worker.close();
      connection.disconnect();
    },
  };
}
