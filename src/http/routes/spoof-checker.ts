/**
 * `POST /api/tools/v1/spoof-checker` (spec) and `GET /api/tools/v1/spoof-checker?domain=` (for
 * browsers, as the reference service offers). The check itself is injected; its refusals
 * (`SpoofCheckError`) become INVALID_DOMAIN 400, DOMAIN_NOT_FOUND 422, DNS_FAILURE 502 or DNS_TIMEOUT 503 with the failed
 * query named, never a verdict.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { onRequestHookHandler } from 'fastify';
import { Type } from 'typebox';
import { MAX_CALLER_SELECTORS, MAX_SELECTOR_LABEL_OCTETS, normaliseDomainInput, selectorProblem } from '@spoof-checker/engine';
import type { SpoofCheckResult } from '@spoof-checker/engine';
import type { AuditSpec } from '../context.js';
import { ApiError } from '../errors.js';
import { API_SECURITY, COMMON_ERROR_STATUSES, errorResponses, SpoofCheckResultSchema } from '../schemas.js';

/** Spec: spoof check `domain`, 1 to 255 characters. */
export const SPOOF_DOMAIN_MAX_LENGTH = 255;

/** What a request may add to a check. */
export interface SpoofCheckRequestOptions {
  /** DKIM selectors to probe before the built-in list (checkDomain's `selectors`), lower-cased. */
  selectors?: string[];
  /** Also check mail sent TO the domain and add `transport` to the result (checkDomain's `transport`). */
  transport?: boolean;
  /** Also check BIMI and add `bimi` to the result (checkDomain's `bimi`). */
  bimi?: boolean;
  /** Most DNS lookups the check may make (checkDomain's `maxQueries`); the public page sets a low one. */
  maxQueries?: number;
}

/** The extra checks a request may ask for (`"checks": [...]`). */
export const OPTIONAL_CHECKS = ['transport', 'bimi'] as const;

const ChecksField = Type.Array(Type.Enum([...OPTIONAL_CHECKS]), {
  uniqueItems: true,
  maxItems: OPTIONAL_CHECKS.length,
  description:
    'Extra checks to run. "transport": mail sent TO the domain (MTA-STS, TLS-RPT, a STARTTLS and certificate probe of every MX), added as `transport`; "bimi": the brand logo (the BIMI record, DMARC eligibility, the logo held to SVG Tiny PS, the mark certificate verified to the Mark Verifying Authorities), added as `bimi`. Both take seconds and share their own, lower rate limit. The spoof verdict never depends on them.',
  examples: [['transport'], ['bimi']],
});

/** Runs one spoof check (the app is given `checkDomain` bound to a resolver). */
export type SpoofCheck = (domain: string, options?: SpoofCheckRequestOptions) => Promise<SpoofCheckResult>;

/** Longest selector accepted: a few labels (RFC 6376 §3.1 allows dotted selectors), well inside a DNS name. */
export const SELECTOR_MAX_LENGTH = 128;

// RFC 6376 §3.1: selector = sub-domain *( "." sub-domain ); each a DNS label (RFC 1035 §2.3.4: at
// most 63 octets). Underscores are allowed as the DKIM probe allows them.
const LABEL = `[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,${MAX_SELECTOR_LABEL_OCTETS - 2}}[A-Za-z0-9_])?`;
const SelectorsField = Type.Array(
  Type.String({ minLength: 1, maxLength: SELECTOR_MAX_LENGTH, pattern: `^${LABEL}(?:\\.${LABEL})*$`, examples: ['google', 's1'] }),
  {
    maxItems: MAX_CALLER_SELECTORS,
    description: `DKIM selectors to try first, before the built-in list (at most ${MAX_CALLER_SELECTORS}; each DNS labels of letters, digits, '-' and '_', dot-separated)`,
  },
);

const DomainField = Type.String({
  minLength: 1,
  maxLength: SPOOF_DOMAIN_MAX_LENGTH,
  description: 'The sending domain, a URL or an email address (the domain is taken from it)',
  examples: ['example.com'],
});

const AUDIT: AuditSpec = { service: 'tools', resource: 'spoof_check', verb: 'perform', past: 'performed' };

const responses = { 200: SpoofCheckResultSchema, ...errorResponses(...COMMON_ERROR_STATUSES, 422, 502, 503) };

/**
 * Says precisely what is wrong with a selector before the schema's generic "not in the expected
 * format": the DKIM probe's own wording (empty label, label too long, character not allowed).
 */
function refuseBadSelector(body: unknown): void {
  const selectors = (body as { selectors?: unknown } | null)?.selectors;
  if (!Array.isArray(selectors)) return;
  selectors.forEach((selector, index) => {
    if (typeof selector !== 'string' || selector === '') return;
    const problem = selectorProblem(selector.toLowerCase());
    if (problem) throw new ApiError('VALIDATION_FAILED', { message: `body.selectors[${index}] ("${selector.slice(0, 70)}") is not a DKIM selector: ${problem}.` });
  });
}

/** Options of the spoof checker routes. */
export interface SpoofCheckerRouteOptions {
  check: SpoofCheck;
  limiter: onRequestHookHandler | undefined;
  /** Counts requests that ask for the transport check, on top of `limiter`. */
  transportLimiter?: onRequestHookHandler | undefined;
  /**
   * The DKIM selectors the organisation's DMARC reports have seen for a domain (src/summaries/selectors.ts):
   * probed after the caller's own, so that keys nobody could guess get checked.
   */
  reportSelectors?: (organizationId: string, domain: string) => Promise<string[]>;
}

/** The spoof checker routes. */
export const spoofCheckerRoutes: FastifyPluginAsyncTypebox<SpoofCheckerRouteOptions> = async (app, { check, limiter, transportLimiter, reportSelectors }) => {
  const onRequest = limiter ? [limiter] : [];
  const common = { tags: ['tools'], security: API_SECURITY };

  app.post(
    '/api/tools/v1/spoof-checker',
    {
      onRequest,
      preValidation: async (request) => refuseBadSelector(request.body),
      // A transport or BIMI check costs seconds and sockets: it is counted apart (after validation, when the body is known).
      preHandler: async function transportLimit(request, reply) {
        if (transportLimiter && (request.body.checks?.includes('transport') || request.body.checks?.includes('bimi'))) await (transportLimiter as unknown as (this: unknown, req: typeof request, rep: typeof reply) => Promise<void>).call(this, request, reply);
      },
      config: { audit: AUDIT },
      schema: {
        ...common,
        summary: 'Can anyone spoof this domain?',
        description:
          'Checks DMARC, SPF, DKIM and MX and says whether mail forged as this domain would reach an inbox. With "checks": ["transport"], also checks mail sent to the domain (MTA-STS, TLS-RPT, STARTTLS of every MX) and adds `transport`; with "checks": ["bimi"], also checks the brand logo (BIMI) and adds `bimi`.',
        body: Type.Object({ domain: DomainField, selectors: Type.Optional(SelectorsField), checks: Type.Optional(ChecksField) }, { additionalProperties: false }),
        response: responses,
      },
    },
    async (request) => {
      request.auditResourceId = request.body.domain;
      const { selectors, checks } = request.body;
      const options: SpoofCheckRequestOptions = {};
      // The probe expects lower-case selectors (DNS names compare case-insensitively, RFC 4343).
      if (selectors) options.selectors = [...new Set(selectors.map((s) => s.toLowerCase()))];
      // Selectors seen in the organisation's reports join them (the caller's first, the cap kept).
      const input = normaliseDomainInput(request.body.domain);
      if (reportSelectors && request.principal && input.ok) {
        const seen = await reportSelectors(request.principal.organizationId, input.domain);
        if (seen.length > 0) options.selectors = [...new Set([...(options.selectors ?? []), ...seen])].slice(0, MAX_CALLER_SELECTORS);
      }
      if (checks?.includes('transport')) options.transport = true;
      if (checks?.includes('bimi')) options.bimi = true;
      return Object.keys(options).length > 0 ? check(request.body.domain, options) : check(request.body.domain);
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
