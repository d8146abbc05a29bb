import { sql, type Kysely, type Selectable } from 'kysely';
import { subscriptionOf, type ChannelSubscription, type Contact, type ContactChannel, type ContactGroup, type ContactPage, type ContactQuery, type ContactStatus, type ContactStore } from './contacts.js';
import type { ContactsTable, StoreDatabase } from './sql-schema.js';
import { count, fromColumns, json, newestFirstPage, parse, toColumns, upsertById, type SqlDialectTraits } from './sql-values.js';

/** The fields of a contact its row holds as they are (and the list shows; the organisation aside). */
const CONTACT_FIELDS = ['id', 'email', 'firstName', 'lastName', 'status', 'suppressionReason', 'suppressedAt', 'createdAt', 'updatedAt'] as const;

/** Contacts, groups and channels. */
export class SqlContactStore implements ContactStore {
  constructor(
    private readonly db: Kysely<StoreDatabase>,
    private readonly traits: SqlDialectTraits,
  ) {}

  async addGroup(group: ContactGroup): Promise<void> {
    await upsertById(this.db, 'contact_groups', toColumns(group, ['id', 'organizationId', 'name']));
  }

  async addChannel(channel: ContactChannel): Promise<void> {
    await upsertById(this.db, 'contact_channels', toColumns(channel, ['id', 'organizationId', 'name', 'defaultSubscription']));
  }

  async addContact(contact: Contact): Promise<void> {
    await upsertById(this.db, 'contacts', {
      ...toColumns(contact, CONTACT_FIELDS),
      organization_id: contact.organizationId,
      email_lower: contact.email.toLowerCase(),
      properties: json(contact.properties),
      group_ids: json(contact.groupIds),
      enrolments: json(contact.enrolments),
    });
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
          ...fromColumns(c, CONTACT_FIELDS),
          status: c.status as ContactStatus,
          properties: parse<Record<string, string>>(c.properties),
          groups: groupIds.flatMap((id) => {
            const name = groupNames.get(id);
            return name === undefined ? [] : [{ id, name }];
          }),
          // Every channel of the organisation: an explicit enrolment wins, otherwise the channel's default.
          channels: channels.map((ch) => ({ id: ch.id, name: ch.name, subscription: subscriptionOf(enrolments[ch.id], ch.default_subscription as ChannelSubscription) })),
        };
      }),
      total,
      totalContacts: count(counts?.all),
      subscribedContacts: count(counts?.subscribed),
      unsubscribedContacts: count(counts?.unsubscribed),
    };
  }
}
