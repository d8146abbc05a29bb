import { withEventsInOrder, type EmailLog, type EmailLogStore } from './email-logs.js';
import type { Page, PageRequest } from './page-types.js';
import { copy, newestFirst, paginate } from './pagination.js';

/** Email logs held in memory. */
export class MemoryEmailLogStore implements EmailLogStore {
  readonly #logs = new Map<string, EmailLog>();

  async add(log: EmailLog): Promise<void> {
    this.#logs.set(log.id, copy(log));
  }

  async get(organizationId: string, id: string): Promise<EmailLog | undefined> {
    const log = this.#logs.get(id);
    if (!log || log.organizationId !== organizationId) return undefined;
    return withEventsInOrder(copy(log));
  }

  async list(organizationId: string, page: PageRequest): Promise<Page<EmailLog>> {
    const rows = [...this.#logs.values()].filter((log) => log.organizationId === organizationId).sort(newestFirst);
    const result = paginate(rows, page);
    return { items: result.items.map((log) => withEventsInOrder(copy(log))), total: result.total };
  }
}
