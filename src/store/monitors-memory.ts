/**
 * Monitors held in memory: for tests and for `serve` without a database. History is bounded per
 * monitor (MEMORY_MONITOR_HISTORY_CAPACITY, the newest kept), as the memory record log is.
 */
import { copy, paginate } from './pagination.js';
import type { CommitOutcome, DeliveryAttempt, DeliveryStatus, Monitor, MonitorChangeEntry, MonitorHistoryEntry, MonitorPatch, MonitorRunCommit, MonitorStamp, MonitorStore, RecentActivity, RecentActivityLimits, WebhookDelivery } from './monitors.js';
import type { Page, PageRequest, Timestamp } from './page-types.js';

/** History entries kept per monitor in memory (the oldest go first). */
export const MEMORY_MONITOR_HISTORY_CAPACITY = 1_000;
/** Run ids remembered per monitor in memory (to refuse a run committed twice). */
const MEMORY_RUN_IDS_KEPT = 1_000;

interface Entry {
  monitor: Monitor;
  history: MonitorHistoryEntry[];
  seq: number;
  runIds: Set<string>;
}

/** Newest first by createdAt, then id. */
function newestFirst(a: { createdAt: string; id: string }, b: { createdAt: string; id: string }): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** The memory implementation of {@link MonitorStore}. */
export class MemoryMonitorStore implements MonitorStore {
  readonly #monitors = new Map<string, Entry>();
  readonly #deliveries = new Map<string, WebhookDelivery>();
  #key: Buffer | undefined;

  async create(monitor: Monitor): Promise<'created' | 'duplicate-domain'> {
    if (this.#monitors.has(monitor.id)) throw new Error(`duplicate monitor id "${monitor.id}"`);
    for (const { monitor: m } of this.#monitors.values()) {
      if (m.organizationId === monitor.organizationId && m.domain === monitor.domain) return 'duplicate-domain';
    }
    this.#monitors.set(monitor.id, { monitor: copy(monitor), history: [], seq: 0, runIds: new Set() });
    return 'created';
  }

  #own(organizationId: string, id: string): Entry | undefined {
    const entry = this.#monitors.get(id);
    return entry && entry.monitor.organizationId === organizationId ? entry : undefined;
  }

  async get(organizationId: string, id: string): Promise<Monitor | undefined> {
    const entry = this.#own(organizationId, id);
    return entry && copy(entry.monitor);
  }

  async getByDomain(organizationId: string, domain: string): Promise<Monitor | undefined> {
    for (const entry of this.#monitors.values()) if (entry.monitor.organizationId === organizationId && entry.monitor.domain === domain) return copy(entry.monitor);
    return undefined;
  }

  async getById(id: string): Promise<Monitor | undefined> {
    const entry = this.#monitors.get(id);
    return entry && copy(entry.monitor);
  }

  async list(organizationId: string, page: PageRequest): Promise<Page<Monitor>> {
    const rows = [...this.#monitors.values()].map((e) => e.monitor).filter((m) => m.organizationId === organizationId);
    const result = paginate(rows.sort(newestFirst), page);
    return { items: result.items.map(copy), total: result.total };
  }

  async stamps(organizationId: string): Promise<MonitorStamp[]> {
    return [...this.#monitors.values()].filter((e) => e.monitor.organizationId === organizationId).map(({ monitor: m }) => ({ id: m.id, version: m.version, createdAt: m.createdAt }));
  }

  async getMany(organizationId: string, ids: readonly string[]): Promise<Monitor[]> {
    return ids.flatMap((id) => {
      const entry = this.#own(organizationId, id);
      return entry ? [copy(entry.monitor)] : [];
    });
  }

  async update(organizationId: string, id: string, patch: MonitorPatch, now: Timestamp): Promise<Monitor | undefined> {
    const entry = this.#own(organizationId, id);
    if (!entry) return undefined;
    const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
    entry.monitor = { ...entry.monitor, ...copy(defined), updatedAt: now };
    return copy(entry.monitor);
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    if (!this.#own(organizationId, id)) return false;
    this.#monitors.delete(id);
    for (const [key, delivery] of this.#deliveries) if (delivery.monitorId === id) this.#deliveries.delete(key);
    return true;
  }

  async commitRun(run: MonitorRunCommit): Promise<CommitOutcome> {
    const entry = this.#monitors.get(run.monitorId);
    if (!entry) return 'gone';
    if (entry.runIds.has(run.runId)) return 'duplicate';
    if (entry.monitor.version !== run.expectedVersion) return 'conflict';
    entry.runIds.add(run.runId);
    if (entry.runIds.size > MEMORY_RUN_IDS_KEPT) entry.runIds.delete(entry.runIds.values().next().value as string);
    for (const item of run.entries) entry.history.push({ ...copy(item), seq: ++entry.seq });
    if (entry.history.length > MEMORY_MONITOR_HISTORY_CAPACITY) entry.history.splice(0, entry.history.length - MEMORY_MONITOR_HISTORY_CAPACITY);
    entry.monitor = {
      ...entry.monitor,
      machine: copy(run.machine),
      lastResult: copy(run.lastResult),
      version: entry.monitor.version + 1,
      ...(run.nextRunAt !== undefined ? { nextRunAt: run.nextRunAt, leaseUntil: null } : {}),
    };
    for (const delivery of run.deliveries) this.#deliveries.set(delivery.id, copy(delivery));
    return 'committed';
  }

  async history(organizationId: string, monitorId: string, page: PageRequest): Promise<Page<MonitorHistoryEntry> | undefined> {
    const entry = this.#own(organizationId, monitorId);
    if (!entry) return undefined;
    const result = paginate([...entry.history].reverse(), page);
    return { items: result.items.map(copy), total: result.total };
  }

  async publicHistory(domain: string, page: PageRequest): Promise<Page<MonitorHistoryEntry> | undefined> {
    const oldest = [...this.#monitors.values()]
      .filter((e) => e.monitor.domain === domain)
      .sort((a, b) => -newestFirst(a.monitor, b.monitor))[0];
    if (!oldest) return undefined;
    return this.history(oldest.monitor.organizationId, oldest.monitor.id, page);
  }

  async due(now: Timestamp, limit: number): Promise<Monitor[]> {
    return [...this.#monitors.values()]
      .map((e) => e.monitor)
      .filter((m) => m.nextRunAt <= now && (m.leaseUntil === null || m.leaseUntil <= now))
      .sort((a, b) => (a.nextRunAt < b.nextRunAt ? -1 : a.nextRunAt > b.nextRunAt ? 1 : a.id < b.id ? -1 : 1))
      .slice(0, limit)
      .map(copy);
  }

  async lease(id: string, expectedLeaseUntil: Timestamp | null, leaseUntil: Timestamp, now: Timestamp): Promise<boolean> {
    const entry = this.#monitors.get(id);
    if (!entry || entry.monitor.leaseUntil !== expectedLeaseUntil || entry.monitor.nextRunAt > now) return false;
    entry.monitor = { ...entry.monitor, leaseUntil };
    return true;
  }

  async listAll(afterId: string, limit: number): Promise<Monitor[]> {
    return [...this.#monitors.values()]
      .map((e) => e.monitor)
      .filter((m) => m.id > afterId)
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .slice(0, limit)
      .map(copy);
  }

  async addDelivery(delivery: WebhookDelivery): Promise<void> {
    this.#deliveries.set(delivery.id, copy(delivery));
  }

  async deliveries(organizationId: string, monitorId: string, page: PageRequest): Promise<Page<WebhookDelivery> | undefined> {
    if (!this.#own(organizationId, monitorId)) return undefined;
    const rows = [...this.#deliveries.values()].filter((d) => d.monitorId === monitorId).sort(newestFirst);
    const result = paginate(rows, page);
    return { items: result.items.map(copy), total: result.total };
  }

  async recentActivity(organizationId: string, monitorId: string, limits: RecentActivityLimits): Promise<RecentActivity | undefined> {
    const entry = this.#own(organizationId, monitorId);
    if (!entry) return undefined;
    const changes = entry.history
      .slice(-limits.entries)
      .reverse()
      .filter((e): e is MonitorChangeEntry & { seq: number } => e.type === 'change')
      .slice(0, limits.changes);
    const deliveries = [...this.#deliveries.values()].filter((d) => d.monitorId === monitorId).sort(newestFirst).slice(0, limits.deliveries);
    return { changes: changes.map(copy), deliveries: deliveries.map(copy) };
  }

  async getDelivery(organizationId: string, monitorId: string, id: string): Promise<WebhookDelivery | undefined> {
    const delivery = this.#deliveries.get(id);
    return delivery && delivery.organizationId === organizationId && delivery.monitorId === monitorId ? copy(delivery) : undefined;
  }

  async claimDueDeliveries(now: Timestamp, leaseUntil: Timestamp, limit: number): Promise<WebhookDelivery[]> {
    const due = [...this.#deliveries.values()]
      .filter((d) => d.status === 'pending' && d.nextAttemptAt !== null && d.nextAttemptAt <= now)
      .sort((a, b) => ((a.nextAttemptAt ?? '') < (b.nextAttemptAt ?? '') ? -1 : 1))
      .slice(0, limit);
    for (const delivery of due) delivery.nextAttemptAt = leaseUntil;
    return due.map(copy);
  }

  async recordAttempt(id: string, attempt: DeliveryAttempt, status: DeliveryStatus, nextAttemptAt: Timestamp | null): Promise<void> {
    const delivery = this.#deliveries.get(id);
    if (!delivery) return;
    this.#deliveries.set(id, { ...delivery, attempts: [...delivery.attempts, copy(attempt)], status, nextAttemptAt });
  }

  async prune(before: Timestamp): Promise<number> {
    let removed = 0;
    for (const entry of this.#monitors.values()) {
      const kept = entry.history.filter((h) => h.at >= before);
      removed += entry.history.length - kept.length;
      entry.history = kept;
    }
    for (const [id, delivery] of this.#deliveries) {
      if (delivery.status !== 'pending' && delivery.createdAt < before) {
        this.#deliveries.delete(id);
        removed++;
      }
    }
    return removed;
  }

  async serverKey(create: () => Buffer): Promise<Buffer> {
    this.#key ??= create();
    return Buffer.from(this.#key);
  }
}
