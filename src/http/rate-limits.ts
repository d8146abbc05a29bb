/**
 * Per-operation rate limits (@fastify/rate-limit), as the reference service sets them: the spoof
 * checker per client address, management operations per organisation. Each limiter has its own
 * counter; one limiter may guard several routes (the two contact list paths share one).
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { ApiError } from './errors.js';

/** One limit: at most `max` requests per `windowMs` milliseconds per key. */
export interface Limit {
  max: number;
  windowMs: number;
}

/** The limits of the service, by operation. */
export interface RateLimits {
  /** Per client address (POST and GET together). */
  spoofCheck: Limit;
  /** Per organisation. */
  domainUpdate: Limit;
  /** Per organisation, counted apart from updates. */
  domainDelete: Limit;
  /** Per organisation (both paths together). */
  contactList: Limit;
}

/** One minute, the window of every default limit. */
export const RATE_LIMIT_WINDOW_MS = 60_000;

/** The defaults: 60 checks a minute per address; 10 domain updates and 10 deletes, 60 contact lists a minute per organisation. */
export const DEFAULT_RATE_LIMITS: Readonly<RateLimits> = Object.freeze({
  spoofCheck: { max: 60, windowMs: RATE_LIMIT_WINDOW_MS },
  domainUpdate: { max: 10, windowMs: RATE_LIMIT_WINDOW_MS },
  domainDelete: { max: 10, windowMs: RATE_LIMIT_WINDOW_MS },
  contactList: { max: 60, windowMs: RATE_LIMIT_WINDOW_MS },
});

/** The hook of each limited operation; all `undefined` when rate limiting is off. */
export type Limiters = { [K in keyof RateLimits]: onRequestHookHandler | undefined };

const byClientAddress = (request: FastifyRequest): string => `ip:${request.ip}`;
// Authentication runs first (an app-level onRequest hook), so the organisation is known here.
const byOrganization = (request: FastifyRequest): string => (request.principal ? `org:${request.principal.organizationId}` : `ip:${request.ip}`);

function describeWindow(windowMs: number): string {
  return windowMs % 60_000 === 0 ? `${windowMs / 60_000} minute(s)` : `${windowMs / 1000} second(s)`;
}

/**
 * Registers @fastify/rate-limit (not globally) and builds one hook per operation. With `limits`
 * false, registers nothing and every hook is undefined.
 */
export async function createLimiters(app: FastifyInstance, limits: RateLimits | false): Promise<Limiters> {
  if (limits === false) return { spoofCheck: undefined, domainUpdate: undefined, domainDelete: undefined, contactList: undefined };
  await app.register(rateLimit, { global: false });
  const make = (limit: Limit, keyGenerator: (request: FastifyRequest) => string, per: string): onRequestHookHandler =>
    app.rateLimit({
      max: limit.max,
      timeWindow: limit.windowMs,
      keyGenerator,
      errorResponseBuilder: (_request, context) => {
        const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
        return new ApiError('RATE_LIMITED', {
          why: `This operation allows ${limit.max} request(s) per ${describeWindow(limit.windowMs)} ${per}.`,
          fix: `Wait ${seconds} second(s) before retrying.`,
          retryAfter: seconds,
        });
      },
    });
  return {
    spoofCheck: make(limits.spoofCheck, byClientAddress, 'from one client address'),
    domainUpdate: make(limits.domainUpdate, byOrganization, 'for one organisation'),
    domainDelete: make(limits.domainDelete, byOrganization, 'for one organisation'),
    contactList: make(limits.contactList, byOrganization, 'for one organisation'),
  };
}
