/**
 * The composition root of the service: the one place that puts the rooms together. The HTTP API
 * (src/http, over the stores and the batch jobs it is given) and the public checker page (src/web)
 * become one app here; http/ and web/ never import each other, and nothing below imports this.
 *
 * `buildApp` and `spoofCheckerService` are what `spoof-checker/service` exports and what `serve`
 * runs: the API's own (src/http/app.ts) plus the page, its guides and assets. `pages: false`
 * leaves the page out; `pages: { demo }` shows it in demo mode (answers from fixture zones).
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import {
  buildApp as buildApiApp,
  spoofCheckerService as apiService,
  type AppOptions as ApiAppOptions,
  type ServiceOptions as ApiServiceOptions,
  type DomainScope,
  type ServiceRoutes,
} from '../http/app.js';
import { clientAddress, clientNetworks, clientRateLimitKey } from '../http/client-address.js';
import { LocalCounter } from '../http/counters.js';
import { ApiError, toApiError } from '../http/errors.js';
import { IPV6_48_ALLOWANCE_FACTOR, IPV6_56_ALLOWANCE_FACTOR } from '../http/rate-limits.js';
import { webPages, type PageHttp, type WebPagesSettings } from '../web/plugin.js';
import { inDemo, type DemoSettings } from '../web/demo.js';

/** The public page's part of the options. */
export interface PagesOption {
  /** The public checker page at `/` (default: served, not in demo mode); false leaves it out. */
  pages?: WebPagesSettings | false;
}
/** The service plugin's options: the API's, plus the page. */
export interface ServiceOptions extends ApiServiceOptions, PagesOption {}
/** `buildApp`'s options: the server's and the API's, plus the page. */
export interface AppOptions extends ApiAppOptions, PagesOption {}

/** What the page takes from the HTTP layer: the one error catalogue, the client's networks and the counters. */
export const PAGE_HTTP: PageHttp = {
  clientKey: clientRateLimitKey,
  answerFor: (error) => toApiError(error),
  answer: (code, details = {}) => new ApiError(code, details),
  networksOf: (request) => clientNetworks(clientAddress(request)),
  wideNetworkFactors: { net56: IPV6_56_ALLOWANCE_FACTOR, net48: IPV6_48_ALLOWANCE_FACTOR },
  localCounter: () => new LocalCounter(),
};

/** The demo's domains as the API's scope (src/http/app.ts): the zones the demo's page answers for. */
export function demoDomainScope(demo: DemoSettings): DomainScope {
  return { allows: (domain) => inDemo(demo, domain), examples: demo.domains.map((d) => d.input).filter((input) => /^[a-z0-9.-]+$/.test(input)) };
}

/** The options with the page added to the service's routes (unless `pages: false`). */
function withPages<Options extends ApiServiceOptions & PagesOption>(options: Options): Options {
  if (options.pages === false) return options;
  const settings = options.pages ?? {};
  const check = options.check;
  const pages: ServiceRoutes = async (app, { limits, counter, publicUrl }) => {
    // The same injected check the API uses, so that a page and an API answer for a domain agree.
    await app.register(webPages, {
      ...settings,
      check: (domain, checkOptions) => check(domain, checkOptions),
      rateLimit: limits === false ? false : limits.spoofCheck,
      transportRateLimit: limits === false ? false : limits.transportCheck,
      ...(options.lookalikes ? { lookalikes: options.lookalikes, lookalikeRateLimit: limits === false ? false : limits.lookalikes } : {}),
      ...(limits === false ? {} : { anonymousBudget: limits.anonymousChecks }),
      counter,
      publicUrl,
      // With --public-history the result page links to /history/<domain>; monitors stay private otherwise.
      ...(options.publicHistory && options.monitors ? { publicHistory: options.monitors.store } : {}),
      http: PAGE_HTTP,
    });
  };
  // The demo's API answers for the demo's own domains only, as its page does (issue 42).
  const scope = settings.demo && !options.domainScope ? { domainScope: demoDomainScope(settings.demo) } : {};
  return { ...options, ...scope, routes: [...(options.routes ?? []), pages] };
}

/** Builds the whole server (time limits, body limit, trusted proxies, log redaction), the API and the page. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  return buildApiApp(withPages(options));
}

/**
 * The service (API and page) as a Fastify plugin for a host that has its own server:
 * `await host.register(spoofCheckerService, { stores, check })`. Encapsulated, as the API's own.
 */
export const spoofCheckerService: FastifyPluginAsync<ServiceOptions> = async (host, options) => {
  await apiService(host, withPages(options));
};
