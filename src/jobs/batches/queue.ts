/**
 * Scale-out: batches on a BullMQ queue in Redis. The API process only adds jobs (one per chunk of
 * names: `{ batchId, fromSeq, toSeq }`, the names stay in the shared store); `spoof-checker worker`
 * processes on any number of machines take them (src/jobs/batches/worker.ts).
 *
 * Redis being down must not hang a request: the producer's connection has no offline queue (a
 * command fails at once while disconnected) and every call is bounded by a timeout.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { redisModules } from '../redis-modules.js';
import { chunksOf, type Batch, type ChunkJob } from './model.js';
import type { BatchQueue, LookalikeJobQueue, QueueReadiness } from './queue-types.js';
import { LOOKALIKE_QUEUE_JOB_NAME, type LookalikeQueueJob } from './lookalike-jobs.js';

/** The BullMQ queue every API process and worker shares. */
export const BATCH_QUEUE_NAME = 'spoof-checker-batches';
/** Tries per job (a worker that throws: the store unreachable); DNS retries happen per name inside. */
export const CHUNK_JOB_ATTEMPTS = 10;
/** First wait before a failed job is tried again (exponential). */
export const CHUNK_JOB_BACKOFF_MS = 1000;
/** Longest a Redis call of the API may take before the API answers without it. */
export const REDIS_CALL_TIMEOUT_MS = 2000;
/** Failed jobs kept for inspection. */
export const FAILED_JOBS_KEPT = 1000;
/** Jobs added per Redis round trip. */
const ADD_BULK_SIZE = 500;

/** Options of the Redis queue producer. */
export interface RedisBatchQueueOptions {
  /** Key prefix in Redis (default BullMQ's `bull`); tests use one per test. */
  prefix?: string;
}

/** The BullMQ job id of a chunk: stable, so adding a chunk twice while it waits adds it once. */
export function chunkJobId(job: ChunkJob): string {
  return `${job.batchId}-${job.fromSeq}`;
}

/** Parses and checks a `redis://` or `rediss://` URL; throws a message naming the problem. */
export function checkRedisUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`"${url}" is not a URL; give one such as redis://127.0.0.1:6379`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new Error(`"${url}" is not a Redis URL (it must start with redis:// or rediss://)`);
  }
  return url;
}

/** What the batch queue carries: chunks of batches (job name `chunk`) and deep lookalike runs (`lookalikes`). */
export type BatchQueueJob = ChunkJob | LookalikeQueueJob;

/** Adds batches' chunks (and deep lookalike jobs) to the BullMQ queue. */
export class RedisBatchQueue implements BatchQueue, LookalikeJobQueue {
  readonly kind = 'redis' as const;
  readonly #connection: Redis;
  readonly #queue: Queue<BatchQueueJob>;

  constructor(url: string, options: RedisBatchQueueOptions = {}) {
    const { Queue, Redis } = redisModules();
    this.#connection = new Redis(checkRedisUrl(url), {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      // Keep trying to reconnect (never give up), at most every 2 s.
      retryStrategy: (times) => Math.min(times * 200, 2000),
    });
    // Without a listener, ioredis prints every failed reconnection; readiness reports it instead.
    this.#connection.on('error', () => {});
    this.#queue = new Queue<BatchQueueJob>(BATCH_QUEUE_NAME, {
      connection: this.#connection,
      ...(options.prefix ? { prefix: options.prefix } : {}),
      defaultJobOptions: {
        attempts: CHUNK_JOB_ATTEMPTS,
        backoff: { type: 'exponential', delay: CHUNK_JOB_BACKOFF_MS },
        removeOnComplete: true,
        removeOnFail: FAILED_JOBS_KEPT,
      },
    });
    this.#queue.on('error', () => {});
  }

  async ready(): Promise<QueueReadiness> {
    if (this.#connection.status !== 'ready') return { ok: false, reason: `Redis is not connected (${this.#connection.status}).` };
    try {
      await withTimeout(this.#connection.ping(), 'Redis did not answer PING');
      return { ok: true };
    } catch (error) {
      return { ok: false, reason: error instanceof Error ? error.message : String(error) };
    }
  }

  async enqueue(batch: Batch): Promise<void> {
    const chunks = chunksOf(batch.id, batch.total);
    for (let i = 0; i < chunks.length; i += ADD_BULK_SIZE) {
      const slice = chunks.slice(i, i + ADD_BULK_SIZE).map((data) => ({ name: 'chunk', data, opts: { jobId: chunkJobId(data) } }));
      await withTimeout(this.#queue.addBulk(slice), 'Redis did not take the jobs');
    }
  }

  /** Adds a stored lookalike job; its id is the BullMQ job id, so adding it twice while it waits adds it once. */
  async enqueueLookalikeJob(jobId: string): Promise<void> {
    await withTimeout(this.#queue.add(LOOKALIKE_QUEUE_JOB_NAME, { lookalikeJobId: jobId }, { jobId }), 'Redis did not take the job');
  }

  /** Jobs waiting, running and delayed (tests and the benchmark). */
  async counts(): Promise<Record<string, number>> {
    return this.#queue.getJobCounts('wait', 'active', 'delayed', 'failed', 'completed');
  }

  async close(): Promise<void> {
    await this.#queue.close().catch(() => {});
    this.#connection.disconnect();
  }
}

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${REDIS_CALL_TIMEOUT_MS} ms`)), REDIS_CALL_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
