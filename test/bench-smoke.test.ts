/**
 * Every benchmark still runs: each one's `--smoke` mode (bench/smoke.ts: one short run per figure,
 * the smallest sizes) in a child process, as `npx tsx bench/<file> --smoke` would. A benchmark
 * passes when it exits 0 and writes its figures (bench/run.ts: the results file named by `--out`,
 * every section measured; the others: their figures as one JSON line, last on stdout). How fast
 * anything ran is never judged: smoke figures mean nothing.
 *
 * The standalone entries of bench/shared-infrastructure.ts, bench/spf-vs-mailauth.ts and
 * bench/store.ts run the same functions as bench/run.ts's sections 1b, 4 and 6, measured here.
 * bench/run.ts is given `--no-build`: it measures the build `npm test` made (rebuilding dist/ would
 * rewrite files other tests are running). Needs PostgreSQL and Redis (Debian `postgresql`,
 * `redis-server`) and openssl (the transport lab), as the rest of the suite does.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './setup/serve-process.js';

/**
 * One benchmark's budget. The nine smoke runs go at once beside the rest of the suite on two cores:
 * `npm run bench --smoke` (every section) took 178 s at load 15–18, so the budget is a hang's
 * bound, not a speed's: a slow machine must not fail a bench that runs.
 */
const BENCH_TIMEOUT_MS = 480_000;

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `npx tsx bench/<file> --smoke …` from the repository root. */
function runBench(file: string, args: string[] = []): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', file), '--smoke', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), BENCH_TIMEOUT_MS - 5_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The last line of stdout, parsed. */
function lastJsonLine(stdout: string): Record<string, unknown> {
  const line = stdout.trimEnd().split('\n').at(-1) ?? '';
  return JSON.parse(line) as Record<string, unknown>;
}

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'bench-smoke-'));
  if (!existsSync(join(ROOT, 'dist', 'cli', 'main.js')) || !existsSync(join(ROOT, 'packages', 'engine', 'dist', 'zones', 'server.js'))) {
    throw new Error('the benchmarks measure the build: run `npm run build` first (`npm test` does)');
  }
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe.concurrent('every benchmark runs (--smoke) and writes its figures', () => {
  it('npm run bench (bench/run.ts): every section measured, the results file written', { timeout: BENCH_TIMEOUT_MS }, async () => {
    const out = join(scratch, 'results.json');
    const done = await runBench('run.ts', ['--no-build', '--json', '--out', out]);
    expect(done.stderr, done.stderr).not.toMatch(/FAILED/);
    expect(done.code, done.stderr).toBe(0);
    const results = JSON.parse(await readFile(out, 'utf8')) as { mode: string; failures: unknown[]; rows: unknown[]; summary: Record<string, unknown> };
    expect(results.mode).toBe('smoke');
    expect(results.failures).toEqual([]);
    expect(results.rows.length).toBeGreaterThan(10);
    // Every headline figure was measured (a number, not null).
    for (const [name, value] of Object.entries(results.summary)) expect(typeof value, name).toBe('number');
    expect(lastJsonLine(done.stdout)).toEqual(results.summary);
  });

  it('bench/batch.ts (npm run bench:batch): the queue and the embedded runner', { timeout: BENCH_TIMEOUT_MS }, async () => {
    const done = await runBench('batch.ts');
    expect(done.code, done.stderr).toBe(0);
    const { batch } = lastJsonLine(done.stdout) as { batch: Record<string, unknown> };
    expect(batch).toMatchObject({ rounds: 1, scanNamesPerSec: expect.any(Number), queueOneWorkerNamesPerSec: expect.any(Number), serveMemory: expect.any(Object) });
  });

  it('bench/scale.ts (npm run bench:scale): 1 and 2 workers, CPU-bound and latency-bound, Redis memory, results streamed, unbound measured', { timeout: BENCH_TIMEOUT_MS }, async () => {
    const done = await runBench('scale.ts');
    expect(done.code, done.stderr).toBe(0);
    type Run = {
      workers: number;
      resultLines: number;
      failed: number;
      dnsLatencyMs: number;
      checkLatencyMs: number;
      cpu: Record<string, number>;
      workerRssSeries: { done: number; rssMb: number[] }[];
      serveRssSeriesWhileStreaming: { lines: number; rssMb: number }[];
    };
    const { scale } = lastJsonLine(done.stdout) as {
      scale: { domains: number; modes: Record<string, { dnsLatencyMs: number; runs: Run[] }>; redisBytesPerQueuedDomain: number; unbound: { coldQueriesPerSec: number; warmQueriesPerSec: number } };
    };
    // Both modes ran: DNS answered at once, and every query held by the delaying front.
    expect(Object.keys(scale.modes)).toEqual(['cpu', 'latency']);
    expect(scale.modes.cpu!.dnsLatencyMs).toBe(0);
    expect(scale.modes.latency!.dnsLatencyMs).toBeGreaterThan(0);
    for (const { dnsLatencyMs, runs } of Object.values(scale.modes)) {
      // Every name of each run has its line, streamed back; every figure is a number.
      expect(runs.map((run) => [run.workers, run.resultLines, run.failed])).toEqual([
        [1, scale.domains, 0],
        [2, scale.domains, 0],
      ]);
      for (const run of runs) {
        // Through the front a check waits at least one held query.
        expect(run.checkLatencyMs).toBeGreaterThanOrEqual(dnsLatencyMs);
        expect(Object.keys(run.cpu)).toEqual(['workersCores', 'serveCores', 'dnsServerCores', 'benchCores', 'machineBusyShare']);
        // Each worker's RSS sampled against names done, and serve's against lines streamed, up to every line.
        expect(run.workerRssSeries.every((point) => point.rssMb.length === run.workers && point.rssMb.every((mb) => mb > 0))).toBe(true);
        expect(run.serveRssSeriesWhileStreaming[0]!.lines).toBe(0);
        expect(run.serveRssSeriesWhileStreaming.length).toBeGreaterThan(2);
        expect(run.serveRssSeriesWhileStreaming.at(-1)!.lines).toBeLessThanOrEqual(scale.domains);
      }
    }
    expect(scale.redisBytesPerQueuedDomain).toBeGreaterThan(0);
    expect(scale.unbound).toMatchObject({ coldQueriesPerSec: expect.any(Number), warmQueriesPerSec: expect.any(Number) });
  });

  it('bench/scale.ts --queue-only: names queued through the batch API with no worker, Redis memory per queued domain, then drained', { timeout: BENCH_TIMEOUT_MS }, async () => {
    const done = await runBench('scale.ts', ['--queue-only']);
    expect(done.code, done.stderr).toBe(0);
    type Counts = Record<'domains' | 'batches' | 'batchNames' | 'queuedJobs' | 'expectedJobs' | 'redisBytesPerDomain', number>;
    type QueueOnly = Counts & { series: { queued: number; redisMb: number; serveRssMb: number }[]; drain: { cancelled: number; jobsLeft: number } };
    const { queueOnly } = (lastJsonLine(done.stdout) as { scale: { queueOnly: QueueOnly } }).scale;
    // Split into several batches, each queued: one point per batch, the last at every name.
    expect(queueOnly.batches).toBe(Math.ceil(queueOnly.domains / queueOnly.batchNames));
    expect(queueOnly.batches).toBeGreaterThan(1);
    expect(queueOnly.series.map((point) => point.queued)).toEqual(Array.from({ length: queueOnly.batches }, (_, index) => Math.min(queueOnly.domains, (index + 1) * queueOnly.batchNames)));
    // No worker ran while queueing: every chunk job of every batch was in Redis at once, and took memory.
    expect(queueOnly.expectedJobs).toBeGreaterThan(queueOnly.batches);
    expect(queueOnly.queuedJobs).toBe(queueOnly.expectedJobs);
    expect(queueOnly.redisBytesPerDomain).toBeGreaterThan(0);
    // The drain: every batch cancelled, no job left.
    expect(queueOnly.drain).toMatchObject({ cancelled: queueOnly.batches, jobsLeft: 0 });
  });

  it('bench/monitors.ts: every monitor ran once in the scaled day', { timeout: BENCH_TIMEOUT_MS }, async () => {
    const done = await runBench('monitors.ts');
    expect(done.code, done.stderr).toBe(0);
    const report = lastJsonLine(done.stdout);
    expect(report).toMatchObject({ monitors: 50, runs: expect.any(Number), runsPerSecond: expect.any(Number), queueMemoryBytes: expect.any(Number) });
  });

  it('bench/console.ts: the overview and a domain page, on SQLite and PostgreSQL', { timeout: BENCH_TIMEOUT_MS }, async () => {
    const done = await runBench('console.ts');
    expect(done.code, done.stderr).toBe(0);
    const report = lastJsonLine(done.stdout);
    const page = { p50: expect.any(Number), p95: expect.any(Number), target: expect.any(Number), met: expect.any(Boolean), cpuMs: expect.any(Number) };
    expect(report).toMatchObject({ domains: 50, mode: 'smoke', sqlite: { overview: page, domain: page, overviewAfterReport: page }, postgres: { overview: page, domain: page, overviewAfterReport: page } });
  });

  it('bench/console-reports.ts: the report dashboard from the blocks of days, on SQLite and PostgreSQL', { timeout: BENCH_TIMEOUT_MS }, async () => {
    const done = await runBench('console-reports.ts');
    expect(done.code, done.stderr).toBe(0);
    const report = lastJsonLine(done.stdout);
    const store = { rows: 2_000, messages: expect.any(Number), firstMs: expect.any(Number), p50Ms: expect.any(Number), p95Ms: expect.any(Number), cpuP95Ms: expect.any(Number), met: expect.any(Boolean) };
    expect(report).toMatchObject({ reports: 20, rows: 2_000, results: [{ name: 'sqlite', ...store }, { name: 'postgres', ...store }] });
    expect((report.results as { messages: number }[]).every((r) => r.messages > 0)).toBe(true);
  });

  it('bench/lighthouse.ts (npm run lighthouse): all four categories for a public and a signed-in page, and the baseline', { timeout: BENCH_TIMEOUT_MS }, async () => {
    const done = await runBench('lighthouse.ts');
    expect(done.code, done.stderr).toBe(0);
    const { lighthouse } = lastJsonLine(done.stdout) as { lighthouse: { mode: string; baselinePerformance: unknown; pages: Record<string, unknown>[] } };
    expect(lighthouse.mode).toBe('smoke');
    expect(typeof lighthouse.baselinePerformance).toBe('number');
    expect(lighthouse.pages.map((p) => p['name'])).toEqual(['home', 'overview']);
    for (const page of lighthouse.pages) for (const category of ['performance', 'accessibility', 'best-practices', 'seo']) expect(typeof page[category], `${String(page['name'])} ${category}`).toBe('number');
  });

  it('bench/transport.ts: both name sets, with and without --transport', { timeout: BENCH_TIMEOUT_MS }, async () => {
    const done = await runBench('transport.ts');
    expect(done.code, done.stderr).toBe(0);
    const { transport } = lastJsonLine(done.stdout) as { transport: { set: string; mode: string; namesPerSecond: number }[] };
    expect(transport.map((row) => `${row.set}/${row.mode}`)).toEqual(['fixtures/spoof', 'fixtures/transport', 'lab/spoof', 'lab/transport']);
    for (const row of transport) expect(typeof row.namesPerSecond).toBe('number');
  });

  it('bench/dns-clients.ts: c-ares and the network resolver', { timeout: BENCH_TIMEOUT_MS }, async () => {
    const done = await runBench('dns-clients.ts');
    expect(done.code, done.stderr).toBe(0);
    const { dnsClients } = lastJsonLine(done.stdout) as { dnsClients: Record<string, Record<string, number>> };
    expect(Object.keys(dnsClients)).toHaveLength(2);
    for (const rates of Object.values(dnsClients)) expect(Object.keys(rates)).toEqual(['1', '32']);
  });

  it('bench/reports.ts (section 7 of npm run bench): both stores against the bare insert, and show', { timeout: BENCH_TIMEOUT_MS }, async () => {
    const done = await runBench('reports.ts');
    expect(done.code, done.stderr).toBe(0);
    const report = lastJsonLine(done.stdout) as { results: { name: string; ingestRatio: number; bareRowsPerSecond: number }[]; ingestRatioSqlite: number; ingestRatioPostgres: number; showMs: number };
    expect(report.results.map((r) => r.name)).toEqual(['sqlite', 'postgres']);
    for (const figure of [report.ingestRatioSqlite, report.ingestRatioPostgres, report.showMs]) expect(typeof figure).toBe('number');
  });
});
