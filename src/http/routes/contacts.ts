/**
 * `GET /api/contacts/list` and `GET /api/contacts/v1/list` (the spec shows both): contacts newest
 * first, filtered by `search` (case-insensitive substring of the email) and `status`; `total`
 * counts the filtered rows, the three organisation-wide counts ignore the filters. Both paths share
 * one rate-limit counter.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { onRequestHookHandler } from 'fastify';
import { Type } from 'typebox';
import type { ContactView, Stores } from '../../store/types.js';
import { API_SECURITY, COMMON_ERROR_STATUSES, CONTACT_LIST_DEFAULT_LIMIT, ContactSchema, errorResponses, pageQuery, type ContactBody } from '../schemas.js';
import { principalOf } from './logs.js';

/** Longest `search` accepted. */
export const CONTACT_SEARCH_MAX_LENGTH = 255;

/** Spec: query of "List contacts". */
export const ContactListQuerySchema = Type.Object(
  {
    ...pageQuery(CONTACT_LIST_DEFAULT_LIMIT),
    search: Type.Optional(Type.String({ maxLength: CONTACT_SEARCH_MAX_LENGTH, description: 'Case-insensitive part of the email' })),
    status: Type.Optional(Type.Enum(['subscribed', 'unsubscribed', 'blocked'], { description: 'Only contacts with this status' })),
  },
  { additionalProperties: false },
);

const ContactListSchema = Type.Object({
  object: Type.Literal('contact'),
  contacts: Type.Array(ContactSchema),
  total: Type.Integer({ description: 'Contacts that match the query' }),
  page: Type.Integer(),
  limit: Type.Integer(),
  totalContacts: Type.Integer({ description: 'Contacts in the organisation (ignores filters)' }),
  subscribedContacts: Type.Integer({ description: 'Contacts with status subscribed (ignores filters)' }),
  unsubscribedContacts: Type.Integer({ description: 'Contacts with status unsubscribed (ignores filters)' }),
  event: Type.Literal('contact.list'),
});

/** A contact as the API shows it. */
export function contactBody(contact: ContactView): ContactBody {
  return {
    object: 'contact',
    id: contact.id,
    email: contact.email,
    firstName: contact.firstName,
    lastName: contact.lastName,
    status: contact.status,
    properties: contact.properties,
    groups: contact.groups,
    channels: contact.channels,
    suppressionReason: contact.suppressionReason,
    suppressedAt: contact.suppressedAt,
    createdAt: contact.createdAt,
    updatedAt: contact.updatedAt,
  };
}

/** Options of the contact routes. */
export interface ContactRouteOptions {
  stores: Stores;
  limiter: onRequestHookHandler | undefined;
}

/** The contact routes. */
export const contactRoutes: FastifyPluginAsyncTypebox<ContactRouteOptions> = async (app, { stores, limiter }) => {
  for (const url of ['/api/contacts/list', '/api/contacts/v1/list']) {
    app.get(
      url,
      {
        onRequest: limiter ? [limiter] : [],
        config: { audit: { service: 'contacts', resource: 'contact', verb: 'list', past: 'listed' } },
        schema: {
          tags: ['contacts'],
          security: API_SECURITY,
          summary: url.includes('/v1/') ? 'List contacts' : 'List contacts (unversioned path)',
          querystring: ContactListQuerySchema,
          response: { 200: ContactListSchema, ...errorResponses(...COMMON_ERROR_STATUSES) },
        },
      },
      async (request) => {
        const page = request.query.page ?? 1;
        const limit = request.query.limit ?? CONTACT_LIST_DEFAULT_LIMIT;
        const { search, status } = request.query;
        const result = await stores.contacts.list(principalOf(request).organizationId, {
          page,
          limit,
          ...(search !== undefined && search !== '' ? { search } : {}),
          ...(status !== undefined ? { status } : {}),
        });
        return {
          object: 'contact' as const,
          contacts: result.items.map(contactBody),
          total: result.total,
          page,
          limit,
          totalContacts: result.totalContacts,
          subscribedContacts: result.subscribedContacts,
          unsubscribedContacts: result.unsubscribedContacts,
          event: 'contact.list' as const,
        };
      },
    );
  }
};
