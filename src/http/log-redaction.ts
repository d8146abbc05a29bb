/**
 * The server log never holds a key: credential headers are censored wherever a log line carries
 * headers (pino `redact`), and the request line is logged with secret query parameters censored
 * (`?key=…`, `?api_key=…`, `?token=…`, or any value that is an authentication scheme and its
 * token, would otherwise be written with the URL). Request headers are not logged at all.
 */
import type { FastifyServerOptions } from 'fastify';
import { REDACTED, redactUrl, SECRET_HEADERS } from './audit.js';

/** Headers that carry credentials (the record log's list), as pino paths under any object that has `headers`. */
const CREDENTIAL_HEADERS = [...SECRET_HEADERS];

/** The pino `redact` paths: the request's headers, and headers one or two levels down any logged object. */
export const LOG_REDACT_PATHS: readonly string[] = CREDENTIAL_HEADERS.flatMap((name) => [
  `req.headers["${name}"]`,
  `headers["${name}"]`,
  `*.headers["${name}"]`,
  `*.*.headers["${name}"]`,
]);

/** What the server log records of a request: no headers, and the URL with secrets censored. */
function serializeRequest(request: { method?: string; url?: string; ip?: string; socket?: { remotePort?: number } }): Record<string, unknown> {
  return { method: request.method, url: redactUrl(request.url ?? ''), remoteAddress: request.ip, remotePort: request.socket?.remotePort };
}

/**
 * Fastify's `logger` option with redaction added: `false` stays off; `true` or an options object
 * gets the redact paths and the request serializer (a caller's own serializers win for other keys).
 */
export function loggerOptions(logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (logger === false || logger === undefined) return false;
  const base = logger === true ? {} : logger;
  const existing = base.redact;
  const extraPaths = Array.isArray(existing) ? existing : (existing?.paths ?? []);
  return {
    ...base,
    redact: { paths: [...LOG_REDACT_PATHS, ...extraPaths], censor: REDACTED },
    serializers: { ...(base.serializers ?? {}), req: serializeRequest as never },
  };
}
