/**
 * What the service adds to Fastify's request and route config: the authenticated principal, the
 * audit description of each route, and what handlers tell the audit hook.
 */
import type { KeyOwner } from '../store/types.js';
import type { ErrorCode } from './errors.js';

/** Who is calling: the organisation and the key (never the key itself). */
export interface Principal {
  organizationId: string;
  keyId: string;
  owner: KeyOwner;
}

/**
 * How a route appears in the record log. Events are `<resource>.<past>` on success,
 * `<resource>.<verb>_failed` on an error and `<resource>.<verb>_rate_limited` on a 429
 * (the reference service's audit names).
 */
export interface AuditSpec {
  /** The service that owns the route (`tools`, `logs`, `template`, `domain`, `contacts`). */
  service: string;
  /** `resource_type`, e.g. `domain`, `template_version`. */
  resource: string;
  /** Present tense, for failure events: `update` → `domain.update_failed`. */
  verb: string;
  /** Past tense, the `action` field and the success event: `updated` → `domain.updated`. */
  past: string;
  /** Name of the path parameter that holds `resource_id`. */
  idParam?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication hook; null when no valid key was sent. */
    principal: Principal | null;
    /** When the request arrived (ISO 8601), for the record log. */
    receivedAt: string | null;
    /** The catalogue code of the error the request ended with, if any. */
    errorCode: ErrorCode | null;
    /** Set by a handler: `resource_id` when it is not a path parameter (the checked domain). */
    auditResourceId: string | null;
    /** Set by a handler: the record log's `email` field (the email a request was about). */
    auditEmail: Record<string, unknown> | null;
  }
  interface FastifyContextConfig {
    /** No API key needed and not written to the record log (`/openapi.json`, `/docs`). */
    public?: boolean;
    audit?: AuditSpec;
    /**
     * The route answers the same body to every request (an asset, the home page): its compressed
     * forms are made once and kept (src/http/compression.ts).
     */
    constantBody?: boolean;
  }
}

/** The principal of an authenticated route (the auth hook guarantees one). */
export function principalOf(request: { principal: Principal | null }): Principal {
  if (!request.principal) throw new Error('route reached without a principal: the authentication hook did not run');
  return request.principal;
}
