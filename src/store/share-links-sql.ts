/**
 * Share links in SQL (SQLite or PostgreSQL) on Kysely, and the migration `0012_share_links`. The
 * token's hash is unique and indexed (a visit finds its link in one lookup); the token is never stored.
 */
import type { Kysely } from 'kysely';
import { createTable } from './sql-tables.js';
import type { MigrationFactory } from './migration-types.js';
import type { ShareLink, ShareLinkStore } from './share-links.js';
import { fromColumns, toColumns } from './sql-values.js';

/** The share-link table, as Kysely sees it. */
export interface ShareLinkTables {
  share_links: {
    id: string;
    token_hash: string;
    organization_id: string;
    domain: string;
    label: string;
    created_at: string;
    created_by: string;
    expires_at: string;
    revoked_at: string | null;
  };
}

/** The migration `0012_share_links` (forward-only). */
export const createShareLinkTables: MigrationFactory = (context) => ({
  async up(db: Kysely<any>): Promise<void> {
    await createTable(db, context, 'share_links', {
      id: 'key', token_hash: { type: 'text', unique: true }, organization_id: 'text', domain: 'text', label: 'text', created_at: 'text', created_by: 'text',
      expires_at: 'text', revoked_at: 'text?',
    }).execute();
    await db.schema.createIndex('share_links_by_domain').on('share_links').columns(['organization_id', 'domain', 'created_at']).execute();
  },
});

type Row = ShareLinkTables['share_links'];
/** The fields of a link its row holds as they are. */
const LINK_FIELDS = ['id', 'tokenHash', 'organizationId', 'domain', 'label', 'createdAt', 'createdBy', 'expiresAt'] as const;
const toLink = (r: Row): ShareLink => ({ ...fromColumns(r, LINK_FIELDS), revokedAt: r.revoked_at ?? null });

/** The SQL implementation of {@link ShareLinkStore}. */
export class SqlShareLinkStore implements ShareLinkStore {
  readonly #db: Kysely<ShareLinkTables>;

  constructor(db: Kysely<any>) {
    this.#db = db as Kysely<ShareLinkTables>;
  }

  async create(link: ShareLink): Promise<void> {
    await this.#db.insertInto('share_links').values({ ...toColumns(link, LINK_FIELDS), revoked_at: link.revokedAt }).execute();
  }

  async byTokenHash(tokenHash: string): Promise<ShareLink | undefined> {
    const row = await this.#db.selectFrom('share_links').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
    return row && toLink(row);
  }

  async list(organizationId: string, domain: string): Promise<ShareLink[]> {
    const rows = await this.#db.selectFrom('share_links').selectAll().where('organization_id', '=', organizationId).where('domain', '=', domain).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
    return rows.map(toLink);
  }

  async revoke(organizationId: string, id: string, at: string): Promise<boolean> {
    const result = await this.#db.updateTable('share_links').set({ revoked_at: at }).where('id', '=', id).where('organization_id', '=', organizationId).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
}
