/**
 * `spoof-checker worker`: processes batch chunks from the Redis queue against the shared store.
 * Start as many as you like, on as many machines; stop with SIGINT/SIGTERM (the chunks running are
 * finished first; a worker killed outright loses nothing: its chunks go back on the queue).
 */
import { DEFAULT_MAX_OUTSTANDING_QUERIES } from '@spoof-checker/engine';
import { DEFAULT_BATCH_CONCURRENCY } from '../jobs/batches/model.js';
import { checkRedisUrl } from '../jobs/batches/queue.js';
import { DEFAULT_LOCK_DURATION_MS } from '../jobs/batches/worker.js';
import { redactedUrl, startWorker, type CheckConfig } from '../service/start.js';
import { MEMORY_DATA_DIR, type StorageChoice } from '../store/open.js';
import { checkDatabaseUrl } from '../store/postgres.js';
import { booleanOptions, integerOption, parseCommandArgs, RESOLVER_OPTIONS, settingsOrExit, stringOptions, UsageError } from './args.js';
import { ALERT_OPTIONS, ALERT_USAGE, alertSmtpFromFlags } from './alert-options.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, type Command } from './io.js';
import { RANGES_HELP, rangesFromFlag } from './ranges-options.js';
import { resolverHostLookup } from '../jobs/resolver-lookup.js';
import { resolverFromFlags } from './resolver-options.js';
import { dnssecFromFlags } from './check.js';
import { SCAN_CACHE_MAX_ENTRIES } from './scan.js';

/** Most names one worker checks at once. */
export const MAX_WORKER_CONCURRENCY = 1024;
/** How long a worker waits for Redis at start before it gives up (exit 1). */
export const WORKER_CONNECT_TIMEOUT_MS = 10_000;
/**
 * DNS queries a worker keeps in flight per name it checks at once: a check asks several lookups side
 * by side (the SPF tree, DMARC, MX). A fixed cap below that queues checks behind it whatever
 * `--concurrency` says: 64 queries in flight at 50 ms a round trip held one worker at 25 checks/s
 * (1,280 queries/s ÷ 44.5 queries a check; docs/scale.md).
 */
export const WORKER_QUERIES_IN_FLIGHT_PER_NAME = 2;
/** How often progress is written to stderr while chunks are processed. */
const PROGRESS_INTERVAL_MS = 5000;

const USAGE = `Usage: spoof-checker worker --redis URL (--database URL | --data DIR) [--zones DIR | --demo-zones | --resolver IP[:PORT]] [--faults FILE] [--concurrency N]

Processes batch checks and monitor runs queued by 'spoof-checker serve --redis URL', and delivers
monitors' webhooks. Run any number, on any number of machines, on the same Redis and the same store
as the API: each monitor still runs once per interval.

Options:
  --redis URL           the Redis of the queue (redis://host:6379) [REDIS_URL]
  --database URL        the API's PostgreSQL (postgresql://…) [DATABASE_URL]
  --data DIR            the API's SQLite directory (same machine only) [SPOOF_CHECKER_DATA]
  --zones DIR           answer DNS from the *.zone files in DIR
  --demo-zones          answer DNS from the fixture zones shipped with spoof-checker
  --resolver IP[:PORT]  ask this DNS server (several: comma-separated, sharing the queries) (default: the system's resolvers)
  --timeout MS          per-query timeout for real DNS servers
  --faults FILE         inject the DNS faults listed in FILE (a JSON list of rules, or of scenarios
                        such as fixtures/scenarios.json)
  --concurrency N       names checked at once (default ${DEFAULT_BATCH_CONCURRENCY}, at most ${MAX_WORKER_CONCURRENCY})
  --lock-duration MS    how long a chunk stays claimed without a sign of life from its worker before
                        another worker takes it over (default ${DEFAULT_LOCK_DURATION_MS})
${RANGES_HELP}
  --allow-private-addresses  let webhooks reach loopback and private addresses (labs and tests only)
  --trust-anchor FILE        validate DNSSEC from the DS or DNSKEY records in FILE instead of the IANA root KSKs
  --no-dnssec                no DNSSEC validation (on by default with DNS servers; never with --zones)
${ALERT_USAGE}
  --tls-ca FILE         extra trusted roots (PEM) for the alert relay's certificate
  -h, --help            this text

Environment: SPOOF_CHECKER_SECRET_KEY, when the API was given one (the key that seals webhook secrets).
`;

function storage(data: string | undefined, database: string | undefined, env: NodeJS.ProcessEnv): StorageChoice {
  if (data !== undefined && database !== undefined) throw new UsageError('give --data or --database, not both');
  const url = data !== undefined ? undefined : (database ?? (env['DATABASE_URL'] || undefined));
  if (url !== undefined) {
    const problem = checkDatabaseUrl(url);
    if (problem !== undefined) throw new UsageError(problem);
    return { kind: 'postgres', url };
  }
  const dir = data ?? (env['SPOOF_CHECKER_DATA'] || undefined);
  if (dir === undefined) throw new UsageError('give the store the API uses: --database URL or --data DIR');
  if (dir === MEMORY_DATA_DIR) throw new UsageError('a worker needs the store the API uses; an in-memory store cannot be shared');
  return { kind: 'sqlite', dir };
}

function readSettings(args: string[], env: NodeJS.ProcessEnv) {
  const { values } = parseCommandArgs(
    args,
    {
      ...RESOLVER_OPTIONS,
      ...stringOptions('redis', 'database', 'data', 'concurrency', 'lock-duration', 'faults', 'ranges', 'trust-anchor', 'tls-ca'),
      ...booleanOptions('allow-private-addresses', 'no-dnssec'),
      ...ALERT_OPTIONS,
    },
    false,
  );
  if (values.help) return 'help' as const;
  const redis = values.redis ?? (env['REDIS_URL'] || undefined);
  if (redis === undefined) throw new UsageError('give the queue: --redis URL (redis://host:6379)');
  try {
    checkRedisUrl(redis);
  } catch (error) {
    throw new UsageError(`--redis: ${(error as Error).message}`);
  }
  const concurrency = integerOption(values.concurrency, 'concurrency', DEFAULT_BATCH_CONCURRENCY, 1, MAX_WORKER_CONCURRENCY);
  return {
    redis,
    storage: storage(values.data, values.database, env),
    concurrency,
    lockDurationMs: integerOption(values['lock-duration'], 'lock-duration', DEFAULT_LOCK_DURATION_MS, 1000, 600_000),
    ranges: rangesFromFlag(values.ranges, env),
    allowPrivateAddresses: values['allow-private-addresses'] ?? false,
    trustAnchor: values['trust-anchor'],
    noDnssec: values['no-dnssec'],
    // The worker's pump sends alert channels too: the same relay as serve (links: SPOOF_CHECKER_PUBLIC_URL).
    alertSmtp: alertSmtpFromFlags(values, env),
    publicOrigin: env['SPOOF_CHECKER_PUBLIC_URL'] || undefined,
    resolverFlags: { zones: values.zones, demoZones: values['demo-zones'], resolver: values.resolver, timeout: values.timeout, cacheMaxEntries: SCAN_CACHE_MAX_ENTRIES, faults: values.faults, maxOutstanding: workerQueriesInFlight(concurrency) },
  };
}

/** The DNS queries a worker with `concurrency` names at once keeps in flight (never fewer than the resolver's default). */
export function workerQueriesInFlight(concurrency: number): number {
  return Math.max(DEFAULT_MAX_OUTSTANDING_QUERIES, concurrency * WORKER_QUERIES_IN_FLIGHT_PER_NAME);
}

/** The `worker` command. Exit 0 after a clean stop, 1 when the store or Redis cannot be reached, 2 on bad arguments. */
export const worker: Command = async (args, io) => {
  const read = settingsOrExit('worker', USAGE, io, () => readSettings(args, io.env));
  if ('exit' in read) return read.exit;
  const { settings } = read;
  let built;
  let dnssec: Pick<CheckConfig, 'dnssec'> = {};
  try {
    built = await resolverFromFlags(settings.resolverFlags);
    // DNSSEC over DNS servers, as serve does (one zone-state cache for the process).
    const option = await dnssecFromFlags(settings.trustAnchor, settings.noDnssec, built.network);
    if (option !== undefined) dnssec = { dnssec: option };
  } catch (error) {
    io.err(`spoof-checker worker: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  let checked = 0;
  let lastReported = 0;
  let lastAt = Date.now();
  let running;
  try {
    running = await startWorker({
      storage: settings.storage,
      // A monitor that asks for the transport check gets it (ports 25 and 443; private addresses only with the flag).
      check: { resolverFor: built.resolverFor, ranges: settings.ranges, transport: { allowPrivateAddresses: settings.allowPrivateAddresses }, ...dnssec },
      redisUrl: settings.redis,
      concurrency: settings.concurrency,
      lockDurationMs: settings.lockDurationMs,
      allowPrivateAddresses: settings.allowPrivateAddresses,
      // With zone files, webhook hosts are looked up in them too: nothing asks the system resolver.
      ...(built.zones ? { webhookLookup: resolverHostLookup(built.zones) } : {}),
      env: io.env,
      alerts: { smtp: settings.alertSmtp, publicOrigin: settings.publicOrigin },
      log: (message) => io.err(`spoof-checker worker: ${message}\n`),
      onChecked: (names) => (checked += names),
      connectTimeoutMs: WORKER_CONNECT_TIMEOUT_MS,
    });
  } catch (error) {
    // The store or Redis cannot be reached: one line, exit 1.
    io.err(`spoof-checker worker: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_FAILED;
  }
  io.err(
    `spoof-checker worker: ready (queue: ${redactedUrl(settings.redis)}; store: ${running.storeDescription}; DNS: ${built.description}; ${settings.concurrency} names at once)\n`,
  );
  const progress = setInterval(() => {
    if (checked === lastReported) return;
    const now = Date.now();
    const rate = ((checked - lastReported) / Math.max(1, now - lastAt)) * 1000;
    io.err(`spoof-checker worker: ${checked} names checked (${rate.toFixed(0)}/s)\n`);
    lastReported = checked;
    lastAt = now;
  }, PROGRESS_INTERVAL_MS);
  progress.unref();

  const signal = await io.stopSignal;
  clearInterval(progress);
  io.err(`spoof-checker worker: ${signal}: finishing the chunks in hand, then stopping (${checked} names checked)\n`);
  await running.stop();
  return EXIT_OK;
};
