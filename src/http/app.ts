/**
 * The HTTP service: a Fastify app over the stores and an injected spoof check. Everything it uses
 * comes in through `AppOptions` (stores, check function, API keys, limits, logger, clock): no
 * globals, so tests build as many independent apps as they like.
 *
 * Two forms: `buildApp` makes a whole server (time limits, body limit, trusted proxies, log
 * redaction, then the service), and `spoofCheckerService` is the service alone as a Fastify plugin
 * that another Fastify host can `register`.
 *
 * Request life cycle: `onRequest` authenticates (401 before anything else, so a request without a
 * valid key never has its body read), then the route's rate limiter runs (per organisation or per
 * client address), then the body is parsed (JSON only, at most `DEFAULT_BODY_LIMIT_BYTES`, nested at
 * most `MAX_JSON_DEPTH` deep) and validated strictly (src/http/validation.ts), then the handler.
 * Whatever the outcome, `onSend` writes the record log and sets `x-log-id`; every error goes
 * through the one catalogue (src/http/errors.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { Stores } from '../store/types.js';
import { digestApiKey, apiKeyIdFromDigest } from '../store/api-keys.js';
import { buildRecord } from './audit.js';
import { authenticate } from './auth.js';
import { fastifyTrustProxy, type TrustProxy } from './client-address.js';
import './context.js';
import { ApiError, toApiError } from './errors.js';
import { loggerOptions } from './log-redaction.js';
import { createLimiters, DEFAULT_RATE_LIMITS, type RateLimitRedis, type RateLimits } from './rate-limits.js';
import type { BatchService } from '../jobs/service.js';
import { batchRoutes } from './routes/batches.js';
import { contactRoutes } from './routes/contacts.js';
import { domainRoutes } from './routes/domains.js';
import { healthRoutes } from './routes/health.js';
import { logRoutes } from './routes/logs.js';
import { monitorRoutes } from './routes/monitors.js';
import type { MonitorService } from '../jobs/monitors.js';
import { spoofCheckerRoutes, type SpoofCheck } from './routes/spoof-checker.js';
import { templateRoutes } from './routes/templates.js';
import { webPages } from '../web/plugin.js';
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
 * How often Node checks open connections against the header and request time limits (its default,
 * 30 s, would let a half-sent request live up to 30 s past its limit). A quarter of the header
 * limit, at most this.
 */
export const MAX_CONNECTION_CHECK_INTERVAL_MS = 1_000;

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
  /** Keys to add at start. An organisation the stores do not have is created, empty. */
  apiKeys?: StartupApiKey[];
  /** Rate limits; `false` turns them all off. Partial values override the defaults. */
  rateLimits?: Partial<RateLimits> | false;
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
  /** Batch checks (src/jobs/): without it the batch routes are not served. */
  batches?: BatchService;
  /** Monitors (src/jobs/monitors.ts): without it the monitor routes are not served. */
  monitors?: MonitorService;
  /** The public history page of a monitored domain (`--public-history`); off by default. */
  publicHistory?: boolean;
  /** The grace on close, in milliseconds (`DEFAULT_SHUTDOWN_GRACE_MS`); 0 drops idle connections at once. */
  shutdownGraceMs?: number;
}

/** Everything the app depends on. */
export interface AppOptions extends ServiceOptions {
  /** Fastify's logger option (false in tests; the CLI passes a stream). Keys are always redacted. */
  logger?: FastifyServerOptions['logger'];
  bodyLimit?: number;
  /** Which proxies to believe about the client address (`X-Forwarded-For`); none by default. */
  trustProxy?: TrustProxy;
  /** Time limits per connection; partial values override `DEFAULT_TIMEOUTS`. */
  timeouts?: Partial<ServerTimeouts>;
}

/** Builds the app, ready to `inject` into or `listen`. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { stores } = options;
  const now = options.now ?? (() => new Date());
  const environment = options.environment ?? 'development';
  const timeouts = { ...DEFAULT_TIMEOUTS, ...(options.timeouts ?? {}) };

  const app = Fastify({
    logger: loggerOptions(options.logger ?? false),
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
    // Errors Fastify raises before routing (a malformed URL) go through the catalogue too.
    // Their responses skip the hooks, so the record log is written here.
    frameworkErrors: (error, rawRequest, rawReply) => {
      const request = rawRequest as FastifyRequest;
      const reply = rawReply as FastifyReply;
      const apiError = toApiError(error);
      request.errorCode = apiError.code;
      void reply.code(apiError.statusCode);
      const record = buildRecord(request, reply, { environment, now });
      void stores.recordLogs
        .append(null, record)
        .catch((appendError: unknown) => request.log.error({ err: appendError }, 'record log not written'))
        .finally(() => {
          void reply.header('x-log-id', record.uuid).type('application/json').send(apiError.toBody());
        });
    },
  });

  await app.register(spoofCheckerService, options);
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

  for (const key of options.apiKeys ?? []) await addStartupKey(stores, key);

  // The documentation routes (registered by plugins) are public and not audited.
  app.addHook('onRoute', (route) => {
    if (route.url === OPENAPI_PATH || route.url === DOCS_PATH || route.url.startsWith(`${DOCS_PATH}/`)) {
      route.config = { ...(route.config ?? {}), public: true };
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
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    const graceMs = options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
    if (!app.server.listening || graceMs <= 0) return;
    const until = Date.now() + graceMs;
    while (Date.now() < until && (await openConnections(app.server)) > 0) await sleep(SHUTDOWN_POLL_MS);
  });

  app.addHook('onRequest', async (request) => {
    request.receivedAt = now().toISOString();
    // A request that arrives on a kept-alive connection while closing is refused through the catalogue,
    // its record log kept under the organisation of a valid key, so that the client can read it back.
    if (closing) {
      if (!request.routeOptions.config.public) request.principal = await authenticate(stores.apiKeys, request.headers, false).catch(() => null);
      throw new ApiError('SERVICE_UNAVAILABLE');
    }
    if (request.routeOptions.config.public) return;
    // An unknown route needs no key (it answers 404 either way), but a valid key still names the
    // organisation in its record log.
    request.principal = await authenticate(stores.apiKeys, request.headers, !request.is404);
    // Answered here, before the body is read: an unknown route with a body was a 400 INVALID_JSON
    // after parsing up to 1 MiB, instead of the 404 it is.
    if (request.is404) throw routeNotFound(request);
  });

  // JSON.parse copes with any depth, but every later step that walks the body (validation, storage,
  // serialization) recurses: a body nested thousands deep would overflow the stack there.
  app.addHook('preValidation', async (request) => {
    const problem = jsonDepthProblem(request.body);
    if (problem) throw new ApiError('VALIDATION_FAILED', { message: problem });
  });

  app.addHook('onSend', async (request, reply, payload) => {
    if (closing) void reply.header('connection', 'close');
    if (request.routeOptions.config.public) return payload;
    const record = buildRecord(request, reply, { environment, now });
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
  await app.register(swaggerUi, { routePrefix: DOCS_PATH });

  const limits = options.rateLimits === false ? false : { ...DEFAULT_RATE_LIMITS, ...(options.rateLimits ?? {}) };
  const limiters = await createLimiters(app, limits, options.rateLimitRedis);

  await app.register(healthRoutes, { stores });
  await app.register(spoofCheckerRoutes, { check, limiter: limiters.spoofCheck });
  if (options.batches) await app.register(batchRoutes, { batches: options.batches, now });
  if (options.monitors) await app.register(monitorRoutes, { monitors: options.monitors });
  await app.register(logRoutes, { stores });
  await app.register(templateRoutes, { stores, now });
  await app.register(domainRoutes, { stores, now, updateLimiter: limiters.domainUpdate, deleteLimiter: limiters.domainDelete });
  await app.register(contactRoutes, { stores, limiter: limiters.contactList });
  // The public checker page, its guides (/guides/<topic>, where nextStep.href points) and assets: src/web.
  await app.register(webPages, {
    check,
    rateLimit: limits === false ? false : limits.spoofCheck,
    ...(options.publicHistory && options.monitors ? { publicHistory: options.monitors.store } : {}),
  });

  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
};

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
