import type { Domain, DomainPatch, DomainStore } from './domains.js';
import type { Page, PageRequest, Timestamp } from './page-types.js';
import { copy, newestFirst, paginate } from './pagination.js';

/** Domains held in memory. */
export class MemoryDomainStore implements DomainStore {
  readonly #domains = new Map<string, Domain>();

  async add(domain: Domain): Promise<void> {
    this.#domains.set(domain.id, copy(domain));
  }

  /** Organisations with a live (not deleted) domain named `name`, sorted (report routing). */
  organizationsWithDomain(name: string): string[] {
    const ids = new Set<string>();
    for (const d of this.#domains.values()) if (d.domain === name && d.deletedAt === null) ids.add(d.organizationId);
    return [...ids].sort();
  }

  #live(organizationId: string, id: string): Domain | undefined {
    const domain = this.#domains.get(id);
    if (!domain || domain.organizationId !== organizationId || domain.deletedAt !== null) return undefined;
    return domain;
  }

  async get(organizationId: string, id: string): Promise<Domain | undefined> {
    const domain = this.#live(organizationId, id);
    return domain && withLiveRecords(copy(domain));
  }

  async list(organizationId: string, page: PageRequest): Promise<Page<Domain>> {
    const rows = [...this.#domains.values()]
      .filter((d) => d.organizationId === organizationId && d.deletedAt === null)
      .sort(newestFirst);
    const result = paginate(rows, page);
    return { items: result.items.map((d) => withLiveRecords(copy(d))), total: result.total };
  }

  async update(organizationId: string, id: string, patch: DomainPatch, now: Timestamp): Promise<Domain | undefined> {
    const domain = this.#live(organizationId, id);
    if (!domain) return undefined;
    // Only the fields given change; `updatedAt` is always set.
    if (patch.isClickTrackingEnabled !== undefined) domain.isClickTrackingEnabled = patch.isClickTrackingEnabled;
    if (patch.isOpenTrackingEnabled !== undefined) domain.isOpenTrackingEnabled = patch.isOpenTrackingEnabled;
    if (patch.isSendingEmailEnabled !== undefined) domain.isSendingEmailEnabled = patch.isSendingEmailEnabled;
    if (patch.isReceivingEmailEnabled !== undefined) domain.isReceivingEmailEnabled = patch.isReceivingEmailEnabled;
    if (patch.tls !== undefined) domain.tls = patch.tls;
    domain.updatedAt = now;
    return withLiveRecords(copy(domain));
  }

  async softDelete(organizationId: string, id: string, now: Timestamp): Promise<Domain | undefined> {
    const domain = this.#live(organizationId, id);
    if (!domain) return undefined;
    const removed = domain.dnsRecords.filter((r) => r.deletedAt === null);
    for (const record of removed) {
      record.deletedAt = now;
      record.updatedAt = now;
    }
    domain.deletedAt = now;
    domain.updatedAt = now;
    return { ...copy(domain), dnsRecords: copy(removed) };
  }
}

function withLiveRecords(domain: Domain): Domain {
  domain.dnsRecords = domain.dnsRecords.filter((r) => r.deletedAt === null);
  return domain;
}
