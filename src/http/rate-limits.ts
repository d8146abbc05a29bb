/**
 * Per-operation rate limits (@fastify/rate-limit), as the reference service sets them: the spoof
 * checker per client address, management operations per organisation. Each limiter has its own
 * counter; one limiter may guard several routes (the two contact list paths share one).
 *
 * Counters live in this process (a bounded LRU: `RATE_LIMIT_CACHE_MAX_KEYS` clients per limiter),
 * or in Redis when a client is given, so that every replica counts against one limit. If Redis
 * cannot be reached the limited routes answer 503 STORE_UNAVAILABLE: the limits fail closed.
 */
import rateLimit from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import { loadRedisModules } from '../jobs/redis-modules.js';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { clientAddress, clientRateLimitKey } from './client-address.js';
import { ApiError } from './errors.js';

/** One limit: at most `max` requests per `windowMs` milliseconds per key. */
export interface Limit {
  max: number;
  windowMs: number;
}

/** The limits of the service, by operation. */
export interface RateLimits {
  /** Per client address (POST and GET together). */
  spoofCheck: Limit;
  /**
   * Per client address, on top of `spoofCheck`: every path that probes (opens SMTP and HTTPS
   * connections) spends this one budget: API checks with `"checks": ["transport"]`, `/run` of a
   * monitor with the transport check, and the page's "Mail sent to you" (counted in the app's
   * window counter, `web-transport:<client>`, not by @fastify/rate-limit).
   */
  transportCheck: Limit;
  /**
   * Per client address: lookalike runs (`POST /api/tools/v1/lookalikes`, the page's "Names that look
   * like yours"). One run asks hundreds of names, so it is limited far more strictly than a check.
   */
  lookalikes: Limit;
  /** Per client address, on top of `lookalikes`: deep runs (up to `API_DEEP_MAX_CANDIDATES` names each). */
  deepLookalikes: Limit;
  /** Per organisation. */
  domainUpdate: Limit;
  /** Per organisation, counted apart from updates. */
  domainDelete: Limit;
  /** Per organisation (both paths together). */
  contactList: Limit;
  /**
   * The public page's checks from everyone together (anonymous checks): a global budget, so that
   * many networks together cannot make the page a DNS flood either.
   */
  anonymousChecks: Limit;
  /** Failed authentications (401) per client address; past it the client gets 429 before its key is looked at. */
  failedAuth: Limit;
  /** Writes (POST, PUT, PATCH, DELETE) per organisation, every write route together. */
  organizationWrites: Limit;
  /** Bytes of request bodies an organisation may write per window (the storage quota; 413 past it). */
  organizationWriteBytes: Limit;
}

/** The limits applied by @fastify/rate-limit, one hook per operation. */
export type RouteLimitName = 'spoofCheck' | 'lookalikes' | 'deepLookalikes' | 'domainUpdate' | 'domainDelete' | 'contactList';

/** One day, the window of the storage quota. */
export const STORAGE_QUOTA_WINDOW_MS = 86_400_000;
/**
 * How many times one client's allowance the page grants a whole IPv6 /56 and /48 (RFC 6177: a site
 * is given a /48 to /64; one user may hold all 65,536 /64s of a /48, or 256 of a /56). Rotating
 * addresses inside one's own allocation then buys at most this factor, not 65,536.
 */
export const IPV6_56_ALLOWANCE_FACTOR = 2;
/** See {@link IPV6_56_ALLOWANCE_FACTOR}: a /48 gets at most 4 clients' worth of checks. */
export const IPV6_48_ALLOWANCE_FACTOR = 4;

/** One minute, the window of every default limit. */
export const RATE_LIMIT_WINDOW_MS = 60_000;

/**
 * The defaults: 60 checks a minute per address, 10 of them with transport; 6 lookalike runs a minute
 * per address, 2 of them deep; 10 domain updates and
 * 10 deletes, 60 contact lists a minute per organisation; 600 page checks a minute from everyone;
 * 20 failed authentications a minute per address; 120 writes a minute and 64 MiB of written bodies
 * a day per organisation.
 */
export const DEFAULT_RATE_LIMITS: Readonly<RateLimits> = Object.freeze({
  spoofCheck: { max: 60, windowMs: RATE_LIMIT_WINDOW_MS },
  transportCheck: { max: 10, windowMs: RATE_LIMIT_WINDOW_MS },
  lookalikes: { max: 6, windowMs: RATE_LIMIT_WINDOW_MS },
  deepLookalikes: { max: 2, windowMs: RATE_LIMIT_WINDOW_MS },
  domainUpdate: { max: 10, windowMs: RATE_LIMIT_WINDOW_MS },
  domainDelete: { max: 10, windowMs: RATE_LIMIT_WINDOW_MS },
  contactList: { max: 60, windowMs: RATE_LIMIT_WINDOW_MS },
  anonymousChecks: { max: 600, windowMs: RATE_LIMIT_WINDOW_MS },
  failedAuth: { max: 20, windowMs: RATE_LIMIT_WINDOW_MS },
  organizationWrites: { max: 120, windowMs: RATE_LIMIT_WINDOW_MS },
  organizationWriteBytes: { max: 64 * 1024 * 1024, windowMs: STORAGE_QUOTA_WINDOW_MS },
});

/**
 * Result pages one person may open in a minute in the demo (`serve --demo`, loopback only, its
 * answers from zone files and its own mail servers), every section included, without meeting a limit.
 */
export const DEMO_RESULT_PAGES_PER_MINUTE = 15;

/**
 * The demo's limits, over the defaults: a result page costs one check, two transport-limited
 * sections ("Mail sent to you" and the BIMI logo) and one lookalike section; twice that leaves room
 * for reloads. Production limits (`DEFAULT_RATE_LIMITS`) are not changed by it.
 */
export const DEMO_RATE_LIMITS: Readonly<Partial<RateLimits>> = Object.freeze({
  spoofCheck: { max: 2 * 2 * DEMO_RESULT_PAGES_PER_MINUTE * 2, windowMs: RATE_LIMIT_WINDOW_MS },
  transportCheck: { max: 2 * 2 * DEMO_RESULT_PAGES_PER_MINUTE, windowMs: RATE_LIMIT_WINDOW_MS },
  lookalikes: { max: 2 * DEMO_RESULT_PAGES_PER_MINUTE, windowMs: RATE_LIMIT_WINDOW_MS },
});

/**
 * Most keys (clients or organisations) one in-process limiter remembers; the least recently seen
 * is forgotten first. About 100 bytes each, so a flood from many addresses costs at most ~1 MB per limiter.
 */
export const RATE_LIMIT_CACHE_MAX_KEYS = 10_000;
/** Prefix of every rate-limit key in Redis. */
export const REDIS_RATE_LIMIT_NAMESPACE = 'spoof-checker:rate-limit:';

/** The part of an ioredis client the limits use (an `ioredis` `Redis` instance satisfies it). */
export interface RateLimitRedis {
  defineCommand(name: string, definition: { numberOfKeys?: number; lua: string }): void;
}

/** How long to wait for Redis: to connect at start, and for each command after. */
export const REDIS_TIMEOUT_MS = 2_000;

/** A URL with its password (if any) hidden, for messages. */
export function redactedRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an unparsable URL)';
  }
}

/**
 * Connects an ioredis client for the rate limits, failing fast: the first connection must succeed
 * within `REDIS_TIMEOUT_MS` (else this throws, naming the URL without its password), and later
 * commands fail after `REDIS_TIMEOUT_MS` instead of queueing while Redis is away (the limited route
 * then answers 503). ioredis keeps reconnecting in the background. The caller closes it (`quit()`).
 */
export async function connectRateLimitRedis(url: string, onError: (error: Error) => void = () => undefined): Promise<Redis> {
  // ioredis is optional: a clear error naming it when it is not installed.
  const { Redis } = await loadRedisModules();
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: REDIS_TIMEOUT_MS,
    commandTimeout: REDIS_TIMEOUT_MS,
  });
  // Without a listener ioredis prints every reconnection failure; the caller decides where they go.
  client.on('error', onError);
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    throw new Error(`cannot reach Redis at ${redactedRedisUrl(url)}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return client;
}

/** The hook of each limited operation; all `undefined` when rate limiting is off. */
export type Limiters = { [K in RouteLimitName]: onRequestHookHandler | undefined };

// Authentication runs first (an app-level onRequest hook), so the organisation is known here.
const byClientAddress = (request: FastifyRequest): string => `ip:${clientRateLimitKey(clientAddress(request))}`;
const byOrganization = (request: FastifyRequest): string =>
  request.principal ? `org:${request.principal.organizationId}` : `ip:${clientRateLimitKey(clientAddress(request))}`;

function describeWindow(windowMs: number): string {
  return windowMs % 60_000 === 0 ? `${windowMs / 60_000} minute(s)` : `${windowMs / 1000} second(s)`;
}

/** The flag @fastify/rate-limit sets on a request it has counted (its own symbol, found by description). */
const RATE_LIMIT_RAN = 'fastify.request.rateLimitRan';

/**
 * @fastify/rate-limit counts a request once, whichever limiter comes first; each of ours has its
 * own counter (one request may pass several of them), so the mark the
 * previous limiter left is cleared before the next one runs.
 */
function allowAnotherLimiter(request: FastifyRequest): void {
  const ran = Object.getOwnPropertySymbols(request).find((symbol) => symbol.description === RATE_LIMIT_RAN);
  if (ran !== undefined) (request as unknown as Record<symbol, boolean>)[ran] = false;
}

/**
 * Registers @fastify/rate-limit (not globally) and builds one hook per operation. With `limits`
 * false, registers nothing and every hook is undefined. With `redis`, counters are kept there.
 */
export async function createLimiters(app: FastifyInstance, limits: RateLimits | false, redis?: RateLimitRedis): Promise<Limiters> {
  if (limits === false) return { spoofCheck: undefined, lookalikes: undefined, deepLookalikes: undefined, domainUpdate: undefined, domainDelete: undefined, contactList: undefined };
  await app.register(rateLimit, {
    global: false,
    // A Redis error must not let requests through unlimited (skipOnError would): fail closed.
    skipOnError: false,
    ...(redis ? { redis: redis as never, nameSpace: REDIS_RATE_LIMIT_NAMESPACE } : {}),
  });
  const make = (name: RouteLimitName, keyGenerator: (request: FastifyRequest) => string, per: string): onRequestHookHandler => {
    const limit = limits[name];
    const hook = app.rateLimit({
      max: limit.max,
      timeWindow: limit.windowMs,
      cache: RATE_LIMIT_CACHE_MAX_KEYS,
      // Every limiter's keys carry its name: in one Redis, updates and deletes of one organisation
      // (both keyed by the organisation) must not count together.
      keyGenerator: (request) => `${name}:${keyGenerator(request)}`,
      errorResponseBuilder: (_request, context) => {
        const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
        return new ApiError('RATE_LIMITED', {
          why: `This operation allows ${limit.max} request(s) per ${describeWindow(limit.windowMs)} ${per}.`,
          fix: `Wait ${seconds} second(s) before retrying.`,
          retryAfter: seconds,
        });
      },
    }) as unknown as (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) => Promise<void>;
    return async function limited(this: FastifyInstance, request, reply) {
      try {
        allowAnotherLimiter(request);
        await hook.call(this, request, reply);
      } catch (error) {
        if (error instanceof ApiError) throw error;
        // Anything else comes from the counter store (Redis unreachable, command timed out).
        request.log.error({ err: error }, 'rate-limit store failed');
        throw new ApiError('STORE_UNAVAILABLE', {
          message: 'The rate-limit store cannot be reached, so this limited operation is refused for now.',
          why: 'Rate limits are counted in Redis, which does not answer; requests are refused rather than let through uncounted.',
        });
      }
    };
  };
  return {
    spoofCheck: make('spoofCheck', byClientAddress, 'from one client address'),
    lookalikes: make('lookalikes', byClientAddress, 'of lookalike runs, from one client address'),
    deepLookalikes: make('deepLookalikes', byClientAddress, 'of deep lookalike runs, from one client address'),
    domainUpdate: make('domainUpdate', byOrganization, 'for one organisation'),
    domainDelete: make('domainDelete', byOrganization, 'for one organisation'),
    contactList: make('contactList', byOrganization, 'for one organisation'),
  };
}
