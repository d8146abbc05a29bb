/**
 * The public checker page: `GET /` (a form), `GET /check/<domain>` and `GET /check?domain=` (the
 * result, rendered on the server), `GET /guides/<topic>` (the guides `nextStep.href` links to, as
 * HTML) and the page's assets. No API key, no record log: the routes are public, so nothing about
 * a page visit lands in any organisation's data. The check is the app's injected one, so a page and
 * an API answer for the same domain always agree.
 *
 * Safe by default: every value goes through the escaping `html` template; every response carries a
 * Content-Security-Policy that allows only this host's own files (no inline script or style).
 * Checks are rate limited per client network (IPv4 address, IPv6 /64) with a 429 page.
 */
import { readFile } from 'node:fs/promises';
import rateLimitPlugin from '@fastify/rate-limit';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { isSpoofCheckError } from '../errors.js';
import { normaliseDomainInput } from '../input.js';
import { GUIDE_TOPICS } from '../verdict/index.js';
import { ApiError, toApiError } from '../http/errors.js';
import type { Limit } from '../http/rate-limits.js';
import type { SpoofCheck } from '../http/routes/spoof-checker.js';
import { ASSET_CACHE_CONTROL, ASSETS } from './assets.js';
import { clientRateLimitKey } from '../http/client-address.js';
import { toHtmlString, type SafeHtml } from './html.js';
import { CHECK_PATH, DOMAIN_FIELD } from './layout.js';
import { renderMarkdown } from './markdown.js';
import type { MonitorHistoryEntry, MonitorStore } from '../store/monitors.js';
import { resultPage, resultPath } from './result-view.js';
import { errorPage, guidePage, historyPage, homePage, type PublicHistoryRow } from './views.js';

/** Only this host's own files; no inline script or style, no plugins, no framing, forms post here. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers every page response carries besides the CSP. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
};

/** Home and guides change only with a release: a few minutes of caching is safe. */
const STATIC_PAGE_CACHE_CONTROL = 'public, max-age=300';
/** Results are live DNS: never served from a cache. */
const LIVE_PAGE_CACHE_CONTROL = 'no-store';

/** Where the guides' Markdown lives, from src/web and dist/web alike. */
const GUIDES_DIR = new URL('../../docs/guides/', import.meta.url);

/** Options of the page plugin. */
export interface WebPagesOptions {
  /** The same injected check the API uses. */
  check: SpoofCheck;
  /** Checks allowed per client network (IPv4 address, IPv6 /64) and window; false for none. */
  rateLimit: Limit | false;
  /**
   * With `--public-history`: where monitor histories are read. The result page then links to
   * `/history/<domain>`; without it there is neither link nor page (monitors stay private).
   */
  publicHistory?: Pick<MonitorStore, 'publicHistory'>;
}

/** Entries the public history page shows. */
export const PUBLIC_HISTORY_ROWS = 50;

const HTML_TYPE = 'text/html; charset=utf-8';

/**
 * True when the client asked for JSON rather than HTML: `application/json` named with a higher
 * quality than `text/html` (or `text/html` absent). Browsers name text/html first, so they get pages.
 */
export function wantsJson(accept: string | undefined): boolean {
  if (!accept) return false;
  let json = -1;
  let htmlQ = -1;
  for (const range of accept.toLowerCase().split(',')) {
    const [type = '', ...params] = range.trim().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    const quality = Number.isFinite(q) ? q : 0;
    if (type.trim() === 'application/json') json = Math.max(json, quality);
    if (type.trim() === 'text/html') htmlQ = Math.max(htmlQ, quality);
  }
  return json > 0 && json > htmlQ;
}

/** `https://host[:port]` as the request names it, when the Host header is a plain host name or address. */
function originOf(request: FastifyRequest): string | null {
  const host = request.host;
  return /^(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i.test(host) ? `${request.protocol}://${host}` : null;
}

async function loadGuides(): Promise<Map<string, { title: string; body: SafeHtml }>> {
  const guides = new Map<string, { title: string; body: SafeHtml }>();
  for (const topic of GUIDE_TOPICS) guides.set(topic, renderMarkdown(await readFile(new URL(`${topic}.md`, GUIDES_DIR), 'utf8')));
  return guides;
}

function sendPage(reply: FastifyReply, status: number, body: SafeHtml, cacheControl = LIVE_PAGE_CACHE_CONTROL): FastifyReply {
  return reply.code(status).type(HTML_TYPE).header('cache-control', cacheControl).send(toHtmlString(body));
}

function createLimiter(app: FastifyInstance, limit: Limit): onRequestHookHandler {
  return app.rateLimit({
    max: limit.max,
    timeWindow: limit.windowMs,
    // The HTTP layer's per-client key: an IPv4 address, or an IPv6 client by its /64.
    keyGenerator: (request) => `web:${clientRateLimitKey(request.ip)}`,
    errorResponseBuilder: (_request, context) => {
      const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
      return new RateLimitedPage(limit, seconds);
    },
  });
}

const plural = (n: number, one: string) => `${n} ${n === 1 ? one : `${one}s`}`;

/** A limit's window in words: "minute", "2 minutes", "30 seconds". */
function describeWindow(windowMs: number): string {
  const [n, unit] = windowMs % 60_000 === 0 ? [windowMs / 60_000, 'minute'] : [Math.ceil(windowMs / 1000), 'second'];
  return n === 1 ? unit : `${n} ${unit}s`;
}

/** What the rate limiter throws; rendered as the 429 page (or the catalogue's RATE_LIMITED in JSON). */
class RateLimitedPage extends Error {
  override readonly name = 'RateLimitedPage';
  readonly statusCode = 429;
  constructor(
    readonly limit: Limit,
    readonly retryAfter: number,
  ) {
    super('Too many checks.');
  }
}

/** What was typed, from the path or the query: the raw text, or null when the parameter was repeated. */
function typedDomain(value: unknown): string | null {
  if (value === undefined) return '';
  return typeof value === 'string' ? value : null;
}

/** The page plugin (encapsulated: its error handler and headers apply to its routes only). */
export const webPages: FastifyPluginAsync<WebPagesOptions> = async (app, { check, rateLimit, publicHistory }) => {
  const guides = await loadGuides();
  const home = toHtmlString(homePage());

  let limiter: onRequestHookHandler | undefined;
  if (rateLimit !== false) {
    // The app registers @fastify/rate-limit when its own limits are on; otherwise register it here.
    if (!app.hasDecorator('rateLimit')) await app.register(rateLimitPlugin, { global: false });
    limiter = createLimiter(app, rateLimit);
  }

  app.addHook('onSend', async (_request, reply, payload) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) void reply.header(name, value);
    return payload;
  });

  app.setErrorHandler((error, request, reply) => renderError(error, request, reply));

  const config = { public: true };
  const schema = { hide: true };

  app.get('/', { config, schema }, async (_request, reply) => reply.code(200).type(HTML_TYPE).header('cache-control', STATIC_PAGE_CACHE_CONTROL).send(home));

  // The form: a valid input goes to its canonical result page; an invalid one gets the 400 page here.
  app.get<{ Querystring: Record<string, unknown> }>(CHECK_PATH, { config, schema }, async (request, reply) => {
    const typed = typedDomain(request.query[DOMAIN_FIELD]);
    if (typed === null) return invalidInput(reply, '', { message: 'The form sent more than one domain.', fix: 'Enter one domain name, such as example.com.' });
    const normalised = normaliseDomainInput(typed);
    if (!normalised.ok) return invalidInput(reply, typed, normalised);
    // RFC 9110 §15.4.4: 303 See Other, the result is at another URI and is fetched with GET.
    return reply.code(303).header('cache-control', LIVE_PAGE_CACHE_CONTROL).redirect(resultPath(normalised.domain), 303);
  });

  app.get<{ Params: { '*': string } }>(`${CHECK_PATH}/*`, { config, schema, onRequest: limiter ? [limiter] : [] }, async (request, reply) => {
    const typed = request.params['*'];
    const normalised = normaliseDomainInput(typed);
    if (!normalised.ok) {
      if (wantsJson(request.headers.accept)) throw new InvalidInput(normalised.message, normalised.fix);
      return invalidInput(reply, typed, normalised);
    }
    if (normalised.domain !== typed) return reply.code(303).header('cache-control', LIVE_PAGE_CACHE_CONTROL).redirect(resultPath(normalised.domain), 303);
    const result = await check(normalised.domain);
    void reply.header('vary', 'accept');
    if (wantsJson(request.headers.accept)) return reply.code(200).header('cache-control', LIVE_PAGE_CACHE_CONTROL).send(result);
    return sendPage(reply, 200, resultPage(result, { origin: originOf(request), historyLink: publicHistory !== undefined }));
  });

  app.get<{ Params: { topic: string }; Querystring: Record<string, unknown> }>('/guides/:topic', { config, schema }, async (request, reply) => {
    const guide = guides.get(request.params.topic);
    if (!guide) {
      return sendPage(
        reply,
        404,
        errorPage({
          status: 404,
          title: 'There is no such guide',
          message: `There is no guide called "${request.params.topic}".`,
          why: `The guides are: ${GUIDE_TOPICS.join(', ')}.`,
          fix: 'Follow the link from a result page, or check a domain below.',
          typed: '',
        }),
      );
    }
    const asked = request.query[DOMAIN_FIELD];
    const normalised = typeof asked === 'string' ? normaliseDomainInput(asked) : null;
    return sendPage(reply, 200, guidePage(guide, normalised?.ok ? normalised.domain : null), STATIC_PAGE_CACHE_CONTROL);
  });

  if (publicHistory) {
    app.get<{ Params: { domain: string } }>('/history/:domain', { config, schema }, async (request, reply) => {
      const normalised = normaliseDomainInput(request.params.domain);
      const history = normalised.ok ? await publicHistory.publicHistory(normalised.domain, { page: 1, limit: PUBLIC_HISTORY_ROWS }) : undefined;
      if (!normalised.ok || !history) {
        return sendPage(
          reply,
          404,
          errorPage({
            status: 404,
            title: 'This domain is not monitored',
            message: `There is no monitoring history for "${request.params.domain}".`,
            why: 'A history exists only for a domain somebody monitors on this service.',
            fix: 'Check the domain now instead.',
            typed: request.params.domain,
          }),
        );
      }
      return sendPage(reply, 200, historyPage(normalised.domain, history.items.map(publicRow), history.total));
    });
  }

  for (const asset of Object.values(ASSETS)) {
    app.get(asset.path, { config, schema }, async (_request, reply) => reply.type(asset.contentType).header('cache-control', ASSET_CACHE_CONTROL).send(asset.body));
  }
};

/** An input the normaliser refused, for the JSON answer (the catalogue's INVALID_DOMAIN). */
class InvalidInput extends Error {
  constructor(
    message: string,
    readonly fix: string,
  ) {
    super(message);
  }
}

function invalidInput(reply: FastifyReply, typed: string, refusal: { message: string; fix: string }): FastifyReply {
  return sendPage(
    reply,
    400,
    errorPage({
      status: 400,
      title: 'This is not a domain we can check',
      message: refusal.message,
      why: 'Checking whether mail can be forged needs a domain name, an email address or a website address.',
      fix: refusal.fix,
      typed,
      fieldError: true,
    }),
  );
}

/** Errors as pages (or as the catalogue's JSON when JSON was asked for). Never a stack trace. */
function renderError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const json = wantsJson(request.headers.accept);
  const typed = typeof (request.params as Record<string, unknown> | undefined)?.['*'] === 'string' ? ((request.params as Record<string, string>)['*'] ?? '') : '';

  if (error instanceof RateLimitedPage) {
    void reply.header('retry-after', String(error.retryAfter));
    const window = describeWindow(error.limit.windowMs);
    if (json) {
      return sendJsonError(
        reply,
        new ApiError('RATE_LIMITED', {
          why: `This page allows ${plural(error.limit.max, 'check')} per ${window} from one network.`,
          fix: `Wait ${plural(error.retryAfter, 'second')} before retrying.`,
          retryAfter: error.retryAfter,
        }),
      );
    }
    return sendPage(
      reply,
      429,
      errorPage({
        status: 429,
        title: 'Too many checks from your network',
        message: `You can check ${plural(error.limit.max, 'domain')} per ${window} from one network, and that many have just been checked.`,
        why: 'The limit keeps the service fast for everyone and stops it being used to flood DNS servers.',
        fix: `Please wait ${plural(error.retryAfter, 'second')}, then try again.`,
        typed,
      }),
    );
  }

  if (error instanceof InvalidInput) {
    return sendJsonError(reply, new ApiError('INVALID_DOMAIN', { message: error.message, fix: error.fix }));
  }

  if (isSpoofCheckError(error)) {
    const apiError = safeApiError(error);
    const code = error.code as string;
    if (json) return sendJsonError(reply, apiError);
    if (code === 'invalid_domain') {
      return invalidInput(reply, typed, { message: error.message, fix: error.fix });
    }
    if (code === 'domain_not_found') {
      const status = apiError.statusCode >= 400 && apiError.statusCode < 500 ? apiError.statusCode : 404;
      return sendPage(reply, status, errorPage({ status, title: 'This domain does not exist', message: error.message, why: error.why, fix: error.fix, typed }));
    }
    // dns_failure (502), dns_timeout (503): no verdict, and why.
    const status = apiError.statusCode >= 500 ? apiError.statusCode : 502;
    return sendPage(
      reply,
      status,
      errorPage({
        status,
        title: code === 'dns_timeout' ? 'A DNS lookup timed out: no verdict' : 'A DNS lookup failed: no verdict',
        message: error.message,
        why: error.why,
        fix: error.fix,
        typed,
        ...(error.query ? { query: error.query } : {}),
        ...(typed ? { retryHref: resultPath(typed) } : {}),
      }),
    );
  }

  const apiError = toApiError(error);
  if (apiError.code === 'INTERNAL') request.log.error({ err: error }, 'page failed');
  if (json) return sendJsonError(reply, apiError);
  return sendPage(reply, apiError.statusCode, errorPage({ status: apiError.statusCode, title: apiError.message, message: apiError.message, why: apiError.why, fix: apiError.fix, typed }));
}

/** The catalogue's error for a check refusal; a code the catalogue does not map yet becomes INTERNAL rather than a crash. */
function safeApiError(error: unknown): ApiError {
  try {
    const apiError = toApiError(error);
    return Number.isInteger(apiError.statusCode) ? apiError : new ApiError('INTERNAL');
  } catch {
    return new ApiError('INTERNAL');
  }
}

/** The catalogue's JSON body, as the API answers it. */
function sendJsonError(reply: FastifyReply, apiError: ApiError): FastifyReply {
  if (apiError.retryAfter !== undefined) void reply.header('retry-after', String(apiError.retryAfter));
  return reply.header('vary', 'accept').code(apiError.statusCode).type('application/json').send(apiError.toBody());
}

/** A history entry as the public page shows it: what was seen, nothing about who watches. */
function publicRow(entry: MonitorHistoryEntry): PublicHistoryRow {
  if (entry.type === 'change') return { type: 'change', at: entry.at, text: entry.changes.map((c) => `${c.field}: ${JSON.stringify(c.before)} → ${JSON.stringify(c.after)}`).join('; ') };
  const summary = entry.summary;
  const text = summary.outcome === 'checked' ? `${summary.verdict ?? ''} (${summary.inboxOutcome ?? ''})` : summary.outcome === 'domain-not-found' ? 'the domain does not exist' : `could not check: ${summary.reason ?? ''}`;
  return { type: 'check', at: entry.at, text };
}
