/**
 * The server log never holds a key: credential headers are censored wherever a log line carries
 * headers (pino `redact`), and the request line is logged with secret query parameters censored
 * (`?key=…`, `?api_key=…`, `?token=…`, or any value that is an authentication scheme and its
 * token, would otherwise be written with the URL). Request headers are not logged at all.
 *
 * And wherever else a key sits (issue 29): the key the request presented, valid or not, is
 * redacted from its request line (path and every query value, in any case or percent-encoding),
 * and every key the service knows in clear (./key-redaction.ts) from every string of every line.
 *
 * The request line is no longer the URL the client wrote (issue 38, item 9): it is the route's
 * template (`/api/domain/v1/:domain_id`), or `(no route)`, and the number of query parameters; the
 * record log (./audit.ts) keeps the validated values.
 */
import type { FastifyServerOptions } from 'fastify';
import { recordedPath, REDACTED, SECRET_HEADERS } from './audit.js';
import { KeyRedactor, presentedSecrets } from './key-redaction.js';
import type { IncomingHttpHeaders } from 'node:http';

/** Headers that carry credentials (the record log's list), as pino paths under any object that has `headers`. */
const CREDENTIAL_HEADERS = [...SECRET_HEADERS];

/** The pino `redact` paths: the request's headers, and headers one or two levels down any logged object. */
export const LOG_REDACT_PATHS: readonly string[] = CREDENTIAL_HEADERS.flatMap((name) => [
  `req.headers["${name}"]`,
  `headers["${name}"]`,
  `*.headers["${name}"]`,
  `*.*.headers["${name}"]`,
]);

/** What the server log records of a request: no headers, and the route rather than the URL. */
function requestSerializer(keys: KeyRedactor) {
  return (request: {
    method?: string;
    url?: string;
    ip?: string;
    headers?: IncomingHttpHeaders;
    socket?: { remotePort?: number };
    is404?: boolean;
    routeOptions?: { url?: string };
  }): Record<string, unknown> => {
    const template = request.is404 ? undefined : request.routeOptions?.url;
    const queryStart = request.url?.indexOf('?') ?? -1;
    const parameters = queryStart === -1 ? 0 : [...new URLSearchParams(request.url!.slice(queryStart + 1)).keys()].length;
    return {
      method: request.method,
      // The template is the service's own text; the check below only guards against a route written with a key in it.
      url: keys.redactText(recordedPath(template, {}, false), request.headers ? presentedSecrets(request.headers) : []),
      ...(parameters > 0 ? { queryParameters: parameters } : {}),
      remoteAddress: request.ip,
      remotePort: request.socket?.remotePort,
    };
  };
}

/**
 * Fastify's `logger` option with redaction added: `false` stays off; `true` or an options object
 * gets the redact paths, the request serializer (a caller's own serializers win for other keys),
 * and a pass over every line's fields and message for the keys `keys` remembers.
 */
export function loggerOptions(logger: FastifyServerOptions['logger'], keys: KeyRedactor = new KeyRedactor()): FastifyServerOptions['logger'] {
  if (logger === false || logger === undefined) return false;
  const base = logger === true ? {} : logger;
  const existing = base.redact;
  const extraPaths = Array.isArray(existing) ? existing : (existing?.paths ?? []);
  const ownLog = base.formatters?.log;
  return {
    ...base,
    redact: { paths: [...LOG_REDACT_PATHS, ...extraPaths], censor: REDACTED },
    serializers: { ...(base.serializers ?? {}), req: requestSerializer(keys) as never },
    formatters: {
      ...(base.formatters ?? {}),
      log: (object: Record<string, unknown>) => keys.redactDeep(ownLog ? ownLog(object) : object),
    },
    hooks: {
      ...(base.hooks ?? {}),
      logMethod(this: unknown, args: unknown[], method: (...rest: unknown[]) => void, level: number) {
        const redacted = args.map((arg) => (typeof arg === 'string' ? keys.redactText(arg) : arg));
        const own = base.hooks?.logMethod as ((this: unknown, a: unknown[], m: (...rest: unknown[]) => void, l: number) => void) | undefined;
        if (own) own.call(this, redacted, method, level);
        else method.apply(this, redacted);
      },
    },
  };
}
