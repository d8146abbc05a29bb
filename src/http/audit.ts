/**
 * The record log (audit trail): one record per API request, successful or not, with every field of
 * the spec's "Record log". Secrets never reach it: credential headers, query parameters and body
 * fields are redacted, and the actor is a key id, never the key.
 *
 * What a record keeps of the request is an allow-list of validated values, never free text from it
 * (issue 38, item 9): the route (its template, a path parameter only once the service has found the
 * resource it names), the status, the organisation and the ids the service made; of the query and
 * the body, the fields the route's schema declares, each value kept only when the schema closes it
 * (an enum or constant, a number, a boolean); of the headers, a fixed list of names, and only values
 * from closed sets; of the user agent, its first product token. Everything else is recorded as its
 * size (`[not recorded, N chars]`) or counted (`…`). Every string kept is checked once more by
 * `KeyRedactor` in every reading (./key-redaction.ts).
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
/** Most query parameters a record keeps. */
export const MAX_LOGGED_QUERY_PARAMS = 32;
/** Longest path (and resource id) a record keeps. */
export const MAX_LOGGED_PATH_CHARS = 1024;
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

/** What a record keeps of a value from the request that it does not keep. */
export function notRecorded(text: string): string {
  return `[not recorded, ${text.length} chars]`;
}

/** A schema node, as far as the record reads one (JSON Schema as TypeBox writes it). */
interface SchemaNode {
  const?: unknown;
  enum?: readonly unknown[];
  type?: string | readonly string[];
  anyOf?: readonly SchemaNode[];
  oneOf?: readonly SchemaNode[];
  allOf?: readonly SchemaNode[];
  properties?: Readonly<Record<string, SchemaNode>>;
  items?: SchemaNode;
}

const asNode = (value: unknown): SchemaNode | undefined => (value !== null && typeof value === 'object' ? (value as SchemaNode) : undefined);
const branches = (node: SchemaNode): readonly SchemaNode[] => [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])];
const typed = (node: SchemaNode, name: string): boolean => node.type === name || (Array.isArray(node.type) && node.type.includes(name));
/** A number as a query or header writes it (no more digits than a double holds). */
const NUMERIC = /^-?\d{1,15}(?:\.\d{1,6})?$/;

/** Whether `node` closes `value`: a constant or enum member, a number, a boolean (in any branch). */
function closedBy(node: SchemaNode | undefined, value: unknown): boolean {
  if (node === undefined) return false;
  if ('const' in node && node.const === value) return true;
  if (node.enum?.includes(value)) return true;
  if ((typed(node, 'integer') || typed(node, 'number')) && (typeof value === 'number' || (typeof value === 'string' && NUMERIC.test(value)))) return true;
  if (typed(node, 'boolean') && (typeof value === 'boolean' || value === 'true' || value === 'false')) return true;
  return branches(node).some((branch) => closedBy(branch, value));
}

/** The node of field `name` under `node` (in any branch). */
function fieldNode(node: SchemaNode | undefined, name: string): SchemaNode | undefined {
  if (node === undefined) return undefined;
  if (node.properties && Object.hasOwn(node.properties, name)) return node.properties[name];
  for (const branch of branches(node)) {
    const found = fieldNode(branch, name);
    if (found !== undefined) return found;
  }
  return undefined;
}

function itemNode(node: SchemaNode | undefined): SchemaNode | undefined {
  if (node === undefined) return undefined;
  if (node.items !== undefined) return node.items;
  for (const branch of branches(node)) {
    const found = itemNode(branch);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * The body as a record keeps it: the fields `schema` declares (undeclared ones counted under `…`),
 * secret-named ones as `REDACTED`, each value kept when the schema closes it, else its size.
 */
export function recordedBody(value: unknown, schema: unknown, depth = 0): unknown {
  const node = asNode(schema);
  if (depth > MAX_LOGGED_BODY_DEPTH) return '[TOO DEEP]';
  if (value === null || typeof value === 'boolean' || typeof value === 'number') return value;
  if (typeof value === 'string') {
    if (closedBy(node, value)) return value;
    // A binary body (a report file) is described by its route as `<media type>, N bytes`: the type
    // kept from the closed list, the parameters (free text) dropped.
    const file = node === undefined ? BINARY_BODY.exec(value) : null;
    if (file) return `${RECORDED_HEADERS['content-type']!(file[1]!)}, ${file[2]} bytes`;
    return notRecorded(value);
  }
  if (Array.isArray(value)) return value.map((item) => recordedBody(item, itemNode(node), depth + 1));
  if (typeof value !== 'object') return null;
  const out: Record<string, unknown> = {};
  let undeclared = 0;
  for (const [name, inner] of Object.entries(value)) {
    const declared = fieldNode(node, name);
    // A body with no schema at all is the route's own (a file's description): its one field is kept.
    if (node === undefined && depth === 0 && name === 'reportFile' && typeof inner === 'string') out[name] = recordedBody(inner, undefined, depth + 1);
    else if (declared === undefined) undeclared++;
    else out[name] = SECRET_NAME.test(name) ? REDACTED : recordedBody(inner, declared, depth + 1);
  }
  if (undeclared > 0) out['…'] = `${undeclared} undeclared field(s) not recorded`;
  return out;
}

/** How a route describes a binary body it took (src/http/routes/reports.ts): its media type and size. */
const BINARY_BODY = /^([^,]{0,100}), (\d{1,12}) bytes$/;

/** The query as a record keeps it: declared parameters (others counted), values the schema closes. */
export function recordedQuery(rawQuery: string, schema: unknown): Record<string, string> {
  const node = asNode(schema);
  const out: Record<string, string> = {};
  let undeclared = 0;
  let count = 0;
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    if (++count > MAX_LOGGED_QUERY_PARAMS) {
      out['…'] = 'more parameters not recorded';
      return out;
    }
    const declared = fieldNode(node, name);
    if (declared === undefined) undeclared++;
    else out[name] = isSecretName(name) ? REDACTED : closedBy(declared, value) ? value : notRecorded(value);
  }
  if (undeclared > 0) out['…'] = `${undeclared} undeclared parameter(s) not recorded`;
  return out;
}

/** Media types the service reads (a request with another says only `[other]`). */
const KNOWN_MEDIA_TYPES: ReadonlySet<string> = new Set([
  'application/json', 'application/gzip', 'application/x-gzip', 'application/zip', 'application/xml', 'text/xml', 'text/plain', 'text/csv', 'message/rfc822',
  'application/tlsrpt+json', 'application/tlsrpt+gzip', 'application/octet-stream', 'multipart/form-data', 'application/x-www-form-urlencoded',
]);
/** Content codings (RFC 9110 §8.4.1) and transfer codings (RFC 9112 §7). */
const KNOWN_CODINGS: ReadonlySet<string> = new Set(['gzip', 'x-gzip', 'deflate', 'br', 'zstd', 'compress', 'identity', 'chunked']);

/** Each header a record names, and what it keeps of the value: closed sets and numbers only. */
const RECORDED_HEADERS: Readonly<Record<string, (value: string) => string>> = {
  'content-type': (value) => {
    const essence = value.split(';')[0]!.trim().toLowerCase();
    return KNOWN_MEDIA_TYPES.has(essence) ? essence : '[other]';
  },
  'content-length': (value) => (/^\d{1,15}$/.test(value.trim()) ? value.trim() : notRecorded(value)),
  'content-encoding': (value) => (KNOWN_CODINGS.has(value.trim().toLowerCase()) ? value.trim().toLowerCase() : '[other]'),
  'transfer-encoding': (value) => (KNOWN_CODINGS.has(value.trim().toLowerCase()) ? value.trim().toLowerCase() : '[other]'),
};
/** Headers a record names without their value (free text, or the record has it elsewhere). */
const NAMED_HEADERS: ReadonlySet<string> = new Set([
  'host', 'user-agent', 'accept', 'accept-encoding', 'accept-language', 'connection', 'traceparent', 'tracestate', 'origin', 'referer',
  'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-real-ip', 'forwarded', 'x-request-id', 'x-report-filename', 'cache-control', 'expect',
]);

/**
 * Request headers as a record keeps them: credential headers as `REDACTED`, a fixed list of others
 * (their values only from closed sets), at most `MAX_LOGGED_HEADERS`; the headers not on the lists
 * (their names are free text) are counted under `…`.
 */
export function recordedHeaders(headers: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  let other = 0;
  let kept = 0;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    const known = SECRET_HEADERS.has(lower) || lower in RECORDED_HEADERS || NAMED_HEADERS.has(lower);
    if (!known || kept >= MAX_LOGGED_HEADERS) {
      other++;
      continue;
    }
    kept++;
    const text = headerText(value);
    out[lower] = SECRET_HEADERS.has(lower) ? REDACTED : (RECORDED_HEADERS[lower]?.(text) ?? notRecorded(text));
  }
  if (other > 0) out['…'] = `${other} other header(s) not recorded`;
  return out;
}

/** A user agent's first product token (RFC 9110 §10.1.5), when it is a short name and version. */
const PRODUCT_TOKEN = /^[A-Za-z][A-Za-z0-9._-]{0,23}(?:\/[A-Za-z0-9._-]{1,16})?$/;

/** What a record keeps of the user agent: its first product token (unless `holdsKey` says it holds a key), or its size. */
export function recordedUserAgent(userAgent: string, holdsKey: (token: string) => boolean = () => false): string {
  const first = userAgent.trim().split(/\s+/)[0] ?? '';
  return PRODUCT_TOKEN.test(first) && !holdsKey(first) ? first : notRecorded(userAgent);
}

/** An id or a name as the service writes one (a path parameter of a resource found, a checked domain). */
const RECORDED_ID = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,252}$/;

/**
 * The path as a record keeps it: the route's template, each parameter filled in only when the request
 * succeeded (the service found what it names, so it made it) and the value has an id's shape.
 */
export function recordedPath(template: string | undefined, params: Record<string, unknown>, succeeded: boolean): string {
  if (template === undefined) return '(no route)';
  return template.replace(/:([A-Za-z0-9_]+)/g, (whole, name: string) => {
    const value = params[name];
    return succeeded && typeof value === 'string' && RECORDED_ID.test(value) ? value : whole;
  });
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
  const succeeded = statusCode < 400;
  const params = (request.params ?? {}) as Record<string, unknown>;
  const template = request.is404 ? undefined : request.routeOptions.url;
  const schema = request.is404 ? undefined : request.routeOptions.schema;
  // The keys the request presented (valid or not), wherever else they also appear.
  const secrets = presentedSecrets(request.headers);
  const keys = context.keys ?? PRESENTED_ONLY;
  // An id the route set once it had validated or made it; else the path parameter of a resource found.
  const fromParam = spec.idParam !== undefined && succeeded ? params[spec.idParam] : undefined;
  const candidateId = request.auditResourceId ?? (typeof fromParam === 'string' ? fromParam : '');
  const resourceId = RECORDED_ID.test(candidateId) && !keys.readsKey(candidateId, secrets) ? candidateId : '';
  const queryStart = request.url.indexOf('?');
  const rawQuery = queryStart === -1 ? '' : request.url.slice(queryStart + 1);
  const userAgent = request.headers['user-agent'];
  const record: RecordLog = {
    uuid: request.id,
    ...classify(spec, statusCode),
    trace_id: traceIdFor(request.headers.traceparent),
    metadata: {
      route: template ?? null,
      durationMs: Math.round(reply.elapsedTime * 1000) / 1000,
      errorCode: request.errorCode,
    },
    status_code: statusCode,
    created_at: request.receivedAt ?? context.now().toISOString(),
    requestDetails: {
      method: request.method,
      path: truncated(recordedPath(template, params, succeeded && !Object.values(params).some((value) => typeof value === 'string' && keys.readsKey(value, secrets))), MAX_LOGGED_PATH_CHARS),
      query: recordedQuery(rawQuery, schema?.querystring),
      headers: recordedHeaders(request.headers),
    },
    request_body: loggedBody(request.body === undefined || request.body === null ? request.body : recordedBody(request.body, schema?.body)),
    email: request.auditEmail,
    actor_type: request.principal ? 'api_key' : 'anonymous',
    actor_id: request.principal?.keyId ?? '',
    resource_type: spec.resource,
    resource_id: resourceId,
    service: spec.service,
    action: spec.past,
    ip_address: clientAddress(request),
    user_agent: typeof userAgent === 'string' ? recordedUserAgent(userAgent, (token) => keys.readsKey(token, secrets)) : '',
    environment: context.environment,
  };
  // Every string kept, once more, against the presented keys and the remembered ones (the values
  // taken from the request were read above: the closed ones cannot hold a key).
  return keys.redactDeep(record, secrets);
}
