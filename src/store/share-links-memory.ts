/** Share links in memory (tests, `serve` without a database). */
import type { ShareLink, ShareLinkStore } from './share-links.js';

/** The in-memory {@link ShareLinkStore}. */
export class MemoryShareLinkStore implements ShareLinkStore {
  readonly #links = new Map<string, ShareLink>();

  async create(link: ShareLink): Promise<void> {
    // As the SQL stores' unique index: one link per token hash.
    for (const other of this.#links.values()) if (other.tokenHash === link.tokenHash) throw new Error('a share link with this token hash exists');
    this.#links.set(link.id, { ...link });
  }

  async byTokenHash(tokenHash: string): Promise<ShareLink | undefined> {
    for (const link of this.#links.values()) if (link.tokenHash === tokenHash) return { ...link };
    return undefined;
  }

  async list(organizationId: string, domain: string): Promise<ShareLink[]> {
    return [...this.#links.values()]
      .filter((l) => l.organizationId === organizationId && l.domain === domain)
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id))
      .map((l) => ({ ...l }));
  }

  async revoke(organizationId: string, id: string, at: string): Promise<boolean> {
    const link = this.#links.get(id);
    if (!link || link.organizationId !== organizationId || link.revokedAt !== null) return false;
    link.revokedAt = at;
    return true;
  }
}
