/**
 * The HTTP service: a Fastify app over the stores and an injected spoof check. Everything it uses
 * comes in through `AppOptions` (stores, check function, API keys, limits, logger, clock): no
 * globals, so tests build as many independent apps as they like.
 *
 * Request life cycle: `onRequest` authenticates (401 before anything else), then the route's rate
 * limiter runs (per organisation or per client address), then the body is parsed (JSON only, at most
 * `DEFAULT_BODY_LIMIT_BYTES`) and validated strictly (src/http/validation.ts), then the handler.
 * Whatever the outcome, `onSend` writes the record log and sets `x-log-id`; every error goes
 * through the one catalogue (src/http/errors.ts).
 */
import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { Stores } from '../store/types.js';
import { digestApiKey, apiKeyIdFromDigest } from '../store/api-keys.js';
import { buildRecord } from './audit.js';
import { authenticate } from './auth.js';
import './context.js';
import { ApiError, toApiError } from './errors.js';
import { createLimiters, DEFAULT_RATE_LIMITS, type RateLimits } from './rate-limits.js';
import { contactRoutes } from './routes/contacts.js';
import { domainRoutes } from './routes/domains.js';
import { guideRoutes } from './routes/guides.js';
import { logRoutes } from './routes/logs.js';
import { spoofCheckerRoutes, type SpoofCheck } from './routes/spoof-checker.js';
import { templateRoutes } from './routes/templates.js';
import { SHARED_SCHEMAS } from './schemas.js';
import { validatorCompiler } from './validation.js';

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

/** An API key given in clear at start (e.g. from `SPOOF_CHECKER_API_KEYS`), hashed before it is stored. */
export interface StartupApiKey {
  key: string;
  organizationId: string;
}

/** Everything the app depends on. */
export interface AppOptions {
  stores: Stores;
  /** Runs one spoof check; the caller binds `checkDomain` to a resolver. */
  check: SpoofCheck;
  /** Keys to add at start. An organisation the stores do not have is created, empty. */
  apiKeys?: StartupApiKey[];
  /** Rate limits; `false` turns them all off. Partial values override the defaults. */
  rateLimits?: Partial<RateLimits> | false;
  /** Fastify's logger option (false in tests; the CLI passes a stream). */
  logger?: FastifyServerOptions['logger'];
  /** `environment` of every record log (e.g. production, development). */
  environment?: string;
  /** Clock, injected for tests. */
  now?: () => Date;
  bodyLimit?: number;
  /** Fastify's `trustProxy`: when set, the client address comes from X-Forwarded-For. */
  trustProxy?: FastifyServerOptions['trustProxy'];
  /** Title and version shown in the OpenAPI document. */
  apiInfo?: { title?: string; version?: string };
}

/** Builds the app, ready to `inject` into or `listen`. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { stores, check } = options;
  const now = options.now ?? (() => new Date());
  const environment = options.environment ?? 'development';

  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT_BYTES,
    // The request id is the record log's uuid: one id in the server log, the audit trail and x-log-id.
    genReqId: () => randomUUID(),
    trustProxy: options.trustProxy ?? false,
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
      void stores.recordLogs.append(null, record).finally(() => {
        void reply.header('x-log-id', record.uuid).type('application/json').send(apiError.toBody());
      });
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

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
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });

  app.addHook('onRequest', async (request) => {
    request.receivedAt = now().toISOString();
    // A request that arrives on a kept-alive connection while closing is refused through the catalogue.
    if (closing) throw new ApiError('SERVICE_UNAVAILABLE');
    if (request.routeOptions.config.public) return;
    // An unknown route needs no key (it answers 404 either way), but a valid key still names the
    // organisation in its record log.
    request.principal = await authenticate(stores.apiKeys, request.headers, !request.is404);
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
    throw new ApiError('ROUTE_NOT_FOUND', { message: `No endpoint matches ${request.method} ${request.url.split('?')[0] ?? ''}.` });
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
  const limiters = await createLimiters(app, limits);

  await app.register(spoofCheckerRoutes, { check, limiter: limiters.spoofCheck });
  await app.register(logRoutes, { stores });
  await app.register(templateRoutes, { stores, now });
  await app.register(domainRoutes, { stores, now, updateLimiter: limiters.domainUpdate, deleteLimiter: limiters.domainDelete });
  await app.register(contactRoutes, { stores, limiter: limiters.contactList });
  await app.register(guideRoutes);

  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());

  await app.ready();
  return app;
}

/** Renders any error through the catalogue. Internals go to the server log only, never to the client. */
function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const apiError = toApiError(error, { body: request.body, query: request.query, params: request.params });
  if (apiError.code === 'INTERNAL') request.log.error({ err: error }, 'request failed');
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
