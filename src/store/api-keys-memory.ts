import { digestsEqual, type ApiKeyRecord, type ApiKeyStore, type Organization } from './api-keys.js';

/** Organisations and keys held in memory. Digests are compared against every key, without early exit. */
export class MemoryApiKeyStore implements ApiKeyStore {
  readonly #organizations = new Map<string, Organization>();
  readonly #keys: ApiKeyRecord[] = [];

  async addOrganization(organization: Organization): Promise<void> {
    this.#organizations.set(organization.id, { ...organization });
  }

  async getOrganization(id: string): Promise<Organization | undefined> {
    const found = this.#organizations.get(id);
    return found && { ...found };
  }

  /** How many organisations are stored. */
  get organizationCount(): number {
    return this.#organizations.size;
  }

  /** The ids of every organisation, sorted (report routing, src/store/reports-memory.ts). */
  organizationIds(): string[] {
    return [...this.#organizations.keys()].sort();
  }

  async addKey(key: ApiKeyRecord): Promise<void> {
    if (this.#keys.some((k) => k.id === key.id)) throw new Error(`duplicate API key id "${key.id}"`);
    this.#keys.push({ ...key, sha256: Buffer.from(key.sha256), owner: { ...key.owner } });
  }

  async findByDigest(sha256: Buffer): Promise<ApiKeyRecord | undefined> {
    let match: ApiKeyRecord | undefined;
    // Every stored digest is compared, so the time taken does not tell which key (if any) was close.
    for (const key of this.#keys) {
      if (digestsEqual(key.sha256, sha256) && match === undefined) match = key;
    }
    return match && { ...match, sha256: Buffer.from(match.sha256), owner: { ...match.owner } };
  }

  async hasAnyKey(): Promise<boolean> {
    return this.#keys.length > 0;
  }

  async removeKey(organizationId: string, id: string): Promise<boolean> {
    const index = this.#keys.findIndex((k) => k.id === id && k.organizationId === organizationId);
    if (index === -1) return false;
    this.#keys.splice(index, 1);
    return true;
  }
}
