/**
 * The set-up bench/batch.ts and bench/scale.ts share: a throw-away PostgreSQL and Redis
 * (test/setup/postgres.ts) and a scratch directory, the built CLI's `serve` and `worker` processes
 * started and stopped, the batch API's client, and a process's memory and CPU read from /proc.
 * `withQueueSetup` starts the stores, runs the benchmark and tears everything down (children killed,
 * stores stopped, scratch removed) however it ends.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startPostgres, startRedis } from '../test/setup/postgres.js';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** The built CLI (`npm run build` first). */
export const BIN = join(ROOT, 'bin', 'spoof-checker.js');
/** The batch API's path. */
export const BATCHES = '/api/tools/v1/spoof-checker/batches';
/** How long `serve` or `worker` may take to say it is ready. */
const READY_WITHIN_MS = 60_000;
/** How long a stopped process has after SIGTERM before SIGKILL. */
const STOP_WITHIN_MS = 10_000;
/** Of a child's stderr, at most this much is kept while waiting for it to be ready (progress lines: the tail). */
const STDERR_KEPT_CHARS = 100_000;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** RSS of a process now, and its peak so far (VmHWM), in MB (Linux /proc). */
export function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

/** CPU seconds (user + system) a live process has used (Linux /proc; clock ticks of 1/100 s). */
export function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Starts the CLI; resolves with the process once `ready` matches its stderr. */
export function startCli(args: string[], ready: RegExp, env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LOG_LEVEL: 'silent', ...env } });
  let stderr = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args[0]} did not start: ${stderr}`)), READY_WITHIN_MS);
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.length > STDERR_KEPT_CHARS) stderr = stderr.slice(-STDERR_KEPT_CHARS / 10);
      const match = ready.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve({ child, match });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args[0]} exited with ${code}: ${stderr}`));
    });
  });
}

/** SIGTERM, then SIGKILL if it has not exited within STOP_WITHIN_MS. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(STOP_WITHIN_MS).then(() => child.kill('SIGKILL'))]);
}

/** What the batch API says of a batch. */
export interface BatchStatus {
  id: string;
  status: string;
  total: number;
  done: number;
  failed: number;
  createdAt: string;
  finishedAt: string | null;
  namesPerSecond: number;
}

/** The batch API of a running `serve`, with the API key `key`. */
export function batchClient(base: string, key: string) {
  const headers = { authorization: `Bearer ${key}` };
  const status = async (id: string): Promise<BatchStatus> => (await (await fetch(`${base}${BATCHES}/${id}`, { headers })).json()) as BatchStatus;
  return {
    base,
    headers,
    async submit(names: readonly string[]): Promise<BatchStatus> {
      const response = await fetch(`${base}${BATCHES}`, { method: 'POST', headers: { ...headers, 'content-type': 'text/plain' }, body: names.join('\n') });
      if (response.status !== 202) throw new Error(`submit answered ${response.status}: ${await response.text()}`);
      return (await response.json()) as BatchStatus;
    },
    status,
    /** Polls a batch until it is done. */
    async untilDone(id: string, everyMs = 100): Promise<BatchStatus> {
      let current = await status(id);
      while (current.status !== 'done') {
        await sleep(everyMs);
        current = await status(id);
      }
      return current;
    },
    /** The batch's results as they stream out (the route pages through the store). */
    async results(id: string): Promise<AsyncIterable<Uint8Array>> {
      const response = await fetch(`${base}${BATCHES}/${id}/results`, { headers });
      return response.body as unknown as AsyncIterable<Uint8Array>;
    },
    async cancel(id: string): Promise<void> {
      await fetch(`${base}${BATCHES}/${id}`, { method: 'DELETE', headers });
    },
  };
}

export type BatchClient = ReturnType<typeof batchClient>;

/** The stores and scratch directory of one run, and the CLI processes started in it. */
export interface QueueSetup {
  postgresUrl: string;
  redisUrl: string;
  redisPort: number;
  scratch: string;
  /** `serve` on the throw-away stores plus `args` (its answer source: `--zones`, `--resolver`…), on a free port. */
  startServe(args: string[], env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; base: string }>;
  /** A `worker`'s arguments on the same queue and store, plus `args`. */
  workerArgs(args: string[]): string[];
}

/** Starts PostgreSQL and Redis and a scratch directory, runs `bench`, then tears it all down. */
export async function withQueueSetup<T>(name: string, bench: (setup: QueueSetup) => Promise<T>): Promise<T> {
  if (!existsSync(join(ROOT, 'dist', 'cli', 'worker.js'))) throw new Error('build first: npm run build');
  const [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
  const scratch = await mkdtemp(join(tmpdir(), `spoof-checker-${name}-bench-`));
  const children: ChildProcess[] = [];
  try {
    return await bench({
      postgresUrl: postgres.url,
      redisUrl: redis.url,
      redisPort: redis.port,
      scratch,
      async startServe(args, env) {
        const serve = await startCli(['serve', '--database', postgres.url, ...args, '--port', '0'], /listening on (http:\/\/\S+)/, env);
        children.push(serve.child);
        return { child: serve.child, base: serve.match[1]! };
      },
      workerArgs: (args) => ['--redis', redis.url, '--database', postgres.url, ...args],
    });
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all([postgres.stop(), redis.stop()]);
    await rm(scratch, { recursive: true, force: true });
  }
}
