/**
 * spoof-checker/service: the HTTP service of the email service API (spoof checker, logs,
 * templates, domains, contacts), for running it or mounting it in another Fastify host. The
 * engine (`spoof-checker`) does not load Fastify; this entry does.
 *
 * @example
 * import { buildApp, createMemoryStores } from 'spoof-checker/service';
 * import { checkDomain, NetworkResolver } from 'spoof-checker';
 * const resolver = new NetworkResolver();
 * const app = await buildApp({ stores: createMemoryStores(), check: (domain, options) => checkDomain(domain, { resolver, ...options }) });
 * await app.listen({ port: 8080 });
 *
 * @example
 * // In an existing Fastify host (its own server settings apply):
 * await host.register(spoofCheckerService, { stores, check, prefix: '/email' });
 */

// The app and the plugin.
/** Builds the whole server (time limits, body limit, trusted proxies, log redaction, then the API and the public page). */
export { buildApp, spoofCheckerService } from './service/compose.js';
export type { AppOptions, ServiceOptions } from './service/compose.js';
export { DEFAULT_BODY_LIMIT_BYTES, DEFAULT_TIMEOUTS, DOCS_PATH, OPENAPI_PATH } from './http/app.js';
export type { ServerTimeouts, ServiceRoutes, StartupApiKey } from './http/app.js';
export type { SpoofCheck, SpoofCheckRequestOptions } from './http/routes/spoof-checker.js';
/** The lookalike route's runner type and its deep cap (`POST /api/tools/v1/lookalikes`). */
export { API_DEEP_MAX_CANDIDATES, LookalikeReportSchema } from './http/routes/lookalikes.js';
export type { LookalikeRun, LookalikeRunOptions } from './http/routes/lookalikes.js';
/** Liveness and readiness paths. */
export { HEALTH_PATH, READY_PATH } from './http/routes/health.js';

// Client addresses and rate limits.
/** Trusted proxies (`--trust-proxy`) and the per-client rate-limit key (IPv6 by /64). */
export { clientRateLimitKey, parseTrustProxy, TrustProxyError, IPV6_CLIENT_PREFIX_BITS, MAX_TRUSTED_HOPS } from './http/client-address.js';
export type { TrustProxy } from './http/client-address.js';
/** The service's rate limits, and a fail-fast Redis client to share them across replicas. */
export { connectRateLimitRedis, DEFAULT_RATE_LIMITS, RATE_LIMIT_CACHE_MAX_KEYS } from './http/rate-limits.js';
export type { Limit, RateLimitRedis, RateLimits } from './http/rate-limits.js';

// Errors.
/** The one error catalogue: stable codes, statuses and wording of every error response. */
export { ApiError, ERROR_CATALOGUE } from './http/errors.js';
export type { CatalogueEntry, ErrorBody, ErrorCode } from './http/errors.js';
/** The database cannot be reached (answered as 503 STORE_UNAVAILABLE). */
export { StoreConfigError, StoreUnavailableError, isStoreUnavailable } from './store/errors.js';

// The resource models (TypeBox), shared by the routes, the stores and the OpenAPI document.
export * as schemas from './http/schemas.js';

// Stores.
/** In-memory stores, one interface per resource. */
export { createMemoryStores, MEMORY_RECORD_LOG_CAPACITY } from './store/memory.js';
export type * from './store/types.js';
// --- SQL store factories: the store engineer adds the SQLite and PostgreSQL factories here ---
/** Stores in SQLite (`openSqliteStores(dir)`) or PostgreSQL (`openPostgresStores(url)`), migrated on open. */
export { openSqliteStores, SQLITE_FILE_NAME } from './store/sqlite.js';
export type { OpenedSqliteStores } from './store/sqlite.js';
export { openPostgresStores } from './store/postgres.js';
export type { OpenedPostgresStores, PostgresStoresOptions } from './store/postgres.js';
/** Whichever store a configuration names (memory, SQLite or PostgreSQL), as `serve` opens it. */
export { openStores, DEFAULT_DATA_DIR, MEMORY_DATA_DIR } from './store/open.js';
export type { OpenedStores, StorageChoice } from './store/open.js';
export { DEFAULT_RETENTION_DAYS } from './store/sql.js';
export type { SqlStores, SqlStoresOptions } from './store/sql.js';
// --- end of SQL store factories ---

// Seeds.
/** Loads and applies a seed file (organisations, keys and data). */
export { applySeed, loadSeedFile, parseSeed, SeedError } from './store/seed.js';
export type { Seed } from './store/seed.js';

// Batches.
/** Batch checks: the service the routes use (store + queue + sweeper), its two queues, the queue worker and the batch stores. */
export { BatchService, DEFAULT_SWEEP_INTERVAL_MS } from './jobs/batches/service.js';
export type { BatchServiceOptions } from './jobs/batches/service.js';
export { startBatchService } from './jobs/batches/setup.js';
/** BullMQ and ioredis are optional peers: loads them, or says by name which is missing and how to install it. */
export { loadRedisModules, MissingRedisPackagesError, REDIS_PACKAGES } from './jobs/redis-modules.js';
export type { RedisModules, RedisPackage } from './jobs/redis-modules.js';
/** Starts and stops everything `serve` and `worker` run, in order (src/service/start.ts). */
export { startService, startWorker, DEFAULT_COMPONENT_STOP_TIMEOUT_MS } from './service/start.js';
export type { ServiceConfig, ServiceHandle, WorkerConfig, WorkerHandle, ServiceComponent, ComponentStarter, ServiceContext } from './service/start.js';
export { InProcessBatchRunner } from './jobs/batches/runner.js';
export { RedisBatchQueue, BATCH_QUEUE_NAME } from './jobs/batches/queue.js';
export { startBatchWorker } from './jobs/batches/worker.js';
export type { BatchWorker, BatchWorkerOptions } from './jobs/batches/worker.js';
export { BATCH_CHUNK_SIZE, DEFAULT_BATCH_NAMES_PER_DAY, MAX_BATCH_NAMES } from './jobs/batches/model.js';
export type { Batch, BatchStatus } from './jobs/batches/model.js';
export type { BatchStore } from './store/batches.js';
export { MemoryBatchStore } from './store/batches-memory.js';
export { SqlBatchStore } from './store/batches-sql.js';

// Deep lookalike runs as jobs (on the batches' queue).
/** The service the lookalike route uses for deep runs (store + the batches' queue + sweeper), the job runner, and the stores. */
export { LookalikeJobService, processLookalikeJob, LOOKALIKE_QUEUE_JOB_NAME, LOOKALIKE_PROGRESS_INTERVAL_MS, MAX_LOOKALIKE_JOB_RUNS, LOOKALIKE_JOB_STALE_MS } from './jobs/batches/lookalike-jobs.js';
export type { DeepLookalikeRun, LookalikeJobOutcome, LookalikeJobServiceOptions } from './jobs/batches/lookalike-jobs.js';
export { startLookalikeJobService } from './jobs/batches/setup.js';
export type { LookalikeJob, LookalikeJobStatus, LookalikeJobStore } from './store/lookalike-jobs.js';
export { MemoryLookalikeJobStore } from './store/lookalike-jobs-memory.js';
export { SqlLookalikeJobStore } from './store/lookalike-jobs-sql.js';

// Monitors.
/** Watched domains: the service the routes use, its two schedulers, the queue worker, webhooks and the store. */
export { MonitorService, InProcessMonitorScheduler, serverKeyFor, SCHEDULER_TICK_MS, MONITOR_RUN_LEASE_MS } from './jobs/monitors/monitors.js';
export type { MonitorScheduler, MonitorServiceOptions, NewMonitorInput, MonitorPatchInput } from './jobs/monitors/monitors.js';
export { RedisMonitorScheduler, startMonitorWorker, MONITOR_QUEUE_NAME } from './jobs/monitors/monitor-queue.js';
export { startMonitorService, startMonitorWorkerWithPump } from './jobs/monitors/monitor-setup.js';
export { runMonitor } from './jobs/monitors/monitor-run.js';
export type { MonitorCheck, MonitorChangedEvent } from './jobs/monitors/monitor-run.js';
export { CONFIRMATIONS_NEEDED, COULD_NOT_CHECK_ALERT_AFTER, digestOf, transition } from './jobs/monitors/monitor-changes.js';
export { DEFAULT_INTERVAL_MINUTES, MIN_INTERVAL_MINUTES, MAX_INTERVAL_MINUTES } from './jobs/monitors/monitor-schedule.js';
/** Webhook signing and delivery (`Spoof-Checker-Signature: t=…,v1=…`). */
export { signatureHeader, SIGNATURE_HEADER, WEBHOOK_TIMEOUT_MS, WEBHOOK_RETRY_WINDOW_MS, DeliveryPump } from './jobs/monitors/webhooks.js';
export { MemoryMonitorStore } from './store/monitors-memory.js';
export { SqlMonitorStore } from './store/monitors-sql.js';
/** The private-address guard of outbound connections. */
export { isForbiddenAddress, resolveAllowedAddress } from '@spoof-checker/engine';
