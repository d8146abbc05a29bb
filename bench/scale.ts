/**
 * The internet-scale figure (`npm run bench:scale [-- --domains N | --smoke]`, docs/scale.md): a
 * batch of N synthetic domains (bench/synthetic.ts; default a million, the size of the Tranco top
 * list) through the batch API on the Redis queue, checked by 1 and then by 2 `worker` processes, the
 * zones served over loopback UDP by the embedded DNS server in a child process of its own
 * (bench/dns-server-child.ts, zones built on demand so its memory is flat at any N).
 *
 * It measures, per worker count: checks per second (all workers ready → the last batch done), the
 * DNS queries per check (the server's counters), each worker's peak RSS; the Redis memory per queued
 * domain (`INFO memory` before and after queueing, no worker running); the results streamed out to a
 * file (`GET …/results`, the route pages through the store) with `serve`'s RSS meanwhile. Whether
 * throughput is linear in workers: 2 workers ≥ 0.9 × 2 × one worker's rate.
 *
 * Two modes, each with 1 then 2 workers (`--modes cpu,latency`, both by default):
 * - `cpu`: the workers ask the DNS server directly. Loopback answers come at once, so a check is
 *   bound by CPU, and on a machine whose cores PostgreSQL, Redis, `serve` and the DNS server share,
 *   a second worker gets no core of its own.
 * - `latency`: the workers ask through a front that holds every query `--dns-latency-ms` (50 by
 *   default; bench/dns-latency.ts), as answers from the internet come late. A worker then holds its
 *   `--concurrency` checks waiting, its rate bounded by concurrency ÷ a check's latency, and the CPU
 *   is not the bound (each run reports the cores it used). 2 workers against 1 then shows whether the
 *   queue, the store and Redis hand out work linearly.
 *
 * The ceiling of a real recursive resolver: unbound (in a temporary directory, on a loopback port,
 * forwarding everything to the same embedded server) measured by a loopback load client of
 * pre-encoded queries over several UDP sockets: cold (every question new: unbound asks the server)
 * and warm (the same questions again: from its cache), queries/s.
 *
 * The batches are split at `MAX_BATCH_NAMES` (the API's limit) and their names generated a batch at
 * a time: nothing here holds N names or N results. Every process but the load client is the built
 * CLI (`npm run build` first). PostgreSQL and Redis are throw-away (test/setup/postgres.ts).
 * Ends with one JSON line of the figures (`{ "scale": … }`).
 *
 * Every worker's RSS is sampled against names done, and `serve`'s against result lines streamed
 * (`RSS_POINTS` points a run), so memory that grows with N shows.
 *
 * `--queue-only` measures the queue alone at full size: N names (a million by default) submitted
 * through the batch API in batches of `MAX_BATCH_NAMES` with no worker running; the submit time,
 * Redis memory per queued domain and `serve`'s RSS after each batch; then every batch cancelled and
 * the queue drained by one worker (a cancelled batch's chunk jobs are skipped). No check runs.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { createWriteStream, readFileSync } from 'node:fs';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BATCH_CHUNK_SIZE, MAX_BATCH_NAMES } from '../src/jobs/batches/model.js';
import { BATCH_QUEUE_NAME } from '../src/jobs/batches/queue.js';
import { freePort } from '../test/setup/postgres.js';
import { engineArgs, loadEngine } from './engine.js';
import { batchClient, cpuSecondsOf, memoryOf, sleep, startCli, stop, withQueueSetup, type BatchClient, type BatchStatus } from './queue-setup.js';
import { SMOKE, smokeOr } from './smoke.js';
import { startDelayingDnsFront } from './dns-latency.js';
import { startChild } from './stats.js';
import { createKeyPool, syntheticDomainName } from './synthetic.js';

const KEY = 'sk_bench_scale_5a3c1f0e9b7d4a2c8e6f1b3d5a7c9e0f';

/** Domains by default: the size of the Tranco top-million list. */
export const DEFAULT_DOMAINS = 1_000_000;
/** Domains of a smoke run. */
export const SMOKE_DOMAINS = 200;
/** Names each worker checks at once (`worker --concurrency`). */
export const WORKER_CONCURRENCY = 32;
/** Worker counts measured. */
export const WORKER_COUNTS = [1, 2] as const;
/**
 * Names each worker checks at once in the latency mode (`--latency-concurrency`): at 50 ms a query a
 * check took 1.2 s in a smoke run and 2.5 s over 5,000 domains (load average 3–7), so 64 at once give
 * 25–50 checks/s a worker, well under the CPU bound. On a loaded machine each wait also holds the
 * wake-ups of three processes (worker, front, server), so a check takes longer (11 s at load 11–18).
 */
export const LATENCY_WORKER_CONCURRENCY = 64;
/** The latency mode's wait on every DNS query, ms (`--dns-latency-ms`): a nearby resolver's round trip. */
export const DEFAULT_DNS_LATENCY_MS = 50;
/** The modes (`--modes`): DNS answered at once (CPU-bound), and each query held (latency-bound). */
export const MODES = ['cpu', 'latency'] as const;
export type Mode = (typeof MODES)[number];
/** The latency mode's wait in a smoke run, ms: enough to go through the front, short enough for CI. */
export const SMOKE_DNS_LATENCY_MS = 10;
/** Linear within 10 %: two workers at least this share of twice one worker's rate. */
export const LINEAR_SHARE = 0.9;
/** Distinct questions of unbound's load (cold: each asked once; warm: all asked again). */
export const UNBOUND_QUESTIONS = 20_000;
/** Queries in flight from the load client, and the UDP sockets they are spread over. */
export const UNBOUND_IN_FLIGHT = 128;
export const UNBOUND_SOCKETS = 8;
/**
 * Points of each RSS series (every worker's against names done, `serve`'s against result lines
 * streamed): one every N ÷ this, read from /proc/<pid>/status (VmRSS), so flatness shows at any N.
 */
export const RSS_POINTS = 10;
/**
 * `--queue-only`: names a smoke run queues, and the batches it splits them into (several, so the
 * steps between batches run too; a real run splits at `MAX_BATCH_NAMES`).
 */
export const QUEUE_ONLY_SMOKE_DOMAINS = 2_000;
export const QUEUE_ONLY_SMOKE_BATCH_NAMES = 500;
/** BullMQ's keys of a queue that hold jobs not yet done (`removeOnComplete`: done ones are gone). */
const QUEUED_JOB_KEYS = [
  ['LLEN', 'wait'],
  ['LLEN', 'active'],
  ['LLEN', 'paused'],
  ['ZCARD', 'prioritized'],
  ['ZCARD', 'delayed'],
] as const;
/** How long the drain of a queue-only run may take before the bench gives up (10,000 chunks skipped took seconds). */
const DRAIN_WITHIN_MS = 30 * 60_000;
/** A question unanswered this long is counted lost (its slot is freed). */
const LOST_AFTER_MS = 2_000;

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}

/** Redis `used_memory` in bytes (`INFO memory`). */
function redisUsedMemory(port: number): number {
  const info = spawnSync('redis-cli', ['-p', String(port), 'INFO', 'memory'], { encoding: 'utf8' });
  const bytes = /^used_memory:(\d+)/m.exec(info.stdout)?.[1];
  if (info.status !== 0 || bytes === undefined) throw new Error(`redis-cli INFO memory failed: ${info.stderr}`);
  return Number(bytes);
}

/** A Redis command's reply (`redis-cli`), as text. */
function redisCli(port: number, args: readonly string[]): string {
  const reply = spawnSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' });
  if (reply.status !== 0) throw new Error(`redis-cli ${args.join(' ')} failed: ${reply.stderr}`);
  return reply.stdout.trim();
}

/** Jobs of the batch queue not yet done (waiting, active, paused, prioritized, delayed), default prefix `bull`. */
function redisQueuedJobs(port: number): number {
  return QUEUED_JOB_KEYS.reduce((sum, [command, key]) => sum + Number(redisCli(port, [command, `bull:${BATCH_QUEUE_NAME}:${key}`])), 0);
}

/** Submits domains [from, to) as one batch (names generated here, for this batch only). */
async function submitRange(api: BatchClient, from: number, to: number): Promise<BatchStatus> {
  const lines: string[] = [];
  for (let index = from; index < to; index++) lines.push(syntheticDomainName(index));
  return api.submit(lines);
}

/** Machine-wide CPU jiffies (/proc/stat's first line): all, and busy (all but idle and iowait). */
function machineJiffies(): { total: number; busy: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((sum, value) => sum + value, 0);
  return { total, busy: total - fields[3]! - fields[4]! };
}

/** Where the CPU went during a run, in cores (CPU seconds ÷ wall seconds). */
interface CpuUse {
  /** Every worker together. */
  workersCores: number;
  serveCores: number;
  dnsServerCores: number;
  /** This process: the latency front (and the status polling). */
  benchCores: number;
  /** The whole machine busy (every process, other users' too), share of all its cores. */
  machineBusyShare: number;
}

/** One worker count's run. */
interface WorkerRun {
  workers: number;
  /** The DNS wait per query, ms (0: answered at once). */
  dnsLatencyMs: number;
  /** Names each worker checks at once (`worker --concurrency`). */
  concurrency: number;
  /** Little's law: workers × concurrency ÷ checks/s, the time a check took, ms. */
  checkLatencyMs: number;
  cpu: CpuUse;
  /** 1-minute load average at the start and at the end of the run. */
  loadAverage: [number, number];
  checksPerSec: number;
  seconds: number;
  failed: number;
  queriesPerCheck: number;
  redisBytesPerDomain: number;
  workerPeakRssMb: number[];
  /** Every worker's RSS against names done, `RSS_POINTS` over the run: flat if memory does not grow with N. */
  workerRssSeries: { done: number; rssMb: number[] }[];
  /** `serve`'s RSS before queueing, after queueing, after the run (MB). */
  serveRssMb: { beforeQueueing: number; afterQueueing: number; afterRun: number };
  /** CPU (user + system) the workers spent per check, ms: the load-independent cost of a check. */
  workerCpuMsPerCheck: number;
  resultLines: number;
  resultMb: number;
  resultStreamSeconds: number;
  servePeakRssMbWhileStreaming: number;
  /** `serve`'s RSS against result lines streamed, `RSS_POINTS` over the stream: flat if the route holds one page. */
  serveRssSeriesWhileStreaming: { lines: number; rssMb: number }[];
}

/** `--queue-only`: N names queued through the batch API with no worker running, then drained. */
interface QueueOnlyRun {
  domains: number;
  batches: number;
  batchNames: number;
  /** Chunk jobs in Redis once every batch is queued, and how many the batches make (⌈names ÷ chunk⌉ each). */
  queuedJobs: number;
  expectedJobs: number;
  /** Every batch submitted (the API stores the names, then queues the chunk jobs), s; and names/s. */
  submitSeconds: number;
  namesPerSec: number;
  perBatchSeconds: number[];
  /** `serve`'s CPU per 1,000 names submitted, ms. */
  serveCpuMsPerThousandNames: number;
  /**
   * Redis `used_memory` before, with every batch queued, and after the drain (MB). After the drain
   * Redis still holds BullMQ's event stream (`eventsKept` entries, capped by BullMQ).
   */
  redisMb: { before: number; queued: number; drained: number };
  redisBytesPerDomain: number;
  /** Redis memory and `serve`'s RSS after each batch: linear and flat respectively if all is well. */
  series: { queued: number; redisMb: number; serveRssMb: number }[];
  /** `serve`'s RSS before submitting, its peak (VmHWM, the process's life so far), after submitting (MB). */
  serveRssMb: { before: number; peak: number; afterSubmitting: number };
  /** Cancelled batches, then one worker skips every chunk job: s until no job is left, jobs/s. */
  drain: { cancelled: number; seconds: number; jobsPerSec: number; jobsLeft: number; eventsKept: number };
  loadAverage: [number, number];
}

async function queueOnly(
  context: { api: BatchClient; servePid: number; redisPort: number; workerArgs: string[] },
  domains: number,
  batchNames: number,
): Promise<QueueOnlyRun> {
  const { api, servePid, redisPort } = context;
  const loadBefore = loadavg()[0]!;
  const mb = (bytes: number) => round(bytes / 1024 / 1024, 2);
  // One name queued first (past the N, cancelled with them): BullMQ's own keys and scripts are then
  // in Redis before the baseline, so the figure is the jobs'.
  const warmUp = await submitRange(api, domains, domains + 1);
  await sleep(200);
  const redisBefore = redisUsedMemory(redisPort);
  const jobsBefore = redisQueuedJobs(redisPort);
  const serveBefore = memoryOf(servePid).rssMb;
  const serveCpuBefore = cpuSecondsOf(servePid);
  const batches: BatchStatus[] = [];
  const perBatchSeconds: number[] = [];
  const series: QueueOnlyRun['series'] = [];
  let expectedJobs = 0;
  const started = Date.now();
  for (let from = 0; from < domains; from += batchNames) {
    const to = Math.min(domains, from + batchNames);
    const batchStarted = Date.now();
    batches.push(await submitRange(api, from, to));
    perBatchSeconds.push(round((Date.now() - batchStarted) / 1000, 1));
    expectedJobs += Math.ceil((to - from) / BATCH_CHUNK_SIZE);
    series.push({ queued: to, redisMb: mb(redisUsedMemory(redisPort)), serveRssMb: Math.round(memoryOf(servePid).rssMb) });
    process.stderr.write(`scale bench: queue-only: ${to}/${domains} names queued (${perBatchSeconds.at(-1)} s)\n`);
  }
  const submitSeconds = (Date.now() - started) / 1000;
  const serveCpu = cpuSecondsOf(servePid) - serveCpuBefore;
  await sleep(200);
  const redisQueued = redisUsedMemory(redisPort);
  const queuedJobs = redisQueuedJobs(redisPort) - jobsBefore;
  const serveAfter = memoryOf(servePid);

  // The drain: every batch cancelled, one worker skips each chunk job (a cancelled batch's names are never checked).
  for (const batch of [warmUp, ...batches]) await api.cancel(batch.id);
  const cancelled = (await Promise.all(batches.map((batch) => api.status(batch.id)))).filter((batch) => batch.status === 'cancelled').length;
  const worker = await startCli(['worker', ...context.workerArgs], /worker: ready/);
  const drainStarted = Date.now();
  let jobsLeft = redisQueuedJobs(redisPort);
  try {
    while (jobsLeft > 0 && Date.now() - drainStarted < DRAIN_WITHIN_MS) {
      await sleep(SMOKE ? 100 : 500);
      jobsLeft = redisQueuedJobs(redisPort);
    }
  } finally {
    await stop(worker.child);
  }
  const drainSeconds = (Date.now() - drainStarted) / 1000;
  const eventsKept = Number(redisCli(redisPort, ['XLEN', `bull:${BATCH_QUEUE_NAME}:events`]));
  return {
    domains,
    batches: batches.length,
    batchNames,
    queuedJobs,
    expectedJobs,
    submitSeconds: round(submitSeconds, 1),
    namesPerSec: round(domains / submitSeconds),
    perBatchSeconds,
    serveCpuMsPerThousandNames: round((serveCpu * 1000 * 1000) / domains, 1),
    redisMb: { before: mb(redisBefore), queued: mb(redisQueued), drained: mb(redisUsedMemory(redisPort)) },
    redisBytesPerDomain: round((redisQueued - redisBefore) / domains, 1),
    series,
    serveRssMb: { before: Math.round(serveBefore), peak: Math.round(serveAfter.peakMb), afterSubmitting: Math.round(serveAfter.rssMb) },
    drain: { cancelled, seconds: round(drainSeconds, 1), jobsPerSec: round(queuedJobs / drainSeconds), jobsLeft, eventsKept },
    loadAverage: [round(loadBefore, 1), round(loadavg()[0]!, 1)],
  };
}

/** The human lines of a queue-only run. */
function printQueueOnly(run: QueueOnlyRun): void {
  const pad = (label: string) => label.padEnd(52);
  console.log(`queue only: ${run.domains} names in ${run.batches} batches of ${run.batchNames}, no worker running`);
  console.log(`${pad('  submitted')}${run.submitSeconds} s, ${run.namesPerSec} names/s (per batch ${run.perBatchSeconds.join(', ')} s); serve ${run.serveCpuMsPerThousandNames} ms CPU per 1,000 names`);
  console.log(`${pad('  chunk jobs in Redis')}${run.queuedJobs} (the batches make ${run.expectedJobs})`);
  console.log(`${pad('  Redis used_memory (before / queued / drained)')}${run.redisMb.before} / ${run.redisMb.queued} / ${run.redisMb.drained} MB: ${run.redisBytesPerDomain} bytes per queued domain`);
  console.log(`${pad('  queued → Redis MB, serve RSS MB')}${run.series.map((point) => `${point.queued} → ${point.redisMb}, ${point.serveRssMb}`).join('; ')}`);
  console.log(`${pad('  serve RSS (before / peak / after submitting)')}${run.serveRssMb.before} / ${run.serveRssMb.peak} / ${run.serveRssMb.afterSubmitting} MB`);
  console.log(`${pad('  drained (cancelled, one worker skips each job)')}${run.drain.cancelled} batches cancelled, ${run.drain.seconds} s, ${run.drain.jobsPerSec} jobs/s, ${run.drain.jobsLeft} left; ${run.drain.eventsKept} events kept`);
  console.log(`${pad('  load average (1 min), start → end')}${run.loadAverage.join(' → ')}`);
}

interface DnsChild {
  stats(): Promise<{ udp: number; tcp: number }>;
}

async function runWorkers(
  context: { api: BatchClient; servePid: number; dnsPid: number; redisPort: number; workerArgs: string[]; dns: DnsChild; scratch: string },
  domains: number,
  workers: number,
  dnsLatencyMs: number,
  concurrency: number,
): Promise<WorkerRun> {
  const { api, redisPort, workerArgs, dns, scratch } = context;
  // 1. Queue every batch with no worker running: Redis then holds every chunk job at once.
  const serveBefore = memoryOf(context.servePid).rssMb;
  const redisBefore = redisUsedMemory(redisPort);
  const batches: BatchStatus[] = [];
  for (let from = 0; from < domains; from += MAX_BATCH_NAMES) batches.push(await submitRange(api, from, Math.min(domains, from + MAX_BATCH_NAMES)));
  await sleep(200);
  const redisAfter = redisUsedMemory(redisPort);
  const serveQueued = memoryOf(context.servePid).rssMb;

  // 2. The workers: timed from all ready to the last name done.
  const queriesBefore = await dns.stats();
  const running = await Promise.all(Array.from({ length: workers }, () => startCli(['worker', ...workerArgs], /worker: ready/)));
  const started = Date.now();
  const loadBefore = loadavg()[0]!;
  const cpuBefore = running.map(({ child }) => cpuSecondsOf(child.pid!));
  const othersBefore = { serve: cpuSecondsOf(context.servePid), dns: cpuSecondsOf(context.dnsPid), bench: process.cpuUsage(), machine: machineJiffies() };
  let machineSpent = { total: 0, busy: 0 };
  let othersSpent = { serve: 0, dns: 0, bench: 0 };
  const cpuSpent = running.map(() => 0);
  const peaks = running.map(() => 0);
  let done = 0;
  let failed = 0;
  let lastReport = started;
  const series: { done: number; rssMb: number[] }[] = [];
  let nextPoint = 0;
  try {
    for (;;) {
      const current = await Promise.all(batches.map((batch) => api.status(batch.id)));
      done = current.reduce((sum, batch) => sum + batch.done, 0);
      failed = current.reduce((sum, batch) => sum + batch.failed, 0);
      running.forEach(({ child }, index) => {
        peaks[index] = Math.max(peaks[index]!, memoryOf(child.pid!).peakMb);
        cpuSpent[index] = cpuSecondsOf(child.pid!) - cpuBefore[index]!;
      });
      const machine = machineJiffies();
      const bench = process.cpuUsage(othersBefore.bench);
      machineSpent = { total: machine.total - othersBefore.machine.total, busy: machine.busy - othersBefore.machine.busy };
      othersSpent = { serve: cpuSecondsOf(context.servePid) - othersBefore.serve, dns: cpuSecondsOf(context.dnsPid) - othersBefore.dns, bench: (bench.user + bench.system) / 1e6 };
      if (done >= nextPoint) {
        series.push({ done, rssMb: running.map(({ child }) => Math.round(memoryOf(child.pid!).rssMb)) });
        nextPoint = done + domains / RSS_POINTS;
      }
      if (current.every((batch) => batch.status === 'done')) break;
      if (running.some(({ child }) => child.exitCode !== null)) throw new Error('a worker exited during the run');
      if (Date.now() - lastReport > 10_000) {
        lastReport = Date.now();
        process.stderr.write(`scale bench: ${dnsLatencyMs} ms DNS, ${workers} worker(s): ${done}/${domains} done, ${Math.round(done / ((Date.now() - started) / 1000))}/s\n`);
      }
      await sleep(SMOKE ? 100 : 500);
    }
  } finally {
    await Promise.all(running.map(({ child }) => stop(child)));
  }
  const seconds = (Date.now() - started) / 1000;
  const loadAfter = loadavg()[0]!;
  const serveRun = memoryOf(context.servePid).rssMb;
  const queriesAfter = await dns.stats();

  // 3. The results stream out to a file, batch by batch, as a user reads them (never all in memory).
  const file = join(scratch, `results-${workers}.ndjson`);
  const out = createWriteStream(file);
  let lines = 0;
  let servePeak = memoryOf(context.servePid).rssMb;
  const streamSeries = [{ lines: 0, rssMb: Math.round(servePeak) }];
  let nextLinePoint = domains / RSS_POINTS;
  const streamStarted = Date.now();
  for (const batch of batches) {
    for await (const chunk of await api.results(batch.id)) {
      for (const byte of chunk) if (byte === 10) lines++;
      if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
      const rssMb = memoryOf(context.servePid).rssMb;
      servePeak = Math.max(servePeak, rssMb);
      if (lines >= nextLinePoint) {
        streamSeries.push({ lines, rssMb: Math.round(rssMb) });
        nextLinePoint = lines + domains / RSS_POINTS;
      }
    }
  }
  await new Promise<void>((resolve) => out.end(() => resolve()));
  const resultStreamSeconds = (Date.now() - streamStarted) / 1000;
  const resultBytes = (await stat(file)).size;
  await rm(file);
  if (lines !== domains) throw new Error(`${lines} result lines streamed for ${domains} domains`);

  const queries = queriesAfter.udp + queriesAfter.tcp - queriesBefore.udp - queriesBefore.tcp;
  const cores = (cpuSeconds: number) => cpuSeconds / seconds;
  return {
    workers,
    dnsLatencyMs,
    concurrency,
    checkLatencyMs: (workers * concurrency * 1000 * seconds) / domains,
    cpu: {
      workersCores: cores(cpuSpent.reduce((sum, spent) => sum + spent, 0)),
      serveCores: cores(othersSpent.serve),
      dnsServerCores: cores(othersSpent.dns),
      benchCores: cores(othersSpent.bench),
      machineBusyShare: machineSpent.total > 0 ? machineSpent.busy / machineSpent.total : 0,
    },
    loadAverage: [loadBefore, loadAfter],
    checksPerSec: domains / seconds,
    seconds,
    failed,
    queriesPerCheck: queries / domains,
    redisBytesPerDomain: (redisAfter - redisBefore) / domains,
    workerPeakRssMb: peaks.map((mb) => Math.round(mb)),
    workerRssSeries: series,
    serveRssMb: { beforeQueueing: Math.round(serveBefore), afterQueueing: Math.round(serveQueued), afterRun: Math.round(serveRun) },
    workerCpuMsPerCheck: (cpuSpent.reduce((sum, seconds) => sum + seconds, 0) * 1000) / domains,
    resultLines: lines,
    resultMb: resultBytes / 1024 / 1024,
    resultStreamSeconds,
    servePeakRssMbWhileStreaming: Math.round(servePeak),
    serveRssSeriesWhileStreaming: streamSeries,
  };
}

/** A DNS query in wire form (RFC 1035 §4.1.1 header, §4.1.2 question; RD set), id filled in at send. */
function encodeQuery(name: string, type: number): Buffer {
  const labels = name.split('.').filter(Boolean).map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label, 'ascii')]));
  const header = Buffer.from([0, 0, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
  const tail = Buffer.from([0, type >> 8, type & 0xff, 0, 1]);
  return Buffer.concat([header, ...labels, tail]);
}

/** The questions a check asks most (TXT, DMARC, MX, A) of the first domains: distinct, in order. */
function unboundQuestions(count: number): Buffer[] {
  const questions: Buffer[] = [];
  for (let index = 0; questions.length < count; index++) {
    const domain = syntheticDomainName(index);
    questions.push(encodeQuery(domain, 16), encodeQuery(`_dmarc.${domain}`, 16), encodeQuery(domain, 15), encodeQuery(domain, 1));
  }
  return questions.slice(0, count);
}

/**
 * Sends every question to 127.0.0.1:`port` with `UNBOUND_IN_FLIGHT` in flight over
 * `UNBOUND_SOCKETS` sockets; answers per second (any RCODE counts: the resolver answered), and lost.
 */
async function loadResolver(port: number, questions: Buffer[]): Promise<{ answeredPerSec: number; answered: number; lost: number; servfail: number }> {
  const sockets: Socket[] = Array.from({ length: UNBOUND_SOCKETS }, () => createSocket('udp4'));
  await Promise.all(sockets.map((socket) => new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()))));
  const pending = new Map<number, number>(); // id → sent at
  let next = 0;
  let answered = 0;
  let lost = 0;
  let servfail = 0;
  let nextId = 1;
  const started = Date.now();
  return new Promise((resolve) => {
    const finish = () => {
      clearInterval(sweeper);
      for (const socket of sockets) socket.close();
      resolve({ answeredPerSec: answered / ((Date.now() - started) / 1000), answered, lost, servfail });
    };
    const sendMore = () => {
      while (pending.size < UNBOUND_IN_FLIGHT && next < questions.length) {
        const id = nextId;
        nextId = (nextId % 0xffff) + 1;
        if (pending.has(id)) break;
        const query = Buffer.from(questions[next++]!);
        query.writeUInt16BE(id, 0);
        pending.set(id, Date.now());
        sockets[id % sockets.length]!.send(query, port, '127.0.0.1');
      }
      if (pending.size === 0 && next >= questions.length) finish();
    };
    for (const socket of sockets) {
      socket.on('message', (message) => {
        const id = message.readUInt16BE(0);
        if (!pending.delete(id)) return;
        answered++;
        if ((message[3]! & 0x0f) === 2) servfail++;
        sendMore();
      });
    }
    const sweeper = setInterval(() => {
      const now = Date.now();
      for (const [id, sentAt] of pending) {
        if (now - sentAt > LOST_AFTER_MS) {
          pending.delete(id);
          lost++;
        }
      }
      sendMore();
    }, 200);
    sendMore();
  });
}

/** unbound in `dir` on a loopback port, forwarding every name to the embedded server; resolves when it answers. */
async function startUnbound(dir: string, dnsPort: number): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const threads = Math.max(1, cpus().length);
  const config = join(dir, 'unbound.conf');
  await writeFile(
    config,
    [
      'server:',
      '  interface: 127.0.0.1',
      `  port: ${port}`,
      `  num-threads: ${threads}`,
      '  so-reuseport: yes',
      '  do-ip6: no',
      '  do-not-query-localhost: no',
      '  access-control: 127.0.0.0/8 allow',
      `  directory: "${dir}"`,
      '  chroot: ""',
      '  username: ""',
      `  pidfile: "${join(dir, 'unbound.pid')}"`,
      '  use-syslog: no',
      '  logfile: ""',
      '  verbosity: 0',
      // No validator: the synthetic zones are unsigned and there is no trust anchor here.
      '  module-config: "iterator"',
      '  msg-cache-size: 64m',
      '  rrset-cache-size: 128m',
      'remote-control:',
      '  control-enable: no',
      'forward-zone:',
      '  name: "."',
      `  forward-addr: 127.0.0.1@${dnsPort}`,
      '',
    ].join('\n'),
  );
  const child = spawn('unbound', ['-d', '-c', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const failed = new Promise<never>((_, reject) => {
    child.once('error', (error) => reject(new Error(`unbound did not start (install the Debian package "unbound"): ${error.message}`)));
    child.once('exit', (code) => reject(new Error(`unbound exited ${code}: ${stderr}`)));
  });
  const probe = encodeQuery('google.com', 16);
  const answering = (async () => {
    for (let attempt = 0; attempt < 100; attempt++) {
      const result = await loadResolver(port, [probe]).catch(() => undefined);
      if (result && result.answered === 1) return;
      await sleep(100);
    }
    throw new Error(`unbound did not answer on port ${port}: ${stderr}`);
  })();
  await Promise.race([answering, failed]);
  child.removeAllListeners('exit');
  return { port, child };
}

function round(value: number, places = 0): number {
  const factor = 10 ** places;
  return Math.round(value * factor) / factor;
}

async function main(): Promise<void> {
  const requested = option('--domains');
  let domains = SMOKE ? SMOKE_DOMAINS : requested === undefined ? DEFAULT_DOMAINS : Number(requested);
  if (!Number.isInteger(domains) || domains < 1) throw new Error(`--domains takes a positive whole number, not ${requested}`);
  const questions = SMOKE ? 400 : Math.min(UNBOUND_QUESTIONS, 4 * domains);
  const latencyOption = option('--dns-latency-ms');
  const dnsLatencyMs = latencyOption === undefined ? smokeOr(SMOKE_DNS_LATENCY_MS, DEFAULT_DNS_LATENCY_MS) : Number(latencyOption);
  if (!Number.isInteger(dnsLatencyMs) || dnsLatencyMs < 1) throw new Error(`--dns-latency-ms takes a positive whole number, not ${latencyOption}`);
  const concurrencyOption = option('--latency-concurrency');
  const latencyConcurrency = concurrencyOption === undefined ? LATENCY_WORKER_CONCURRENCY : Number(concurrencyOption);
  if (!Number.isInteger(latencyConcurrency) || latencyConcurrency < 1) throw new Error(`--latency-concurrency takes a positive whole number, not ${concurrencyOption}`);
  const queueOnlyMode = process.argv.includes('--queue-only');
  if (queueOnlyMode && SMOKE && requested === undefined) domains = QUEUE_ONLY_SMOKE_DOMAINS;
  const modesOption = option('--modes');
  const modes = (modesOption?.split(',') ?? [...MODES]) as Mode[];
  if (modes.length === 0 || modes.some((mode) => !MODES.includes(mode))) throw new Error(`--modes takes ${MODES.join(' and/or ')}, comma-separated, not ${modesOption}`);

  const warmUpNames = SMOKE ? 0 : Math.min(1_000, domains);
  const began = Date.now();
  const elapsed = (what: string) => process.stderr.write(`scale bench: ${((Date.now() - began) / 1000).toFixed(1)} s: ${what}\n`);
  const engine = await loadEngine();
  const dnsChild = startChild(fileURLToPath(new URL('./dns-server-child.ts', import.meta.url)), engineArgs(engine));
  const children: ChildProcess[] = [];
  try {
    await withQueueSetup('scale', async (setup) => {
      if (queueOnlyMode) process.stderr.write(`scale bench: queue only: ${domains} names, no worker…\n`);
      else process.stderr.write(`scale bench: ${domains} domains, workers ${WORKER_COUNTS.join(' and ')} (× ${WORKER_CONCURRENCY} CPU-bound, × ${latencyConcurrency} latency-bound), modes ${modes.join(', ')}…\n`);
      dnsChild.send({ start: { domains, keys: createKeyPool(), onDemand: true } });
      const { port: dnsPort } = await dnsChild.next<{ port: number }>();
      elapsed('PostgreSQL, Redis and the DNS server up');
      const dns: DnsChild = {
        async stats() {
          dnsChild.send({ stats: true });
          return dnsChild.next<{ udp: number; tcp: number }>();
        },
      };
      const env = {
        SPOOF_CHECKER_API_KEYS: `${KEY}:org_bench`,
        SPOOF_CHECKER_RATE_LIMIT: 'off',
        // Every run submits N names: the day's quota must hold them all.
        SPOOF_CHECKER_BATCH_NAMES_PER_DAY: String(queueOnlyMode ? domains + 1 : domains * WORKER_COUNTS.length * modes.length + warmUpNames),
      };
      const resolver = `127.0.0.1:${dnsPort}`;
      const serve = await setup.startServe(['--redis', setup.redisUrl, '--resolver', resolver, '--no-dnssec'], env);
      const api = batchClient(serve.base, KEY);
      const argsFor = (address: string, concurrency: number) => setup.workerArgs(['--resolver', address, '--no-dnssec', '--concurrency', String(concurrency)]);
      const workerArgs = argsFor(resolver, WORKER_CONCURRENCY);
      const context = { api, servePid: serve.child.pid!, dnsPid: dnsChild.process.pid!, redisPort: setup.redisPort, workerArgs, dns, scratch: setup.scratch };
      if (queueOnlyMode) {
        const run = await queueOnly(context, domains, smokeOr(QUEUE_ONLY_SMOKE_BATCH_NAMES, MAX_BATCH_NAMES));
        printQueueOnly(run);
        console.log(JSON.stringify({ scale: { queueOnly: run, cores: cpus().length } }));
        return;
      }

      // Warm-up (untimed): PostgreSQL, `serve` and the DNS server meet the timed runs warm, not the
      // first of them only. Its names lie past the N timed ones (and outside the on-demand zones).
      // (None in a smoke run: it only proves the steps work.)
      if (warmUpNames > 0) {
        const warmUp = await submitRange(api, domains, domains + warmUpNames);
        const warmWorker = await startCli(['worker', ...workerArgs], /worker: ready/);
        await api.untilDone(warmUp.id);
        await stop(warmWorker.child);
        elapsed('warmed up');
      }

      const byMode: Partial<Record<Mode, WorkerRun[]>> = {};
      for (const mode of modes) {
        const front = mode === 'latency' ? await startDelayingDnsFront(dnsPort, dnsLatencyMs) : undefined;
        const concurrency = front ? latencyConcurrency : WORKER_CONCURRENCY;
        const modeContext = front ? { ...context, workerArgs: argsFor(`127.0.0.1:${front.port}`, concurrency) } : context;
        const runs: WorkerRun[] = [];
        try {
          for (const workers of WORKER_COUNTS) {
            const run = await runWorkers(modeContext, domains, workers, front ? dnsLatencyMs : 0, concurrency);
            elapsed(`${mode}: ${workers} worker(s): ${Math.round(run.checksPerSec)} checks/s`);
            runs.push(run);
          }
        } finally {
          await front?.close();
        }
        byMode[mode] = runs;
      }
      await stop(serve.child);
      const runs = Object.values(byMode).flat();

      // The resolver's ceiling: unbound over the same zones, cold then warm.
      const unboundDir = join(setup.scratch, 'unbound');
      await mkdir(unboundDir);
      const unbound = await startUnbound(unboundDir, dnsPort);
      elapsed('unbound up');
      children.push(unbound.child);
      const set = unboundQuestions(questions);
      const cold = await loadResolver(unbound.port, set);
      const warm = await loadResolver(unbound.port, set);
      await stop(unbound.child);
      // The embedded server alone, for scale: the same questions straight to it.
      const direct = await loadResolver(dnsPort, set);
      elapsed('unbound measured');

      const queriesPerCheck = runs[0]!.queriesPerCheck;
      const unboundColdChecks = cold.answeredPerSec / queriesPerCheck;
      const modeSummary = (modeRuns: WorkerRun[]) => {
        const [one, two] = modeRuns as [WorkerRun, WorkerRun];
        const share = two.checksPerSec / (2 * one.checksPerSec);
        return {
          dnsLatencyMs: one.dnsLatencyMs,
          runs: modeRuns.map((run) => ({
            ...run,
            checksPerSec: round(run.checksPerSec),
            seconds: round(run.seconds, 1),
            checkLatencyMs: round(run.checkLatencyMs),
            cpu: Object.fromEntries(Object.entries(run.cpu).map(([name, value]) => [name, round(value, 2)])) as unknown as CpuUse,
            loadAverage: run.loadAverage.map((value) => round(value, 1)),
            queriesPerCheck: round(run.queriesPerCheck, 1),
            workerCpuMsPerCheck: round(run.workerCpuMsPerCheck, 2),
            redisBytesPerDomain: round(run.redisBytesPerDomain, 1),
            resultMb: round(run.resultMb, 1),
            resultStreamSeconds: round(run.resultStreamSeconds, 1),
          })),
          checksPerSecPerWorker: round(one.checksPerSec),
          twoWorkersShareOfLinear: round(share, 2),
          linearWithin10Percent: share >= LINEAR_SHARE,
        };
      };
      const perMode = Object.fromEntries(Object.entries(byMode).map(([mode, modeRuns]) => [mode, modeSummary(modeRuns)])) as Partial<Record<Mode, ReturnType<typeof modeSummary>>>;
      // The top-million estimate takes a worker's CPU-bound rate (the latency-bound one if only that ran).
      const perWorker = (byMode.cpu ?? byMode.latency)![0]!.checksPerSec;
      const summary = {
        domains,
        concurrencyPerWorker: WORKER_CONCURRENCY,
        cores: cpus().length,
        loadAverage: loadavg().map((value) => round(value, 1)),
        modes: perMode,        // The warm-up queued BullMQ's own keys and scripts already: every run's figure is the jobs'.
        redisBytesPerQueuedDomain: round(Math.max(...runs.map((run) => run.redisBytesPerDomain)), 1),
        queriesPerCheck: round(queriesPerCheck, 1),
        unbound: {
          threads: cpus().length,
          questions: set.length,
          coldQueriesPerSec: round(cold.answeredPerSec),
          warmQueriesPerSec: round(warm.answeredPerSec),
          lost: cold.lost + warm.lost,
          servfail: cold.servfail + warm.servfail,
          coldChecksPerSecCeiling: round(unboundColdChecks),
          warmChecksPerSecCeiling: round(warm.answeredPerSec / queriesPerCheck),
        },
        embeddedServerQueriesPerSec: round(direct.answeredPerSec),
        // A top-million run at the measured per-worker rate, capped by unbound's cold ceiling.
        topMillionHours: Object.fromEntries(
          [1, 2, 4, 8, 16].map((k) => [k, round(1_000_000 / Math.min(k * perWorker, unboundColdChecks) / 3600, 2)]),
        ),
      };
      const pad = (label: string) => label.padEnd(46);
      for (const [mode, figures] of Object.entries(summary.modes)) {
        console.log(`${mode === 'cpu' ? 'CPU-bound: DNS answered at once' : `latency-bound: every DNS query held ${figures.dnsLatencyMs} ms`}`);
        for (const run of figures.runs) {
          console.log(
            `${pad(`${run.workers} worker(s) × ${run.concurrency}, ${domains} domains`)}${run.checksPerSec} checks/s (${run.seconds} s, ${run.failed} failed, ${run.queriesPerCheck} queries/check, ${run.workerCpuMsPerCheck} ms worker CPU/check, worker peak RSS ${run.workerPeakRssMb.join(' / ')} MB)`,
          );
          console.log(`${pad("  a check took (Little's law)")}${run.checkLatencyMs} ms; load average ${run.loadAverage.join(' → ')}`);
          console.log(
            `${pad(`  CPU, cores (of ${summary.cores})`)}workers ${run.cpu.workersCores}, serve ${run.cpu.serveCores}, DNS server ${run.cpu.dnsServerCores}, bench (front) ${run.cpu.benchCores}; machine ${Math.round(run.cpu.machineBusyShare * 100)} % busy`,
          );
          console.log(`${pad('  worker RSS (names done → MB each)')}${run.workerRssSeries.map((point) => `${point.done} → ${point.rssMb.join('/')}`).join(', ')}`);
          console.log(`${pad('  serve RSS (before / queued / after run)')}${run.serveRssMb.beforeQueueing} / ${run.serveRssMb.afterQueueing} / ${run.serveRssMb.afterRun} MB`);
          console.log(`${pad('  results streamed to a file')}${run.resultLines} lines, ${run.resultMb} MB in ${run.resultStreamSeconds} s; serve peak RSS ${run.servePeakRssMbWhileStreaming} MB`);
          console.log(`${pad('  serve RSS (lines streamed → MB)')}${run.serveRssSeriesWhileStreaming.map((point) => `${point.lines} → ${point.rssMb}`).join(', ')}`);
        }
        console.log(`${pad('  two workers ÷ twice one')}${figures.twoWorkersShareOfLinear} (linear within 10 %: ${figures.linearWithin10Percent ? 'yes' : 'NO'}; ${summary.cores} cores shared by every process)`);
      }
      console.log(`${pad('Redis memory per queued domain')}${summary.redisBytesPerQueuedDomain} bytes`);
      console.log(`${pad(`unbound (${summary.unbound.threads} threads), ${set.length} questions`)}cold ${summary.unbound.coldQueriesPerSec} q/s, warm ${summary.unbound.warmQueriesPerSec} q/s (lost ${summary.unbound.lost}, SERVFAIL ${summary.unbound.servfail})`);
      console.log(`${pad('  as checks/s (÷ queries per check)')}cold ${summary.unbound.coldChecksPerSecCeiling}, warm ${summary.unbound.warmChecksPerSecCeiling}`);
      console.log(`${pad('embedded server alone')}${summary.embeddedServerQueriesPerSec} q/s`);
      console.log(`${pad('top million, hours with K workers')}${Object.entries(summary.topMillionHours).map(([k, h]) => `${k}: ${h}`).join(', ')}`);
      console.log(JSON.stringify({ scale: summary }));
    });
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await dnsChild.stop();
  }
}

await main();
