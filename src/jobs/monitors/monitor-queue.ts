/**
 * Monitors on the BullMQ queue in Redis. The API process keeps one job scheduler per monitor
 * (`upsertJobScheduler`, keyed by the monitor id: one schedule whatever the number of replicas that
 * upsert it); BullMQ makes exactly one job per iteration (the job id names the iteration), and
 * `spoof-checker worker`s take them. The iterations are the monitor's slots
 * (src/jobs/monitors/monitor-schedule.ts), so the run id is the slot and the store commits it once even when
 * a job is retried after its worker died mid-check (its lock runs out, another worker takes it).
 */
import type { Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { redisModules } from '../redis-modules.js';
import type { Monitor, MonitorStore } from '../../store/monitors.js';
import type { LookalikeMemorySource } from './lookalike-memory.js';
import { runMonitor, type MonitorCheck, type MonitorReportSource, type MonitorSelectorSource, type AlertDeliverySource, type RunOutcome } from './monitor-run.js';
import { firstSlot, MINUTE_MS, phaseOf, slotRunId } from './monitor-schedule.js';
import { nextSlotIso, type MonitorScheduler } from './monitors.js';
import { checkRedisUrl, REDIS_CALL_TIMEOUT_MS } from '../batches/queue.js';

/** The BullMQ queue of monitor runs. */
export const MONITOR_QUEUE_NAME = 'spoof-checker-monitors';
/** Tries of a run job (a worker that throws: the store unreachable); DNS failures are results, not throws. */
export const MONITOR_JOB_ATTEMPTS = 10;
/** First wait before a failed run job is tried again (exponential). */
export const MONITOR_JOB_BACKOFF_MS = 5_000;
/** Monitors read per page while syncing the job schedulers at start. */
const SYNC_PAGE = 500;
/** Failed run jobs kept for inspection. */
const FAILED_MONITOR_JOBS_KEPT = 1000;

/** What a run job carries: the monitor, and for POST …/run the run id (scheduled runs take theirs from the job id). */
export interface MonitorJob {
  monitorId: string;
  runId?: string;
}

/** Options shared by the producer and the worker. */
export interface MonitorQueueOptions {
  redisUrl: string;
  /** Key prefix in Redis (tests, the benchmark). */
  prefix?: string;
  /** One schedule minute (tests and the benchmark scale it down). */
  minuteMs?: number;
}

/** The slot of a scheduler's job, from its id `repeat:<schedulerId>:<ms>`. */
export function slotOfJobId(jobId: string | undefined): number | undefined {
  const match = jobId === undefined ? null : /^repeat:.+:(\d+)$/.exec(jobId);
  return match ? Number(match[1]) : undefined;
}

/** Schedules monitors as BullMQ job schedulers (the API process's side). */
export class RedisMonitorScheduler implements MonitorScheduler {
  readonly kind = 'redis' as const;
  readonly #connection: Redis;
  readonly #queue: Queue<MonitorJob>;
  readonly #store: MonitorStore;
  readonly #minuteMs: number;
  readonly #log: (message: string, error?: unknown) => void;
  #sync: Promise<void> | undefined;

  constructor(store: MonitorStore, options: MonitorQueueOptions & { log?: (message: string, error?: unknown) => void }) {
    this.#store = store;
    this.#minuteMs = options.minuteMs ?? MINUTE_MS;
    this.#log = options.log ?? (() => {});
    const { Queue, Redis } = redisModules();
    this.#connection = new Redis(checkRedisUrl(options.redisUrl), { enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: (times) => Math.min(times * 200, 2000) });
    this.#connection.on('error', () => {});
    this.#queue = new Queue<MonitorJob>(MONITOR_QUEUE_NAME, {
      connection: this.#connection,
      ...(options.prefix ? { prefix: options.prefix } : {}),
      defaultJobOptions: {
        attempts: MONITOR_JOB_ATTEMPTS,
        backoff: { type: 'exponential', delay: MONITOR_JOB_BACKOFF_MS },
        removeOnComplete: true,
        removeOnFail: FAILED_MONITOR_JOBS_KEPT,
      },
    });
    this.#queue.on('error', () => {});
  }

  /** Waits for Redis, then upserts every monitor's scheduler in the background (idempotent). */
  async start(): Promise<void> {
    await this.#queue.waitUntilReady();
    this.#sync = this.syncAll().then(() => undefined, (error: unknown) => this.#log('syncing the monitor schedules failed (they are synced again at the next start)', error));
  }

  /** Upserts the scheduler of every stored monitor; how many. */
  async syncAll(): Promise<number> {
    let after = '';
    let count = 0;
    for (;;) {
      const page = await this.#store.listAll(after, SYNC_PAGE);
      for (const monitor of page) await this.schedule(monitor);
      count += page.length;
      if (page.length < SYNC_PAGE) return count;
      after = page[page.length - 1]!.id;
    }
  }

  async schedule(monitor: Monitor): Promise<void> {
    const every = monitor.intervalMinutes * this.#minuteMs;
    const start = Math.max(Date.parse(monitor.nextRunAt), firstSlot(monitor.id, every, Date.parse(monitor.createdAt), this.#minuteMs));
    await withTimeout(
      this.#queue.upsertJobScheduler(monitor.id, { every, startDate: start, offset: phaseOf(monitor.id, every) }, { name: 'scheduled', data: { monitorId: monitor.id } }),
      'Redis did not take the monitor schedule',
    );
  }

  async unschedule(monitorId: string): Promise<void> {
    await withTimeout(this.#queue.removeJobScheduler(monitorId), 'Redis did not remove the monitor schedule');
  }

  async runNow(monitorId: string, runId: string): Promise<void> {
    await withTimeout(this.#queue.add('manual', { monitorId, runId }, { jobId: runId.replace(':', '-') }), 'Redis did not take the run');
  }

  /** Job counts (tests, the benchmark). */
  async counts(): Promise<Record<string, number>> {
    return this.#queue.getJobCounts('wait', 'active', 'delayed', 'failed', 'completed');
  }

  /** Job schedulers in Redis (tests, the benchmark). */
  async schedulerCount(): Promise<number> {
    return this.#queue.getJobSchedulersCount();
  }

  async close(): Promise<void> {
    await this.#sync;
    await this.#queue.close().catch(() => {});
    this.#connection.disconnect();
  }
}

/** Options of a monitor worker. */
export interface MonitorWorkerOptions extends MonitorQueueOptions {
  store: MonitorStore;
  check: MonitorCheck;
  /** DMARC report signals added to each snapshot (src/jobs/monitors/monitor-run.ts). */
  reportSignals?: MonitorReportSource | undefined;
  /** The DKIM selectors the organisation's reports have seen (see `MonitorRunDeps`). */
  reportSelectors?: MonitorSelectorSource | undefined;
  /** The deliveries to alert channels a confirmed change queues (src/jobs/monitors/alerts.ts). */
  alertDeliveries?: AlertDeliverySource | undefined;
  /** The lookalikes monitors remember (src/jobs/monitors/lookalike-memory.ts). */
  lookalikeMemory?: LookalikeMemorySource | undefined;
  /** Run jobs processed at once. */
  concurrency?: number;
  /** Lock duration; the stalled-job check runs every half of it. */
  lockDurationMs?: number;
  now?: () => Date;
  onRun?: (job: MonitorJob & { runId: string }, outcome: RunOutcome) => void;
  log?: (message: string, error?: unknown) => void;
}

/** A running monitor worker. */
export interface MonitorWorker {
  ready(): Promise<void>;
  /** Stops taking jobs and waits for those running; `force` stops without waiting (their locks run out and other workers take them over). */
  close(force?: boolean): Promise<void>;
}

/** Takes monitor runs from the queue. */
export function startMonitorWorker(options: MonitorWorkerOptions): MonitorWorker {
  const minuteMs = options.minuteMs ?? MINUTE_MS;
  const now = options.now ?? (() => new Date());
  const log = options.log ?? (() => {});
  const { Redis, Worker } = redisModules();
  const connection = new Redis(checkRedisUrl(options.redisUrl), { maxRetriesPerRequest: null, retryStrategy: (times) => Math.min(times * 200, 2000) });
  connection.on('error', () => {});
  const lockDuration = options.lockDurationMs ?? 30_000;
  const worker = new Worker<MonitorJob, string>(
    MONITOR_QUEUE_NAME,
    async (job: Job<MonitorJob>) => {
      const slot = slotOfJobId(job.id);
      const runId = job.data.runId ?? (slot !== undefined ? slotRunId(slot) : `job:${job.id ?? ''}`);
      const outcome = await runMonitor(
        { store: options.store, check: options.check, reportSignals: options.reportSignals, reportSelectors: options.reportSelectors, alertDeliveries: options.alertDeliveries, lookalikeMemory: options.lookalikeMemory, now },
        job.data.monitorId,
        runId,
        job.data.runId === undefined ? (monitor, at) => nextSlotIso(monitor, at, minuteMs) : undefined,
      );
      options.onRun?.({ ...job.data, runId }, outcome);
      return outcome.kind;
    },
    {
      connection,
      ...(options.prefix ? { prefix: options.prefix } : {}),
      concurrency: options.concurrency ?? 16,
      lockDuration,
      stalledInterval: Math.max(500, Math.floor(lockDuration / 2)),
      maxStalledCount: 10,
    },
  );
  worker.on('failed', (job, error) => log(`monitor job ${job?.id ?? '?'} failed (attempt ${job?.attemptsMade ?? '?'})`, error));
  worker.on('error', (error) => log('monitor worker error', error));
  return {
    ready: () => worker.waitUntilReady().then(() => undefined),
    close: async (force = false) => {
      await worker.close(force);
      connection.disconnect();
    },
  };
}

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${REDIS_CALL_TIMEOUT_MS} ms`)), REDIS_CALL_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
