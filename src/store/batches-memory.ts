/**
 * Batches held in memory: for tests and for `serve` without a database. Holds every name and result
 * of every batch, so it is for small loads; a service that takes large batches runs on SQL.
 */
import type { Batch, BatchName, BatchResultRow } from './batch-model.js';
import type { BatchQuota, BatchStore, NewBatch, QuotaOutcome } from './batches.js';

interface Entry {
  batch: Batch;
  names: string[];
  /** Result rows by seq. */
  results: Map<number, BatchResultRow>;
}

/** The memory implementation of {@link BatchStore}. */
export class MemoryBatchStore implements BatchStore {
  readonly #batches = new Map<string, Entry>();

  async create(input: NewBatch): Promise<Batch> {
    if (this.#batches.has(input.id)) throw new Error(`duplicate batch id "${input.id}"`);
    const names: string[] = [];
    for (const { seq, name } of input.names) names[seq] = name;
    const results = new Map(input.errorRows.map((row) => [row.seq, { ...row }]));
    const total = input.names.length;
    const allRefused = results.size === total;
    const batch: Batch = {
      id: input.id,
      organizationId: input.organizationId,
      status: allRefused ? 'done' : 'queued',
      total,
      done: results.size,
      failed: results.size,
      createdAt: input.createdAt,
      startedAt: null,
      finishedAt: allRefused ? input.createdAt : null,
      enqueued: false,
    };
    this.#batches.set(input.id, { batch, names, results });
    return { ...batch };
  }

  async createWithinQuota(input: NewBatch, quota: BatchQuota): Promise<QuotaOutcome> {
    // No await between the sum and the insert: one event-loop turn, so no other call interleaves.
    const used = this.#usedSince(input.organizationId, quota.since);
    if (used + input.names.length > quota.limit) return { ok: false, used };
    return { ok: true, batch: await this.create(input) };
  }

  async get(organizationId: string, id: string): Promise<Batch | undefined> {
    const entry = this.#batches.get(id);
    return entry && entry.batch.organizationId === organizationId ? { ...entry.batch } : undefined;
  }

  async getById(id: string): Promise<Batch | undefined> {
    const entry = this.#batches.get(id);
    return entry && { ...entry.batch };
  }

  async namesSubmittedSince(organizationId: string, since: string): Promise<number> {
    return this.#usedSince(organizationId, since);
  }

  #usedSince(organizationId: string, since: string): number {
    let sum = 0;
    for (const { batch } of this.#batches.values()) {
      if (batch.organizationId === organizationId && batch.createdAt >= since) sum += batch.total;
    }
    return sum;
  }

  async pendingNames(batchId: string, fromSeq: number, toSeq: number): Promise<BatchName[]> {
    const entry = this.#batches.get(batchId);
    if (!entry) return [];
    const pending: BatchName[] = [];
    for (let seq = Math.max(0, fromSeq); seq < Math.min(toSeq, entry.names.length); seq++) {
      if (!entry.results.has(seq)) pending.push({ seq, name: entry.names[seq]! });
    }
    return pending;
  }

  async markRunning(batchId: string, at: string): Promise<void> {
    const entry = this.#batches.get(batchId);
    if (entry?.batch.status === 'queued') entry.batch = { ...entry.batch, status: 'running', startedAt: at };
  }

  async markEnqueued(batchId: string): Promise<void> {
    const entry = this.#batches.get(batchId);
    if (entry) entry.batch = { ...entry.batch, enqueued: true };
  }

  async recordResults(batchId: string, rows: BatchResultRow[], at: string): Promise<void> {
    const entry = this.#batches.get(batchId);
    if (!entry) return;
    let inserted = 0;
    let failed = 0;
    for (const row of rows) {
      if (entry.results.has(row.seq) || row.seq < 0 || row.seq >= entry.batch.total) continue; // ON CONFLICT DO NOTHING
      entry.results.set(row.seq, { ...row });
      inserted++;
      if (row.failed) failed++;
    }
    const b = entry.batch;
    const done = b.done + inserted;
    const finished = done >= b.total && (b.status === 'queued' || b.status === 'running');
    entry.batch = {
      ...b,
      done,
      failed: b.failed + failed,
      ...(finished ? { status: 'done' as const, finishedAt: at, startedAt: b.startedAt ?? at } : {}),
    };
  }

  async cancel(organizationId: string, id: string, at: string): Promise<Batch | undefined> {
    const entry = this.#batches.get(id);
    if (!entry || entry.batch.organizationId !== organizationId) return undefined;
    if (entry.batch.status === 'queued' || entry.batch.status === 'running') {
      entry.batch = { ...entry.batch, status: 'cancelled', finishedAt: at };
    }
    return { ...entry.batch };
  }

  async readResults(organizationId: string, id: string, afterSeq: number, limit: number): Promise<BatchResultRow[]> {
    const entry = this.#batches.get(id);
    if (!entry || entry.batch.organizationId !== organizationId) return [];
    const rows: BatchResultRow[] = [];
    for (let seq = Math.max(0, afterSeq + 1); seq < entry.batch.total && rows.length < limit; seq++) {
      const row = entry.results.get(seq);
      if (row) rows.push({ ...row });
    }
    return rows;
  }

  async unfinished(onlyUnenqueued: boolean, limit: number): Promise<Batch[]> {
    const found: Batch[] = [];
    for (const { batch } of this.#batches.values()) {
      if ((batch.status === 'queued' || batch.status === 'running') && (!onlyUnenqueued || !batch.enqueued)) found.push({ ...batch });
    }
    return found.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0)).slice(0, limit);
  }
}
