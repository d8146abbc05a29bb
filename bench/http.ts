/**
 * Benchmark 3, the HTTP service: autocannon against `POST /api/tools/v1/spoof-checker` (warm
 * cache, rate limits off) and, in the same run against the same app, a trivial route:
 * `GET /api/domain/v1` on an organisation with no domains. Both go through the same pipeline
 * (authentication, validation, the record log, JSON serialisation); the trivial one does no work of
 * its own, so the ratio shows what the check and its larger body cost.
 *
 * The app runs in a child process (bench/http-server-child.ts) on `serve`'s default store, SQLite
 * in a temp directory (every request writes its record log durably); autocannon runs here. The two
 * routes alternate run by run, and the domains checked cycle through the synthetic set.
 */
import { fileURLToPath } from 'node:url';
import autocannon, { type Result } from 'autocannon';
import { engineArgs, type EngineModules } from './engine.js';
import { measured, MIN_RUNS, startChild, type Measured } from './stats.js';
import { createKeyPool, syntheticDomainName, type KeyPool } from './synthetic.js';

/** The target: the check route at least this share of the trivial route's requests per second. */
export const HTTP_TARGET_RATIO = 0.5;
/** Domains the app checks in turn (all cached before measuring). */
export const HTTP_DOMAINS = 500;
/** Concurrent connections autocannon keeps open. */
export const HTTP_CONNECTIONS = 16;
/** Seconds per measured run of each route. */
export const HTTP_RUN_SECONDS = 4;
export const QUICK_HTTP_RUN_SECONDS = 0.7;
/** Measured runs (each route once per run). */
export const HTTP_RUNS = 5;
/** Seconds of warm-up per route before measuring. */
export const HTTP_WARMUP_SECONDS = 2;
export const QUICK_HTTP_WARMUP_SECONDS = 0.7;

/** The check route's path (spec). */
export const CHECK_PATH = '/api/tools/v1/spoof-checker';
/** The trivial route's path. */
export const TRIVIAL_PATH = '/api/domain/v1';

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
  check: RouteResult;
  trivial: RouteResult;
  /** check ÷ trivial, requests per second (median over median). */
  ratioToBaseline: number;
  connections: number;
  runSeconds: number;
  runs: number;
  warmupSeconds: number;
  target: number;
  /** The store the app ran on (SQLite, `serve`'s default), as the child described it. */
  store: string;
}

/** Runs the HTTP benchmark (starts and stops the app's process). */
export async function runHttpBenchmark(options: HttpBenchOptions): Promise<HttpBenchResult> {
  const quick = options.quick ?? false;
  const keys = options.keys ?? createKeyPool();
  const runSeconds = quick ? QUICK_HTTP_RUN_SECONDS : HTTP_RUN_SECONDS;
  const warmupSeconds = quick ? QUICK_HTTP_WARMUP_SECONDS : HTTP_WARMUP_SECONDS;
  const runs = quick ? MIN_RUNS : HTTP_RUNS;
  const apiKey = 'sk_bench_0123456789abcdef';
  const child = startChild(fileURLToPath(new URL('./http-server-child.ts', import.meta.url)), engineArgs(options.engine));
  try {
    child.send({ start: { domains: HTTP_DOMAINS, keys, apiKey } });
    const { port, store } = await child.next<{ port: number; store: string }>();
    const url = `http://127.0.0.1:${port}`;
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    let next = 0;
    const checkRoute = (seconds: number) =>
      autocannon({
        url,
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
    const trivialRoute = (seconds: number) =>
      autocannon({ url, connections: HTTP_CONNECTIONS, duration: seconds, requests: [{ method: 'GET', path: TRIVIAL_PATH, headers: { authorization: headers.authorization } }] });

    await checkRoute(warmupSeconds);
    await trivialRoute(warmupSeconds);
    const checkRuns: Result[] = [];
    const trivialRuns: Result[] = [];
    for (let run = 0; run < runs; run++) {
      // Alternate which route goes first.
      if (run % 2 === 0) {
        checkRuns.push(await checkRoute(runSeconds));
        trivialRuns.push(await trivialRoute(runSeconds));
      } else {
        trivialRuns.push(await trivialRoute(runSeconds));
        checkRuns.push(await checkRoute(runSeconds));
      }
    }
    const check = summarise(checkRuns);
    const trivial = summarise(trivialRuns);
    return {
      check,
      trivial,
      ratioToBaseline: check.requestsPerSec.median / trivial.requestsPerSec.median,
      connections: HTTP_CONNECTIONS,
      runSeconds,
      runs,
      warmupSeconds,
      target: HTTP_TARGET_RATIO,
      store,
    };
  } finally {
    await child.stop();
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
