/**
 * The batch service the API uses: the store, where batches go (the in-process runner or the Redis
 * queue), the daily quota, and the sweeper that re-queues batches whose enqueue failed.
 *
 * A batch is written to the store before it is queued, so an accepted batch is never lost: when the
 * queue refuses it (Redis went away between the readiness check and the add), it stays
 * `enqueued: false` and the sweeper hands it over again at start and every `sweepIntervalMs`.
 */
import type { BatchStore } from '../../store/batches.js';
import { DEFAULT_BATCH_NAMES_PER_DAY, type Batch } from './model.js';
import type { BatchQueue } from './queue-types.js';
import { StoredWorkSweeper } from './stored-queue.js';

/** How often unqueued batches are looked for. */
export const DEFAULT_SWEEP_INTERVAL_MS = 5000;

/** Options of the batch service. */
export interface BatchServiceOptions {
  store: BatchStore;
  queue: BatchQueue;
  /** Names an organisation may submit per UTC day (default {@link DEFAULT_BATCH_NAMES_PER_DAY}). */
  namesPerDay?: number;
  sweepIntervalMs?: number;
  log?: (message: string, error?: unknown) => void;
}

/** Batches for the API: submit goes to the store, then to the queue. */
export class BatchService {
  readonly store: BatchStore;
  readonly queue: BatchQueue;
  readonly namesPerDay: number;
  readonly #sweeper: StoredWorkSweeper<Batch>;

  constructor(options: BatchServiceOptions) {
    this.store = options.store;
    this.queue = options.queue;
    this.namesPerDay = options.namesPerDay ?? DEFAULT_BATCH_NAMES_PER_DAY;
    const { store, queue } = this;
    this.#sweeper = new StoredWorkSweeper<Batch>(
      {
        noun: 'batch',
        queueKind: queue.kind,
        unfinished: (notQueuedOnly, limit) => store.unfinished(notQueuedOnly, limit),
        enqueue: async (batch) => {
          await queue.enqueue(batch);
          await store.markEnqueued(batch.id);
        },
        ready: () => queue.ready(),
      },
      options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS,
      options.log ?? (() => {}),
    );
  }

  /**
   * Picks up where the last process stopped (in process: every unfinished batch, since the queue
   * died with it; with Redis: those never queued), then sweeps every interval.
   */
  start(): Promise<void> {
    return this.#sweeper.start();
  }

  /** Hands a stored batch to the queue; false (and logged) when the queue refused it: the sweeper retries. */
  dispatch(batch: Batch): Promise<boolean> {
    return this.#sweeper.dispatch(batch);
  }

  /** Queues the stored batches not queued yet; returns how many were queued. One sweep at a time. */
  sweep(): Promise<number> {
    return this.#sweeper.sweep();
  }

  /** Stops the sweeper and closes the queue. */
  async close(): Promise<void> {
    await this.#sweeper.stop();
    await this.queue.close();
  }
}
