/**
 * Remembered lookalikes held in memory: for tests and for `serve` without a database.
 */
import { copy, paginate } from './pagination.js';
import type { Page, PageRequest } from './page-types.js';
import { compareRemembered, type RememberedLookalike, type RememberedLookalikeStore } from './remembered-lookalikes.js';

/** The memory implementation of {@link RememberedLookalikeStore}. */
export class MemoryRememberedLookalikeStore implements RememberedLookalikeStore {
  /** monitor id → domain → entry. */
  readonly #byMonitor = new Map<string, Map<string, RememberedLookalike>>();

  async all(monitorId: string): Promise<RememberedLookalike[]> {
    return [...(this.#byMonitor.get(monitorId)?.values() ?? [])].map(copy);
  }

  async save(entries: RememberedLookalike[]): Promise<void> {
    for (const entry of entries) {
      let names = this.#byMonitor.get(entry.monitorId);
      if (!names) this.#byMonitor.set(entry.monitorId, (names = new Map()));
      // "Ours" is a person's choice: a run that read the entry before it was set does not undo it.
      const stored = names.get(entry.domain);
      names.set(entry.domain, { ...copy(entry), ours: stored ? stored.ours : entry.ours });
    }
  }

  async list(organizationId: string, monitorId: string, page: PageRequest): Promise<Page<RememberedLookalike>> {
    const rows = [...(this.#byMonitor.get(monitorId)?.values() ?? [])].filter((e) => e.organizationId === organizationId && e.domain !== '').sort(compareRemembered);
    const result = paginate(rows, page);
    return { items: result.items.map(copy), total: result.total };
  }

  async setOurs(organizationId: string, monitorId: string, domain: string, ours: boolean): Promise<RememberedLookalike | undefined> {
    const entry = this.#byMonitor.get(monitorId)?.get(domain);
    if (!entry || entry.organizationId !== organizationId) return undefined;
    entry.ours = ours;
    return copy(entry);
  }

  async forget(monitorId: string): Promise<void> {
    this.#byMonitor.delete(monitorId);
  }
}
