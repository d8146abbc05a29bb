/**
 * The record log (audit trail): one record per API request, successful or not, with every field of
 * the spec's "Record log". Secrets never reach it: credential headers, query parameters and body
 * fields are redacted, and the actor is a key id, never the key.
 *
 * Every record is bounded whatever the request carried (Node accepts 16 KB of headers, the body
 * limit is 1 MiB): headers, query parameters, path and user agent are kept up to the `MAX_LOGGED_*`
 * limits below, cut values marked with their full size, so that a flood of large requests costs the
 * record log a few hundred bytes each.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RecordLog } from '../store/types.js';
import { clientAddress } from './client-address.js';
import type { AuditSpec } from './context.js';
import { KeyRedactor, presentedSecrets } from './key-redaction.js';

/** What a redacted value is replaced with. */
export const REDACTED = '[REDACTED]';
/** Bodies whose JSON is longer than this are logged as a size only. */
export const MAX_LOGGED_BODY_CHARS = 8 * 1024;
/** Most headers a record keeps (in the order sent); the number left out is recorded. */
export const MAX_LOGGED_HEADERS = 32;
/** Longest header name a record keeps. */
export const MAX_LOGGED_HEADER_NAME_CHARS = 64;
/** Longest header or query value a record keeps; a longer one is cut and marked with its length. */
export const MAX_LOGGED_VALUE_CHARS = 128;
/** Most query parameters a record keeps. */
export const MAX_LOGGED_QUERY_PARAMS = 32;
/** Longest path (and resource id) a record keeps. */
export const MAX_LOGGED_PATH_CHARS = 1024;
/** Longest user agent a record keeps. */
export const MAX_LOGGED_USER_AGENT_CHARS = 256;
/** How deep a logged body is copied; deeper values are replaced by a marker. */
export const MAX_LOGGED_BODY_DEPTH = 8;

/** Headers that carry credentials (RFC 9110 §11.6.2, §11.7.2; RFC 6265 §5.4), and the usual vendor ones. */
export const SECRET_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'x-api-token',
  'x-auth-key',
  'x-auth-token',
  'x-access-token',
  'x-session-token',
  'x-csrf-token',
  'x-xsrf-token',
  'x-amz-security-token',
  'cookie',
  'set-cookie',
]);
/**
 * Field, header and parameter names that carry secrets, wherever they appear: anything named a
 * password, secret, token, key (`key`, `api_key`, `x-auth-key`, `access-key`…), auth (not
 * author), cookie, session, credential, signature (`sig`), JWT or bearer.
 */
const SECRET_NAME =
  /pass(word|wd|phrase)?|secret|token|(^|[-_.])key(s)?($|[-_.])|api-?key|apikey|privatekey|auth(?!or)|cookie|session|credential|signature|(^|[-_.])sig($|[-_.])|jwt|bearer|(^|[-_.])otp($|[-_.])/i;
/** A value that is a credential whatever it is named: an HTTP authentication scheme and its token. */
const CREDENTIAL_VALUE = /^\s*(bearer|basic|digest|token|apikey|negotiate|hoba|mutual|scram-sha-\d+|aws4-hmac-sha256)\s+\S/i;

/** True when a header, parameter or field of this name holds a secret (exported for the server log's redaction). */
export function isSecretName(name: string): boolean {
  return SECRET_HEADERS.has(name.toLowerCase()) || SECRET_NAME.test(name);
}

/** Finds presented keys only (no key remembered): for callers that pass none. */
const PRESENTED_ONLY = new KeyRedactor();

/**
 * `value` with every occurrence of `secrets` (keys the request presented) replaced by `REDACTED`,
 * in any case or percent-encoding (./key-redaction.ts); an authentication scheme and its token, whole.
 */
function scrub(value: string, secrets: readonly string[], keys: KeyRedactor = PRESENTED_ONLY): string {
  if (CREDENTIAL_VALUE.test(value)) return REDACTED;
  return keys.redactText(value, secrets);
}

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
  if (typeof value === 'string' && CREDENTIAL_VALUE.test(value)) return REDACTED;
  return value;
}

/** `text` if it is at most `max` characters, else its first `max` characters and its length. */
export function truncated(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length} chars]`;
}

const headerText = (value: unknown): string => (Array.isArray(value) ? value.map(String).join(', ') : String(value));

/**
 * Request headers as a record keeps them: credential headers redacted, at most
 * `MAX_LOGGED_HEADERS` of them, names and values cut to their limits (a cut value ends with its
 * full length). When headers were left out, `…` holds how many.
 */
export function redactHeaders(headers: Record<string, unknown>, secrets: readonly string[] = [], keys?: KeyRedactor): Record<string, string> {
  const out: Record<string, string> = {};
  const entries = Object.entries(headers).filter(([, value]) => value !== undefined);
  for (const [name, value] of entries.slice(0, MAX_LOGGED_HEADERS)) {
    out[truncated(name, MAX_LOGGED_HEADER_NAME_CHARS)] = isSecretName(name) ? REDACTED : truncated(scrub(headerText(value), secrets, keys), MAX_LOGGED_VALUE_CHARS);
  }
  if (entries.length > MAX_LOGGED_HEADERS) out['…'] = `${entries.length - MAX_LOGGED_HEADERS} more header(s) not recorded`;
  return out;
}

/** Query parameters as a record keeps them: secrets redacted, at most `MAX_LOGGED_QUERY_PARAMS`, values cut. */
export function redactQuery(rawQuery: string, secrets: readonly string[] = [], keys?: KeyRedactor): Record<string, string> {
  const out: Record<string, string> = {};
  let count = 0;
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    if (++count > MAX_LOGGED_QUERY_PARAMS) {
      out['…'] = 'more parameters not recorded';
      break;
    }
    out[truncated(name, MAX_LOGGED_HEADER_NAME_CHARS)] = isSecretName(name) ? REDACTED : truncated(scrub(value, secrets, keys), MAX_LOGGED_VALUE_CHARS);
  }
  return out;
}

/** A URL with the values of secret-named query parameters replaced by `REDACTED` (for the server log). */
export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return url;
  const params = new URLSearchParams(url.slice(queryStart + 1));
  let changed = false;
  for (const name of new Set(params.keys())) {
    if (isSecretName(name) || params.getAll(name).some((value) => CREDENTIAL_VALUE.test(value))) {
      params.set(name, REDACTED);
      changed = true;
    }
  }
  return changed ? `${url.slice(0, queryStart)}?${params.toString()}` : url;
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

/**
 * Builds the record of a finished request (called from `onSend`, so the status is final). No field
 * of it holds a key: the key the request presented (valid or not) and every key `context.keys`
 * remembers are redacted in every field (resource id, path, query, headers, body, user agent…), in
 * any case or percent-encoding.
 */
export function buildRecord(request: FastifyRequest, reply: FastifyReply, context: { environment: string; now: () => Date; keys?: KeyRedactor }): RecordLog {
  const spec = request.is404 ? UNMATCHED_ROUTE_AUDIT : (request.routeOptions.config.audit ?? UNMATCHED_ROUTE_AUDIT);
  const statusCode = reply.statusCode;
  const params = (request.params ?? {}) as Record<string, unknown>;
  const fromParam = spec.idParam !== undefined ? params[spec.idParam] : undefined;
  const resourceId = request.auditResourceId ?? (typeof fromParam === 'string' ? fromParam : '');
  const queryStart = request.url.indexOf('?');
  const path = queryStart === -1 ? request.url : request.url.slice(0, queryStart);
  const rawQuery = queryStart === -1 ? '' : request.url.slice(queryStart + 1);
  const userAgent = request.headers['user-agent'];
  // The keys the request presented (valid or not), wherever else they also appear.
  const secrets = presentedSecrets(request.headers);
  const keys = context.keys ?? PRESENTED_ONLY;
  const clean = (value: string): string => (CREDENTIAL_VALUE.test(value) ? REDACTED : keys.redactText(value, secrets));
  const record: RecordLog = {
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
      path: truncated(clean(path), MAX_LOGGED_PATH_CHARS),
      query: redactQuery(rawQuery, secrets, keys),
      headers: redactHeaders(request.headers, secrets, keys),
    },
    request_body: loggedBody(request.body),
    email: request.auditEmail,
    actor_type: request.principal ? 'api_key' : 'anonymous',
    actor_id: request.principal?.keyId ?? '',
    resource_type: spec.resource,
    resource_id: truncated(clean(resourceId), MAX_LOGGED_PATH_CHARS),
    service: spec.service,
    action: spec.past,
    ip_address: clientAddress(request),
    user_agent: typeof userAgent === 'string' ? truncated(clean(userAgent), MAX_LOGGED_USER_AGENT_CHARS) : '',
    environment: context.environment,
  };
  // Every field, once more, against the presented keys and the remembered ones (issue 29: the
  // resource id, the body's domain and webhookUrl held keys).
  return keys.redactDeep(record, secrets);
}
