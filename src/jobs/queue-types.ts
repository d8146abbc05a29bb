/** What the batch service hands batches to: the in-process runner or the Redis queue. */
import type { Batch } from './model.js';

/** Whether a queue can take batches now, and why not. */
export type QueueReadiness = { ok: true } | { ok: false; reason: string };

/** A place batches go to be worked on. */
export interface BatchQueue {
  /** `in-process` loses its queue with the process (unfinished batches are re-queued at start); `redis` keeps it. */
  readonly kind: 'in-process' | 'redis';
  /** Whether `enqueue` can succeed now (Redis reachable). */
  ready(): Promise<QueueReadiness>;
  /** Hands every chunk of the batch over; throws when it cannot (the sweeper tries again). */
  enqueue(batch: Batch): Promise<void>;
  /** Releases the queue (and, in process, waits for the chunks running). */
  close(): Promise<void>;
}
