/**
 * The one place that starts and stops a running service: `startService` (what `spoof-checker serve`
 * runs: the stores, the seed, the rate limits' Redis, batches, monitors, the HTTP app) and
 * `startWorker` (what `spoof-checker worker` runs: the stores and the queue workers). Each opens its
 * parts in order and hands back a handle whose `stop()` closes them in the reverse order, each part
 * bounded in time (`DEFAULT_COMPONENT_STOP_TIMEOUT_MS`), so that one part that hangs cannot keep the
 * process, or the parts opened before it, from closing. When a part fails to start, what was opened
 * before it is stopped the same way and the error is thrown on: the caller never has half a service.
 *
 * The CLI (`src/cli/serve.ts`, `src/cli/worker.ts`) only parses flags, builds the resolver the flags
 * name, calls one of these and prints; nothing else in the CLI reaches into store/, jobs/ or http/
 * to run the service.
 *
 * HOW TO ADD A COMPONENT (an SMTP receiver, a mailbox fetcher, a cache warmer…):
 *   1. Give it an optional section of its own in `ServiceConfig` (or `WorkerConfig`), e.g.
 *      `reports?: ReportsConfig`, so that a caller that does not name it gets nothing new.
 *   2. Write its starter in its own module (the room it belongs to: jobs/ for work over the stores,
 *      service/ for wiring), returning something with `stop(): Promise<void>`.
 *   3. In `startService` (or `startWorker`), at the point in the order where what it needs is open
 *      (the stores, the check, Redis…), add it with `await started.add('name', () => start…(…))`:
 *      the handle then lists it in `components` and `stop()` closes it before everything it may
 *      use. Starting it after the stores and before the HTTP app (the usual place) means it is
 *      stopped after the app has drained its requests and before the stores close.
 *   4. Say in the start-up line what it listens on, if anything (`ServiceHandle.notes`).
 *   A component that needs no edit here can also be passed in `config.components` (a list of
 *   `ComponentStarter`s): each is started after the jobs, with a `ServiceContext`, in list order.
 */
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { Redis } from 'ioredis';
import { checkDomain, findLookalikes, ZoneResolver, type CheckOptions, type CheckTransportOptions, type HostLookup, type RangeData, type Resolver, type SpoofCheckResult } from '@spoof-checker/engine';
import type { StartupApiKey } from '../http/app.js';
import type { TrustProxy } from '../http/client-address.js';
import { connectRateLimitRedis, type RateLimits } from '../http/rate-limits.js';
import { KeyRedactor } from '../http/key-redaction.js';
import type { BatchService } from '../jobs/batches/service.js';
import { describeBatchMode, startBatchService, startLookalikeJobService } from '../jobs/batches/setup.js';
import type { DeepLookalikeRun, LookalikeJobService } from '../jobs/batches/lookalike-jobs.js';
import { API_DEEP_MAX_CANDIDATES } from '../http/routes/lookalikes.js';
import type { MonitorService } from '../jobs/monitors/monitors.js';
import type { AlertSmtpConfig } from '../jobs/monitors/alert-email.js';
import { withLatestResults } from '../jobs/monitors/latest-results.js';
import { describeMonitorMode, seedDemoMonitor, startMonitorService, startMonitorWorkerWithPump } from '../jobs/monitors/monitor-setup.js';
import { withLookalikeSearch, type MonitorCheck } from '../jobs/monitors/monitor-run.js';
import { startBatchWorker } from '../jobs/batches/worker.js';
import { loadRedisModules } from '../jobs/redis-modules.js';
import { reportWriter } from '../ingest/report-writer.js';
import { openStores, seedIfEmpty, type StorageChoice } from '../store/open.js';
import { loadSeedFile } from '../store/seed.js';
import type { Stores } from '../store/types.js';
import type { WebPagesSettings } from '../web/plugin.js';
import { reportSelectorCache } from '../summaries/selectors.js';
import { monitorReportSignals } from '../summaries/signals.js';
import { buildApp, type PagesOption } from './compose.js';
import { isDemoTransportDomain, startDemoTransport, type DemoTransport } from './demo-transport.js';
import { seedDemoReports } from './demo-reports.js';
import { startSmtpReceiver } from './smtp-receiver.js';

/** How long one component may take to stop before the next one is stopped anyway. */
export const DEFAULT_COMPONENT_STOP_TIMEOUT_MS = 30_000;
/** How long a worker waits for Redis at start before it gives up. */
export const DEFAULT_WORKER_CONNECT_TIMEOUT_MS = 10_000;
/** How long the queue workers get to close when Redis was never reached (nothing is in hand). */
export const UNCONNECTED_STOP_TIMEOUT_MS = 1_000;

/** Where a component's messages go: one line each, without a trailing newline (the caller adds its prefix). */
export type ServiceLog = (message: string) => void;

/** A running part of the service, stopped by the handle in the reverse order of starting. */
export interface ServiceComponent {
  /** Short name for messages: `store`, `redis`, `batches`, `monitors`, `http`, … */
  readonly name: string;
  stop(): Promise<void>;
  /** This component's own stop bound, when the default does not fit. */
  readonly stopTimeoutMs?: number;
}

/** How one component's stop went. */
export interface ComponentStopOutcome {
  name: string;
  outcome: 'stopped' | 'failed' | 'timed-out';
}

/** What every component may use: the stores, the check, the environment, the log. */
export interface ServiceContext {
  readonly role: 'serve' | 'worker';
  readonly stores: Stores;
  /** The check with the service's resolver, provider data and base URL. */
  readonly check: (domain: string) => Promise<SpoofCheckResult>;
  readonly redisUrl: string | undefined;
  readonly env: NodeJS.ProcessEnv;
  readonly log: ServiceLog;
}

/** A component passed in by the caller: started after the jobs, in list order; stopped before them. */
export interface ComponentStarter {
  readonly name: string;
  start(context: ServiceContext): Promise<{ stop(): Promise<void> }>;
}

/** How the check is made (shared by the API, the page, batches and monitors). */
export interface CheckConfig {
  /** The resolver for the check of `input` (the CLI builds it from --zones / --resolver / --faults). */
  resolverFor(input: string): Resolver;
  /** Provider data for the shared-infrastructure classification; undefined for the shipped snapshot. */
  ranges?: RangeData | undefined;
  /** Base of `nextStep.href`. */
  baseUrl?: string | undefined;
  /** DNSSEC validation for every check (`--trust-anchor`, on by default over DNS servers); left out: not asked. */
  dnssec?: CheckOptions['dnssec'];
  /** DNSSEC for one domain, when it differs by domain (the demo's signed domains); undefined: `dnssec`. */
  dnssecFor?: ((domain: string) => CheckOptions['dnssec']) | undefined;
  /** Extra Mark Verifying Authority roots (PEM) for one domain's BIMI check (the demo's own authority, for its domains only). */
  bimiRootsFor?: ((domain: string) => string | undefined) | undefined;
  /** The transport options for one domain, when they differ by domain (the demo's own mail servers); else `transport`. */
  transportFor?: ((domain: string) => CheckTransportOptions | undefined) | undefined;
  /** The transport probe's options, for checks that ask for transport. */
  transport?: CheckTransportOptions | undefined;
}

/** What the parts common to both roles take. */
interface CommonConfig {
  storage: StorageChoice;
  check: CheckConfig;
  /** Webhooks (and the transport probe of the worker) may reach private addresses. */
  allowPrivateAddresses: boolean;
  /**
   * How webhook hosts are looked up; default the system resolver. With zone files the CLI passes the
   * zones' own lookup (src/jobs/resolver-lookup.ts), so an offline service asks no resolver at all.
   */
  webhookLookup?: HostLookup | undefined;
  /** Webhooks to loopback addresses only (`serve --demo`, which sends nothing off the machine). */
  webhookLoopbackOnly?: boolean | undefined;
  env: NodeJS.ProcessEnv;
  log: ServiceLog;
  /** More components (see the comment at the top). */
  components?: readonly ComponentStarter[];
  /** Each component's stop bound (default `DEFAULT_COMPONENT_STOP_TIMEOUT_MS`). */
  stopTimeoutMs?: number;
  /** Alert channels' settings: the mail relay and the origin console links start with (channels work without them, email excepted). */
  alerts?: { smtp?: AlertSmtpConfig | undefined; publicOrigin?: string | undefined } | undefined;
}

/** The HTTP part of `startService`. */
export interface HttpConfig {
  host: string;
  /** 0 picks a free port (the handle says which). */
  port: number;
  apiKeys: StartupApiKey[];
  /** Rate limits on (the defaults) or off. */
  rateLimit: boolean;
  /** With `rateLimit`, limits that replace the defaults (the demo's, `DEMO_RATE_LIMITS`). */
  rateLimitOverrides?: Partial<RateLimits> | undefined;
  trustProxy: TrustProxy;
  publicUrl?: string | undefined;
  publicHistory: boolean;
  environment: string;
  logger: FastifyServerOptions['logger'];
  /** The page's settings (demo mode); default: the page, not in demo mode. */
  pages?: WebPagesSettings;
  /** Accept weak keys the store holds (the published demo keys: `--demo` on loopback only). */
  acceptWeakKeys?: boolean;
  /** The console's settings (`serve --demo`: the demo organisation, and a demo viewer signed in on loopback); default: served. */
  console?: PagesOption['console'];
}

/** DMARC and TLS reports: the SMTP receiver (when `smtp` is given) and the service's report addresses. */
export interface ReportsConfig {
  /** Addresses that are always report addresses (`--report-address`); the first names the service's report domain. */
  reportAddresses: readonly string[];
  /** The SMTP receiver (`serve --smtp-port N`); left out, none listens. */
  smtp?: { host: string; port: number; maxMessageBytes?: number };
}

/** Everything `startService` opens. Optional sections start nothing when left out. */
export interface ServiceConfig extends CommonConfig {
  /** Record logs older than this are pruned (SQL stores); the store's default when left out. */
  retentionDays?: number;
  /** A seed file, validated at every start and applied to an empty store only. */
  seedFile?: string | undefined;
  /** Let the seed file hold weak keys in clear (the published demo keys, under `--demo` only). */
  allowWeakSeedKeys?: boolean;
  /** Redis for the rate limits, the batch queue and the monitor queue; without it all runs in this process. */
  redisUrl?: string | undefined;
  /** Names each organisation may submit in batches per UTC day. */
  namesPerDay?: number;
  /** Most monitors one organisation may keep (default `MAX_MONITORS_PER_ORGANIZATION`). */
  maxMonitorsPerOrganization?: number;
  http: HttpConfig;
  /** The demo's monitor, seeded with a history when the seed was loaded into an empty store; `more`: the demo console's other domains. */
  demoMonitor?: { organizationId: string; domain: string; more?: readonly string[] };
  /**
   * `serve --demo`: start the demo's own mail servers on loopback (src/service/demo-transport.ts)
   * and answer the demo transport domains from them; every other domain keeps `check`'s options.
   */
  demoTransport?: boolean;
  /** The demo's DMARC and TLS reports (src/service/demo-reports.ts), stored for this organisation when the seed was loaded into an empty store. */
  demoReports?: { organizationId: string };
  /** Reports in (SMTP) and the report routes' settings. */
  reports?: ReportsConfig;
}

/** A running service. */
export interface ServiceHandle {
  readonly app: FastifyInstance;
  readonly stores: Stores;
  /** The port listened on (the one picked, for port 0). */
  readonly port: number;
  /** Whether the rate limits are counted in Redis. */
  readonly rateLimitsInRedis: boolean;
  /** One phrase each for the start-up line: where batches and monitors run, what more is listening. */
  readonly notes: readonly string[];
  /** The components, in starting order. */
  readonly components: readonly ServiceComponent[];
  /** Whether the store holds any API key (without one every /api call answers 401). */
  hasApiKey(): Promise<boolean>;
  /** Stops every component, last started first, each bounded; never throws. */
  stop(options?: { timeoutMs?: number }): Promise<ComponentStopOutcome[]>;
}

/** What `startWorker` opens. */
export interface WorkerConfig extends CommonConfig {
  redisUrl: string;
  /** Names checked at once. */
  concurrency: number;
  /** How long a chunk stays claimed without a sign of life. */
  lockDurationMs?: number;
  /** Called after each chunk checked, with its number of names (for progress lines). */
  onChecked?: (names: number) => void;
  /** How long to wait for Redis at start (default `DEFAULT_WORKER_CONNECT_TIMEOUT_MS`). */
  connectTimeoutMs?: number;
}

/** A running worker. */
export interface WorkerHandle {
  readonly stores: Stores;
  /** The store's one-line description. */
  readonly storeDescription: string;
  readonly components: readonly ServiceComponent[];
  stop(options?: { timeoutMs?: number }): Promise<ComponentStopOutcome[]>;
}

/**
 * The ordered list of started components: `add` starts one and records it; `stopAll` stops them
 * last first, each within its bound, logging (never throwing) a failure or a time-out.
 */
class Started {
  readonly components: ServiceComponent[] = [];
  constructor(
    private readonly log: ServiceLog,
    private readonly defaultTimeoutMs: number,
  ) {}

  /** Starts a component and records it; returns what `start` returned. */
  async add<T>(name: string, start: () => Promise<T>, stopOf: (value: T) => Promise<void>, stopTimeoutMs?: number): Promise<T> {
    const value = await start();
    this.components.push({ name, stop: () => stopOf(value), ...(stopTimeoutMs !== undefined ? { stopTimeoutMs } : {}) });
    return value;
  }

  async stopAll(timeoutMs?: number): Promise<ComponentStopOutcome[]> {
    const outcomes: ComponentStopOutcome[] = [];
    while (this.components.length > 0) {
      const component = this.components.pop()!;
      const bound = timeoutMs ?? component.stopTimeoutMs ?? this.defaultTimeoutMs;
      let timer: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([
        component.stop().then(
          () => 'stopped' as const,
          (error: unknown) => {
            this.log(`stopping ${component.name} failed: ${error instanceof Error ? error.message : String(error)}`);
            return 'failed' as const;
          },
        ),
        new Promise<'timed-out'>((resolve) => {
          timer = setTimeout(() => resolve('timed-out'), bound);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
      if (outcome === 'timed-out') this.log(`${component.name} did not stop within ${bound} ms; stopping the rest`);
      outcomes.push({ name: component.name, outcome });
    }
    return outcomes;
  }
}

/** The three checks the service makes, from one `CheckConfig`. */
function checksOf(config: CheckConfig) {
  const base = (domain: string) => ({
    resolver: config.resolverFor(domain),
    ranges: config.ranges,
    ...((config.dnssecFor?.(domain) ?? config.dnssec) !== undefined ? { dnssec: config.dnssecFor?.(domain) ?? config.dnssec } : {}),
    ...(config.baseUrl !== undefined ? { baseUrl: config.baseUrl } : {}),
  });
  const plain = (domain: string) => checkDomain(domain, base(domain));
  // A monitor that asks for the transport check gets it, with the service's transport options.
  const transportFor = (domain: string): CheckTransportOptions => config.transportFor?.(domain) ?? config.transport ?? {};
  // BIMI fetches the logo and the certificate with the transport's flags (--tls-ca, --connect-ports https=N, --allow-private-addresses).
  const bimiFor = (domain: string) => {
    const transport = transportFor(domain);
    const extraRoots = config.bimiRootsFor?.(domain);
    return { tlsCa: transport.tlsCa, connectPorts: transport.connectPorts, allowPrivateAddresses: transport.allowPrivateAddresses, ...(extraRoots !== undefined ? { extraRoots } : {}) };
  };
  // A monitor that asks for lookalikes gets the default search, through the same shared cache.
  const monitor: MonitorCheck = withLookalikeSearch(
    (domain, options) =>
      checkDomain(domain, {
        ...base(domain),
        ...(options.selectors ? { selectors: options.selectors } : {}),
        ...(options.checks.includes('transport') ? { transport: transportFor(domain) } : {}),
        ...(options.checks.includes('bimi') ? { bimi: bimiFor(domain) } : {}),
      }),
    (domain) => findLookalikes(domain, { resolver: config.resolverFor(domain) }),
  );
  // A deep lookalike run (a job of the API, run by serve or by a worker): the API's cap, progress as it goes.
  const deepLookalikes: DeepLookalikeRun = (domain, { onProgress, signal }) =>
    findLookalikes(domain, { resolver: config.resolverFor(domain), deep: true, maxCandidates: API_DEEP_MAX_CANDIDATES, onProgress, signal });
  return { plain, monitor, base, transportFor, bimiFor, deepLookalikes };
}

/** Starts the caller's extra components, in order. */
async function startExtras(started: Started, starters: readonly ComponentStarter[] | undefined, context: ServiceContext): Promise<void> {
  for (const starter of starters ?? []) {
    await started.add(starter.name, () => starter.start(context), (running) => running.stop());
  }
}

/**
 * Starts the service `serve` runs, in this order: the stores (migrated), the seed (an empty store
 * only), Redis for the rate limits, batches, deep lookalike jobs (on the batches' queue), monitors (and the demo's monitor), the caller's
 * components, then the HTTP app, listening. Throws what failed, after stopping what had started.
 */

/**
 * What the monitor service (serve) and the monitor worker are given alike: the store, the check
 * that keeps each domain's latest result for the console, the report signals, Redis and the address policy.
 */
function monitorBasics<R extends string | undefined>(stores: Stores, check: MonitorCheck, config: { redisUrl?: R; allowPrivateAddresses: boolean; env: NodeJS.ProcessEnv }, log: (line: string) => void) {
  return {
    store: stores.monitors,
    check: withLatestResults(check, stores.console, { onError: (error) => log(`console: latest result not kept: ${error instanceof Error ? error.message : String(error)}`) }),
    reportSignals: monitorReportSignals(stores.reports),
    reportSelectors: reportSelectorCache(stores.reports),
    redisUrl: config.redisUrl as R,
    allowPrivateAddresses: config.allowPrivateAddresses,
    env: config.env,
  };
}

export async function startService(config: ServiceConfig): Promise<ServiceHandle> {
  const { log } = config;
  const started = new Started(log, config.stopTimeoutMs ?? DEFAULT_COMPONENT_STOP_TIMEOUT_MS);
  try {
    // BullMQ and ioredis are optional peers: with Redis asked for, say which is missing before anything opens.
    if (config.redisUrl !== undefined) await loadRedisModules();
    let checkConfig = config.check;
    if (config.demoTransport) {
      const demo = await started.add('demo-transport', () => startDemoTransport(), (running) => running.stop());
      checkConfig = withDemoTransport(config.check, demo);
    }
    const checks = checksOf(checkConfig);
    const opened = await started.add(
      'store',
      () =>
        openStores(config.storage, {
          ...(config.retentionDays !== undefined ? { retentionDays: config.retentionDays } : {}),
          onPruneError: (error) => log(`pruning the record log failed (will retry): ${error instanceof Error ? error.message : String(error)}`),
          // An idle connection the server dropped: the pool discards it and the next query reconnects.
          onPoolError: (error) => log(`database connection lost (${error.message}); reconnecting on the next request`),
        }),
      // The store's close stops the background refresh of the report blocks of days (issue 41) first.
      (value) => value.stores.close(),
    );
    const stores = opened.stores;
    // The writer every ingest path shares, made here to log its background refresh's failures.
    reportWriter(stores.reports, { log });
    log(`store: ${opened.description}` + (opened.migrationsApplied.length > 0 ? `; migrations applied: ${opened.migrationsApplied.join(', ')}` : ''));

    let seeded = false;
    const seedKeys: string[] = [];
    if (config.seedFile !== undefined) {
      // Validated every time (a broken file is an error), applied only to an empty store.
      const seed = await loadSeedFile(config.seedFile, { allowWeakKeys: config.allowWeakSeedKeys ?? false });
      // The seed's keys given in clear are redacted from every log and record, like the startup keys.
      for (const org of seed.organizations) for (const apiKey of org.apiKeys ?? []) if (apiKey.key !== undefined) seedKeys.push(apiKey.key);
      if ((await seedIfEmpty(opened, seed)) === 'loaded') {
        seeded = true;
        log(`seed ${config.seedFile} loaded into the empty store`);
      } else {
        log(`the store already holds data: seed ${config.seedFile} skipped`);
      }
    }

    let redis: Redis | undefined;
    if (config.redisUrl !== undefined) {
      const url = config.redisUrl;
      redis = await started.add(
        'redis',
        () => connectRateLimitRedis(url, (error) => log(`Redis: ${error.message}`)),
        async (client) => {
          await client.quit().catch(() => client.disconnect());
        },
      );
    }

    const jobLog = (message: string, error?: unknown) => log(`${message}${error instanceof Error ? `: ${error.message}` : ''}`);
    // Batches: on the Redis queue when there is one (workers check), else in this process.
    const batches: BatchService = await started.add(
      'batches',
      () =>
        startBatchService({
          store: stores.batches,
          check: checks.plain,
          redisUrl: config.redisUrl,
          ...(config.namesPerDay !== undefined ? { namesPerDay: config.namesPerDay } : {}),
          lookalikes: { store: stores.lookalikeJobs, run: checks.deepLookalikes },
          log: jobLog,
        }),
      (service) => service.close(),
    );
    // Deep lookalike runs: jobs on the batches' queue (stopped before it).
    const lookalikeJobs: LookalikeJobService = await started.add(
      'lookalike jobs',
      () => startLookalikeJobService({ store: stores.lookalikeJobs, batches, log: jobLog }),
      (service) => service.close(),
    );
    const monitors: MonitorService = await started.add(
      'monitors',
      () =>
        startMonitorService({
          ...monitorBasics(stores, checks.monitor, config, log),
          ...(config.maxMonitorsPerOrganization !== undefined ? { maxMonitorsPerOrganization: config.maxMonitorsPerOrganization } : {}),
          alerts: { store: stores.alerts, lookalikes: stores.rememberedLookalikes, smtp: config.alerts?.smtp, publicOrigin: config.alerts?.publicOrigin ?? config.http.publicUrl },
          ...(config.webhookLookup || config.webhookLoopbackOnly
            ? { webhooks: { ...(config.webhookLookup ? { lookup: config.webhookLookup } : {}), ...(config.webhookLoopbackOnly ? { loopbackOnly: true } : {}) } }
            : {}),
          log: jobLog,
        }),
      (service) => service.close(),
    );
    if (config.demoReports && seeded) {
      const stored = await seedDemoReports(stores.reports, config.demoReports.organizationId, new Date());
      log(`demo: ${stored} DMARC and TLS reports stored for ${config.demoReports.organizationId}`);
    }
    if (config.demoMonitor && seeded) {
      // The demo console's organisation: several domains, each with a history of changes.
      for (const domain of [config.demoMonitor.domain, ...(config.demoMonitor.more ?? [])]) {
        await seedDemoMonitor(monitors, config.demoMonitor.organizationId, domain, withLatestResults(checks.monitor, stores.console), new Date());
      }
    }

    await startExtras(started, config.components, { role: 'serve', stores, check: checks.plain, redisUrl: config.redisUrl, env: config.env, log });

    // One key redactor for the API and the report receiver: a key a report carries (in its org_name,
    // its id, its file name) is refused there as at the API's upload (issue 38 item 9).
    const keyRedactor = new KeyRedactor();
    for (const key of [...seedKeys, ...(config.http.apiKeys ?? []).map((startup) => startup.key)]) keyRedactor.remember(key);
    // The report receiver: after the stores (it writes to them), stopped before them.
    const reportNotes: string[] = [];
    const reportResolver = config.check.resolverFor('');
    const reportAddresses = config.reports?.reportAddresses ?? [];
    const serviceDomain = reportAddresses[0]?.split('@').pop()?.toLowerCase() ?? null;
    const smtpConfig = config.reports?.smtp;
    if (smtpConfig) {
      const smtp = await started.add(
        'smtp',
        () => startSmtpReceiver(smtpConfig, { stores, resolver: reportResolver, reportAddresses, serviceDomain, keyRedactor, log }),
        (running) => running.stop(),
      );
      reportNotes.push(...smtp.notes);
    }

    const { http } = config;
    const app = await buildApp({
      stores,
      batches,
      monitors,
      reports: { resolver: reportResolver, serviceDomain },
      publicHistory: http.publicHistory,
      check: (domain, options) =>
        checkDomain(domain, {
          ...checks.base(domain),
          ...(options?.selectors ? { selectors: options.selectors } : {}),
          ...(options?.transport ? { transport: checks.transportFor(domain) } : {}),
          ...(options?.bimi ? { bimi: checks.bimiFor(domain) } : {}),
          ...(options?.maxQueries !== undefined ? { maxQueries: options.maxQueries } : {}),
        }),
      // Lookalike runs ask through the same shared, TTL-aware cache as the checks.
      lookalikes: (domain, options) => findLookalikes(domain, { resolver: checks.base(domain).resolver, ...options }),
      lookalikeJobs,
      ...(redis ? { rateLimitRedis: redis } : {}),
      apiKeys: http.apiKeys,
      redactKeys: seedKeys,
      keyRedactor,
      ...(http.acceptWeakKeys ? { acceptWeakKeys: true } : {}),
      ...(http.pages ? { pages: http.pages } : {}),
      ...(http.console !== undefined ? { console: http.console } : {}),
      rateLimits: http.rateLimit ? { ...(http.rateLimitOverrides ?? {}) } : false,
      trustProxy: http.trustProxy,
      ...(http.publicUrl !== undefined ? { publicUrl: http.publicUrl } : {}),
      environment: http.environment,
      logger: http.logger,
    });
    // Closing the app drains the requests in flight, before anything they use is closed.
    started.components.push({ name: 'http', stop: () => app.close() });
    await app.listen({ host: http.host, port: http.port });
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : http.port;
    return {
      app,
      stores,
      port,
      rateLimitsInRedis: redis !== undefined,
      notes: [describeBatchMode(config.redisUrl), describeMonitorMode(config.redisUrl), ...reportNotes],
      components: started.components,
      hasApiKey: () => stores.apiKeys.hasAnyKey().catch(() => true),
      stop: (options) => started.stopAll(options?.timeoutMs),
    };
  } catch (error) {
    await started.stopAll();
    throw error;
  }
}

/**
 * Starts what `worker` runs, in this order: the store (no pruning: the API does it), the batch
 * worker (it runs deep lookalike jobs too), the monitor worker with its webhook pump, the caller's components; then waits until
 * both queue workers reach Redis (throws after `connectTimeoutMs`, having stopped everything).
 */
export async function startWorker(config: WorkerConfig): Promise<WorkerHandle> {
  const { log } = config;
  const started = new Started(log, config.stopTimeoutMs ?? DEFAULT_COMPONENT_STOP_TIMEOUT_MS);
  const checks = checksOf(config.check);
  const jobLog = (message: string, error?: unknown) => log(`${message}${error instanceof Error ? `: ${error.message}` : ''}`);
  try {
    await loadRedisModules();
    const opened = await started.add('store', () => openStores(config.storage, { pruneAutomatically: false }), (value) => value.stores.close());
    const stores = opened.stores;
    const batchWorker = await started.add(
      'batch worker',
      async () =>
        startBatchWorker({
          redisUrl: config.redisUrl,
          store: stores.batches,
          check: checks.plain,
          concurrency: config.concurrency,
          lookalikes: { store: stores.lookalikeJobs, run: checks.deepLookalikes },
          ...(config.lockDurationMs !== undefined ? { lockDurationMs: config.lockDurationMs } : {}),
          onChunk: (_job, outcome) => {
            if (outcome.kind === 'checked') config.onChecked?.(outcome.names);
          },
          log: jobLog,
        }),
      (worker) => worker.close(),
    );
    const monitorWorker = await started.add(
      'monitor worker',
      () =>
        startMonitorWorkerWithPump({
          ...monitorBasics(stores, checks.monitor, config, log),
          ...(config.lockDurationMs !== undefined ? { lockDurationMs: config.lockDurationMs } : {}),
          alerts: { store: stores.alerts, lookalikes: stores.rememberedLookalikes, smtp: config.alerts?.smtp, publicOrigin: config.alerts?.publicOrigin },
          ...(config.webhookLookup ? { webhooks: { lookup: config.webhookLookup } } : {}),
          log: jobLog,
        }),
      (worker) => worker.close(),
    );
    await startExtras(started, config.components, { role: 'worker', stores, check: checks.plain, redisUrl: config.redisUrl, env: config.env, log });
    const connectTimeoutMs = config.connectTimeoutMs ?? DEFAULT_WORKER_CONNECT_TIMEOUT_MS;
    const connected = await Promise.race([
      Promise.all([batchWorker.ready(), monitorWorker.ready()]).then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), connectTimeoutMs).unref()),
    ]);
    if (!connected) {
      // Nothing is in hand: the queue workers get a short bound, the store its usual one.
      const store = started.components.shift()!;
      await started.stopAll(UNCONNECTED_STOP_TIMEOUT_MS);
      started.components.push(store);
      throw new WorkerConnectError(`cannot reach Redis at ${redactedUrl(config.redisUrl)} within ${connectTimeoutMs / 1000} s`);
    }
    return { stores, storeDescription: opened.description, components: started.components, stop: (options) => started.stopAll(options?.timeoutMs) };
  } catch (error) {
    await started.stopAll();
    throw error;
  }
}

/** The worker could not reach Redis in time. */
export class WorkerConnectError extends Error {
  override readonly name = 'WorkerConnectError';
}

/** The URL without its password, for messages. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

/** The check with the demo transport domains answered from the demo's zones and mail servers. */
function withDemoTransport(check: CheckConfig, demo: DemoTransport): CheckConfig {
  const resolver = new ZoneResolver(demo.zones);
  return {
    ...check,
    resolverFor: (input) => (isDemoTransportDomain(demo, input) ? resolver : check.resolverFor(input)),
    transportFor: (domain) => (isDemoTransportDomain(demo, domain) ? demo.options : check.transportFor?.(domain)),
    bimiRootsFor: (domain) => (isDemoTransportDomain(demo, domain) ? demo.bimiRoots : check.bimiRootsFor?.(domain)),
  };
}
