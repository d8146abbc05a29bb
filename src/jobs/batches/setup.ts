/**
 * What `serve` calls to run batches: on the Redis queue when it was given a Redis URL (workers do
 * the checks), else in this process. Either way the sweeper starts with it.
 */
import type { BatchStore } from '../../store/batches.js';
import { DEFAULT_BATCH_CONCURRENCY, type BatchCheck } from './model.js';
import { RedisBatchQueue } from './queue.js';
import { InProcessBatchRunner } from './runner.js';
import { BatchService } from './service.js';
import { LookalikeJobService, type DeepLookalikeRun } from './lookalike-jobs.js';
import { takesLookalikeJobs } from './queue-types.js';
import type { LookalikeJobStore } from '../../store/lookalike-jobs.js';

/** Options of {@link startBatchService}. */
export interface StartBatchServiceOptions {
  store: BatchStore;
  check: BatchCheck;
  /** With a URL, batches go on the BullMQ queue for `spoof-checker worker`s. */
  redisUrl?: string | undefined;
  /** Names checked at once in process (no Redis). */
  concurrency?: number;
  namesPerDay?: number;
  /** Deep lookalike jobs run in this process (no Redis): their store and run. */
  lookalikes?: { store: LookalikeJobStore; run: DeepLookalikeRun };
  log?: (message: string, error?: unknown) => void;
}

/** Builds and starts the batch service (picking up unfinished batches); `close()` it at shutdown. */
export async function startBatchService(options: StartBatchServiceOptions): Promise<BatchService> {
  const log = options.log ?? (() => {});
  const queue =
    options.redisUrl !== undefined
      ? new RedisBatchQueue(options.redisUrl)
      : new InProcessBatchRunner({
          store: options.store,
          check: options.check,
          concurrency: options.concurrency ?? DEFAULT_BATCH_CONCURRENCY,
          log,
          ...(options.lookalikes ? { lookalikes: options.lookalikes } : {}),
        });
  const service = new BatchService({ store: options.store, queue, log, ...(options.namesPerDay !== undefined ? { namesPerDay: options.namesPerDay } : {}) });
  await service.start();
  return service;
}

/** One line for the start-up message. */
export function describeBatchMode(redisUrl: string | undefined): string {
  return redisUrl === undefined ? 'batches in this process' : 'batches on the Redis queue (run spoof-checker worker)';
}

/**
 * Builds and starts the lookalike job service on the batch service's queue (picking up unfinished
 * jobs); `close()` it before the batch service. Throws when that queue does not run lookalike jobs.
 */
export async function startLookalikeJobService(options: { store: LookalikeJobStore; batches: BatchService; log?: (message: string, error?: unknown) => void }): Promise<LookalikeJobService> {
  const queue = options.batches.queue;
  if (!takesLookalikeJobs(queue)) throw new Error('the batch queue does not run lookalike jobs');
  const service = new LookalikeJobService({ store: options.store, queue, ...(options.log ? { log: options.log } : {}) });
  await service.start();
  return service;
}
