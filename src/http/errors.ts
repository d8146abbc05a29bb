/**
 * The one error catalogue of the HTTP service. Every failed request answers with
 * `{ statusCode, code, message, why, fix }` (plus `query` for DNS errors and `retryAfter` for 429),
 * where `code` is one of the stable codes below: clients branch on `code`, people read the rest.
 * A 500 never carries internals (no stack, no exception text).
 */
import { isSpoofCheckError, normaliseDomainInput, type FailedQuery } from '@spoof-checker/engine';
import { isStoreUnavailable } from '../store/errors.js';
import { summarizeSchemaErrors, type SchemaErrorLike } from '../store/schema-errors.js';

/** Stable error codes. Once published, a code keeps its meaning. */
export type ErrorCode =
  | 'VALIDATION_FAILED'
  | 'INVALID_JSON'
  | 'MALFORMED_URL'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'ROUTE_NOT_FOUND'
  | 'PAYLOAD_TOO_LARGE'
  | 'STORAGE_QUOTA_EXCEEDED'
  | 'REQUEST_TIMEOUT'
  | 'HEADERS_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'RATE_LIMITED'
  | 'INVALID_DOMAIN'
  | 'DNS_FAILURE'
  | 'DNS_TIMEOUT'
  | 'DOMAIN_NOT_FOUND'
  | 'NOT_IN_DEMO'
  | 'MONITOR_EXISTS'
  | 'MONITOR_LIMIT_REACHED'
  | 'WEBHOOK_URL_REFUSED'
  | 'NO_WEBHOOK_URL'
  | 'ALERT_CHANNEL_REFUSED'
  | 'ALERT_CHANNEL_LIMIT_REACHED'
  | 'ALERT_EMAIL_NOT_CONFIGURED'
  | 'REPORT_REFUSED'
  | 'REPORT_PARSER_BUSY'
  | 'SERVICE_UNAVAILABLE'
  | 'STORE_UNAVAILABLE'
  | 'INTERNAL';

/** One entry of the catalogue: the HTTP status and the default wording. */
export interface CatalogueEntry {
  status: number;
  message: string;
  why: string;
  fix: string;
}

/** Every code with its status and default wording. Routes override `message`/`why` with specifics. */
export const ERROR_CATALOGUE: Readonly<Record<ErrorCode, CatalogueEntry>> = Object.freeze({
  VALIDATION_FAILED: {
    status: 400,
    message: 'The request is not valid.',
    why: 'The path, query string or JSON body did not match what this endpoint accepts.',
    fix: 'Correct the field named in the message; every field and bound is listed in the OpenAPI document at /openapi.json.',
  },
  INVALID_JSON: {
    status: 400,
    message: 'The request body is not valid JSON.',
    why: 'The body was sent as application/json but could not be parsed (or was empty).',
    fix: 'Send a JSON object, e.g. {"domain":"example.com"}, and check quoting and trailing commas.',
  },
  MALFORMED_URL: {
    status: 400,
    message: 'The request URL is malformed.',
    why: 'The path contains an invalid percent-encoding.',
    fix: 'Percent-encode reserved characters in path segments (e.g. %2F for "/").',
  },
  UNAUTHORIZED: {
    status: 401,
    message: 'A valid API key is required.',
    why: 'The request carried no API key, or a key this service does not know.',
    fix: "Send your key as 'Authorization: Bearer <key>' or as 'x-api-key: <key>'.",
  },
  FORBIDDEN: {
    status: 403,
    message: 'This request is not allowed.',
    why: 'It did not come from a console page of this service, or your role in the organisation does not allow it.',
    fix: 'Use the console page itself (reload it if it was open a long time), or ask an owner of the organisation for the role this needs.',
  },
  NOT_FOUND: {
    status: 404,
    message: 'Not found.',
    why: 'Nothing with this id exists in your organisation.',
    fix: 'Check the id; ids of other organisations are not visible to your key.',
  },
  ROUTE_NOT_FOUND: {
    status: 404,
    message: 'No such endpoint.',
    why: 'No endpoint of this API matches the method and path of the request.',
    fix: 'Check the method and path against the OpenAPI document at /openapi.json.',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    message: 'The request body is too large.',
    why: 'The body is larger than this service accepts.',
    fix: 'Send a smaller body.',
  },
  STORAGE_QUOTA_EXCEEDED: {
    status: 413,
    message: 'Your organisation has written as much as its storage quota allows for now.',
    why: 'Each organisation may write a bounded number of bytes per day (request bodies of every write together), so that one key cannot fill the disk.',
    fix: 'Wait for the number of seconds in the Retry-After header, or ask the operator for a larger quota.',
  },
  REQUEST_TIMEOUT: {
    status: 408,
    message: 'The request took too long to arrive.',
    why: 'The server closes connections whose headers or body are not received within its time limit.',
    fix: 'Send the whole request promptly; retry on a new connection.',
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    message: 'The request headers are too large.',
    why: 'The request line and headers together exceed what the server reads (16 KiB).',
    fix: 'Send fewer or shorter headers (large cookies are the usual cause).',
  },
  REPORT_REFUSED: {
    status: 422,
    message: 'The file holds no report that could be taken.',
    why: 'It is not a DMARC aggregate report (XML) or an SMTP TLS report (JSON), plain or in gzip or zip, or it is truncated, too large, or declares a DTD or entity (never processed).',
    fix: 'Send the report file as the reporter sent it (.xml, .xml.gz, .zip, .json, .json.gz); the reason in the message says what was wrong with this one.',
  },
  REPORT_PARSER_BUSY: {
    status: 503,
    message: 'The report parser is busy: send the file again shortly.',
    why: 'Reports wait for a parser process, and as many bytes of uploads as the service holds for them (MAX_REPORT_PARSE_QUEUED_BYTES) are already waiting; this one was not read.',
    fix: 'Wait for the number of seconds in the Retry-After header, then upload the file again.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    message: 'The request body must be JSON.',
    why: 'The Content-Type of the request is not application/json.',
    fix: "Send the body as JSON with the header 'Content-Type: application/json'.",
  },
  RATE_LIMITED: {
    status: 429,
    message: 'Too many requests.',
    why: 'You have reached the number of requests this operation allows in its time window.',
    fix: 'Wait for the number of seconds in the Retry-After header before retrying.',
  },
  INVALID_DOMAIN: {
    status: 400,
    message: 'This is not a domain name we can check.',
    why: 'Checking spoofability needs a domain name, a URL or an email address.',
    fix: 'Send a registered domain such as example.com.',
  },
  DNS_FAILURE: {
    status: 502,
    message: 'A DNS lookup failed, so no verdict can be given.',
    why: "A DNS server answered with an error for a lookup the verdict rests on; that is not the same as 'no record'.",
    fix: "Retry in a moment; if it persists, check the domain's name servers.",
  },
  DNS_TIMEOUT: {
    status: 503,
    message: 'A DNS lookup timed out, so no verdict can be given.',
    why: 'A lookup the verdict rests on did not answer in time.',
    fix: "Retry in a moment; if it persists, check that the domain's name servers answer.",
  },
  DOMAIN_NOT_FOUND: {
    status: 422,
    message: 'This domain does not exist, so there is nothing to check.',
    why: 'DNS answers NXDOMAIN for the registered domain: it is not registered, or its registration lapsed.',
    fix: 'Check the spelling of the domain, or register it before checking.',
  },
  NOT_IN_DEMO: {
    status: 404,
    message: 'This domain is not in the demo.',
    why: 'The demo answers from made-up zone files, only for its own domains; for any other name, even one its files hold a stand-in for (google.com), it would state a verdict about a real domain it never asked.',
    fix: "Use one of the demo's domains (listed on the demo's home page, such as p-none.example), or run the service without --demo to check real domains.",
  },
  MONITOR_EXISTS: {
    status: 409,
    message: 'This domain is already monitored.',
    why: 'Your organisation has a monitor for this domain already; one domain has one monitor.',
    fix: 'Change the existing monitor with PATCH (the message names its id), or delete it first.',
  },
  MONITOR_LIMIT_REACHED: {
    status: 409,
    message: 'Your organisation has as many monitors as it may have.',
    why: 'Each organisation may keep a bounded number of monitors (1,000 unless the operator set SPOOF_CHECKER_MAX_MONITORS), so that one key cannot fill the schedule.',
    fix: 'Delete monitors you no longer need, or ask the operator for a larger limit.',
  },
  WEBHOOK_URL_REFUSED: {
    status: 400,
    message: 'This webhook URL cannot be used.',
    why: 'Webhooks go to public http(s) addresses only: the URL is malformed, does not resolve, or resolves to a loopback, private, link-local or reserved address.',
    fix: 'Give a public https:// URL whose host resolves to a public address (labs: start the server with --allow-private-addresses).',
  },
  NO_WEBHOOK_URL: {
    status: 409,
    message: 'This monitor has no webhook URL.',
    why: 'Its webhook URL was removed (webhookUrl: null); a redelivery is never sent to the URL it had before.',
    fix: 'Set a webhook URL with PATCH /api/tools/v1/spoof-checker/monitors/{id} ({"webhookUrl": "https://…"}), then redeliver.',
  },
  ALERT_CHANNEL_REFUSED: {
    status: 400,
    message: 'This alert channel cannot be used.',
    why: 'A channel needs a name, a target (a public http(s) URL for a webhook, Slack or Teams; up to 10 addresses for email) and rules naming known kinds of event and valid domains.',
    fix: 'Correct the field the message names (labs: start the server with --allow-private-addresses to reach private addresses).',
  },
  ALERT_CHANNEL_LIMIT_REACHED: {
    status: 409,
    message: 'Your organisation has as many alert channels as it may have.',
    why: 'Each organisation may keep a bounded number of alert channels (20).',
    fix: 'Delete channels you no longer need, or widen the rules of one you keep.',
  },
  ALERT_EMAIL_NOT_CONFIGURED: {
    status: 409,
    message: 'This service sends no alert mail.',
    why: 'Email channels need the mail relay the operator configures (serve --alert-smtp URL --alert-from ADDRESS, or SPOOF_CHECKER_ALERT_SMTP).',
    fix: 'Ask the operator to configure the relay, or use a Slack, Teams or webhook channel.',
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    message: 'The service is shutting down.',
    why: 'The server is closing and accepts no new requests.',
    fix: 'Retry in a moment.',
  },
  STORE_UNAVAILABLE: {
    status: 503,
    message: 'The database cannot be reached, so this request could not be served.',
    why: 'The service is running but its data store (the database, or the Redis that counts rate limits) does not answer.',
    fix: 'Retry in a moment; the service resumes by itself once the store is back. Operators: see GET /readyz and the server log.',
  },
  INTERNAL: {
    status: 500,
    message: 'Something went wrong on our side.',
    why: 'The server failed while handling the request. The failure has been logged.',
    fix: 'Retry; if it keeps failing, report the x-log-id header of the response.',
  },
});

/** The JSON body of every error response. */
export interface ErrorBody {
  statusCode: number;
  code: ErrorCode;
  message: string;
  why: string;
  fix: string;
  /** The DNS lookup that failed (DNS_FAILURE, DNS_TIMEOUT and, when one is at fault, INVALID_DOMAIN). */
  query?: FailedQuery;
  /** Seconds to wait (RATE_LIMITED), the same as the Retry-After header. */
  retryAfter?: number;
}

/** An error of the catalogue, thrown by routes and hooks and rendered by the error handler. */
export class ApiError extends Error {
  override readonly name = 'ApiError' as const;
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly why: string;
  readonly fix: string;
  readonly query: FailedQuery | undefined;
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, overrides: Partial<Pick<CatalogueEntry, 'message' | 'why' | 'fix'>> & { query?: FailedQuery; retryAfter?: number } = {}) {
    const entry = ERROR_CATALOGUE[code];
    super(overrides.message ?? entry.message);
    this.code = code;
    this.statusCode = entry.status;
    this.why = overrides.why ?? entry.why;
    this.fix = overrides.fix ?? entry.fix;
    this.query = overrides.query;
    this.retryAfter = overrides.retryAfter;
  }

  /** The response body. */
  toBody(): ErrorBody {
    return {
      statusCode: this.statusCode,
      code: this.code,
      message: this.message,
      why: this.why,
      fix: this.fix,
      ...(this.query ? { query: this.query } : {}),
      ...(this.retryAfter !== undefined ? { retryAfter: this.retryAfter } : {}),
    };
  }
}

/** A 404 for a resource of the caller's organisation: `what` names it ("Domain", "Template"…). */
export function notFound(what: string, id: string): ApiError {
  return new ApiError('NOT_FOUND', {
    message: `${what} not found.`,
    why: `No ${what.toLowerCase()} with the id "${id}" exists in your organisation.`,
  });
}

/** The domains a service answers for (`serve --demo`: the demo's own), as {@link notInScope} reads them. */
export interface DomainScope {
  /** Whether `domain` (an A-label name, normalised) is in scope. */
  allows(domain: string): boolean;
  /** A few of the domains in scope, for the refusal's fix. */
  examples: readonly string[];
}

/**
 * 404 NOT_IN_DEMO for the first of `named` that is a domain outside `scope` (undefined when none is).
 * A name that is not a domain is left to the route to refuse (INVALID_DOMAIN, with its reason).
 * `subject` words the message (a check names the domain; an uploaded report says what it is about).
 */
export function notInScope(scope: DomainScope, named: readonly string[], subject: (domain: string) => string = (domain) => `${domain} is not in the demo: the demo answers only for its own domains.`): ApiError | undefined {
  for (const name of named) {
    const normalised = normaliseDomainInput(name);
    if (!normalised.ok || scope.allows(normalised.domain)) continue;
    return new ApiError('NOT_IN_DEMO', {
      message: subject(normalised.domain),
      fix: `Use one of the demo's domains (${scope.examples.slice(0, 3).join(', ')}; every one is listed on the demo's home page), or run the service without --demo to check real domains.`,
    });
  }
  return undefined;
}

/** The check engine's refusals, by code: the status comes from the catalogue. */
const CHECK_ERROR_CODES = { invalid_domain: 'INVALID_DOMAIN', dns_failure: 'DNS_FAILURE', dns_timeout: 'DNS_TIMEOUT', domain_not_found: 'DOMAIN_NOT_FOUND' } as const;

/** The fields of a Fastify error this module reads. */
interface FrameworkErrorLike {
  code?: unknown;
  statusCode?: unknown;
  validation?: readonly SchemaErrorLike[];
  validationContext?: string;
}

/** Fastify's own errors by code: the catalogue's code, and the message when it is more specific than the catalogue's. */
const FRAMEWORK_ERRORS: Readonly<Record<string, readonly [ErrorCode, string?]>> = {
  FST_ERR_CTP_INVALID_JSON_BODY: ['INVALID_JSON'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['INVALID_JSON'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['PAYLOAD_TOO_LARGE'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['UNSUPPORTED_MEDIA_TYPE'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['VALIDATION_FAILED', 'The Content-Length header does not match the body.'],
  FST_ERR_MAX_PARAM_LENGTH: ['VALIDATION_FAILED', 'A path segment of the URL is too long.'],
  FST_ERR_BAD_URL: ['MALFORMED_URL'],
  FST_ERR_NOT_FOUND: ['ROUTE_NOT_FOUND'],
  // The docs' static files refuse a path that climbs out of their folder (`/docs/static/x/..`):
  // nothing is served there, so it is an unknown path, not a fault.
  FST_STATIC_FORBIDDEN_PATH: ['ROUTE_NOT_FOUND'],
};

/** Labels of the request parts in validation messages. */
const PART_LABELS: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

/**
 * Maps anything thrown while handling a request to an error of the catalogue. `parts` are the
 * request's parsed parts, to quote the bad value in validation messages. Unknown errors become
 * INTERNAL, whose body says nothing of the error.
 */
export function toApiError(error: unknown, parts: { body?: unknown; query?: unknown; params?: unknown } = {}): ApiError {
  if (error instanceof ApiError) return error;
  // The store's message may name hosts or files: the client gets the catalogue's words, the log the rest.
  if (isStoreUnavailable(error)) return new ApiError('STORE_UNAVAILABLE');
  if (isSpoofCheckError(error)) {
    return new ApiError(CHECK_ERROR_CODES[error.code], { message: error.message, why: error.why, fix: error.fix, ...(error.query ? { query: error.query } : {}) });
  }
  const framework = (typeof error === 'object' && error !== null ? error : {}) as FrameworkErrorLike;
  if (Array.isArray(framework.validation)) {
    const part = framework.validationContext ?? 'body';
    const root = part === 'body' ? parts.body : part === 'querystring' ? parts.query : part === 'params' ? parts.params : undefined;
    return new ApiError('VALIDATION_FAILED', { message: summarizeSchemaErrors(framework.validation, root, PART_LABELS[part] ?? part) });
  }
  const known = typeof framework.code === 'string' && Object.hasOwn(FRAMEWORK_ERRORS, framework.code) ? FRAMEWORK_ERRORS[framework.code] : undefined;
  if (known) return new ApiError(known[0], known[1] === undefined ? {} : { message: known[1] });
  if (framework.statusCode === 404) return new ApiError('ROUTE_NOT_FOUND');
  // A body that is not JSON-shaped at all (e.g. a stream error while reading) is the client's problem.
  if (framework.statusCode === 400) return new ApiError('VALIDATION_FAILED', { message: 'The request could not be read.' });
  if (framework.statusCode === 503) return new ApiError('SERVICE_UNAVAILABLE');
  return new ApiError('INTERNAL');
}
