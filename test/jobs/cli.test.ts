/**
 * The command line of batches: `worker`'s arguments, a worker run in process against the real
 * Redis, and `serve --data DIR` running a batch in its own process (the embedded default).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { worker } from '../../src/cli/worker.js';
import { batchNamesPerDayFromEnv } from '../../src/cli/batch-quota.js';
import { startBatchWorker } from '../../src/jobs/batches/worker.js';
import { openStores } from '../../src/store/open.js';
import { captureIo } from '../cli/helpers.js';
import { requireRedis } from '../setup/require-services.js';
import { BATCHES, fixtureCheck, FIXTURE_ZONES, ndjson, VERDICT_NAMES } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'spoof-batches-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('spoof-checker worker: arguments', () => {
  it.each([
    [[], /--redis URL/],
    [['--redis', 'http://127.0.0.1:6379', '--data', 'x'], /not a Redis URL .*redis:\/\//],
    [['--redis', 'redis://127.0.0.1:6379'], /--database URL or --data DIR/],
    [['--redis', 'redis://127.0.0.1:6379', '--data', ':memory:'], /in-memory store cannot be shared/],
    [['--redis', 'redis://127.0.0.1:6379', '--data', 'x', '--database', 'postgresql://h/db'], /not both/],
    [['--redis', 'redis://127.0.0.1:6379', '--data', 'x', '--concurrency', '0'], /--concurrency must be a whole number from 1/],
    [['--redis', 'redis://127.0.0.1:6379', '--data', 'x', '--zones', 'a', '--resolver', '127.0.0.1'], /not both/],
    [['--bogus'], /bogus/],
  ])('%j is a usage error naming the problem (exit 2)', async (args, message) => {
    const { io, stderr } = captureIo();
    expect(await worker(args, io)).toBe(2);
    expect(stderr()).toMatch(message);
    expect(stderr()).toMatch(/Usage: spoof-checker worker/);
  });

  it('is listed by the top-level help', async () => {
    const { io, stdout } = captureIo();
    expect(await main(['--help'], io)).toBe(0);
    expect(stdout()).toMatch(/worker\s+process queued batch checks/);
  });

  it('runs until stopped, then closes cleanly (exit 0)', async () => {
    const redis = requireRedis();
    const dir = await tempDir();
    let stop!: (signal: string) => void;
    const { io, stderr } = captureIo('', { stop: new Promise((resolve) => (stop = resolve)) });
    const running = worker(['--redis', redis, '--data', dir, '--zones', FIXTURE_ZONES, '--concurrency', '2'], io);
    const deadline = Date.now() + 15_000;
    while (!stderr().includes('worker: ready') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stderr()).toMatch(/worker: ready \(queue: redis:\/\/127\.0\.0\.1:\d+.*; store: SQLite .*; DNS: \d+ zone\(s\).*; 2 names at once\)/);
    stop('SIGTERM');
    expect(await running).toBe(0);
    expect(stderr()).toMatch(/SIGTERM: finishing the chunks in hand/);
  });
});

describe('serve: the batch quota variable', () => {
  it.each([
    [undefined, 1_000_000],
    ['', 1_000_000],
    ['5000', 5000],
  ])('SPOOF_CHECKER_BATCH_NAMES_PER_DAY=%j gives %d', (value, expected) => {
    expect(batchNamesPerDayFromEnv(value === undefined ? {} : { SPOOF_CHECKER_BATCH_NAMES_PER_DAY: value })).toBe(expected);
  });

  it.each(['0', '-5', '1.5', 'lots', '1e6'])('SPOOF_CHECKER_BATCH_NAMES_PER_DAY=%j is refused, naming the variable', (value) => {
    expect(() => batchNamesPerDayFromEnv({ SPOOF_CHECKER_BATCH_NAMES_PER_DAY: value })).toThrow(/SPOOF_CHECKER_BATCH_NAMES_PER_DAY must be a whole number/);
  });
});

describe('scan --redis: a local list checked by the queue workers', () => {
  it('streams every result back in input order, in JSON lines and CSV, the same as a local scan', { timeout: 60_000 }, async () => {
    const redis = new URL(requireRedis());
    redis.pathname = '/6'; // a Redis database of its own: this queue meets no other test's jobs
    const dir = await tempDir();
    const opened = await openStores({ kind: 'sqlite', dir }, { pruneAutomatically: false });
    cleanups.push(() => opened.stores.close());
    const check = await fixtureCheck();
    const running = startBatchWorker({ redisUrl: redis.toString(), store: opened.stores.batches, check, concurrency: 4 });
    cleanups.push(() => running.close());
    await running.ready();

    const names = [...VERDICT_NAMES, 'not a domain', ...VERDICT_NAMES.map((n) => `www.${n}`)];
    const list = join(dir, 'names.txt');
    await writeFile(list, `# a comment\n${names.join('\n')}\n\n`);

    const queued = captureIo();
    expect(await main(['scan', list, '--redis', redis.toString(), '--data', dir, '--batch-size', '7'], queued.io)).toBe(1);
    const lines = ndjson(queued.stdout());
    expect(lines.map((l) => l['input'])).toEqual(names);
    expect(lines[VERDICT_NAMES.length]).toMatchObject({ input: 'not a domain', error: { code: 'invalid_domain' } });
    const local = captureIo();
    await main(['scan', list, '--zones', FIXTURE_ZONES, '--concurrency', '1'], local.io);
    const byInput = new Map(ndjson(local.stdout()).map((l) => [l['input'], l]));
    for (const line of lines) {
      const expected = byInput.get(line['input'])!;
      if ('error' in expected) expect(line['error']).toMatchObject({ code: (expected['error'] as { code: string }).code });
      else expect(line).toMatchObject({ domain: expected['domain'], verdict: expected['verdict'], inboxOutcome: expected['inboxOutcome'] });
    }
    expect(queued.stderr()).toMatch(new RegExp(`scan: ${names.length} checked in [\\d.]+ s on the queue's workers; 1 failed`));

    const csv = captureIo();
    await main(['scan', list, '--redis', redis.toString(), '--data', dir, '--format', 'csv'], csv.io);
    const rows = csv.stdout().trim().split('\n');
    expect(rows[0]).toMatch(/^input,domain,verdict,/);
    expect(rows.slice(1).map((row) => row.split(',')[0])).toEqual(names);
  });

  it('says so when the queue cannot be reached (exit 1), and refuses --redis without a shared store (exit 2)', { timeout: 20_000 }, async () => {
    const dir = await tempDir();
    const list = join(dir, 'names.txt');
    await writeFile(list, 'p-reject.example\n');
    const down = captureIo();
    expect(await main(['scan', list, '--redis', 'redis://127.0.0.1:1', '--data', dir], down.io)).toBe(1);
    expect(down.stderr()).toMatch(/cannot reach the queue at redis:\/\/127\.0\.0\.1:1/);
    const noStore = captureIo();
    expect(await main(['scan', list, '--redis', 'redis://127.0.0.1:1'], noStore.io)).toBe(2);
    expect(noStore.stderr()).toMatch(/--database URL or --data DIR/);
  });
});

/** A key strong enough for SPOOF_CHECKER_API_KEYS (at least 32 random characters). */
const ENV_KEY = 'sk_jobs_cli_5e0d8c2a7f914b36a1c9e4d70b28f6a3';

describe('serve runs batches in its own process by default', () => {
  it('serve --data DIR: a batch submitted over HTTP is checked and its results read back', { timeout: 60_000 }, async () => {
    const dir = await tempDir();
    const child = spawn(process.execPath, [`${ROOT}bin/spoof-checker.js`, 'serve', '--data', dir, '--zones', FIXTURE_ZONES, '--port', '0'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, SPOOF_CHECKER_API_KEYS: `${ENV_KEY}:org_a`, LOG_LEVEL: 'silent' },
    });
    cleanups.push(() => child.kill('SIGKILL'));
    let stderr = '';
    const base = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve did not start: ${stderr}`)), 20_000);
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const match = /listening on (http:\/\/[^\s]+)/.exec(stderr);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
      child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
    });
    expect(stderr).toMatch(/batches in this process/);
    const headers = { authorization: `Bearer ${ENV_KEY}` };
    const accepted = await fetch(`${base}${BATCHES}`, { method: 'POST', headers: { ...headers, 'content-type': 'text/plain' }, body: VERDICT_NAMES.join('\n') });
    expect(accepted.status).toBe(202);
    const { id } = (await accepted.json()) as { id: string };
    const deadline = Date.now() + 30_000;
    let status: { status: string; done: number } = { status: 'queued', done: 0 };
    while (status.status !== 'done' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await (await fetch(`${base}${BATCHES}/${id}`, { headers })).json()) as typeof status;
    }
    expect(status).toMatchObject({ status: 'done', done: VERDICT_NAMES.length });
    const results = await fetch(`${base}${BATCHES}/${id}/results`, { headers });
    expect(results.headers.get('content-type')).toMatch(/application\/x-ndjson/);
    expect(ndjson(await results.text()).map((line) => line['input'])).toEqual(VERDICT_NAMES);
    child.kill('SIGTERM');
    expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(0);
  });
});
