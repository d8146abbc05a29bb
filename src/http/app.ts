/**
 * The HTTP service: a Fastify app over the stores and an injected spoof check. Everything it uses
 * comes in through `AppOptions` (stores, check function, API keys, limits, logger, clock): no
 * globals, so tests build as many independent apps as they like.
 *
 * Two forms: `buildApp` makes a whole server (time limits, body limit, trusted proxies, log
 * redaction, then the service), and `spoofCheckerService` is the service alone as a Fastify plugin
 * that another Fastify host can `register`. These serve the API only; the composition root
 * (src/service/compose.ts, exported as `spoof-checker/service`) adds the public page.
 *
 * Request life cycle: a forged `X-Forwarded-For` that is not a list of IP addresses is dropped;
 * `onRequest` refuses a client locked out for its failed authentications (429), authenticates
 * (401 before anything else, so a request without a valid key never has its body read; each 401
 * is counted) and counts a write against its organisation's write limit, then the route's rate
 * limiter runs (per organisation or per client address and its IPv6 networks), then the body is
 * parsed (JSON only, at most `DEFAULT_BODY_LIMIT_BYTES`, nested at most `MAX_JSON_DEPTH` deep) and
 * validated strictly (src/http/validation.ts), a write's bytes are counted against the storage
 * quota (413), then the handler. Whatever the outcome, `onSend` writes the record log (its reply
 * waits for the record's group commit) and sets `x-log-id`; every error, including those Node's
 * parser raises before routing (400, 408, 431), goes through the one catalogue (src/http/errors.ts).
 * Limits are described in docs/security.md.
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Server } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyReply, type FastifyRequest, type FastifyServerOptions, type onRequestHookHandler } from 'fastify';
import type { RecordLog, Stores } from '../store/types.js';
import { apiKeyWeakness, STRONG_KEY_ADVICE } from '../store/api-key-strength.js';
import { digestApiKey, apiKeyIdFromDigest } from '../store/api-keys.js';
import { buildRecord, traceIdFor } from './audit.js';
import { authenticate, CachedKeyLookup, FailedAuthLimiter, presentedKey, WeakKeyFilter } from './auth.js';
import { clientAddress, clientNetworks, clientRateLimitKey, dropInvalidForwardedFor, fastifyTrustProxy, type TrustProxy } from './client-address.js';
import './context.js';
import { registerCompression } from './compression.js';
import { ApiError, notInScope, toApiError, type DomainScope } from './errors.js';
import { KeyRedactor, keyFreeReportStore, presentedSecrets } from './key-redaction.js';
import { loggerOptions } from './log-redaction.js';
import { createLimiters, DEFAULT_RATE_LIMITS, IPV6_48_ALLOWANCE_FACTOR, IPV6_56_ALLOWANCE_FACTOR, type Limit, type RateLimitRedis, type RateLimits } from './rate-limits.js';
import { createCounter, type WindowCounter } from './counters.js';
import { meterBody, storageMeter } from './storage-quota.js';
import type { BatchService } from '../jobs/batches/service.js';
import { batchRoutes } from './routes/batches.js';
import { contactRoutes } from './routes/contacts.js';
import { reportRoutes, type ReportRouteSettings } from './routes/reports.js';
import { failureReportRoutes } from './routes/failure-reports.js';
import { reportSelectorCache } from '../summaries/selectors.js';
import { domainRoutes } from './routes/domains.js';
import { HEALTH_PATH, healthRoutes, READY_PATH } from './routes/health.js';
import { logRoutes } from './routes/logs.js';
import { monitorRoutes } from './routes/monitors.js';
import { alertRoutes } from './routes/alerts.js';
import { monitorLookalikeRoutes } from './routes/monitor-lookalikes.js';
import type { MonitorService } from '../jobs/monitors/monitors.js';
import { lookalikeRoutes, type LookalikeRun } from './routes/lookalikes.js';
import type { LookalikeJobService } from '../jobs/batches/lookalike-jobs.js';
import { spoofCheckerRoutes, type SpoofCheck } from './routes/spoof-checker.js';
import { templateRoutes } from './routes/templates.js';
import { SHARED_SCHEMAS } from './schemas.js';
import { jsonDepthProblem, validatorCompiler } from './validation.js';

/** Largest request body accepted (1 MiB); larger bodies get 413 PAYLOAD_TOO_LARGE. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;
/**
 * Longest path parameter the router accepts. Above the schemas' own bounds (255), so that a long id
 * gets the schema's precise 400 rather than the router's generic refusal.
 */
export const MAX_PATH_PARAM_LENGTH = 2048;
/** Where the interactive API documentation is served. */
export const DOCS_PATH = '/docs';
/** Where the OpenAPI 3 document is served. */
export const OPENAPI_PATH = '/openapi.json';

/** How long a client may take, in milliseconds, before its connection is cut. */
export interface ServerTimeouts {
  /** To send the request line and every header (Node's `server.headersTimeout`). */
  headersMs: number;
  /** To send the whole request, body included (`server.requestTimeout`). */
  requestMs: number;
  /** An idle kept-alive connection stays open this long between requests (`server.keepAliveTimeout`). */
  keepAliveMs: number;
}

/** Headers in 10 s, the whole request in 30 s, an idle keep-alive connection closed after 5 s. */
export const DEFAULT_TIMEOUTS: Readonly<ServerTimeouts> = Object.freeze({ headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000 });
/**
 * On `close()`, connections still open get at most this long to deliver requests their clients have
 * already sent (each is answered 503 with `Connection: close`) before idle ones are dropped.
 */
export const DEFAULT_SHUTDOWN_GRACE_MS = 250;
/** While closing, how often the grace checks whether every connection has ended. */
const SHUTDOWN_POLL_MS = 10;
/**
 * Longest the grace may last in all: it starts over while requests are still being answered (a
 * loaded event loop reads the requests waiting in sockets only after those), but never past this.
 */
export const MAX_SHUTDOWN_GRACE_MS = 5_000;
/**
 * How often Node checks open connections against the header and request time limits (its default,
 * 30 s, would let a half-sent request live up to 30 s past its limit). A quarter of the header
 * limit, at most this.
 */
export const MAX_CONNECTION_CHECK_INTERVAL_MS = 1_000;

/** The domains a service answers for, and how to name them in a refusal. */
export type { DomainScope } from './errors.js';

/** The domains a request names: `domain` in the body, the path or the query string, and a batch's `domains`. */
export function domainsNamedBy(request: { body?: unknown; params?: unknown; query?: unknown }): string[] {
  const named: string[] = [];
  for (const part of [request.body, request.params, request.query]) {
    if (part === null || typeof part !== 'object') continue;
    const fields = part as Record<string, unknown>;
    if (typeof fields['domain'] === 'string') named.push(fields['domain']);
    if (Array.isArray(fields['domains'])) for (const d of fields['domains']) if (typeof d === 'string') named.push(d);
  }
  return named;
}

/** An API key given in clear at start (e.g. from `SPOOF_CHECKER_API_KEYS`), hashed before it is stored. */
export interface StartupApiKey {
  key: string;
  organizationId: string;
}

/** What the service plugin needs (everything but the server-level settings). */
export interface ServiceOptions {
  stores: Stores;
  /** Runs one spoof check; the caller binds `checkDomain` to a resolver. */
  check: SpoofCheck;
  /**
   * Keys to add at start. An organisation the stores do not have is created, empty. A weak key
   * (`apiKeyWeakness`: short, runs, repeats, common words) is refused with an error.
   */
  apiKeys?: StartupApiKey[];
  /**
   * Accept weak keys the store holds when they are presented (the published demo keys): only
   * `serve --demo` on loopback sets it. Off by default: such a key answers 401.
   */
  acceptWeakKeys?: boolean;
  /** Rate limits; `false` turns them all off. Partial values override the defaults. */
  rateLimits?: Partial<RateLimits> | false;
  /**
   * The only domains the API answers for (`serve --demo`: the demo's own domains). A request that
   * names another domain (a check, a lookalike search, a monitor, a batch name, a report summary)
   * answers 404 `NOT_IN_DEMO`, never a verdict. Left out: every domain.
   */
  domainScope?: DomainScope;
  /**
   * An ioredis client: the rate limits then count in Redis, shared by every replica that uses the
   * same Redis. Without it they count in this process. The caller owns (and closes) the client.
   */
  rateLimitRedis?: RateLimitRedis;
  /** `environment` of every record log (e.g. production, development). */
  environment?: string;
  /** Clock, injected for tests. */
  now?: () => Date;
  /** Title and version shown in the OpenAPI document. */
  apiInfo?: { title?: string; version?: string };
  /**
   * Runs one lookalike search (`findLookalikes` bound to a resolver): without it
   * `POST /api/tools/v1/lookalikes` is not served.
   */
  lookalikes?: LookalikeRun;
  /** Deep lookalike runs as jobs (src/jobs/batches/lookalike-jobs.ts): without it a deep run answers 503. */
  lookalikeJobs?: LookalikeJobService;
  /** Batch checks (src/jobs/batches/): without it the batch routes are not served. */
  batches?: BatchService;
  /** Monitors (src/jobs/monitors/monitors.ts): without it the monitor routes are not served. */
  monitors?: MonitorService;
  /** The public history page of a monitored domain (`--public-history`); off by default. */
  publicHistory?: boolean;
  /** The report routes' resolver (SPF for the tightening) and the service's report domain (src/http/routes/reports.ts). */
  reports?: ReportRouteSettings;
  /** The grace on close, in milliseconds (`DEFAULT_SHUTDOWN_GRACE_MS`); 0 drops idle connections at once. */
  shutdownGraceMs?: number;
  /**
   * More routes served inside the service, after the API's (its hooks apply; a route marked
   * `config.public` skips the key and the record log). The composition root (src/service/compose.ts)
   * adds the public page here: http/ does not import web/.
   */
  routes?: readonly ServiceRoutes[];
  /**
   * The service's public base URL (`https://checker.example`): the links the page shows start with
   * it. Without it they use the request's own Host header, never X-Forwarded-Host.
   */
  publicUrl?: string;
  /**
   * More keys known in clear that no log or stored record may hold (the seed file's keys; the
   * startup `apiKeys` and every key that authenticates are added by themselves).
   */
  redactKeys?: readonly string[];
  /** The keys to redact, shared with the server log's redaction (`buildApp` makes one; a host may pass its own). */
  keyRedactor?: KeyRedactor;
}

/** A set of routes added to the service: called with the service's Fastify scope and the rate limits in force. */
/** What the service hands the routes the composition adds: its limits, where it counts them, its public URL. */
export interface ServiceRoutesContext {
  limits: RateLimits | false;
  /** The app's counter (Redis with a local fallback, or this process), shared with the API's limits. */
  counter: WindowCounter;
  publicUrl: string | undefined;
}
export type ServiceRoutes = (app: FastifyInstance, context: ServiceRoutesContext) => Promise<void>;

/** Everything the app depends on. */
export interface AppOptions extends ServiceOptions {
  /** Fastify's logger option (false in tests; the CLI passes a stream). Keys are always redacted. */
  logger?: FastifyServerOptions['logger'];
  bodyLimit?: number;
  /** Which proxies to believe about the client address (`X-Forwarded-For`); none by default. */
  trustProxy?: TrustProxy;
  /** Time limits per connection; partial values override `DEFAULT_TIMEOUTS`. */
  timeouts?: Partial<ServerTimeouts>;
  /**
   * Compress responses as `Accept-Encoding` asks (src/http/compression.ts); on by default. Off for a
   * proxy in front that compresses itself.
   */
  compression?: boolean;
}

/** Builds the app, ready to `inject` into or `listen`. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { stores } = options;
  const now = options.now ?? (() => new Date());
  const environment = options.environment ?? 'development';
  const timeouts = { ...DEFAULT_TIMEOUTS, ...(options.timeouts ?? {}) };
  // One set of keys to redact for the server log and the record log (./key-redaction.ts).
  const keyRedactor = options.keyRedactor ?? new KeyRedactor();

  const app = Fastify({
    logger: loggerOptions(options.logger ?? false, keyRedactor),
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT_BYTES,
    // A client that sends half its headers or half its body is cut off (Node answers 408 and closes).
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    http: {
      headersTimeout: Math.min(timeouts.headersMs, timeouts.requestMs),
      connectionsCheckingInterval: Math.max(1, Math.min(MAX_CONNECTION_CHECK_INTERVAL_MS, Math.floor(timeouts.headersMs / 4))),
    },
    // The request id is the record log's uuid: one id in the server log, the audit trail and x-log-id.
    genReqId: () => randomUUID(),
    trustProxy: fastifyTrustProxy(options.trustProxy ?? false),
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    // Fastify's own 503 while closing bypasses the hooks; ours (below) goes through the catalogue and the record log.
    return503OnClosing: false,
    // Errors Node's parser raises before Fastify sees a request (a malformed request line or header,
    // headers over 16 KiB, a request that took too long) answer from the catalogue too, with a record.
    clientErrorHandler(error: Error & { code?: string }, socket) {
      answerClientError(error, socket, { stores, environment, now, log: app.log });
    },
    // Errors Fastify raises before routing (a malformed URL) go through the catalogue too.
    // Their responses skip the hooks, so the record log is written here.
    frameworkErrors: (error, rawRequest, rawReply) => {
      const request = rawRequest as FastifyRequest;
      const reply = rawReply as FastifyReply;
      dropInvalidForwardedFor(request.raw);
      const apiError = toApiError(error);
      request.errorCode = apiError.code;
      void reply.code(apiError.statusCode);
      const record = buildRecord(request, reply, { environment, now, keys: keyRedactor });
      void stores.recordLogs
        .append(null, record)
        .catch((appendError: unknown) => request.log.error({ err: appendError }, 'record log not written'))
        .finally(() => {
          void reply.header('x-log-id', record.uuid).type('application/json').send(apiError.toBody());
        });
    },
  });

  // First of all: a forged X-Forwarded-For that is not a list of IP addresses is dropped, so that
  // the client address every limit and record uses is an address, never a string a client wrote.
  app.addHook('onRequest', async (request) => dropInvalidForwardedFor(request.raw));
  // On the root scope, so that every answer (routes, errors, not found) is compressed as asked.
  if (options.compression !== false) registerCompression(app);
  await app.register(spoofCheckerService, { ...options, keyRedactor });
  await app.ready();
  return app;
}

/**
 * The service as a Fastify plugin, for a host that has its own server: `await
 * host.register(spoofCheckerService, { stores, check })`. It is encapsulated: its hooks, error
 * handler and not-found handler apply to its own routes only. Server-level protections (time
 * limits, body limit, trusted proxies, log redaction) are the host's to set; `buildApp` sets them.
 */
export const spoofCheckerService: FastifyPluginAsync<ServiceOptions> = async (host, options) => {
  const app = host.withTypeProvider<TypeBoxTypeProvider>();
  const { stores, check } = options;
  const now = options.now ?? (() => new Date());
  const environment = options.environment ?? 'development';

  app.setValidatorCompiler(validatorCompiler);
  // Handlers build every body field by field with the schema's static type (the type provider checks
  // it), so fast-json-stringify's projection adds nothing but start-up time (~200 ms per app and
  // ~100 ms on each route's first response); plain JSON.stringify serializes the same bytes.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // JSON is the only body type: text/plain would otherwise parse, fail validation and read as a 400.
  app.removeContentTypeParser('text/plain');
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);

  app.decorateRequest('principal', null);
  app.decorateRequest('receivedAt', null);
  app.decorateRequest('errorCode', null);
  app.decorateRequest('auditResourceId', null);
  app.decorateRequest('auditEmail', null);

  // The same rule as SPOOF_CHECKER_API_KEYS and seed files: a weak key is refused at start (src/store/api-key-strength.ts).
  for (const [index, { key, organizationId }] of (options.apiKeys ?? []).entries()) {
    const weakness = apiKeyWeakness(key);
    if (weakness !== null) throw new Error(`apiKeys[${index}] (organisation "${organizationId}"): the key is too weak: ${weakness}. ${STRONG_KEY_ADVICE}`);
  }
  for (const key of options.apiKeys ?? []) await addStartupKey(stores, key);
  // Keys known in clear are redacted from every log and record, wherever they appear (issue 29).
  const keyRedactor = options.keyRedactor ?? new KeyRedactor();
  for (const key of [...(options.apiKeys ?? []).map((startup) => startup.key), ...(options.redactKeys ?? [])]) keyRedactor.remember(key);
  // Keys the store holds that are weak (a seed's digests, demo keys left behind) are refused when presented, unless allowed.
  const weakKeys = options.acceptWeakKeys ? undefined : new WeakKeyFilter();

  const limits = options.rateLimits === false ? false : { ...DEFAULT_RATE_LIMITS, ...(options.rateLimits ?? {}) };
  // The counters of the limits @fastify/rate-limit does not cover: in Redis when given (falling back
  // to this process while Redis is away, so these limits degrade instead of failing), else here.
  const counter = createCounter(options.rateLimitRedis, (error) => app.log.error({ err: error }, 'rate-limit counters: Redis failed; counting in this process until it answers'));
  const failedAuth = limits === false ? undefined : new FailedAuthLimiter(counter, limits.failedAuth);
  // Keys found are remembered for a few seconds (API_KEY_CACHE_TTL_MS): one store query per key, not per request.
  const keys = new CachedKeyLookup(stores.apiKeys);

  // The documentation routes (registered by plugins) are public and not audited.
  app.addHook('onRoute', (route) => {
    if (route.url === OPENAPI_PATH || route.url === DOCS_PATH || route.url.startsWith(`${DOCS_PATH}/`)) {
      route.config = { ...(route.config ?? {}), public: true };
    }
    // A read (GET) of the API that declares no query parameters accepts none: `?x=1` is a 400 naming
    // it, never silently ignored (the routes that take some declare them with additionalProperties false).
    const config = route.config as { public?: boolean } | undefined;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    // The public probes and the OpenAPI document take no query either (`/healthz?x=1` is a 400 from the catalogue too).
    const takesNoQuery = !config?.public || NO_QUERY_PUBLIC_PATHS.has(route.url);
    if (takesNoQuery && methods.includes('GET') && route.schema && route.schema.querystring === undefined) {
      route.schema = { ...route.schema, querystring: NO_QUERY_PARAMETERS };
    }
  });

  // Graceful shutdown: close() stops accepting and waits for the requests in flight. Node closes idle
  // keep-alive connections only once, when close() starts, so a connection whose request was still
  // running would then stay open until its keep-alive timeout: answer such requests with
  // `Connection: close` so that the socket ends with the response.
  //
  // Node's close() drops idle keep-alive connections at once, and "idle" includes a connection whose
  // next request the client has sent but this process has not read yet (it waits in the socket's
  // buffer while the event loop is busy): that client gets a reset and cannot tell whether its
  // request was done. The grace lets such requests be read and answered 503 first.
  // While this process is still answering requests, the grace starts over (up to
  // MAX_SHUTDOWN_GRACE_MS in all): a busy event loop gets to the requests waiting in sockets only
  // after it has answered those, and a fixed wall-clock grace would run out first on a loaded machine.
  let closing = false;
  let answering = 0;
  const counted = new WeakSet<FastifyRequest>();
  const done = (request: FastifyRequest): void => {
    if (counted.delete(request)) answering--;
  };
  app.addHook('preClose', async () => {
    closing = true;
    const graceMs = options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
    if (!app.server.listening || graceMs <= 0) return;
    const started = Date.now();
    let until = started + graceMs;
    while (Date.now() < until && (await openConnections(app.server)) > 0) {
      if (answering > 0) until = Math.min(started + Math.max(graceMs, MAX_SHUTDOWN_GRACE_MS), Date.now() + graceMs);
      await sleep(SHUTDOWN_POLL_MS);
    }
    // The grace ends in the event loop's timers phase. On a starved machine the process may wake
    // after the grace with requests waiting unread in their sockets: reading happens in the poll phase,
    // which comes after timers, so close() would drop those connections as idle first. One turn to
    // the check phase (after poll) reads them, whatever the machine's speed.
    await new Promise<void>((resolve) => setImmediate(resolve));
  });
  app.addHook('onResponse', async (request) => done(request));
  app.addHook('onRequestAbort', async (request) => done(request));

  app.addHook('onRequest', async (request) => {
    counted.add(request);
    answering++;
    request.receivedAt = now().toISOString();
    // A request that arrives on a kept-alive connection while closing is refused through the catalogue,
    // its record log kept under the organisation of a valid key, so that the client can read it back.
    if (closing) {
      if (!request.routeOptions.config.public) request.principal = await authenticate(keys, request.headers, false, weakKeys).catch(() => null);
      throw new ApiError('SERVICE_UNAVAILABLE');
    }
    if (request.routeOptions.config.public) return;
    const client = clientRateLimitKey(clientAddress(request));
    // A client that has sent too many wrong keys is refused before its key is even looked at.
    if (!request.is404) failedAuth?.refuseIfLockedOut(client);
    // An unknown route needs no key (it answers 404 either way), but a valid key still names the
    // organisation in its record log.
    try {
      request.principal = await authenticate(keys, request.headers, !request.is404, weakKeys);
      // A key that authenticated is known in clear from now on: redacted wherever it appears.
      if (request.principal) {
        const presented = presentedKey(request.headers);
        if (presented.kind === 'key') keyRedactor.remember(presented.key);
      }
    } catch (error) {
      if (error instanceof ApiError && error.code === 'UNAUTHORIZED' && failedAuth) throw (await failedAuth.failed(client)) ?? error;
      throw error;
    }
    // Answered here, before the body is read: an unknown route with a body was a 400 INVALID_JSON
    // after parsing up to 1 MiB, instead of the 404 it is.
    if (request.is404) throw routeNotFound(request);
    if (limits !== false && request.principal && isCountedWrite(request)) {
      await refuseOverLimit(counter, `writes:${request.principal.organizationId}`, limits.organizationWrites, 1, (seconds) =>
        new ApiError('RATE_LIMITED', {
          message: 'Your organisation is writing too fast.',
          why: `Each organisation may make ${limits.organizationWrites.max} write(s) (POST, PUT, PATCH, DELETE) per ${Math.round(limits.organizationWrites.windowMs / 1000)} second(s).`,
          fix: `Wait ${seconds} second(s) before retrying.`,
          retryAfter: seconds,
        }),
      );
    }
  });

  // The storage quota: the bytes of the bodies an organisation writes, per window. The bytes actually
  // read are counted as they arrive (a chunked body has no Content-Length to trust) and the body stops
  // as soon as they pass the quota (src/http/storage-quota.ts); a body under one charge step that
  // fails validation costs nothing.
  const quotaRefusal = (quota: Limit) => (seconds: number) =>
    new ApiError('STORAGE_QUOTA_EXCEEDED', {
      why: `Each organisation may write ${quota.max} bytes of request bodies per ${Math.round(quota.windowMs / 3_600_000)} hour(s); this request would go past it.`,
      fix: `Wait ${seconds} second(s) (the Retry-After header), delete what is no longer needed, or ask the operator for a larger quota.`,
      retryAfter: seconds,
    });
  const quotaKey = (organizationId: string) => `write-bytes:${organizationId}`;
  app.addHook('preParsing', async (request, _reply, payload) => {
    if (limits === false || !request.principal || !isCountedWrite(request)) return payload;
    const quota = limits.organizationWriteBytes;
    const organizationId = request.principal.organizationId;
    return meterBody(request, payload, (bytes) => refuseOverLimit(counter, quotaKey(organizationId), quota, bytes, quotaRefusal(quota)));
  });
  app.addHook('preHandler', async (request) => {
    if (limits === false || !request.principal || !isCountedWrite(request)) return;
    const meter = storageMeter(request);
    let bytes: number;
    if (meter !== undefined) {
      bytes = meter.read - meter.charged;
      meter.charged = meter.read;
    } else bytes = bodyBytes(request);
    if (bytes === 0) return;
    const quota = limits.organizationWriteBytes;
    await refuseOverLimit(counter, quotaKey(request.principal.organizationId), quota, bytes, quotaRefusal(quota));
  });
  // What a request stored beyond the bytes it sent (report records from a small gzip) is charged once
  // it is answered: the next write finds the quota spent.
  app.addHook('onResponse', async (request) => {
    const meter = storageMeter(request);
    if (limits === false || !request.principal || meter === undefined || meter.stored <= meter.read) return;
    await counter.hit([{ key: quotaKey(request.principal.organizationId), windowMs: limits.organizationWriteBytes.windowMs }], meter.stored - meter.read).catch(() => undefined);
  });

  // The demo answers only for its own domains: another name (google.com, whose stand-in zone the
  // fixtures hold, or any real domain) is refused before any check, never given a verdict.
  if (options.domainScope) {
    const scope = options.domainScope;
    app.addHook('preHandler', async (request) => {
      if (request.routeOptions.config.public) return;
      const refusal = notInScope(scope, domainsNamedBy(request));
      if (refusal) throw refusal;
    });
  }

  // JSON.parse copes with any depth, but every later step that walks the body (validation, storage,
  // serialization) recurses: a body nested thousands deep would overflow the stack there.
  app.addHook('preValidation', async (request) => {
    const problem = jsonDepthProblem(request.body);
    if (problem) throw new ApiError('VALIDATION_FAILED', { message: problem });
    // A body that carries a key would store it (a webhook URL, a template, a contact): refused.
    if (request.body !== undefined && request.body !== null && !request.routeOptions.config.public) {
      const where = keyRedactor.findKey(request.body, presentedSecrets(request.headers));
      if (where !== undefined) {
        throw new ApiError('VALIDATION_FAILED', {
          message: `The request body carries an API key (in ${where}).`,
          why: 'What a request body holds may be stored, sent on (a webhook URL) and shown again; a key must never be.',
          fix: 'Send the key only in the Authorization or x-api-key header, and remove it from the body.',
        });
      }
    }
  });

  app.addHook('onSend', async (request, reply, payload) => {
    if (closing) void reply.header('connection', 'close');
    if (request.routeOptions.config.public) {
      if (isDocsRequest(request)) for (const [name, value] of Object.entries(DOCS_SECURITY_HEADERS)) void reply.header(name, value);
      return payload;
    }
    const record = buildRecord(request, reply, { environment, now, keys: keyRedactor });
    try {
      await stores.recordLogs.append(request.principal?.organizationId ?? null, record);
      void reply.header('x-log-id', record.uuid);
    } catch (error) {
      // The operation has already happened: answer it, and leave the lost record to the server log.
      request.log.error({ err: error, record }, 'record log not written');
    }
    return payload;
  });

  app.setErrorHandler((error, request, reply) => sendError(error, request, reply));

  app.setNotFoundHandler(async (request) => {
    throw routeNotFound(request);
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: options.apiInfo?.title ?? 'spoof-checker email service API',
        version: options.apiInfo?.version ?? '1.0.0',
        description:
          'Spoof checks, email and record logs, templates, domains and contacts. Every error answers { statusCode, code, message, why, fix } with a stable code; every response carries x-log-id, the uuid of its record log.',
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API key>' },
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'x-api-key: <API key>' },
        },
      },
      security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  const limiters = await createLimiters(app, limits, options.rateLimitRedis);
  // One transport budget per client network for every path that probes (issue 29): the API's
  // transport checks, /run of a transport monitor, and the page's transport checks, one counter.
  const transportLimiter = limits === false ? undefined : transportBudget(counter, limits.transportCheck);

  await app.register(healthRoutes, { stores });
  await app.register(spoofCheckerRoutes, {
    check,
    limiter: withNetworkLimits(limiters.spoofCheck, counter, limits === false ? false : limits.spoofCheck),
    transportLimiter,
    reportSelectors: reportSelectorCache(stores.reports, now),
  });
  if (options.lookalikes) {
    await app.register(lookalikeRoutes, {
      run: options.lookalikes,
      // Per client, then its IPv6 /56 and /48, as the spoof check (counted apart from it).
      limiter: withNetworkLimits(limiters.lookalikes, counter, limits === false ? false : limits.lookalikes, 'lookalikes'),
      deepLimiter: limiters.deepLookalikes,
      jobs: options.lookalikeJobs,
    });
  }
  if (options.batches) await app.register(batchRoutes, { batches: options.batches, now });
  // A run of a monitor with the transport check probes like a transport check: same budget.
  if (options.monitors) await app.register(monitorRoutes, { monitors: options.monitors, transportLimiter });
  // Alert channels are sent by the monitors' delivery pump: served where monitors are.
  if (options.monitors?.alerts) await app.register(alertRoutes, { alerts: options.monitors.alerts });
  if (options.monitors?.lookalikes) await app.register(monitorLookalikeRoutes, { monitors: options.monitors });
  await app.register(logRoutes, { stores });
  await app.register(templateRoutes, { stores, now });
  await app.register(domainRoutes, { stores, now, updateLimiter: limiters.domainUpdate, deleteLimiter: limiters.domainDelete });
  await app.register(contactRoutes, { stores, limiter: limiters.contactList });
  // The public TLS-RPT delivery counts against the public check's per-address limit.
  // What a report says about itself is checked for keys before it is stored and shown (issue 38).
  await app.register(reportRoutes, { stores: { ...stores, reports: keyFreeReportStore(stores.reports, keyRedactor) }, now, publicLimiter: limiters.spoofCheck, ...(options.domainScope ? { domainScope: options.domainScope } : {}), ...(options.reports ?? {}) });
  await app.register(failureReportRoutes, { stores, now });
  // Routes the composition adds (the public checker page: src/service/compose.ts registers src/web).
  for (const routes of options.routes ?? []) await routes(app as unknown as FastifyInstance, { limits, counter, publicUrl: options.publicUrl });

  // The document is the same for every request: compressed once and kept (./compression.ts).
  app.get(OPENAPI_PATH, { schema: { hide: true }, config: { constantBody: true } }, async () => app.swagger());
};

/** What Node's parser reported, as the catalogue's code (RFC 9110 §15.5.9 408, RFC 6585 §5 431, else 400). */
export function clientErrorCode(error: { code?: string }): 'REQUEST_TIMEOUT' | 'HEADERS_TOO_LARGE' | 'VALIDATION_FAILED' {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'REQUEST_TIMEOUT';
  if (error.code === 'HPE_HEADER_OVERFLOW') return 'HEADERS_TOO_LARGE';
  return 'VALIDATION_FAILED';
}

/**
 * Answers an error of Node's HTTP parser on the raw socket: the catalogue's body, `x-log-id`, and
 * a record log (unattributed: no key was read) written before the answer. Nothing of the request's
 * bytes is recorded (they may hold a credential), only that it was refused and why.
 */
function answerClientError(
  error: Error & { code?: string },
  socket: import('node:net').Socket,
  context: { stores: Stores; environment: string; now: () => Date; log: FastifyInstance['log'] },
): void {
  // A reset connection has nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const code = clientErrorCode(error);
  const apiError =
    code === 'VALIDATION_FAILED'
      ? new ApiError('VALIDATION_FAILED', { message: 'The request could not be parsed as HTTP/1.1.', why: `The request line or a header is malformed (${error.code ?? 'parse error'}).`, fix: 'Send a well-formed HTTP/1.1 request (RFC 9112).' })
      : new ApiError(code);
  const uuid = randomUUID();
  const at = context.now().toISOString();
  const record: RecordLog = {
    uuid,
    event: 'request.parse_failed',
    level: 'warn',
    trace_id: traceIdFor(undefined),
    metadata: { route: null, durationMs: null, errorCode: apiError.code, parserError: error.code ?? null },
    status_code: apiError.statusCode,
    created_at: at,
    requestDetails: null,
    request_body: null,
    email: null,
    actor_type: 'anonymous',
    actor_id: '',
    resource_type: 'request',
    resource_id: '',
    service: 'api',
    action: 'parse_failed',
    ip_address: socket.remoteAddress ?? '',
    user_agent: '',
    environment: context.environment,
  };
  // The parser's error carries the raw bytes it refused (`rawPacket`: headers, a key among them): only its code and message are logged.
  context.log.debug({ err: { code: error.code, message: error.message }, logId: uuid }, 'client error');
  void context.stores.recordLogs
    .append(null, record)
    .catch((appendError: unknown) => context.log.error({ err: appendError }, 'record log not written'))
    .finally(() => {
      if (!socket.writable) {
        socket.destroy();
        return;
      }
      const body = JSON.stringify(apiError.toBody());
      socket.end(
        `HTTP/1.1 ${apiError.statusCode} ${STATUS_CODES[apiError.statusCode] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nx-log-id: ${uuid}\r\nConnection: close\r\n\r\n${body}`,
      );
    });
}

/** The query string of a route that takes no parameters: none at all. */
const NO_QUERY_PARAMETERS = Type.Object({}, { additionalProperties: false });
/** Public GET routes that take no query parameters either: the probes and the OpenAPI document. */
const NO_QUERY_PUBLIC_PATHS: ReadonlySet<string> = new Set([OPENAPI_PATH, HEALTH_PATH, READY_PATH]);

/** Headers of every documentation response besides its CSP: never framed (clickjacking), never sniffed. */
export const DOCS_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

/** True for the interactive documentation and its files. */
function isDocsRequest(request: FastifyRequest): boolean {
  const url = request.routeOptions.url ?? '';
  return url === DOCS_PATH || url.startsWith(`${DOCS_PATH}/`);
}

/**
 * The API check's limiter followed by the aggregate limits of an IPv6 client's wider networks: its
 * /56 and /48 get `IPV6_56_ALLOWANCE_FACTOR` and `IPV6_48_ALLOWANCE_FACTOR` times one client's
 * allowance (the /64 is the route limiter's), so rotating /64s inside one allocation buys little.
 * `name` keys the counters (each limited operation counts apart).
 */
function withNetworkLimits(limiter: onRequestHookHandler | undefined, counter: WindowCounter, limit: Limit | false, name = 'spoofCheck'): onRequestHookHandler | undefined {
  if (!limiter || limit === false) return limiter;
  return async function limited(this: FastifyInstance, request, reply) {
    await (limiter as unknown as (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) => Promise<void>).call(this, request, reply);
    const networks = clientNetworks(clientAddress(request));
    const wider = [
      { prefix: networks.net56, factor: IPV6_56_ALLOWANCE_FACTOR },
      { prefix: networks.net48, factor: IPV6_48_ALLOWANCE_FACTOR },
    ].filter((network): network is { prefix: string; factor: number } => network.prefix !== null);
    if (wider.length === 0) return;
    const states = await counter.hit(wider.map((network) => ({ key: `${name}:${network.prefix}`, windowMs: limit.windowMs })));
    wider.forEach((network, index) => {
      const state = states[index];
      if (state && state.count > limit.max * network.factor) {
        const seconds = Math.max(1, Math.ceil(state.resetMs / 1000));
        throw new ApiError('RATE_LIMITED', {
          why: `This operation allows ${limit.max * network.factor} request(s) per ${Math.round(limit.windowMs / 1000)} second(s) from one IPv6 network (${network.prefix}).`,
          fix: `Wait ${seconds} second(s) before retrying.`,
          retryAfter: seconds,
        });
      }
    });
  };
}

/** Methods that change stored data. */
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Resources whose writes do not count against the write limit: a spoof check stores nothing but its
 * record (it has its own per-client limits), and batches have their own daily quota. Monitors count
 * (create, change, delete, run, redeliver: issue 29).
 */
const UNCOUNTED_WRITE_RESOURCES: ReadonlySet<string> = new Set(['spoof_check', 'spoof_check_batch']);

/** A write that counts against the organisation's write limit and storage quota: every write route but the checks. */
function isCountedWrite(request: FastifyRequest): boolean {
  if (!WRITE_METHODS.has(request.method)) return false;
  const resource = request.routeOptions.config.audit?.resource;
  return resource === undefined || !UNCOUNTED_WRITE_RESOURCES.has(resource);
}

/** The size of the request's body in bytes (its Content-Length, else its JSON). */
function bodyBytes(request: FastifyRequest): number {
  const declared = Number(request.headers['content-length']);
  if (Number.isInteger(declared) && declared > 0) return declared;
  if (request.body === undefined || request.body === null) return 0;
  return Buffer.byteLength(typeof request.body === 'string' ? request.body : (JSON.stringify(request.body) ?? ''));
}

/**
 * The key prefix of the transport budget: the page counts its transport checks under it
 * (src/web/plugin.ts, `web-transport:<client network>`), so that the page and the API spend one
 * budget (test/monitors/limits.test.ts checks that they do).
 */
export const TRANSPORT_BUDGET_PREFIX = 'web-transport';

/** The transport budget's hook: one probe counted for the client's network (an IPv4 address, an IPv6 /64). */
function transportBudget(counter: WindowCounter, limit: Limit): onRequestHookHandler {
  return async (request) => {
    await refuseOverLimit(counter, `${TRANSPORT_BUDGET_PREFIX}:${clientRateLimitKey(clientAddress(request))}`, limit, 1, (seconds) =>
      new ApiError('RATE_LIMITED', {
        message: 'This network has run as many transport checks as it may for now.',
        why: `This operation allows ${limit.max} request(s) per ${limit.windowMs % 60_000 === 0 ? `${limit.windowMs / 60_000} minute(s)` : `${limit.windowMs / 1000} second(s)`} with transport checks, from one client address: the API's transport checks, runs of monitors with the transport check and the page's transport checks together.`,
        fix: `Wait ${seconds} second(s) before retrying.`,
        retryAfter: seconds,
      }),
    );
  };
}

/** Adds `cost` to `key`; throws `refusal(seconds until the window ends)` when the count passes `limit.max`. */
async function refuseOverLimit(counter: WindowCounter, key: string, limit: Limit, cost: number, refusal: (seconds: number) => ApiError): Promise<void> {
  const [state] = await counter.hit([{ key, windowMs: limit.windowMs }], cost);
  if (state && state.count > limit.max) throw refusal(Math.max(1, Math.ceil(state.resetMs / 1000)));
}

/** Renders any error through the catalogue. Internals go to the server log only, never to the client. */
/** The catalogue's 404 for a method and path no route answers (the query left out). */
function routeNotFound(request: FastifyRequest): ApiError {
  return new ApiError('ROUTE_NOT_FOUND', { message: `No endpoint matches ${request.method} ${request.url.split('?')[0] ?? ''}.` });
}

function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const apiError = toApiError(error, { body: request.body, query: request.query, params: request.params });
  if (apiError.code === 'INTERNAL') request.log.error({ err: error }, 'request failed');
  // The operator needs the driver's own words (host, errno); the client got the catalogue's.
  if (apiError.code === 'STORE_UNAVAILABLE') request.log.warn({ err: error }, 'store unavailable');
  request.errorCode = apiError.code;
  if (apiError.retryAfter !== undefined) void reply.header('retry-after', String(apiError.retryAfter));
  void reply.code(apiError.statusCode).type('application/json').send(apiError.toBody());
}

async function addStartupKey(stores: Stores, { key, organizationId }: StartupApiKey): Promise<void> {
  if (!(await stores.apiKeys.getOrganization(organizationId))) {
    await stores.apiKeys.addOrganization({ id: organizationId, name: organizationId });
  }
  const sha256 = digestApiKey(key);
  // The same key given twice (seed and environment) is stored once, but never for two organisations.
  const existing = await stores.apiKeys.findByDigest(sha256);
  if (existing) {
    if (existing.organizationId !== organizationId) {
      throw new Error(`an API key given for organisation "${organizationId}" already belongs to organisation "${existing.organizationId}"`);
    }
    return;
  }
  const id = apiKeyIdFromDigest(sha256);
  await stores.apiKeys.addKey({ id, organizationId, sha256, owner: { id, name: 'API key', email: '', image: '' } });
}

/** Connections the server has open now (0 when it cannot tell). */
function openConnections(server: Server): Promise<number> {
  return new Promise((resolve) => server.getConnections((error, count) => resolve(error ? 0 : count)));
}
