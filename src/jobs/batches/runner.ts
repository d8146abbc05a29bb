/**
 * The embedded default: batches run inside the `serve` process, a FIFO of chunks processed with
 * bounded concurrency (p-limit), results in the store. Only chunk descriptors (three fields per 100
 * names) are held in memory; the names and results stay in the store.
 */
import pLimit from 'p-limit';
import { chunksInFlight, chunksOf, DEFAULT_BATCH_CONCURRENCY, type Batch, type BatchCheck, type ChunkJob } from './model.js';
import { processChunk, type ChunkDeps } from './process.js';
import type { BatchQueue, LookalikeJobQueue, QueueReadiness } from './queue-types.js';
import type { BatchStore } from '../../store/batches.js';
import { DEFAULT_LOOKALIKE_JOB_CONCURRENCY, processLookalikeJob, type LookalikeJobDeps } from './lookalike-jobs.js';

/** Tries per chunk when the store fails while it runs (then the chunk is left to the next start). */
export const CHUNK_MAX_ATTEMPTS = 5;
/** Wait before a failed chunk is tried again. */
export const CHUNK_RETRY_DELAY_MS = 1000;

/** Options of the in-process runner. */
export interface InProcessRunnerOptions {
  store: BatchStore;
  check: BatchCheck;
  /** Names checked at once (default {@link DEFAULT_BATCH_CONCURRENCY}). */
  concurrency?: number;
  /** Where failures are reported (the server log). */
  log?: (message: string, error?: unknown) => void;
  retry?: ChunkDeps['retry'];
  now?: () => Date;
  /** Deep lookalike jobs (src/jobs/batches/lookalike-jobs.ts): their store and run; without it the runner takes none. */
  lookalikes?: Pick<LookalikeJobDeps, 'store' | 'run' | 'progressIntervalMs'> & { concurrency?: number };
}

/** Runs batches (and deep lookalike jobs) in this process. */
export class InProcessBatchRunner implements BatchQueue, LookalikeJobQueue {
  readonly kind = 'in-process' as const;
  readonly #deps: ChunkDeps;
  readonly #maxChunks: number;
  readonly #log: (message: string, error?: unknown) => void;
  #pending: { job: ChunkJob; attempt: number }[] = [];
  #head = 0;
  #active = 0;
  #closed = false;
  #idleWaiters: (() => void)[] = [];
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #lookalikes: InProcessRunnerOptions['lookalikes'];
  /** Lookalike job ids waiting (each queued once), and the runs in hand. */
  readonly #lookalikeQueue = new Set<string>();
  readonly #lookalikeRunning = new Set<string>();
  /** Tries of a lookalike job whose store failed. */
  readonly #lookalikeAttempts = new Map<string, number>();
  /** Aborted at close: the runs in hand stop and their jobs go back to `queued` for the next start. */
  readonly #closing = new AbortController();

  constructor(options: InProcessRunnerOptions) {
    this.#lookalikes = options.lookalikes;
    const concurrency = options.concurrency ?? DEFAULT_BATCH_CONCURRENCY;
    const gate = pLimit(concurrency);
    this.#deps = { store: options.store, check: options.check, gate, ...(options.retry ? { retry: options.retry } : {}), ...(options.now ? { now: options.now } : {}) };
    this.#maxChunks = chunksInFlight(concurrency);
    this.#log = options.log ?? (() => {});
  }

  async ready(): Promise<QueueReadiness> {
    return this.#closed ? { ok: false, reason: 'The batch runner is stopping.' } : { ok: true };
  }

  async enqueue(batch: Batch): Promise<void> {
    if (this.#closed) throw new Error('the batch runner is stopping');
    for (const job of chunksOf(batch.id, batch.total)) this.#pending.push({ job, attempt: 1 });
    this.#pump();
  }

  /** Queues a stored lookalike job (once, while it waits or runs). */
  async enqueueLookalikeJob(jobId: string): Promise<void> {
    if (this.#closed) throw new Error('the batch runner is stopping');
    if (!this.#lookalikes) throw new Error('this runner was not given a lookalike search');
    if (this.#lookalikeRunning.has(jobId)) return;
    this.#lookalikeQueue.add(jobId);
    this.#pumpLookalikes();
  }

  #pumpLookalikes(): void {
    const lookalikes = this.#lookalikes;
    if (!lookalikes) return;
    const most = lookalikes.concurrency ?? DEFAULT_LOOKALIKE_JOB_CONCURRENCY;
    for (const jobId of this.#lookalikeQueue) {
      if (this.#closed || this.#lookalikeRunning.size >= most) break;
      this.#lookalikeQueue.delete(jobId);
      this.#lookalikeRunning.add(jobId);
      const deps: LookalikeJobDeps = { ...lookalikes, signal: this.#closing.signal, ...(this.#deps.now ? { now: this.#deps.now } : {}) };
      processLookalikeJob(jobId, deps)
        .then(
          () => this.#lookalikeAttempts.delete(jobId),
          (error: unknown) => this.#retryLookalikeJob(jobId, error),
        )
        .finally(() => {
          this.#lookalikeRunning.delete(jobId);
          this.#pumpLookalikes();
          this.#settleIdle();
        });
    }
  }

  /** The store failed while the job ran: tried again after a wait, a bounded number of times (it stays unfinished in the store for the next start). */
  #retryLookalikeJob(jobId: string, error: unknown): void {
    const attempt = (this.#lookalikeAttempts.get(jobId) ?? 0) + 1;
    if (attempt >= CHUNK_MAX_ATTEMPTS || this.#closed) {
      this.#lookalikeAttempts.delete(jobId);
      this.#log(`lookalike job ${jobId} failed ${attempt} time(s); it resumes at the next start`, error);
      return;
    }
    this.#lookalikeAttempts.set(jobId, attempt);
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      this.#lookalikeQueue.add(jobId);
      this.#pumpLookalikes();
    }, CHUNK_RETRY_DELAY_MS);
    this.#timers.add(timer);
  }

  /** Resolves when nothing is queued or running (tests and benchmarks). */
  idle(): Promise<void> {
    if (this.#nothingLeft()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Stops taking chunks and waits for those running; queued ones resume at the next start (they are in the store). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#closing.abort();
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    this.#lookalikeQueue.clear();
    this.#pending = [];
    this.#head = 0;
    await this.idle();
  }

  #nothingLeft(): boolean {
    return this.#active === 0 && this.#queued() === 0 && this.#timers.size === 0 && this.#lookalikeQueue.size === 0 && this.#lookalikeRunning.size === 0;
  }

  #queued(): number {
    return this.#pending.length - this.#head;
  }

  #pump(): void {
    while (!this.#closed && this.#active < this.#maxChunks && this.#queued() > 0) {
      const next = this.#pending[this.#head++]!;
      if (this.#head > 1024 && this.#head * 2 > this.#pending.length) {
        this.#pending = this.#pending.slice(this.#head);
        this.#head = 0;
      }
      this.#active++;
      processChunk(next.job, this.#deps)
        .catch((error: unknown) => this.#retry(next, error))
        .finally(() => {
          this.#active--;
          this.#pump();
          this.#settleIdle();
        });
    }
    this.#settleIdle();
  }

  #retry(entry: { job: ChunkJob; attempt: number }, error: unknown): void {
    const { job, attempt } = entry;
    if (attempt >= CHUNK_MAX_ATTEMPTS || this.#closed) {
      this.#log(`batch ${job.batchId}: names ${job.fromSeq}–${job.toSeq - 1} failed ${attempt} time(s); they resume at the next start`, error);
      return;
    }
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      this.#pending.push({ job, attempt: attempt + 1 });
      this.#pump();
    }, CHUNK_RETRY_DELAY_MS);
    this.#timers.add(timer);
  }

  #settleIdle(): void {
    if (this.#nothingLeft()) {
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }
}
