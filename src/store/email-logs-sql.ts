import type { Kysely } from 'kysely';
import { withEventsInOrder, type EmailLog, type EmailLogStore } from './email-logs.js';
import type { Page, PageRequest } from './page-types.js';
import type { StoreDatabase } from './sql-schema.js';
import { json, newestFirstPage, parse, toColumns, upsertById } from './sql-values.js';

/** Email logs: one JSON document per log, indexed by organisation and age. */
export class SqlEmailLogStore implements EmailLogStore {
  constructor(private readonly db: Kysely<StoreDatabase>) {}

  async add(log: EmailLog): Promise<void> {
    await upsertById(this.db, 'email_logs', { ...toColumns(log, ['id', 'organizationId', 'createdAt']), document: json(log) });
  }

  async get(organizationId: string, id: string): Promise<EmailLog | undefined> {
    const row = await this.db.selectFrom('email_logs').select('document').where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst();
    return row && withEventsInOrder(parse<EmailLog>(row.document));
  }

  async list(organizationId: string, page: PageRequest): Promise<Page<EmailLog>> {
    const matching = this.db.selectFrom('email_logs').where('organization_id', '=', organizationId);
    return newestFirstPage(matching, page, (r: { document: string }) => withEventsInOrder(parse<EmailLog>(r.document)), { select: ['document'] });
  }
}
