/**
 * Batch checks at scale (`npm run bench:batch [-- --quick | --smoke]`), side by side in one run
 * (`--smoke`: 300 names, one round, a 2,000-name batch for 1 s: bench/smoke.ts):
 *
 * 1. names/s (median of alternating rounds) of a plain `scan` at concurrency C, and of the same names as a batch through the Redis
 *    queue with one `worker` at C (warmed up by a small batch first: workers are long-lived); then
 *    `scan` at 2C against two workers at C each. The queue's
 *    overhead is 1 − queue/scan at one worker (target: at most 20 %).
 * 2. the memory of `serve` while a 100,000-name batch runs in it (the embedded runner, results in
 *    PostgreSQL, its V8 heap capped at 128 MB so that holding the batch would kill it): RSS before,
 *    peak while the batch is submitted, RSS against names done while it runs for a while, then
 *    every result so far streamed back (and the batch cancelled). Also `serve --redis` taking the
 *    same batch for the workers.
 *
 * Every process is the built CLI (`npm run build` first; CPU of `scan` is read with GNU time): `serve` and `worker` talk to a throw-away
 * PostgreSQL and Redis started here (test/setup/postgres.ts), DNS comes from the fixture zones
 * (`--zones fixtures/zones`), and the names are distinct subdomains of the fixture domains. Ends
 * with one JSON line of the figures.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { batchClient, BIN, cpuSecondsOf, memoryOf, ROOT, sleep, startCli, stop, withQueueSetup, type BatchClient } from './queue-setup.js';
import { SMOKE } from './smoke.js';

const ZONES = join(ROOT, 'fixtures', 'zones');
const KEY = 'sk_bench_batches_28799975a0a566492b3dc5bfa6013bb0';

/** Names of the throughput batch (and of the scan it is compared with). */
export const THROUGHPUT_NAMES = 20_000;
/** Names of the batch whose `serve` memory is measured. */
export const MEMORY_NAMES = 100_000;
/** Checks in flight per process (`scan --concurrency`, `worker --concurrency`). */
export const CONCURRENCY = 32;
/** The queue may cost at most this share of a plain scan's rate (one worker against one scan). */
export const MAX_QUEUE_OVERHEAD = 0.2;
/** Names of the batch that warms the workers up before each timed batch. */
const WARM_UP_NAMES = SMOKE ? 50 : 2000;
/** The old-space cap of the `serve` that runs the 100k batch. */
export const SERVE_HEAP_CAP_MB = 128;
/** Alternating rounds of the four throughput runs (medians reported). */
const ROUNDS = 3;
const ROUNDS_QUICK = 2;
/** How long the 100k batch runs in `serve` while its memory is sampled. */
const MEMORY_RUN_MS = 30_000;

const BASES = [
  'p-reject.example',
  'p-none.example',
  'p-quarantine.example',
  'no-dmarc.example',
  'spf-plus-all.example',
  'reject-sp-none.example',
  'dkim-none.example',
  'mx-google.example',
  'np-reject.example',
  'parked-locked.example',
];

function names(count: number, prefix = 'host'): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}${i}.${BASES[i % BASES.length]}`);
}

/** A run's rate and the CPU it cost per name, in milliseconds (the checking processes only). */
interface Rate {
  namesPerSec: number;
  cpuMsPerName: number;
}

/**
 * `scan` of the list at `concurrency`: names/s from its own summary (checking time, start-up
 * excluded), CPU from GNU time (the whole process).
 */
async function scanRate(list: string, count: number, concurrency: number): Promise<Rate> {
  const child = spawn('/usr/bin/time', ['-f', 'CPU %U %S', process.execPath, BIN, 'scan', list, '--zones', ZONES, '--concurrency', String(concurrency)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  const match = /scan: (\d+) checked in ([\d.]+) s/.exec(stderr);
  const cpu = /CPU ([\d.]+) ([\d.]+)/.exec(stderr);
  if (code !== 0 || !match || !cpu || Number(match[1]) !== count) throw new Error(`scan failed (exit ${String(code)}): ${stderr}`);
  return { namesPerSec: count / Number(match[2]), cpuMsPerName: ((Number(cpu[1]) + Number(cpu[2])) * 1000) / count };
}

/**
 * A batch through the queue with `workers` workers: names/s from creation to the last result
 * (server clocks: storing the names and queueing them count), CPU of the workers while it ran.
 */
async function queueRate(api: BatchClient, list: string[], workerArgs: string[], workers: number): Promise<Rate> {
  const running = await Promise.all(Array.from({ length: workers }, () => startCli(['worker', ...workerArgs], /worker: ready/)));
  try {
    // Workers are long-lived: a small batch first, so that the timed one meets warm (JIT-compiled) workers.
    await api.untilDone((await api.submit(names(WARM_UP_NAMES, 'warm'))).id);
    const cpuBefore = running.reduce((sum, { child }) => sum + cpuSecondsOf(child.pid!), 0);
    const current = await api.untilDone((await api.submit(list)).id);
    const cpu = running.reduce((sum, { child }) => sum + cpuSecondsOf(child.pid!), 0) - cpuBefore;
    return { namesPerSec: list.length / ((Date.parse(current.finishedAt!) - Date.parse(current.createdAt)) / 1000), cpuMsPerName: (cpu * 1000) / list.length };
  } finally {
    await Promise.all(running.map(({ child }) => stop(child)));
  }
}

/** Submits `list` to a running `serve` and samples its memory for `runMs` (or until done). */
async function serveMemory(api: BatchClient, pid: number, list: string[], runMs: number) {
  const before = memoryOf(pid);
  let peakSubmit = before.rssMb;
  const sampler = setInterval(() => (peakSubmit = Math.max(peakSubmit, memoryOf(pid).rssMb)), 50);
  const accepted = await api.submit(list);
  clearInterval(sampler);
  peakSubmit = Math.max(peakSubmit, memoryOf(pid).rssMb);
  let peakRun = memoryOf(pid).rssMb;
  const started = Date.now();
  const deadline = started + runMs;
  // RSS against names done, a few times over the window: flat while `done` grows means the batch is not held in memory.
  const series: { seconds: number; done: number; rssMb: number }[] = [];
  let nextSample = started;
  let current = await api.status(accepted.id);
  while (current.status !== 'done' && Date.now() < deadline) {
    await sleep(250);
    const { rssMb } = memoryOf(pid);
    peakRun = Math.max(peakRun, rssMb);
    current = await api.status(accepted.id);
    if (Date.now() >= nextSample) {
      series.push({ seconds: Math.round((Date.now() - started) / 100) / 10, done: current.done, rssMb: Math.round(rssMb) });
      nextSample += runMs / 6;
    }
  }
  // Read every result written so far as a stream (the route pages through the store).
  let lines = 0;
  for await (const chunk of await api.results(accepted.id)) for (const byte of chunk) if (byte === 10) lines++;
  peakRun = Math.max(peakRun, memoryOf(pid).rssMb);
  await api.cancel(accepted.id);
  const figures = { rssBeforeMb: before.rssMb, peakWhileSubmittingMb: peakSubmit, peakWhileRunningMb: peakRun, namesDone: current.done, resultLinesStreamed: lines, namesPerSecond: current.namesPerSecond };
  return { figures, series };
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick') || SMOKE;
  const throughputNames = SMOKE ? 300 : quick ? 5_000 : THROUGHPUT_NAMES;
  const memoryNames = SMOKE ? 2_000 : MEMORY_NAMES;
  const memoryRunMs = SMOKE ? 1_000 : quick ? 10_000 : MEMORY_RUN_MS;
  const rounds = SMOKE ? 1 : quick ? ROUNDS_QUICK : ROUNDS;

  await withQueueSetup('batch', async (setup) => {
    const list = names(throughputNames);
    const listFile = join(setup.scratch, 'names.txt');
    await writeFile(listFile, `${list.join('\n')}\n`);
    const env = { SPOOF_CHECKER_API_KEYS: `${KEY}:org_bench`, SPOOF_CHECKER_RATE_LIMIT: 'off' };

    // 1. Throughput: scan against the queue, one worker then two.
    const serve = await setup.startServe(['--redis', setup.redisUrl, '--zones', ZONES], env);
    const api = batchClient(serve.base, KEY);
    const workerArgs = setup.workerArgs(['--zones', ZONES, '--concurrency', String(CONCURRENCY)]);
    process.stderr.write(`batch bench: ${throughputNames} names, concurrency ${CONCURRENCY} per process…\n`);
    // Alternating rounds, medians: the machine's other load then weighs on both sides alike.
    const runs = { scanOne: [] as Rate[], queueOne: [] as Rate[], scanTwo: [] as Rate[], queueTwo: [] as Rate[] };
    for (let round = 0; round < rounds; round++) {
      runs.scanOne.push(await scanRate(listFile, throughputNames, CONCURRENCY));
      runs.queueOne.push(await queueRate(api, list, workerArgs, 1));
      runs.scanTwo.push(await scanRate(listFile, throughputNames, 2 * CONCURRENCY));
      runs.queueTwo.push(await queueRate(api, list, workerArgs, 2));
      process.stderr.write(`batch bench: round ${round + 1}/${rounds}: ${JSON.stringify(Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, Math.round(v[v.length - 1]!.namesPerSec)])))}\n`);
    }
    const rate = (values: Rate[]) => median(values.map((v) => v.namesPerSec));
    const cpuMs = (values: Rate[]) => Math.round(median(values.map((v) => v.cpuMsPerName)) * 1000) / 1000;
    const scanOne = rate(runs.scanOne);
    const queueOne = rate(runs.queueOne);
    const scanTwo = rate(runs.scanTwo);
    const queueTwo = rate(runs.queueTwo);
    // The Redis mode's API process with a 100k batch handed over (no worker runs it here).
    const redisModeMemory = await serveMemory(api, serve.child.pid!, names(memoryNames), 0);
    await stop(serve.child);

    // 2. The embedded runner: serve checks the 100k batch itself, results in PostgreSQL.
    process.stderr.write(`batch bench: ${memoryNames} names in serve (embedded runner) for ${memoryRunMs / 1000} s…\n`);
    // With its heap capped well below the batch's size (100k results are ~200 MB of JSON), a serve
    // that held the batch in memory would die of heap exhaustion; it must run on unharmed.
    const embedded = await setup.startServe(['--zones', ZONES], { ...env, NODE_OPTIONS: `--max-old-space-size=${SERVE_HEAP_CAP_MB}` });
    const embeddedMemory = await serveMemory(batchClient(embedded.base, KEY), embedded.child.pid!, names(memoryNames), memoryRunMs);
    await stop(embedded.child);

    const overhead = 1 - queueOne / scanOne;
    const summary = {
      names: throughputNames,
      rounds,
      runs: Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, v.map((r) => Math.round(r.namesPerSec))])),
      // CPU per name of the checking processes (scan; the workers), medians: what the queue adds
      // in the worker itself, independent of the machine's other load.
      cpuMsPerName: { scan: cpuMs(runs.scanOne), oneWorker: cpuMs(runs.queueOne), scanDouble: cpuMs(runs.scanTwo), twoWorkers: cpuMs(runs.queueTwo) },
      concurrencyPerProcess: CONCURRENCY,
      scanNamesPerSec: Math.round(scanOne),
      queueOneWorkerNamesPerSec: Math.round(queueOne),
      scanDoubleConcurrencyNamesPerSec: Math.round(scanTwo),
      queueTwoWorkersNamesPerSec: Math.round(queueTwo),
      queueOverhead: Math.round(overhead * 1000) / 1000,
      queueOverheadTarget: MAX_QUEUE_OVERHEAD,
      queueOverheadMet: overhead <= MAX_QUEUE_OVERHEAD,
      twoWorkersSpeedup: Math.round((queueTwo / queueOne) * 100) / 100,
      serveMemory: {
        names: memoryNames,
        heapCapMb: SERVE_HEAP_CAP_MB,
        embedded: roundAll(embeddedMemory.figures),
        embeddedSeries: embeddedMemory.series,
        redisMode: roundAll(redisModeMemory.figures),
      },
      cores: (await import('node:os')).cpus().length,
    };
    const pad = (label: string) => label.padEnd(44);
    console.log(`${pad(`scan, concurrency ${CONCURRENCY}`)}${summary.scanNamesPerSec} names/s`);
    console.log(`${pad(`queue, 1 worker × ${CONCURRENCY}`)}${summary.queueOneWorkerNamesPerSec} names/s  (overhead ${(overhead * 100).toFixed(1)} %, target ≤ ${MAX_QUEUE_OVERHEAD * 100} %)`);
    console.log(`${pad('CPU per name (scan / one worker)')}${summary.cpuMsPerName.scan} ms / ${summary.cpuMsPerName.oneWorker} ms`);
    console.log(`${pad(`scan, concurrency ${2 * CONCURRENCY}`)}${summary.scanDoubleConcurrencyNamesPerSec} names/s`);
    console.log(`${pad(`queue, 2 workers × ${CONCURRENCY}`)}${summary.queueTwoWorkersNamesPerSec} names/s  (×${summary.twoWorkersSpeedup} one worker; ${summary.cores} cores shared by every process)`);
    const e = summary.serveMemory.embedded;
    console.log(
      `${pad(`serve RSS, ${memoryNames} names in process (heap cap ${SERVE_HEAP_CAP_MB} MB)`)}${e.rssBeforeMb} MB before, ${e.peakWhileSubmittingMb} MB peak submitting, ${e.peakWhileRunningMb} MB peak running (${e.namesDone} done, ${e.resultLinesStreamed} lines streamed)`,
    );
    console.log(`${pad('  RSS while running (s: done → MB)')}${summary.serveMemory.embeddedSeries.map((p) => `${p.seconds}: ${p.done} → ${p.rssMb}`).join(', ')}`);
    const r = summary.serveMemory.redisMode;
    console.log(`${pad(`serve --redis RSS, ${memoryNames} names queued`)}${r.rssBeforeMb} MB before, ${r.peakWhileSubmittingMb} MB peak submitting`);
    console.log(JSON.stringify({ batch: summary }));
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function roundAll<T extends Record<string, number>>(values: T): T {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Math.round(v * 10) / 10])) as T;
}

await main();
