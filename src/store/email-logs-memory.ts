import { withEventsInOrder, type EmailLog, type EmailLogStore } from './email-logs.js';
import type { Page, PageRequest } from './page-types.js';
import { copy, newestFirst, owned, ownedBy, paginate } from './pagination.js';

/** Email logs held in memory. */
export class MemoryEmailLogStore implements EmailLogStore {
  readonly #logs = new Map<string, EmailLog>();

  async add(log: EmailLog): Promise<void> {
    this.#logs.set(log.id, copy(log));
  }

  async get(organizationId: string, id: string): Promise<EmailLog | undefined> {
    const log = owned(this.#logs.get(id), organizationId);
    return log && withEventsInOrder(copy(log));
  }

  async list(organizationId: string, page: PageRequest): Promise<Page<EmailLog>> {
    const rows = ownedBy(this.#logs.values(), organizationId).sort(newestFirst);
    const result = paginate(rows, page);
    return { items: result.items.map((log) => withEventsInOrder(copy(log))), total: result.total };
  }
}
