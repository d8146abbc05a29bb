/**
 * The public checker page: `GET /` (a form), `GET /check/<domain>` and `GET /check?domain=` (the
 * result, rendered on the server), `GET /guides/<topic>` (the guides `nextStep.href` links to, as
 * HTML) and the page's assets. No API key, no record log: the routes are public, so nothing about
 * a page visit lands in any organisation's data. The check is the app's injected one, so a page and
 * an API answer for the same domain always agree.
 *
 * Safe by default: every value goes through the escaping `html` template; every response carries a
 * Content-Security-Policy that allows only this host's own files (no inline script or style).
 * Checks are rate limited per client network (IPv4 address, IPv6 /64), per wider IPv6 network
 * (/56, /48: a few times one client's allowance, not 65,536 times) and by a global budget for
 * everyone together, with a 429 page; each check may make at most `ANONYMOUS_CHECK_MAX_QUERIES`
 * DNS lookups. Links are built from the configured public URL, never from forwarded host headers.
 */
import { readFile } from 'node:fs/promises';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { isSpoofCheckError } from '@spoof-checker/engine';
import { normaliseDomainInput } from '@spoof-checker/engine';
import { GUIDE_TOPICS } from '@spoof-checker/engine';
import type { SpoofCheckResult } from '@spoof-checker/engine';
import type { LookalikeReport } from '@spoof-checker/engine';
import { ASSET_CACHE_CONTROL, ASSETS } from './assets.js';
import { inDemo, type DemoSettings } from './demo.js';
import { toHtmlString, type SafeHtml } from './html.js';
import { CHECK_PATH, DOMAIN_FIELD } from './layout.js';
import { renderMarkdown } from './markdown.js';
import type { MonitorHistoryEntry, MonitorStore } from '../store/monitors.js';
import { resultPage, resultPath } from './result-view.js';
import { errorPage, guidePage, historyPage, homePage, notInDemoPage, type PublicHistoryRow } from './views.js';
import { apiDocsPage, type OpenApiDocument } from './api-docs.js';
import { LOOKALIKES_PATH, lookalikesPage, lookalikesPath, lookalikesSection } from './lookalikes-view.js';
import { FRAGMENT_PARAM, TRANSPORT_PATH, transportPage, transportPath, transportSection, transportUnavailable, transportUnavailablePage } from './transport-view.js';
import { BIMI_PATH, bimiPage, bimiPath, bimiSection, bimiUnavailable } from './bimi-view.js';

/** Only this host's own files; no inline script or style, no plugins, no framing, forms post here. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  // data: for the BIMI logo, shown as an image (never inline markup) once it passed SVG Tiny PS.
  "img-src 'self' data:",
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

/**
 * Runs one check (the API's own injected check, so that a page and an API answer agree); `transport`
 * adds the "Mail sent to you" half.
 */
export type PageCheck = (domain: string, options?: { transport?: boolean; bimi?: boolean; maxQueries?: number }) => Promise<SpoofCheckResult>;

/** Checks allowed per window. */
export interface PageRateLimit {
  max: number;
  windowMs: number;
}

/** The codes of the HTTP error catalogue the pages name themselves. */
export type PageErrorCode = 'RATE_LIMITED' | 'INVALID_DOMAIN' | 'NOT_FOUND' | 'INTERNAL' | 'STORE_UNAVAILABLE';

/** An answer of the HTTP error catalogue, as the pages use it (the catalogue's ApiError has this shape). */
export interface CatalogueAnswer {
  readonly code: string;
  readonly statusCode: number;
  readonly message: string;
  readonly why: string;
  readonly fix: string;
  readonly retryAfter?: number | undefined;
  toBody(): unknown;
}

/**
 * What the pages take from the HTTP layer, handed in by the composition (src/service/compose.ts):
 * web/ and http/ are siblings and neither imports the other.
 */
export interface PageHttp {
  /** The HTTP layer's per-client rate-limit key (an IPv4 address, or an IPv6 client by its /64). */
  clientKey(address: string): string;
  /** The catalogue's answer for any error (a check refusal, a store outage, a bug → INTERNAL). */
  answerFor(error: unknown): CatalogueAnswer;
  /** The catalogue's answer for a code, with the words of this case. */
  answer(code: PageErrorCode, details?: { message?: string; why?: string; fix?: string; retryAfter?: number }): CatalogueAnswer;
  /**
   * The networks a request comes from, as the HTTP layer's limits count them: the client (an IPv4
   * address, or an IPv6 /64), and for IPv6 its /56 and /48.
   */
  networksOf(request: FastifyRequest): PageNetworks;
  /** How many times one client's allowance an IPv6 /56 and /48 get together. */
  readonly wideNetworkFactors: { readonly net56: number; readonly net48: number };
  /** A counter kept in this process, for a page registered without the app's own. */
  localCounter(): PageCounter;
}

/** A request's networks (see PageHttp.networksOf). */
export interface PageNetworks {
  client: string;
  net56: string | null;
  net48: string | null;
}

/** One counted key: its name and its window. */
export interface PageCounterKey {
  key: string;
  windowMs: number;
}

/** Fixed-window counts, shared with the API's limits (Redis with a local fallback, or this process). */
export interface PageCounter {
  /** Counts one hit on each key; returns each key's count in its window and the time until it resets. */
  hit(keys: readonly PageCounterKey[]): Promise<{ count: number; resetMs: number }[]>;
}

/** What a host may set about the page (the rest comes from the composition). */
export interface WebPagesSettings {
  /**
   * Demo mode (`serve --demo`): every page says the answers come from fixture zones, the home page
   * lists the demo's domains, and a name outside them gets "not in the demo" instead of a verdict.
   */
  demo?: DemoSettings;
}

/**
 * Most DNS lookups one check from the page may make: an anonymous visitor's check is bounded well
 * below the engine's own cap (`DEFAULT_CHECK_MAX_QUERIES`, 500). A real domain needs about 50 (38
 * of them DKIM probes); a domain built to fan out (long SPF include chains, many MX hosts) is cut
 * off here and reads as a failed lookup, never as "not published".
 */
export const ANONYMOUS_CHECK_MAX_QUERIES = 150;

/** Names one page lookalike search tries at most (the engine's default set is capped at 500). */
export const ANONYMOUS_LOOKALIKE_MAX_CANDIDATES = 300;
/**
 * DNS lookups one page lookalike search may make: one per name tried, three to five more per name
 * that exists. This is the page's worst case per request; a name with more registered lookalikes
 * than the budget allows gets the rest graded `unknown`, never `none`.
 */
export const ANONYMOUS_LOOKALIKE_MAX_QUERIES = 600;

/** Runs one lookalike search for the page (the API's own runner, with the page's caps). */
export type PageLookalikes = (domain: string, options: { deep: false; maxCandidates: number; maxQueries: number; signal?: AbortSignal }) => Promise<LookalikeReport>;

/** Options of the page plugin. */
export interface WebPagesOptions extends WebPagesSettings {
  /** The same injected check the API uses. */
  check: PageCheck;
  /** Checks allowed per client network (IPv4 address, IPv6 /64) and window; false for none. */
  rateLimit: PageRateLimit | false;
  /** The HTTP layer's error catalogue and client key. */
  http: PageHttp;
  /** Transport checks ("Mail sent to you") allowed per client network and window; false or absent for none. */
  transportRateLimit?: PageRateLimit | false | undefined;
  /** Lookalike searches ("Names that look like yours"); without it the section is not shown. */
  lookalikes?: PageLookalikes | undefined;
  /** Lookalike searches allowed per client network and window (stricter than checks); false or absent for none. */
  lookalikeRateLimit?: PageRateLimit | false | undefined;
  /** Checks allowed from everyone together per window (the anonymous budget); none when absent. */
  anonymousBudget?: PageRateLimit | undefined;
  /** Where the counts are kept (the app's: Redis with a local fallback); this process's when absent. */
  counter?: PageCounter | undefined;
  /** The service's public base URL (`https://checker.example`), for the links a page shows. */
  publicUrl?: string | undefined;
  /** DNS lookups one page check may make (default `ANONYMOUS_CHECK_MAX_QUERIES`). */
  maxQueries?: number | undefined;
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

/**
 * The origin a page's links show: the configured public URL, else `http(s)://` and the request's
 * own Host header when it is a plain host name or address. Never X-Forwarded-Host or
 * X-Forwarded-Proto: those are whatever the last hop wrote.
 */
function originOf(request: FastifyRequest, publicUrl: string | undefined): string | null {
  if (publicUrl !== undefined) return publicUrl;
  const host = request.raw.headers.host ?? '';
  const protocol = (request.raw.socket as { encrypted?: boolean } | undefined)?.encrypted ? 'https' : 'http';
  return /^(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i.test(host) ? `${protocol}://${host}` : null;
}

/** A guide as its page shows it (src/web/markdown.ts `renderMarkdown`). */
type Guide = ReturnType<typeof renderMarkdown>;

async function loadGuides(): Promise<Map<string, Guide>> {
  const guides = new Map<string, Guide>();
  for (const topic of GUIDE_TOPICS) guides.set(topic, renderMarkdown(await readFile(new URL(`${topic}.md`, GUIDES_DIR), 'utf8')));
  return guides;
}

function sendPage(reply: FastifyReply, status: number, body: SafeHtml, cacheControl = LIVE_PAGE_CACHE_CONTROL): FastifyReply {
  return reply.code(status).type(HTML_TYPE).header('cache-control', cacheControl).send(toHtmlString(body));
}

/** Which of the page's limits a refused check ran into. */
type PageLimitScope = 'network' | 'wider-network' | 'everyone';

/**
 * The page's limiter: the client's network (IPv4 address or IPv6 /64) and its /56 and /48 are
 * counted together; only a check they all allow is counted against the global budget, so that a
 * refused flood does not use up everyone's allowance.
 */
function createPageLimiter(http: PageHttp, counter: PageCounter, limit: PageRateLimit, budget: PageRateLimit | undefined, prefix = 'web'): onRequestHookHandler {
  return async (request) => {
    const networks = http.networksOf(request);
    const own: (PageCounterKey & { max: number; scope: PageLimitScope })[] = [{ key: `${prefix}:${networks.client}`, windowMs: limit.windowMs, max: limit.max, scope: 'network' }];
    if (networks.net56 !== null) own.push({ key: `${prefix}:${networks.net56}`, windowMs: limit.windowMs, max: limit.max * http.wideNetworkFactors.net56, scope: 'wider-network' });
    if (networks.net48 !== null) own.push({ key: `${prefix}:${networks.net48}`, windowMs: limit.windowMs, max: limit.max * http.wideNetworkFactors.net48, scope: 'wider-network' });
    const refusal = firstOver(own, await countOrRefuse(http, counter, own));
    if (refusal) throw refusal;
    if (budget === undefined) return;
    const everyone = [{ key: `${prefix}:*`, windowMs: budget.windowMs, max: budget.max, scope: 'everyone' as const }];
    const overBudget = firstOver(everyone, await countOrRefuse(http, counter, everyone));
    if (overBudget) throw overBudget;
  };
}

/** The counts, or a 503 (the catalogue's STORE_UNAVAILABLE) when the counter itself fails. */
async function countOrRefuse(http: PageHttp, counter: PageCounter, keys: readonly PageCounterKey[]): Promise<{ count: number; resetMs: number }[]> {
  try {
    return await counter.hit(keys);
  } catch {
    throw http.answer('STORE_UNAVAILABLE', {
      message: 'The page cannot count checks right now, so it does not run them.',
      why: 'The store that counts checks does not answer; checks are refused rather than run uncounted.',
    });
  }
}

/** The refusal for the first limit the counts exceed, or null. */
function firstOver(limits: readonly { max: number; windowMs: number; scope: PageLimitScope }[], states: readonly { count: number; resetMs: number }[]): RateLimitedPage | null {
  for (let index = 0; index < limits.length; index++) {
    const limit = limits[index]!;
    const state = states[index]!;
    if (state.count > limit.max) return new RateLimitedPage({ max: limit.max, windowMs: limit.windowMs }, Math.max(1, Math.ceil(state.resetMs / 1000)), limit.scope);
  }
  return null;
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
    readonly limit: PageRateLimit,
    readonly retryAfter: number,
    readonly scope: PageLimitScope = 'network',
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
export const webPages: FastifyPluginAsync<WebPagesOptions> = async (app, options) => {
  const { check, rateLimit, transportRateLimit, http, publicUrl, publicHistory } = options;
  const demo = options.demo ?? null;
  const maxQueries = options.maxQueries ?? ANONYMOUS_CHECK_MAX_QUERIES;
  const guides = await loadGuides();
  const home = toHtmlString(homePage(demo));

  const counter = options.counter ?? http.localCounter();
  const limiter = rateLimit === false ? undefined : createPageLimiter(http, counter, rateLimit, options.anonymousBudget);
  // Transport checks cost seconds and sockets: a limit of their own, counted apart.
  const transportLimiter = transportRateLimit ? createPageLimiter(http, counter, transportRateLimit, options.anonymousBudget, 'web-transport') : undefined;
  // A lookalike search asks hundreds of names: a stricter limit of its own, and the anonymous budget too.
  const lookalikes = options.lookalikes;
  const lookalikeLimiter = options.lookalikeRateLimit ? createPageLimiter(http, counter, options.lookalikeRateLimit, options.anonymousBudget, 'web-lookalikes') : undefined;

  app.addHook('onSend', async (_request, reply, payload) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) void reply.header(name, value);
    return payload;
  });

  app.setErrorHandler((error, request, reply) => renderError(error, request, reply, http, demo));

  const config = { public: true };
  // The same body for every request: compressed once and kept by the server (src/http/compression.ts).
  const constant = { public: true, constantBody: true };
  const schema = { hide: true };

  app.get('/', { config: constant, schema }, async (_request, reply) => reply.code(200).type(HTML_TYPE).header('cache-control', STATIC_PAGE_CACHE_CONTROL).send(home));

  // The form: a valid input goes to its canonical result page; an invalid one gets the 400 page here.
  app.get<{ Querystring: Record<string, unknown> }>(CHECK_PATH, { config, schema }, async (request, reply) => {
    const typed = typedDomain(request.query[DOMAIN_FIELD]);
    if (typed === null) return invalidInput(reply, '', { message: 'The form sent more than one domain.', fix: 'Enter one domain name, such as example.com.' }, demo);
    const normalised = normaliseDomainInput(typed);
    if (!normalised.ok) return invalidInput(reply, typed, normalised, demo);
    // RFC 9110 §15.4.4: 303 See Other, the result is at another URI and is fetched with GET.
    return reply.code(303).header('cache-control', LIVE_PAGE_CACHE_CONTROL).redirect(resultPath(normalised.domain), 303);
  });

  app.get<{ Params: { '*': string } }>(`${CHECK_PATH}/*`, { config, schema, onRequest: limiter ? [limiter] : [] }, async (request, reply) => {
    const typed = request.params['*'];
    const normalised = normaliseDomainInput(typed);
    if (!normalised.ok) {
      if (wantsJson(request.headers.accept)) throw new InvalidInput(normalised.message, normalised.fix);
      return invalidInput(reply, typed, normalised, demo);
    }
    if (normalised.domain !== typed) return reply.code(303).header('cache-control', LIVE_PAGE_CACHE_CONTROL).redirect(resultPath(normalised.domain), 303);
    if (demo !== null && !inDemo(demo, normalised.domain)) {
      // The demo's zones are fixtures: a verdict for any other name would be made up.
      void reply.header('vary', 'accept');
      if (wantsJson(request.headers.accept)) {
        return sendJsonError(reply, http.answer('NOT_FOUND', { message: `${normalised.domain} is not in the demo.`, why: `This demo answers from ${demo.source}, not from public DNS, and ${normalised.domain} is not one of its domains.`, fix: 'Check one of the demo domains listed on the home page, or run spoof-checker serve without --demo.' }));
      }
      return sendPage(reply, 404, notInDemoPage(typed, normalised.domain, demo));
    }
    const result = await check(normalised.domain, { maxQueries });
    void reply.header('vary', 'accept');
    if (wantsJson(request.headers.accept)) return reply.code(200).header('cache-control', LIVE_PAGE_CACHE_CONTROL).send(result);
    return sendPage(reply, 200, resultPage(result, { origin: originOf(request, publicUrl), demo, historyLink: publicHistory !== undefined, lookalikes: lookalikes !== undefined }));
  });

  /**
   * A section shown after the verdict ("Mail sent to you", "Names that look like yours", "Your logo
   * in the inbox"): its page at `<base>/<domain>` (which works without JavaScript) and, with
   * ?fragment=1, the section alone, which the result page's script puts in place. One place
   * normalises the typed name (303 to the canonical path) and keeps the demo to its own domains;
   * `answer` gives the section for the name, as JSON when asked.
   */
  const sectionRoute = (
    base: string,
    pathOf: (domain: string) => string,
    limiter: onRequestHookHandler | undefined,
    answer: (domain: string, context: { fragment: boolean; json: boolean; reply: FastifyReply }) => Promise<FastifyReply>,
  ): void => {
    app.get<{ Params: { '*': string }; Querystring: Record<string, unknown> }>(`${base}/*`, { config, schema, onRequest: limiter ? [limiter] : [] }, async (request, reply) => {
      const typed = request.params['*'];
      const normalised = normaliseDomainInput(typed);
      const json = wantsJson(request.headers.accept);
      if (!normalised.ok) {
        if (json) throw new InvalidInput(normalised.message, normalised.fix);
        return invalidInput(reply, typed, normalised, demo);
      }
      const fragment = request.query[FRAGMENT_PARAM] === '1';
      if (normalised.domain !== typed) return reply.code(303).header('cache-control', LIVE_PAGE_CACHE_CONTROL).redirect(`${pathOf(normalised.domain)}${fragment ? `?${FRAGMENT_PARAM}=1` : ''}`, 303);
      void reply.header('vary', 'accept');
      if (demo !== null && !inDemo(demo, normalised.domain)) {
        // As for the result page: the demo answers only for its own domains.
        if (json) return sendJsonError(reply, http.answer('NOT_FOUND', { message: `${normalised.domain} is not in the demo.`, why: `This demo answers from ${demo.source}, not from public DNS.`, fix: 'Check one of the demo domains listed on the home page.' }));
        return sendPage(reply, 404, notInDemoPage(typed, normalised.domain, demo));
      }
      return answer(normalised.domain, { fragment, json, reply });
    });
  };
  const sendJson = (reply: FastifyReply, body: unknown) => reply.code(200).header('cache-control', LIVE_PAGE_CACHE_CONTROL).send(body);

  // "Mail sent to you", rate limited on its own (it opens connections and takes seconds).
  sectionRoute(TRANSPORT_PATH, transportPath, transportLimiter, async (domain, { fragment, json, reply }) => {
    const result = await check(domain, { transport: true, maxQueries });
    if (!result.transport) {
      const message = 'Transport checks are not available on this server.';
      if (json) return sendJsonError(reply, http.answer('INTERNAL', { message }));
      return sendPage(reply, 200, fragment ? transportUnavailable(message) : transportUnavailablePage(message, result.domain, result.details.displayDomain, demo));
    }
    if (json) return sendJson(reply, result.transport);
    const display = result.details.displayDomain;
    return sendPage(reply, 200, fragment ? transportSection(result.transport, display) : transportPage(result.transport, result.domain, display, demo));
  });

  // "Names that look like yours", with the page's own caps and its stricter limit.
  if (lookalikes) {
    sectionRoute(LOOKALIKES_PATH, lookalikesPath, lookalikeLimiter, async (domain, { fragment, json, reply }) => {
      const report = await lookalikes(domain, { deep: false, maxCandidates: ANONYMOUS_LOOKALIKE_MAX_CANDIDATES, maxQueries: ANONYMOUS_LOOKALIKE_MAX_QUERIES });
      if (json) return sendJson(reply, report);
      return sendPage(reply, 200, fragment ? lookalikesSection(report) : lookalikesPage(report));
    });
  }

  // "Your logo in the inbox" (BIMI), under the transport check's lower limit (it downloads files).
  sectionRoute(BIMI_PATH, bimiPath, transportLimiter, async (domain, { fragment, json, reply }) => {
    const result = await check(domain, { bimi: true, maxQueries });
    if (!result.bimi) {
      const message = 'BIMI checks are not available on this server.';
      if (json) return sendJsonError(reply, http.answer('INTERNAL', { message }));
      return sendPage(reply, 200, bimiUnavailable(message));
    }
    if (json) return sendJson(reply, result.bimi);
    const display = result.details.displayDomain;
    return sendPage(reply, 200, fragment ? bimiSection(result.bimi, display) : bimiPage(result.bimi, result.domain, display));
  });

  // The API reference, rendered once from the service's OpenAPI document (when it has one: the
  // API's @fastify/swagger decorates the server; the page alone has no API to document).
  let apiDocs: string | undefined;
  app.get('/docs', { config: constant, schema }, async (_request, reply) => {
    const swagger = (app as unknown as { swagger?: () => OpenApiDocument }).swagger;
    if (typeof swagger !== 'function') throw http.answer('NOT_FOUND', { message: 'This server has no API to document.' });
    apiDocs ??= toHtmlString(apiDocsPage(swagger.call(app), demo));
    return reply.code(200).type(HTML_TYPE).header('cache-control', STATIC_PAGE_CACHE_CONTROL).send(apiDocs);
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
          demo,
        }),
      );
    }
    const asked = request.query[DOMAIN_FIELD];
    const normalised = typeof asked === 'string' ? normaliseDomainInput(asked) : null;
    return sendPage(reply, 200, guidePage(guide, normalised?.ok ? normalised.domain : null, demo), STATIC_PAGE_CACHE_CONTROL);
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
    app.get(asset.path, { config: constant, schema }, async (_request, reply) => reply.type(asset.contentType).header('cache-control', ASSET_CACHE_CONTROL).send(asset.body));
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

function invalidInput(reply: FastifyReply, typed: string, refusal: { message: string; fix: string }, demo: DemoSettings | null): FastifyReply {
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
      demo,
    }),
  );
}

/** Errors as pages (or as the catalogue's JSON when JSON was asked for). Never a stack trace. */
function renderError(error: unknown, request: FastifyRequest, reply: FastifyReply, http: PageHttp, demo: DemoSettings | null): FastifyReply {
  const json = wantsJson(request.headers.accept);
  const typed = typeof (request.params as Record<string, unknown> | undefined)?.['*'] === 'string' ? ((request.params as Record<string, string>)['*'] ?? '') : '';

  if (error instanceof RateLimitedPage) {
    void reply.header('retry-after', String(error.retryAfter));
    const window = describeWindow(error.limit.windowMs);
    const from = error.scope === 'network' ? 'from one network' : error.scope === 'wider-network' ? 'from one IPv6 network (/56 or /48) together' : 'from all visitors together';
    if (json) {
      return sendJsonError(
        reply,
        http.answer('RATE_LIMITED', {
          why: `This page allows ${plural(error.limit.max, 'check')} per ${window} ${from}.`,
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
        title: error.scope === 'everyone' ? 'The checker is busy' : 'Too many checks from your network',
        message: `You can check ${plural(error.limit.max, 'domain')} per ${window} ${from}, and that many have just been checked.`,
        why: 'The limit keeps the service fast for everyone and stops it being used to flood DNS servers.',
        fix: `Please wait ${plural(error.retryAfter, 'second')}, then try again.`,
        typed,
        demo,
      }),
    );
  }

  if (error instanceof InvalidInput) {
    return sendJsonError(reply, http.answer('INVALID_DOMAIN', { message: error.message, fix: error.fix }));
  }

  if (isSpoofCheckError(error)) {
    const apiError = safeApiError(error, http);
    const code = error.code as string;
    if (json) return sendJsonError(reply, apiError);
    if (code === 'invalid_domain') {
      return invalidInput(reply, typed, { message: error.message, fix: error.fix }, demo);
    }
    if (code === 'domain_not_found') {
      const status = apiError.statusCode >= 400 && apiError.statusCode < 500 ? apiError.statusCode : 404;
      return sendPage(reply, status, errorPage({ status, title: 'This domain does not exist', message: error.message, why: error.why, fix: error.fix, typed, demo }));
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
        demo,
      }),
    );
  }

  const apiError = http.answerFor(error);
  if (apiError.code === 'INTERNAL') request.log.error({ err: error }, 'page failed');
  if (json) return sendJsonError(reply, apiError);
  return sendPage(reply, apiError.statusCode, errorPage({ status: apiError.statusCode, title: apiError.message, message: apiError.message, why: apiError.why, fix: apiError.fix, typed, demo }));
}

/** The catalogue's error for a check refusal; a code the catalogue does not map yet becomes INTERNAL rather than a crash. */
function safeApiError(error: unknown, http: PageHttp): CatalogueAnswer {
  try {
    const apiError = http.answerFor(error);
    return Number.isInteger(apiError.statusCode) ? apiError : http.answer('INTERNAL');
  } catch {
    return http.answer('INTERNAL');
  }
}

/** The catalogue's JSON body, as the API answers it. */
function sendJsonError(reply: FastifyReply, apiError: CatalogueAnswer): FastifyReply {
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
