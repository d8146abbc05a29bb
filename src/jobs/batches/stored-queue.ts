/**
 * Work that is stored before it is queued, so that nothing accepted is lost (batches, deep lookalike
 * jobs): a queue that refuses an item (Redis went away between the readiness check and the add)
 * leaves it stored as not queued yet, and the sweeper hands it over again at start and every
 * sweep interval. In process, every unfinished item is queued again at start: the queue died with
 * the process that held it.
 */

/** How work of one kind is stored and queued, for {@link StoredWorkSweeper}. */
export interface StoredWork<T extends { id: string; status: string }> {
  /** What the log calls one item ("batch", "lookalike job"). */
  readonly noun: string;
  /** Where the queue lives: in process (lost with it) or in Redis. */
  readonly queueKind: 'in-process' | 'redis';
  /** Stored items not finished; `notQueuedOnly`: only those never handed to the queue. */
  unfinished(notQueuedOnly: boolean, limit: number): Promise<T[]>;
  /** Hands an item to the queue and marks it queued in the store (throws when the queue refuses it). */
  enqueue(item: T): Promise<void>;
  /** Whether the queue takes items now. */
  ready(): Promise<{ ok: boolean }>;
  /** Done before each sweep (e.g. failing items whose runner died); its failure is logged like the sweep's. */
  beforeSweep?(): Promise<void>;
}

/** Items handed over per sweep. */
export const SWEEP_PAGE = 100;

/** The start, the hand-over and the sweeper of one kind of stored work. */
export class StoredWorkSweeper<T extends { id: string; status: string }> {
  #timer: NodeJS.Timeout | undefined;
  #sweeping: Promise<number> | undefined;

  constructor(
    private readonly work: StoredWork<T>,
    private readonly sweepIntervalMs: number,
    private readonly log: (message: string, error?: unknown) => void,
  ) {}

  /**
   * Picks up where the last process stopped (in process: every unfinished item, since the queue
   * died with it; with Redis: those never queued), then sweeps every interval.
   */
  async start(): Promise<void> {
    if (this.work.queueKind === 'in-process') {
      for (const item of await this.work.unfinished(false, Number.MAX_SAFE_INTEGER)) await this.dispatch(item);
    } else {
      await this.sweep();
    }
    this.#timer = setInterval(() => void this.sweep(), this.sweepIntervalMs);
    this.#timer.unref();
  }

  /** Hands a stored item to the queue; false (and logged) when the queue refused it: the sweeper retries. */
  async dispatch(item: T): Promise<boolean> {
    if (item.status !== 'queued' && item.status !== 'running') return true;
    try {
      await this.work.enqueue(item);
      return true;
    } catch (error) {
      this.log(`${this.work.noun} ${item.id} stored but not queued yet; the sweeper will queue it`, error);
      return false;
    }
  }

  /** Queues the stored items not queued yet; returns how many were queued. One sweep at a time. */
  sweep(): Promise<number> {
    this.#sweeping ??= this.#sweepOnce().finally(() => (this.#sweeping = undefined));
    return this.#sweeping;
  }

  async #sweepOnce(): Promise<number> {
    try {
      await this.work.beforeSweep?.();
      if (!(await this.work.ready()).ok) return 0;
      let queued = 0;
      for (const item of await this.work.unfinished(true, SWEEP_PAGE)) if (await this.dispatch(item)) queued++;
      return queued;
    } catch (error) {
      this.log(`${this.work.noun} sweep failed`, error);
      return 0;
    }
  }

  /** Stops the sweeper, after the sweep under way. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.#sweeping;
  }
}
