/**
 * `POST /api/tools/v1/spoof-checker` (spec) and `GET /api/tools/v1/spoof-checker?domain=` (for
 * browsers, as the reference service offers). The check itself is injected; its refusals
 * (`SpoofCheckError`) become INVALID_DOMAIN 400, DNS_FAILURE 502 or DNS_TIMEOUT 503 with the failed
 * query named, never a verdict.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { onRequestHookHandler } from 'fastify';
import { Type } from 'typebox';
import type { SpoofCheckResult } from '../../result.js';
import type { AuditSpec } from '../context.js';
import { API_SECURITY, COMMON_ERROR_STATUSES, errorResponses, SpoofCheckResultSchema } from '../schemas.js';

/** Spec: spoof check `domain`, 1 to 255 characters. */
export const SPOOF_DOMAIN_MAX_LENGTH = 255;

/** Runs one spoof check (the app is given `checkDomain` bound to a resolver). */
export type SpoofCheck = (domain: string) => Promise<SpoofCheckResult>;

const DomainField = Type.String({
  minLength: 1,
  maxLength: SPOOF_DOMAIN_MAX_LENGTH,
  description: 'The sending domain, a URL or an email address (the domain is taken from it)',
  examples: ['example.com'],
});

const AUDIT: AuditSpec = { service: 'tools', resource: 'spoof_check', verb: 'perform', past: 'performed' };

const responses = { 200: SpoofCheckResultSchema, ...errorResponses(...COMMON_ERROR_STATUSES, 502, 503) };

/** Options of the spoof checker routes. */
export interface SpoofCheckerRouteOptions {
  check: SpoofCheck;
  limiter: onRequestHookHandler | undefined;
}

/** The spoof checker routes. */
export const spoofCheckerRoutes: FastifyPluginAsyncTypebox<SpoofCheckerRouteOptions> = async (app, { check, limiter }) => {
  const onRequest = limiter ? [limiter] : [];
  const common = { tags: ['tools'], security: API_SECURITY };

  app.post(
    '/api/tools/v1/spoof-checker',
    {
      onRequest,
      config: { audit: AUDIT },
      schema: {
        ...common,
        summary: 'Can anyone spoof this domain?',
        description: 'Checks DMARC, SPF, DKIM and MX and says whether mail forged as this domain would reach an inbox.',
        body: Type.Object({ domain: DomainField }, { additionalProperties: false }),
        response: responses,
      },
    },
    async (request) => {
      request.auditResourceId = request.body.domain;
      return check(request.body.domain);
    },
  );

  app.get(
    '/api/tools/v1/spoof-checker',
    {
      onRequest,
      config: { audit: AUDIT },
      schema: {
        ...common,
        summary: 'Can anyone spoof this domain? (query string form, for browsers)',
        querystring: Type.Object({ domain: DomainField }, { additionalProperties: false }),
        response: responses,
      },
    },
    async (request) => {
      request.auditResourceId = request.query.domain;
      return check(request.query.domain);
    },
  );
};
