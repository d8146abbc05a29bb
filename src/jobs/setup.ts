/**
 * What `serve` calls to run batches: on the Redis queue when it was given a Redis URL (workers do
 * the checks), else in this process. Either way the sweeper starts with it.
 */
import type { BatchStore } from '../store/batches.js';
import { DEFAULT_BATCH_CONCURRENCY, type BatchCheck } from './model.js';
import { RedisBatchQueue } from './queue.js';
import { InProcessBatchRunner } from './runner.js';
import { BatchService } from './service.js';

/** Options of {@link startBatchService}. */
export interface StartBatchServiceOptions {
  store: BatchStore;
  check: BatchCheck;
  /** With a URL, batches go on the BullMQ queue for `spoof-checker worker`s. */
  redisUrl?: string | undefined;
  /** Names checked at once in process (no Redis). */
  concurrency?: number;
  namesPerDay?: number;
  log?: (message: string, error?: unknown) => void;
}

/** Builds and starts the batch service (picking up unfinished batches); `close()` it at shutdown. */
export async function startBatchService(options: StartBatchServiceOptions): Promise<BatchService> {
  const log = options.log ?? (() => {});
  const queue =
    options.redisUrl !== undefined
      ? new RedisBatchQueue(options.redisUrl)
      : new InProcessBatchRunner({ store: options.store, check: options.check, concurrency: options.concurrency ?? DEFAULT_BATCH_CONCURRENCY, log });
  const service = new BatchService({ store: options.store, queue, log, ...(options.namesPerDay !== undefined ? { namesPerDay: options.namesPerDay } : {}) });
  await service.start();
  return service;
}

/** One line for the start-up message. */
export function describeBatchMode(redisUrl: string | undefined): string {
  return redisUrl === undefined ? 'batches in this process' : 'batches on the Redis queue (run spoof-checker worker)';
}
