import type { Kysely } from 'kysely';
import { withEventsInOrder, type EmailLog, type EmailLogStore } from './email-logs.js';
import type { Page, PageRequest } from './page-types.js';
import type { StoreDatabase } from './sql-schema.js';
import { count, json, offsetOf, parse } from './sql-values.js';

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
    const [rows, total] = await Promise.all([
      this.db
        .selectFrom('email_logs')
        .select('document')
        .where('organization_id', '=', organizationId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(page.limit)
        .offset(offsetOf(page))
        .execute(),
      this.db.selectFrom('email_logs').select((eb) => eb.fn.countAll().as('n')).where('organization_id', '=', organizationId).executeTakeFirst(),
    ]);
    return { items: rows.map((r) => withEventsInOrder(parse<EmailLog>(r.document))), total: count(total?.n) };
  }
}
