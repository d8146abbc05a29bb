import { sql, type Kysely, type Selectable } from 'kysely';
import type { ChannelSubscription, Contact, ContactChannel, ContactGroup, ContactPage, ContactQuery, ContactStatus, ContactStore } from './contacts.js';
import type { ContactsTable, StoreDatabase } from './sql-schema.js';
import { count, json, newestFirstPage, parse, type SqlDialectTraits } from './sql-values.js';

/** Contacts, groups and channels. */
export class SqlContactStore implements ContactStore {
  constructor(
    private readonly db: Kysely<StoreDatabase>,
    private readonly traits: SqlDialectTraits,
  ) {}

  async addGroup(group: ContactGroup): Promise<void> {
    await this.db
      .insertInto('contact_groups')
      .values({ id: group.id, organization_id: group.organizationId, name: group.name })
      .onConflict((oc) => oc.column('id').doUpdateSet({ organization_id: group.organizationId, name: group.name }))
      .execute();
  }

  async addChannel(channel: ContactChannel): Promise<void> {
    const row = { id: channel.id, organization_id: channel.organizationId, name: channel.name, default_subscription: channel.defaultSubscription };
    const { id: _id, ...update } = row;
    await this.db.insertInto('contact_channels').values(row).onConflict((oc) => oc.column('id').doUpdateSet(update)).execute();
  }

  async addContact(contact: Contact): Promise<void> {
    const row = {
      id: contact.id,
      organization_id: contact.organizationId,
      email: contact.email,
      email_lower: contact.email.toLowerCase(),
      first_name: contact.firstName,
      last_name: contact.lastName,
      status: contact.status,
      properties: json(contact.properties),
      group_ids: json(contact.groupIds),
      enrolments: json(contact.enrolments),
      suppression_reason: contact.suppressionReason,
      suppressed_at: contact.suppressedAt,
      created_at: contact.createdAt,
      updated_at: contact.updatedAt,
    };
    const { id: _id, ...update } = row;
    await this.db.insertInto('contacts').values(row).onConflict((oc) => oc.column('id').doUpdateSet(update)).execute();
  }

  async list(organizationId: string, query: ContactQuery): Promise<ContactPage> {
    const search = query.search?.toLowerCase();
    // Case-insensitive substring without LIKE, so '%' and '_' in the search are plain characters.
    const position = this.traits.dialect === 'postgres' ? 'strpos' : 'instr';
    const matching = this.db
      .selectFrom('contacts')
      .where('organization_id', '=', organizationId)
      .$if(query.status !== undefined, (q) => q.where('status', '=', query.status as ContactStatus))
      .$if(search !== undefined, (q) => q.where(sql<number>`${sql.raw(position)}(email_lower, ${search})`, '>', 0));
    const [{ items: rows, total }, counts, groups, channels] = await Promise.all([
      newestFirstPage(matching, query, (row: Selectable<ContactsTable>) => row),
      // Organisation-wide: the filters of the query do not apply (spec: Pagination rule 7).
      this.db
        .selectFrom('contacts')
        .where('organization_id', '=', organizationId)
        .select((eb) => [
          eb.fn.countAll().as('all'),
          eb.fn.sum<number>(eb.case().when('status', '=', 'subscribed').then(1).else(0).end()).as('subscribed'),
          eb.fn.sum<number>(eb.case().when('status', '=', 'unsubscribed').then(1).else(0).end()).as('unsubscribed'),
        ])
        .executeTakeFirst(),
      this.db.selectFrom('contact_groups').select(['id', 'name']).where('organization_id', '=', organizationId).execute(),
      this.db.selectFrom('contact_channels').selectAll().where('organization_id', '=', organizationId).orderBy('id').execute(),
    ]);
    const groupNames = new Map(groups.map((g) => [g.id, g.name]));
    return {
      items: rows.map((c) => {
        const groupIds = parse<string[]>(c.group_ids);
        const enrolments = parse<Contact['enrolments']>(c.enrolments);
        return {
          id: c.id,
          email: c.email,
          firstName: c.first_name,
          lastName: c.last_name,
          status: c.status as ContactStatus,
          properties: parse<Record<string, string>>(c.properties),
          suppressionReason: c.suppression_reason,
          suppressedAt: c.suppressed_at,
          createdAt: c.created_at,
          updatedAt: c.updated_at,
          groups: groupIds.flatMap((id) => {
            const name = groupNames.get(id);
            return name === undefined ? [] : [{ id, name }];
          }),
          // Every channel of the organisation: an explicit enrolment wins, otherwise the channel's default.
          channels: channels.map((ch) => {
            const enrolment = enrolments[ch.id];
            const subscription: ChannelSubscription =
              enrolment === 'enrolled' ? 'opt_in' : enrolment === 'unenrolled' ? 'opt_out' : (ch.default_subscription as ChannelSubscription);
            return { id: ch.id, name: ch.name, subscription };
          }),
        };
      }),
      total,
      totalContacts: count(counts?.all),
      subscribedContacts: count(counts?.subscribed),
      unsubscribedContacts: count(counts?.unsubscribed),
    };
  }
}
