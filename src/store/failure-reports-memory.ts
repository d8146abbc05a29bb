/**
 * Failure reports held in memory: for tests and for `serve` without a database (the newest
 * MEMORY_FAILURE_REPORT_CAPACITY kept).
 */
import { paginate } from './pagination.js';
import type { Page, PageRequest, Timestamp } from './page-types.js';
import { DEFAULT_FAILURE_REPORT_SETTINGS, type FailureReport, type FailureReportSettings, type FailureReportStore } from './failure-reports.js';

/** Failure reports kept in memory (the oldest go first). */
export const MEMORY_FAILURE_REPORT_CAPACITY = 10_000;

const copy = <T>(value: T): T => structuredClone(value);
const newestFirst = (a: FailureReport, b: FailureReport): number => (a.receivedAt !== b.receivedAt ? (a.receivedAt < b.receivedAt ? 1 : -1) : a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/** The memory implementation of {@link FailureReportStore}. */
export class MemoryFailureReportStore implements FailureReportStore {
  readonly #reports: FailureReport[] = [];
  readonly #settings = new Map<string, FailureReportSettings>();
  readonly #salts = new Map<string, string>();

  async add(report: FailureReport): Promise<'stored' | 'duplicate'> {
    if (this.#reports.some((r) => r.organizationId === report.organizationId && r.identity === report.identity)) return 'duplicate';
    this.#reports.push(copy(report));
    if (this.#reports.length > MEMORY_FAILURE_REPORT_CAPACITY) this.#reports.shift();
    return 'stored';
  }

  async forDomain(organizationId: string, domain: string, since: Timestamp, limit: number): Promise<FailureReport[]> {
    return this.#reports.filter((r) => r.organizationId === organizationId && r.domain === domain && r.receivedAt >= since).sort(newestFirst).slice(0, limit).map(copy);
  }

  async list(organizationId: string, page: PageRequest): Promise<Page<FailureReport>> {
    const result = paginate(this.#reports.filter((r) => r.organizationId === organizationId).sort(newestFirst), page);
    return { items: result.items.map(copy), total: result.total };
  }

  async get(organizationId: string, id: string): Promise<FailureReport | undefined> {
    const found = this.#reports.find((r) => r.id === id && r.organizationId === organizationId);
    return found && copy(found);
  }

  async settings(organizationId: string): Promise<FailureReportSettings> {
    return { ...(this.#settings.get(organizationId) ?? DEFAULT_FAILURE_REPORT_SETTINGS) };
  }

  async setSettings(organizationId: string, settings: FailureReportSettings): Promise<void> {
    this.#settings.set(organizationId, { hashLocalParts: settings.hashLocalParts });
  }

  async salt(organizationId: string, create: () => string): Promise<string> {
    let salt = this.#salts.get(organizationId);
    if (salt === undefined) this.#salts.set(organizationId, (salt = create()));
    return salt;
  }
}
