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

/** A place lookalike jobs go to be run: the batches' queue (the in-process runner or the Redis queue). */
export interface LookalikeJobQueue {
  readonly kind: 'in-process' | 'redis';
  /** Whether `enqueueLookalikeJob` can succeed now. */
  ready(): Promise<QueueReadiness>;
  /** Hands the stored job over (adding it twice while it waits adds it once); throws when it cannot (the sweeper tries again). */
  enqueueLookalikeJob(jobId: string): Promise<void>;
}

/** Whether a batch queue also runs lookalike jobs. */
export function takesLookalikeJobs(queue: BatchQueue): queue is BatchQueue & LookalikeJobQueue {
  return typeof (queue as Partial<LookalikeJobQueue>).enqueueLookalikeJob === 'function';
}
