/**
 * Lookalike jobs held in memory: for tests and for `serve` without a database. Bounded: past
 * {@link MEMORY_LOOKALIKE_JOB_CAPACITY} jobs, a new one drops the oldest finished job.
 */
import type { LookalikeReport } from '@spoof-checker/engine';
import { copy, ownedCopy } from './pagination.js';
import type { LookalikeJob, LookalikeJobError, LookalikeJobStore, NewLookalikeJob } from './lookalike-jobs.js';

/** Most jobs the memory store keeps (each finished one holds its report). */
export const MEMORY_LOOKALIKE_JOB_CAPACITY = 1000;

const open = (job: LookalikeJob): boolean => job.status === 'queued' || job.status === 'running';

/** The memory implementation of {@link LookalikeJobStore}. */
export class MemoryLookalikeJobStore implements LookalikeJobStore {
  readonly #jobs = new Map<string, LookalikeJob>();

  async create(input: NewLookalikeJob): Promise<LookalikeJob> {
    if (this.#jobs.has(input.id)) throw new Error(`duplicate lookalike job id "${input.id}"`);
    const job: LookalikeJob = {
      ...input,
      status: 'queued',
      done: 0,
      total: 0,
      runs: 0,
      updatedAt: input.createdAt,
      startedAt: null,
      finishedAt: null,
      enqueued: false,
      report: null,
      error: null,
    };
    if (this.#jobs.size >= MEMORY_LOOKALIKE_JOB_CAPACITY) {
      // Map order is insertion order: the first finished job is the oldest one.
      for (const [id, old] of this.#jobs) {
        if (!open(old)) {
          this.#jobs.delete(id);
          break;
        }
      }
    }
    this.#jobs.set(job.id, job);
    return copy(job);
  }

  async get(organizationId: string, id: string): Promise<LookalikeJob | undefined> {
    return ownedCopy(this.#jobs.get(id), organizationId);
  }

  async getById(id: string): Promise<LookalikeJob | undefined> {
    return ownedCopy(this.#jobs.get(id));
  }

  async markEnqueued(id: string): Promise<void> {
    const job = this.#jobs.get(id);
    if (job) job.enqueued = true;
  }

  async claim(id: string, at: string): Promise<LookalikeJob | undefined> {
    const job = this.#jobs.get(id);
    if (!job) return undefined;
    if (open(job)) Object.assign(job, { status: 'running', runs: job.runs + 1, startedAt: job.startedAt ?? at, updatedAt: at });
    return copy(job);
  }

  async progress(id: string, done: number, total: number, at: string): Promise<void> {
    const job = this.#jobs.get(id);
    if (job?.status === 'running') Object.assign(job, { done, total, updatedAt: at });
  }

  async complete(id: string, report: LookalikeReport, at: string): Promise<void> {
    const job = this.#jobs.get(id);
    if (job && open(job)) {
      Object.assign(job, { status: 'completed', done: report.generated, total: report.generated, report: structuredClone(report), updatedAt: at, finishedAt: at, startedAt: job.startedAt ?? at });
    }
  }

  async fail(id: string, error: LookalikeJobError, at: string): Promise<void> {
    const job = this.#jobs.get(id);
    if (job && open(job)) Object.assign(job, { status: 'failed', error: { ...error }, updatedAt: at, finishedAt: at });
  }

  async release(id: string, at: string): Promise<void> {
    const job = this.#jobs.get(id);
    if (job?.status === 'running') Object.assign(job, { status: 'queued', runs: Math.max(0, job.runs - 1), updatedAt: at });
  }

  async unfinished(onlyUnenqueued: boolean, limit: number): Promise<LookalikeJob[]> {
    const found = [...this.#jobs.values()].filter((job) => open(job) && (!onlyUnenqueued || !job.enqueued));
    return found
      .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1))
      .slice(0, limit)
      .map(copy);
  }

  async failStale(before: string, error: LookalikeJobError, at: string): Promise<number> {
    let failed = 0;
    for (const job of this.#jobs.values()) {
      if (job.status === 'running' && job.updatedAt < before) {
        Object.assign(job, { status: 'failed', error: { ...error }, updatedAt: at, finishedAt: at });
        failed++;
      }
    }
    return failed;
  }

  async prune(before: string): Promise<number> {
    let deleted = 0;
    for (const [id, job] of this.#jobs) {
      if (!open(job) && job.finishedAt !== null && job.finishedAt < before) {
        this.#jobs.delete(id);
        deleted++;
      }
    }
    return deleted;
  }
}
