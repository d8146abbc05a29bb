import type { Kysely } from 'kysely';
import { digestsEqual, type ApiKeyRecord, type ApiKeyStore, type KeyOwner, type Organization } from './api-keys.js';
import type { StoreDatabase } from './sql-schema.js';
import { json, parse, upsertById } from './sql-values.js';

/** Organisations and keys. Keys are found by their SHA-256 digest (indexed) and compared in constant time. */
export class SqlApiKeyStore implements ApiKeyStore {
  constructor(private readonly db: Kysely<StoreDatabase>) {}

  async addOrganization(organization: Organization): Promise<void> {
    await upsertById(this.db, 'organizations', { id: organization.id, name: organization.name });
  }

  async getOrganization(id: string): Promise<Organization | undefined> {
    return this.db.selectFrom('organizations').select(['id', 'name']).where('id', '=', id).executeTakeFirst();
  }

  async addKey(key: ApiKeyRecord): Promise<void> {
    const existing = await this.db.selectFrom('api_keys').select('id').where('id', '=', key.id).executeTakeFirst();
    if (existing) throw new Error(`duplicate API key id "${key.id}"`);
    await this.db
      .insertInto('api_keys')
      .values({ id: key.id, organization_id: key.organizationId, sha256: Buffer.from(key.sha256), owner: json(key.owner) })
      .execute();
  }

  async findByDigest(sha256: Buffer): Promise<ApiKeyRecord | undefined> {
    // Looked up by the digest of the secret, not the secret: where an index lookup stops says
    // nothing an attacker can use, since they cannot choose digest prefixes. The match is then
    // confirmed in constant time.
    const row = await this.db.selectFrom('api_keys').selectAll().where('sha256', '=', Buffer.from(sha256)).executeTakeFirst();
    if (!row || !digestsEqual(Buffer.from(row.sha256), sha256)) return undefined;
    return { id: row.id, organizationId: row.organization_id, sha256: Buffer.from(row.sha256), owner: parse<KeyOwner>(row.owner) };
  }

  async hasAnyKey(): Promise<boolean> {
    return (await this.db.selectFrom('api_keys').select('id').limit(1).executeTakeFirst()) !== undefined;
  }

  async removeKey(organizationId: string, id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('api_keys').where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
