/**
 * Domains: `PATCH /api/domain/v1/:domain_id` (update tracking, sending, receiving and TLS),
 * `DELETE /api/domain/v1/:domain_id` (a soft delete: afterwards the domain answers 404 everywhere)
 * and `GET /api/domain/v1` (the list, beyond the spec).
 *
 * PATCH with an empty object, or with no body at all, is accepted: nothing changes but `updatedAt`
 * (the reference service always sets it), so a client can send only the fields it means to change.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { registerPagedList } from './paged-list.js';
import type { onRequestHookHandler } from 'fastify';
import { Type } from 'typebox';
import type { Domain, DomainPatch, Stores } from '../../store/types.js';
import { notFound } from '../errors.js';
import { API_SECURITY, COMMON_ERROR_STATUSES, DomainItemSchema, DomainSchema, errorResponses, type DomainBody } from '../schemas.js';
import { MAX_ID_LENGTH, principalOf } from './logs.js';

/** Spec: body of "Update domain" (snake case, every field optional). */
export const UpdateDomainBodySchema = Type.Object(
  {
    click_tracking: Type.Optional(Type.Boolean({ description: 'Whether click tracking is enabled' })),
    open_tracking: Type.Optional(Type.Boolean({ description: 'Whether open tracking is enabled' })),
    sending_email: Type.Optional(Type.Boolean({ description: 'Whether sending email is enabled' })),
    receiving_email: Type.Optional(Type.Boolean({ description: 'Whether receiving email is enabled' })),
    tls: Type.Optional(Type.Enum(['opportunistic', 'enforced'], { description: 'TLS mode' })),
  },
  { additionalProperties: false },
);

/** The domain as the API shows it: `object: "domain"`, the event, and the given DNS records. */
export function domainBody(domain: Domain, event: string): DomainBody {
  return {
    ...domainItemBody(domain),
    event,
  };
}

/** A domain of the list (no `event`). */
export function domainItemBody(domain: Domain): Omit<DomainBody, 'event'> {
  return {
    object: 'domain',
    id: domain.id,
    domain: domain.domain,
    status: domain.status,
    userVerifiedDomain: domain.userVerifiedDomain,
    systemVerified: domain.systemVerified,
    customReturnPath: domain.customReturnPath,
    trackingSubdomain: domain.trackingSubdomain,
    isClickTrackingEnabled: domain.isClickTrackingEnabled,
    isOpenTrackingEnabled: domain.isOpenTrackingEnabled,
    tls: domain.tls,
    isTrackingDomain: domain.isTrackingDomain,
    isSendingEmailEnabled: domain.isSendingEmailEnabled,
    isReceivingEmailEnabled: domain.isReceivingEmailEnabled,
    verificationFailedReason: domain.verificationFailedReason,
    dnsRecords: domain.dnsRecords.map((r) => ({
      id: r.id,
      recordType: r.recordType,
      recordTypeName: r.recordTypeName,
      domain: r.domain,
      name: r.name,
      value: r.value,
      ttl: r.ttl,
      priority: r.priority,
      status: r.status,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
    })),
    lastVerifiedAt: domain.lastVerifiedAt,
    createdAt: domain.createdAt,
    updatedAt: domain.updatedAt,
  };
}

/** Options of the domain routes. */
export interface DomainRouteOptions {
  stores: Stores;
  now: () => Date;
  updateLimiter: onRequestHookHandler | undefined;
  deleteLimiter: onRequestHookHandler | undefined;
}

/** The domain routes. */
export const domainRoutes: FastifyPluginAsyncTypebox<DomainRouteOptions> = async (app, { stores, now, updateLimiter, deleteLimiter }) => {
  const security = API_SECURITY;
  const params = Type.Object({ domain_id: Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH }) });

  app.patch(
    '/api/domain/v1/:domain_id',
    {
      onRequest: updateLimiter ? [updateLimiter] : [],
      // No body at all is the same as `{}`: nothing but `updatedAt` changes. JSON `null` is refused.
      preValidation: async (request) => {
        if (request.body === undefined) (request as { body: unknown }).body = {};
      },
      config: { audit: { service: 'domain', resource: 'domain', verb: 'update', past: 'updated', idParam: 'domain_id' } },
      schema: {
        tags: ['domains'],
        security,
        summary: 'Update domain',
        description: 'Only the fields sent change; updatedAt is always set. An empty body changes nothing else.',
        params,
        body: UpdateDomainBodySchema,
        response: { 200: DomainSchema, ...errorResponses(...COMMON_ERROR_STATUSES) },
      },
    },
    async (request) => {
      const body = request.body;
      const patch: DomainPatch = {};
      if (body.click_tracking !== undefined) patch.isClickTrackingEnabled = body.click_tracking;
      if (body.open_tracking !== undefined) patch.isOpenTrackingEnabled = body.open_tracking;
      if (body.sending_email !== undefined) patch.isSendingEmailEnabled = body.sending_email;
      if (body.receiving_email !== undefined) patch.isReceivingEmailEnabled = body.receiving_email;
      if (body.tls !== undefined) patch.tls = body.tls;
      const domain = await stores.domains.update(principalOf(request).organizationId, request.params.domain_id, patch, now().toISOString());
      if (!domain) throw notFound('Domain', request.params.domain_id);
      return domainBody(domain, 'domain.update');
    },
  );

  app.delete(
    '/api/domain/v1/:domain_id',
    {
      onRequest: deleteLimiter ? [deleteLimiter] : [],
      config: { audit: { service: 'domain', resource: 'domain', verb: 'delete', past: 'deleted', idParam: 'domain_id' } },
      schema: {
        tags: ['domains'],
        security,
        summary: 'Delete domain',
        description: 'A soft delete: the domain and its DNS records are marked deleted and answer 404 from then on. The response lists the DNS records the deletion removed.',
        params,
        response: { 200: DomainSchema, ...errorResponses(...COMMON_ERROR_STATUSES) },
      },
    },
    async (request) => {
      const domain = await stores.domains.softDelete(principalOf(request).organizationId, request.params.domain_id, now().toISOString());
      if (!domain) throw notFound('Domain', request.params.domain_id);
      return domainBody(domain, 'domain.delete');
    },
  );

  registerPagedList(app, {
    path: '/api/domain/v1',
    audit: { service: 'domain', resource: 'domain' },
    tag: 'domains',
    summary: 'List domains (newest first; beyond the spec)',
    security,
    key: 'domains',
    item: DomainItemSchema,
    event: 'domain.list',
    list: (organizationId, page) => stores.domains.list(organizationId, page),
    body: domainItemBody,
  });
};
