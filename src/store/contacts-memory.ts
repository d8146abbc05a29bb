import { subscriptionOf, type Contact, type ContactChannel, type ContactGroup, type ContactPage, type ContactQuery, type ContactStore, type ContactView } from './contacts.js';
import { copy, newestFirst, ownedBy, paginate } from './pagination.js';

/** Contacts, groups and channels held in memory. */
export class MemoryContactStore implements ContactStore {
  readonly #contacts = new Map<string, Contact>();
  readonly #groups = new Map<string, ContactGroup>();
  readonly #channels = new Map<string, ContactChannel>();

  async addGroup(group: ContactGroup): Promise<void> {
    this.#groups.set(group.id, { ...group });
  }

  async addChannel(channel: ContactChannel): Promise<void> {
    this.#channels.set(channel.id, { ...channel });
  }

  async addContact(contact: Contact): Promise<void> {
    this.#contacts.set(contact.id, copy(contact));
  }

  async list(organizationId: string, query: ContactQuery): Promise<ContactPage> {
    const all = ownedBy(this.#contacts.values(), organizationId);
    const search = query.search?.toLowerCase();
    const matching = all
      .filter((c) => (query.status === undefined || c.status === query.status) && (search === undefined || c.email.toLowerCase().includes(search)))
      .sort(newestFirst);
    const page = paginate(matching, query);
    const channels = ownedBy(this.#channels.values(), organizationId).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return {
      items: page.items.map((c) => this.#view(c, channels)),
      total: page.total,
      // Organisation-wide: the filters of the query do not apply (spec: Pagination rule 7).
      totalContacts: all.length,
      subscribedContacts: all.filter((c) => c.status === 'subscribed').length,
      unsubscribedContacts: all.filter((c) => c.status === 'unsubscribed').length,
    };
  }

  #view(contact: Contact, channels: ContactChannel[]): ContactView {
    const { groupIds, enrolments, organizationId, ...rest } = copy(contact);
    return {
      ...rest,
      groups: groupIds.flatMap((id) => {
        const group = this.#groups.get(id);
        return group && group.organizationId === organizationId ? [{ id: group.id, name: group.name }] : [];
      }),
      // Every channel of the organisation: an explicit enrolment wins, otherwise the channel's default.
      channels: channels.map((ch) => ({ id: ch.id, name: ch.name, subscription: subscriptionOf(enrolments[ch.id], ch.defaultSubscription) })),
    };
  }
}
