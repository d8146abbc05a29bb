/**
 * The record log (audit trail): one record per API request, successful or not, with every field of
 * the spec's "Record log". Secrets never reach it: credential headers, query parameters and body
 * fields are redacted, and the actor is a key id, never the key.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RecordLog } from '../store/types.js';
import type { AuditSpec } from './context.js';

/** What a redacted value is replaced with. */
export const REDACTED = '[REDACTED]';
/** Bodies whose JSON is longer than this are logged as a size only. */
export const MAX_LOGGED_BODY_CHARS = 16 * 1024;
/** How deep a logged body is copied; deeper values are replaced by a marker. */
export const MAX_LOGGED_BODY_DEPTH = 8;

/** Headers that carry credentials. */
const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'x-api-key', 'cookie', 'set-cookie']);
/** Field and parameter names that carry secrets, wherever they appear. */
const SECRET_NAME = /pass(word|wd)?|secret|token|api[-_]?key|authorization|cookie|credential|private[-_]?key|signature/i;

/** Used for requests that match no route. */
export const UNMATCHED_ROUTE_AUDIT: AuditSpec = { service: 'api', resource: 'route', verb: 'match', past: 'matched' };

/** A copy of `value` with every secret-named field replaced by `REDACTED`, recursively. */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > MAX_LOGGED_BODY_DEPTH) return '[TOO DEEP]';
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [name, inner] of Object.entries(value)) out[name] = SECRET_NAME.test(name) ? REDACTED : redact(inner, depth + 1);
    return out;
  }
  return value;
}

/** Request headers with credential headers redacted. */
export function redactHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) out[name] = SECRET_HEADERS.has(name.toLowerCase()) || SECRET_NAME.test(name) ? REDACTED : value;
  return out;
}

/** The body as the record log keeps it: an object (redacted), a size marker when too large, or null. */
export function loggedBody(body: unknown): Record<string, unknown> | null {
  if (body === undefined || body === null) return null;
  const redacted = redact(body);
  const text = JSON.stringify(redacted) ?? '';
  if (text.length > MAX_LOGGED_BODY_CHARS) return { truncated: true, jsonChars: text.length };
  if (Array.isArray(redacted)) return { items: redacted };
  if (typeof redacted === 'object' && redacted !== null) return redacted as Record<string, unknown>;
  return { value: redacted };
}

// W3C Trace Context §3.2: version-traceid-parentid-flags; an all-zero trace id is invalid.
const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/;

/** The trace id of a W3C `traceparent` header, or a fresh random one. */
export function traceIdFor(traceparent: unknown): string {
  if (typeof traceparent === 'string') {
    const id = TRACEPARENT.exec(traceparent.trim())?.[1];
    if (id && !/^0+$/.test(id)) return id;
  }
  return randomBytes(16).toString('hex');
}

/** `event`, `level` and `action` of a request that ended with `statusCode`. */
export function classify(spec: AuditSpec, statusCode: number): Pick<RecordLog, 'event' | 'level' | 'action'> {
  if (statusCode === 429) return { event: `${spec.resource}.${spec.verb}_rate_limited`, level: 'warn', action: spec.past };
  if (statusCode >= 500) return { event: `${spec.resource}.${spec.verb}_failed`, level: 'error', action: spec.past };
  // A client error is the caller's mistake, not the service's: warn, not error.
  if (statusCode >= 400) return { event: `${spec.resource}.${spec.verb}_failed`, level: 'warn', action: spec.past };
  return { event: `${spec.resource}.${spec.past}`, level: 'info', action: spec.past };
}

/** Builds the record of a finished request (called from `onSend`, so the status is final). */
export function buildRecord(request: FastifyRequest, reply: FastifyReply, context: { environment: string; now: () => Date }): RecordLog {
  const spec = request.is404 ? UNMATCHED_ROUTE_AUDIT : (request.routeOptions.config.audit ?? UNMATCHED_ROUTE_AUDIT);
  const statusCode = reply.statusCode;
  const params = (request.params ?? {}) as Record<string, unknown>;
  const fromParam = spec.idParam !== undefined ? params[spec.idParam] : undefined;
  const resourceId = request.auditResourceId ?? (typeof fromParam === 'string' ? fromParam : '');
  const queryStart = request.url.indexOf('?');
  const path = queryStart === -1 ? request.url : request.url.slice(0, queryStart);
  const rawQuery = queryStart === -1 ? '' : request.url.slice(queryStart + 1);
  const userAgent = request.headers['user-agent'];
  return {
    uuid: request.id,
    ...classify(spec, statusCode),
    trace_id: traceIdFor(request.headers.traceparent),
    metadata: {
      route: request.is404 ? null : (request.routeOptions.url ?? null),
      durationMs: Math.round(reply.elapsedTime * 1000) / 1000,
      errorCode: request.errorCode,
    },
    status_code: statusCode,
    created_at: request.receivedAt ?? context.now().toISOString(),
    requestDetails: {
      method: request.method,
      path,
      query: redact(Object.fromEntries(new URLSearchParams(rawQuery))),
      headers: redactHeaders(request.headers),
    },
    request_body: loggedBody(request.body),
    email: request.auditEmail,
    actor_type: request.principal ? 'api_key' : 'anonymous',
    actor_id: request.principal?.keyId ?? '',
    resource_type: spec.resource,
    resource_id: resourceId,
    service: spec.service,
    action: spec.past,
    ip_address: request.ip,
    user_agent: typeof userAgent === 'string' ? userAgent : '',
    environment: context.environment,
  };
}
