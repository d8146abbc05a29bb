import type { Kysely } from 'kysely';
import { withEventsInOrder, type EmailLog, type EmailLogStore } from './email-logs.js';
import type { Page, PageRequest } from './page-types.js';
import type { StoreDatabase } from './sql-schema.js';
import { json, newestFirstPage, parse } from './sql-values.js';

/** Email logs: one JSON document per log, indexed by organisation and age. */
export class SqlEmailLogStore implements EmailLogStore {
  constructor(private readonly db: Kysely<StoreDatabase>) {}

  async add(log: EmailLog): Promise<void> {
    const row = { id: log.id, organization_id: log.organizationId, created_at: log.createdAt, document: json(log) };
    await this.db
      .insertInto('email_logs')
      .values(row)
      .onConflict((oc) => oc.column('id').doUpdateSet({ organization_id: row.organization_id, created_at: row.created_at, document: row.document }))
      .execute();
  }

  async get(organizationId: string, id: string): Promise<EmailLog | undefined> {
    const row = await this.db.selectFrom('email_logs').select('document').where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst();
    return row && withEventsInOrder(parse<EmailLog>(row.document));
  }

  async list(organizationId: string, page: PageRequest): Promise<Page<EmailLog>> {
    const matching = this.db.selectFrom('email_logs').where('organization_id', '=', organizationId);
    return newestFirstPage(matching, page, (r: { document: string }) => withEventsInOrder(parse<EmailLog>(r.document)), ['document']);
  }
}
