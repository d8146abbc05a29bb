/** Email logs: the log of each sent email with its events, and their store. */
import type { Page, PageRequest, Timestamp } from './page-types.js';

/** One entry of an email's lifecycle (spec: "Email event"). */
export interface EmailEvent {
  id: string;
  type: string;
  metadata: Record<string, unknown> | null;
  createdAt: Timestamp;
}

/** The log of one sent email (spec: "Email log"). */
export interface EmailLog {
  id: string;
  messageId: string;
  organizationId: string;
  domainId: string;
  fromEmail: string;
  fromName: string | null;
  toEmails: string[];
  ccEmails: string[];
  bccEmails: string[];
  replyTo: string | null;
  subject: string;
  textBody: string | null;
  htmlBody: string | null;
  status: string;
  errorMessage: string | null;
  provider: string | null;
  size: number;
  headers: Record<string, string>;
  sentAt: Timestamp | null;
  deliveredAt: Timestamp | null;
  failedAt: Timestamp | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  /** In lifecycle order: `createdAt` ascending. */
  events: EmailEvent[];
}

/** Email logs. */
export interface EmailLogStore {
  add(log: EmailLog): Promise<void>;
  /** The log with its events in lifecycle order, or undefined (unknown id or another organisation's). */
  get(organizationId: string, id: string): Promise<EmailLog | undefined>;
  /** Newest first (`createdAt` descending). */
  list(organizationId: string, page: PageRequest): Promise<Page<EmailLog>>;
}

/** Events in lifecycle order: `createdAt` ascending, ties kept in the order they were stored. Sorts in place. */
export function withEventsInOrder(log: EmailLog): EmailLog {
  log.events = log.events
    .map((event, index) => ({ event, index }))
    .sort((a, b) => (a.event.createdAt < b.event.createdAt ? -1 : a.event.createdAt > b.event.createdAt ? 1 : a.index - b.index))
    .map(({ event }) => event);
  return log;
}
