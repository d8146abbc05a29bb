/**
 * Benchmark 3, the HTTP service: autocannon against `POST /api/tools/v1/spoof-checker` (warm
 * cache, rate limits off) on `serve`'s default store, SQLite in a temp directory (every request's
 * record log committed before it is answered, by group commit), against two yardsticks:
 *
 * - the same route on the memory store (the same app, the same check, no disk): what durable
 *   record logs cost; the target is that SQLite keeps HTTP_TARGET_RATIO of it;
 * - `GET /healthz` on the SQLite app: a route that does nothing (no key, no validation, no record
 *   log), so the ratio shows the whole pipeline's cost, honestly (the former "trivial route",
 *   GET /api/domain/v1, wrote a record log too and so hid what the log costs).
 *
 * Each app runs in a child process of its own (bench/http-server-child.ts); autocannon runs here,
 * against one app at a time. The three measurements take turns run by run, and the domains checked
 * cycle through the synthetic set.
 */
import { fileURLToPath } from 'node:url';
import autocannon, { type Result } from 'autocannon';
import { engineArgs, type EngineModules } from './engine.js';
import { measured, MIN_RUNS, startChild, type Measured } from './stats.js';
import { smokeOr } from './smoke.js';
import { createKeyPool, syntheticDomainName, type KeyPool } from './synthetic.js';

/** The target: the check route on SQLite at least this share of the same route on the memory store. */
export const HTTP_TARGET_RATIO = 0.8;
/** Domains the app checks in turn (all cached before measuring). */
export const HTTP_DOMAINS = smokeOr(50, 500);
/** Concurrent connections autocannon keeps open. */
export const HTTP_CONNECTIONS = 16;
/** Seconds per measured run of each route. */
export const HTTP_RUN_SECONDS = 4;
export const QUICK_HTTP_RUN_SECONDS = smokeOr(0.2, 0.7);
/** Measured runs (each route once per run). */
export const HTTP_RUNS = 5;
/** Seconds of warm-up per route before measuring. */
export const HTTP_WARMUP_SECONDS = 2;
export const QUICK_HTTP_WARMUP_SECONDS = smokeOr(0, 0.7);

/** The check route's path (spec). */
export const CHECK_PATH = '/api/tools/v1/spoof-checker';
/** The route that does nothing: no key, no validation, no record log. */
export const HEALTH_PATH = '/healthz';

/** Options of the HTTP benchmark. */
export interface HttpBenchOptions {
  engine: EngineModules;
  quick?: boolean;
  keys?: KeyPool;
}

/** One route's figures. */
export interface RouteResult {
  requestsPerSec: Measured;
  /** Medians over the runs of each run's latency percentiles, in milliseconds. */
  p50Ms: number;
  p99Ms: number;
  /** Responses that were not 2xx, and connection errors, over all measured runs. */
  non2xx: number;
  errors: number;
}

/** The HTTP benchmark's figures. */
export interface HttpBenchResult {
  /** The check route on SQLite. */
  check: RouteResult;
  /** The same route on the memory store. */
  checkMemory: RouteResult;
  /** GET /healthz on the SQLite app. */
  healthz: RouteResult;
  /** check ÷ checkMemory, requests per second (median over median): the target's figure. */
  ratioToBaseline: number;
  /** check ÷ healthz (reported, no target). */
  ratioToHealthz: number;
  connections: number;
  runSeconds: number;
  runs: number;
  warmupSeconds: number;
  target: number;
  /** The store the measured app ran on (SQLite, `serve`'s default), as the child described it. */
  store: string;
}

/** Runs the HTTP benchmark (starts and stops the app's process). */
export async function runHttpBenchmark(options: HttpBenchOptions): Promise<HttpBenchResult> {
  const quick = options.quick ?? false;
  const keys = options.keys ?? createKeyPool();
  const runSeconds = quick ? QUICK_HTTP_RUN_SECONDS : HTTP_RUN_SECONDS;
  const warmupSeconds = quick ? QUICK_HTTP_WARMUP_SECONDS : HTTP_WARMUP_SECONDS;
  const runs = quick ? MIN_RUNS : HTTP_RUNS;
  const apiKey = 'sk_bench_693be8ace0fbd282dbb1ab35b2fb8e60';
  const script = fileURLToPath(new URL('./http-server-child.ts', import.meta.url));
  const sqliteChild = startChild(script, engineArgs(options.engine));
  const memoryChild = startChild(script, engineArgs(options.engine));
  try {
    sqliteChild.send({ start: { domains: HTTP_DOMAINS, keys, apiKey, store: 'sqlite' } });
    memoryChild.send({ start: { domains: HTTP_DOMAINS, keys, apiKey, store: 'memory' } });
    const sqlite = await sqliteChild.next<{ port: number; store: string }>();
    const memory = await memoryChild.next<{ port: number; store: string }>();
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    let next = 0;
    const checkRoute = (port: number) => (seconds: number) =>
      autocannon({
        url: `http://127.0.0.1:${port}`,
        connections: HTTP_CONNECTIONS,
        duration: seconds,
        requests: [
          {
            method: 'POST',
            path: CHECK_PATH,
            headers,
            // Each request checks the next domain, so the answers come from the whole cached set.
            setupRequest: (request) => ({ ...request, body: JSON.stringify({ domain: syntheticDomainName(next++ % HTTP_DOMAINS) }) }),
          },
        ],
      });
    const healthRoute = (seconds: number) =>
      autocannon({ url: `http://127.0.0.1:${sqlite.port}`, connections: HTTP_CONNECTIONS, duration: seconds, requests: [{ method: 'GET', path: HEALTH_PATH }] });
    const routes = [checkRoute(sqlite.port), checkRoute(memory.port), healthRoute];

    if (warmupSeconds > 0) for (const route of routes) await route(warmupSeconds);
    const runsOf: Result[][] = routes.map(() => []);
    for (let run = 0; run < runs; run++) {
      // Each run starts with another route, so that none always goes first.
      for (let turn = 0; turn < routes.length; turn++) {
        const index = (run + turn) % routes.length;
        runsOf[index]!.push(await routes[index]!(runSeconds));
      }
    }
    const [check, checkMemory, healthz] = runsOf.map(summarise) as [RouteResult, RouteResult, RouteResult];
    return {
      check,
      checkMemory,
      healthz,
      ratioToBaseline: check.requestsPerSec.median / checkMemory.requestsPerSec.median,
      ratioToHealthz: check.requestsPerSec.median / healthz.requestsPerSec.median,
      connections: HTTP_CONNECTIONS,
      runSeconds,
      runs,
      warmupSeconds,
      target: HTTP_TARGET_RATIO,
      store: sqlite.store,
    };
  } finally {
    await Promise.all([sqliteChild.stop(), memoryChild.stop()]);
  }
}

function summarise(results: readonly Result[]): RouteResult {
  return {
    // Successful responses per second of wall time (autocannon's own average samples whole seconds).
    requestsPerSec: measured(results.map((result) => result['2xx'] / result.duration)),
    p50Ms: measured(results.map((result) => result.latency.p50)).median,
    p99Ms: measured(results.map((result) => result.latency.p99)).median,
    non2xx: results.reduce((sum, result) => sum + result.non2xx, 0),
    errors: results.reduce((sum, result) => sum + result.errors, 0),
  };
}
