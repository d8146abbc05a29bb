/** Contacts with their groups and channels, and their store. */
import type { Page, PageRequest, Timestamp } from './page-types.js';

/** Contact status (spec: Contact `status`). */
export type ContactStatus = 'subscribed' | 'unsubscribed' | 'blocked';

/** A channel subscription as the API shows it. */
export type ChannelSubscription = 'opt_in' | 'opt_out';

/** A contact group. */
export interface ContactGroup {
  id: string;
  organizationId: string;
  name: string;
}

/** A channel (a kind of mail a contact may subscribe to), with the subscription of contacts not enrolled. */
export interface ContactChannel {
  id: string;
  organizationId: string;
  name: string;
  defaultSubscription: ChannelSubscription;
}

/** A contact as stored: group ids and explicit channel enrolments, resolved into names on read. */
export interface Contact {
  id: string;
  organizationId: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  status: ContactStatus;
  properties: Record<string, string>;
  groupIds: string[];
  /** Explicit enrolments by channel id; a channel not listed gives its default subscription. */
  enrolments: Record<string, 'enrolled' | 'unenrolled'>;
  suppressionReason: string | null;
  suppressedAt: Timestamp | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

/** A contact as the list shows it: groups and every channel of the organisation resolved. */
export interface ContactView extends Omit<Contact, 'groupIds' | 'enrolments' | 'organizationId'> {
  groups: { id: string; name: string }[];
  channels: { id: string; name: string; subscription: ChannelSubscription }[];
}


/** The contact list query: pagination plus filters. */
export interface ContactQuery extends PageRequest {
  /** Case-insensitive substring of the email. */
  search?: string;
  status?: ContactStatus;
}

/** One page of contacts plus the organisation-wide counts (spec: Pagination rule 7). */
export interface ContactPage extends Page<ContactView> {
  totalContacts: number;
  subscribedContacts: number;
  unsubscribedContacts: number;
}

/** Contacts with their groups and channels. */
export interface ContactStore {
  addGroup(group: ContactGroup): Promise<void>;
  addChannel(channel: ContactChannel): Promise<void>;
  addContact(contact: Contact): Promise<void>;
  /** Filtered, newest first, with the organisation-wide unfiltered counts. */
  list(organizationId: string, query: ContactQuery): Promise<ContactPage>;
}

/** A contact's subscription to a channel: an explicit enrolment wins, otherwise the channel's default. */
export function subscriptionOf(enrolment: Contact['enrolments'][string] | undefined, channelDefault: ChannelSubscription): ChannelSubscription {
  return enrolment === 'enrolled' ? 'opt_in' : enrolment === 'unenrolled' ? 'opt_out' : channelDefault;
}
