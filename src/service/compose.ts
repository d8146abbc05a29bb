/**
 * The composition root of the service: the one place that puts the rooms together. The HTTP API
 * (src/http, over the stores and the batch jobs it is given) and the public checker page (src/web)
 * become one app here; http/ and web/ never import each other, and nothing below imports this.
 *
 * `buildApp` and `spoofCheckerService` are what `spoof-checker/service` exports and what `serve`
 * runs: the API's own (src/http/app.ts) plus the page, its guides and assets. `pages: false`
 * leaves the page out; `pages: { demo }` shows it in demo mode (answers from fixture zones).
 * The console (src/console, `/console`) is added beside the page, on the same stores and monitors
 * as the API; `console: false` leaves it out.
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
import { buildRecord } from '../http/audit.js';
import { clientAddress, clientNetworks, clientRateLimitKey } from '../http/client-address.js';
import { KeyRedactor } from '../http/key-redaction.js';
import { noteKeyUse } from '../console/last-used.js';
import { consolePlugin, type ConsoleHttp, type ConsoleOptions } from '../console/plugin.js';
import { LocalCounter } from '../http/counters.js';
import { ApiError, toApiError } from '../http/errors.js';
import { IPV6_48_ALLOWANCE_FACTOR, IPV6_56_ALLOWANCE_FACTOR } from '../http/rate-limits.js';
import { webPages, type PageHttp, type WebPagesSettings } from '../web/plugin.js';
import { inDemo, type DemoSettings } from '../web/demo.js';

/** The public page's and the console's part of the options. */
export interface PagesOption {
  /** The public checker page at `/` (default: served, not in demo mode); false leaves it out. */
  pages?: WebPagesSettings | false;
  /**
   * The console at `/console` (default: served when the page is); false leaves it out. `demo`: the
   * demo organisation, and whether a demo viewer is signed in by itself (`serve --demo` on loopback).
   */
  console?: { demo?: { organizationId: string; autoSignIn: boolean } } | false;
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

/** What the console takes from the HTTP layer: the client's address and key, the record log's builder, the catalogue. */
export function consoleHttp(environment: string, now: () => Date): ConsoleHttp {
  const keys = new KeyRedactor();
  return {
    clientAddress: (request) => clientAddress(request),
    clientKey: clientRateLimitKey,
    record: (request, reply) => buildRecord(request, reply, { environment, now, keys }),
    answer: (code, details = {}) => new ApiError(code, details),
    answerFor: (error) => toApiError(error),
  };
}

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
    if (options.console === false) return;
    const demo = settings.demo && options.console?.demo ? { settings: settings.demo, ...options.console.demo } : null;
    const consoleOptions: ConsoleOptions = {
      stores: options.stores,
      ...(options.monitors ? { monitors: options.monitors } : {}),
      ...(publicUrl !== undefined ? { publicOrigin: publicUrl } : {}),
      demo,
      http: consoleHttp(options.environment ?? 'development', options.now ?? (() => new Date())),
      ...(options.now ? { now: options.now } : {}),
      ...(options.reports ? { reports: options.reports } : {}),
    };
    await app.register(consolePlugin, consoleOptions);
  };
  // The console lists when each of its keys was last used: the API's lookups are noted (on a
  // plain stores object, as the store modules make; a host's own class is left as it is).
  const plain = Object.getPrototypeOf(options.stores) === Object.prototype;
  const stores = options.console === false || !plain ? options.stores : { ...options.stores, apiKeys: noteKeyUse(options.stores.apiKeys, options.stores.console, options.now) };
  // The demo's API answers for the demo's own domains only, as its page does (issue 42).
  const scope = settings.demo && !options.domainScope ? { domainScope: demoDomainScope(settings.demo) } : {};
  return { ...options, ...scope, stores, routes: [...(options.routes ?? []), pages] };
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
