/**
 * The batch service the API uses: the store, where batches go (the in-process runner or the Redis
 * queue), the daily quota, and the sweeper that re-queues batches whose enqueue failed.
 *
 * A batch is written to the store before it is queued, so an accepted batch is never lost: when the
 * queue refuses it (Redis went away between the readiness check and the add), it stays
 * `enqueued: false` and the sweeper hands it over again at start and every `sweepIntervalMs`.
 */
import type { BatchStore } from '../store/batches.js';
import { DEFAULT_BATCH_NAMES_PER_DAY, type Batch } from './model.js';
import type { BatchQueue } from './queue-types.js';

/** How often unqueued batches are looked for. */
export const DEFAULT_SWEEP_INTERVAL_MS = 5000;
/** Batches handed over per sweep. */
const SWEEP_PAGE = 100;

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
  readonly #sweepIntervalMs: number;
  readonly #log: (message: string, error?: unknown) => void;
  #timer: NodeJS.Timeout | undefined;
  #sweeping: Promise<number> | undefined;

  constructor(options: BatchServiceOptions) {
    this.store = options.store;
    this.queue = options.queue;
    this.namesPerDay = options.namesPerDay ?? DEFAULT_BATCH_NAMES_PER_DAY;
    this.#sweepIntervalMs = options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
    this.#log = options.log ?? (() => {});
  }

  /**
   * Picks up where the last process stopped (in process: every unfinished batch, since the queue
   * died with it; with Redis: those never queued), then sweeps every interval.
   */
  async start(): Promise<void> {
    if (this.queue.kind === 'in-process') {
      for (const batch of await this.store.unfinished(false, Number.MAX_SAFE_INTEGER)) await this.dispatch(batch);
    } else {
      await this.sweep();
    }
    this.#timer = setInterval(() => void this.sweep(), this.#sweepIntervalMs);
    this.#timer.unref();
  }

  /** Hands a stored batch to the queue; false (and logged) when the queue refused it: the sweeper retries. */
  async dispatch(batch: Batch): Promise<boolean> {
    if (batch.status !== 'queued' && batch.status !== 'running') return true;
    try {
      await this.queue.enqueue(batch);
      await this.store.markEnqueued(batch.id);
      return true;
    } catch (error) {
      this.#log(`batch ${batch.id} stored but not queued yet; the sweeper will queue it`, error);
      return false;
    }
  }

  /** Queues the stored batches not queued yet; returns how many were queued. One sweep at a time. */
  sweep(): Promise<number> {
    this.#sweeping ??= this.#sweepOnce().finally(() => (this.#sweeping = undefined));
    return this.#sweeping;
  }

  async #sweepOnce(): Promise<number> {
    try {
      if (!(await this.queue.ready()).ok) return 0;
      let queued = 0;
      for (const batch of await this.store.unfinished(true, SWEEP_PAGE)) if (await this.dispatch(batch)) queued++;
      return queued;
    } catch (error) {
      this.#log('batch sweep failed', error);
      return 0;
    }
  }

  /** Stops the sweeper and closes the queue. */
  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.#sweeping;
    await this.queue.close();
  }
}
