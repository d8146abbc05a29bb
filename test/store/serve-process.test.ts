/**
 * `spoof-checker serve` as a real child process (node bin/spoof-checker.js, the built dist/) on a
 * durable store: writes acknowledged with 2xx survive SIGKILL (SQLite), a seed fills only an empty
 * store, two replicas on one PostgreSQL number template versions uniquely and consecutively and
 * read each other's record logs, and a bad or unreachable database is one line and exit 1.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../setup/postgres.js';
import { suiteDatabase } from '../setup/require-services.js';
import { BIN, killAll, ROOT, startServeProcess, type Served } from '../setup/serve-process.js';
import { STRONG_DEMO_KEY, strongDemoSeedFile } from '../setup/strong-seed.js';

// Without --demo the published demo keys are refused: a copy of the demo seed with strong keys.
const DEMO_SEED = strongDemoSeedFile();
const DEMO_KEY = STRONG_DEMO_KEY;
const TEMPLATE = 'tpl_demo_welcome';
/** Versions the demo seed gives TEMPLATE. */
const SEEDED_VERSIONS = 3;
/** How long a child may take to print its address (the whole suite shares two cores). */
const START_TIMEOUT_MS = 30_000;
/** Budget of a test that starts two servers and talks to them. */
const TWO_SERVERS_TEST_MS = 90_000;

const children = new Set<ChildProcess>();

/** Starts serve (no real DNS: a resolver nobody answers on) and waits for "listening on URL". */
function startServe(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Served> {
  return startServeProcess(['--port', '0', '--resolver', '127.0.0.1:1', ...args], { env: { SPOOF_CHECKER_RATE_LIMIT: 'off', ...env }, startTimeoutMs: START_TIMEOUT_MS, children });
}

/** Runs serve to its exit (for start-up failures). */
async function runServe(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--resolver', '127.0.0.1:1', ...args], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'], LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  children.delete(child);
  return { code, stderr };
}

async function api(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any; logId: string | null }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${DEMO_KEY}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, json: await response.json(), logId: response.headers.get('x-log-id') };
}

afterEach(() => killAll(children));

describe('serve --data DIR (SQLite)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'serve-data-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('every write acknowledged with 2xx survives SIGKILL; the seed fills the empty store once', { timeout: TWO_SERVERS_TEST_MS }, async () => {
    const data = join(dir, 'nested', 'data');
    const first = await startServe(['--data', data, '--seed', DEMO_SEED]);
    expect(first.stderr()).toContain(`store: SQLite ${join(data, 'spoof-checker.sqlite')} (WAL, synchronous=NORMAL); migrations applied: 0001_initial`);
    expect(first.stderr()).toContain('loaded into the empty store');

    const created: number[] = [];
    const logIds: string[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await api(first.base, 'POST', `/api/template/v1/${TEMPLATE}/versions`, { content: [{ i }], isMajor: i === 4 });
      expect(response.status).toBe(200);
      created.push(response.json.version);
      logIds.push(response.logId!);
    }
    const patched = await api(first.base, 'PATCH', '/api/domain/v1/dom_demo_example_com', { tls: 'enforced', click_tracking: true });
    expect(patched.status).toBe(200);
    const deleted = await api(first.base, 'DELETE', '/api/domain/v1/dom_demo_mail_example_org');
    expect(deleted.status).toBe(200);
    first.child.kill('SIGKILL');
    expect(await first.exit).toMatchObject({ code: null, signal: 'SIGKILL' });

    const second = await startServe(['--data', data, '--seed', DEMO_SEED]);
    expect(second.stderr()).toContain(`the store already holds data: seed ${DEMO_SEED} skipped`);
    expect(second.stderr()).not.toContain('migrations applied');
    expect(created).toEqual([SEEDED_VERSIONS + 1, SEEDED_VERSIONS + 2, SEEDED_VERSIONS + 3, SEEDED_VERSIONS + 4, SEEDED_VERSIONS + 5]);
    // The template remembers its newest major version, and numbering goes on after the last one acknowledged.
    const templates = await api(second.base, 'GET', '/api/template/v1?limit=100');
    expect(templates.json.templates.find((t: { id: string }) => t.id === TEMPLATE)).toMatchObject({ currentVersion: SEEDED_VERSIONS + 5 });
    const next = await api(second.base, 'POST', `/api/template/v1/${TEMPLATE}/versions`, { content: [] });
    expect(next.json).toMatchObject({ version: SEEDED_VERSIONS + 6 });
    const domains = (await api(second.base, 'GET', '/api/domain/v1?limit=100')).json.domains as { id: string; tls: string }[];
    expect(domains.map((d) => d.id)).toEqual(['dom_demo_example_com']);
    expect(domains[0]).toMatchObject({ tls: 'enforced' });
    expect((await api(second.base, 'DELETE', '/api/domain/v1/dom_demo_mail_example_org')).status).toBe(404);
    // The record log of each acknowledged write, read back after the kill.
    for (const id of logIds) {
      const record = await api(second.base, 'GET', `/api/logs/v1/${id}`);
      expect(record.status).toBe(200);
      expect(record.json).toMatchObject({ status_code: 200 });
    }
    second.child.kill('SIGTERM');
    expect(await second.exit).toMatchObject({ code: 0, signal: null });
  });

  it('a data directory that cannot be created: one line, exit 1', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, '');
    const { code, stderr } = await runServe(['--data', join(file, 'data')]);
    expect(code).toBe(1);
    expect(stderr).toBe(`serve: cannot open the SQLite database ${join(file, 'data', 'spoof-checker.sqlite')}: ENOTDIR: not a directory, mkdir '${join(file, 'data')}'\n`);
  });
});

describe('serve --database (PostgreSQL)', () => {
  const database = suiteDatabase('replicas');

  it('two replicas: concurrent template versions spread over both are unique and consecutive; record logs shared', { timeout: TWO_SERVERS_TEST_MS }, async () => {
    const { url } = database();
    // Started together on a new database: both migrate and seed safely, exactly one loads the seed.
    const [a, b] = await Promise.all([startServe(['--database', url, '--seed', DEMO_SEED]), startServe([], { DATABASE_URL: url, SPOOF_CHECKER_SEED: DEMO_SEED })]);
    expect(a.stderr()).toContain('store: PostgreSQL postgresql://postgres@127.0.0.1:');
    const seeded = [a, b].filter((s) => s.stderr().includes('loaded into the empty store'));
    const skipped = [a, b].filter((s) => s.stderr().includes(`the store already holds data: seed ${DEMO_SEED} skipped`));
    expect([seeded.length, skipped.length]).toEqual([1, 1]);

    const CREATIONS = 40;
    const responses = await Promise.all(
      Array.from({ length: CREATIONS }, (_, i) => api(i % 2 === 0 ? a.base : b.base, 'POST', `/api/template/v1/${TEMPLATE}/versions`, { content: [{ i }], isMajor: i % 5 === 0 })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(CREATIONS).fill(200));
    const numbers = responses.map((r) => r.json.version as number).sort((x, y) => x - y);
    expect(numbers).toEqual(Array.from({ length: CREATIONS }, (_, i) => SEEDED_VERSIONS + i + 1));
    const publishes = responses.filter((r) => r.json.isMajor).map((r) => r.json.publishNumber as number);
    expect(new Set(publishes).size).toBe(publishes.length);

    // Written via A, read via B (and the other way round).
    const viaA = responses[0]!.logId!;
    const viaB = responses[1]!.logId!;
    expect((await api(b.base, 'GET', `/api/logs/v1/${viaA}`)).json).toMatchObject({ uuid: viaA, status_code: 200 });
    expect((await api(a.base, 'GET', `/api/logs/v1/${viaB}`)).json).toMatchObject({ uuid: viaB, status_code: 200 });

    a.child.kill('SIGTERM');
    b.child.kill('SIGTERM');
    expect(await Promise.all([a.exit, b.exit])).toEqual([{ code: 0, signal: null }, { code: 0, signal: null }]);
  });

  it.each([
    ['not a URL', ['--database', 'not a url'], {}, /^serve: --database \/ DATABASE_URL must be a URL such as postgresql:\/\/user:password@host:5432\/database, not "not a url"\n$/],
    ['another scheme', ['--database', 'mysql://u:hunter2@h/db'], {}, /^serve: --database \/ DATABASE_URL must be a postgresql:\/\/ URL \(got "mysql:"\); for SQLite use --data DIR\n$/],
    ['a bad DATABASE_URL', [], { DATABASE_URL: 'http://h/db' }, /^serve: --database \/ DATABASE_URL must be a postgresql:\/\/ URL \(got "http:"\); for SQLite use --data DIR\n$/],
  ])('a bad database URL (%s): one line naming the problem, exit 1', async (_case, args, env, message) => {
    const { code, stderr } = await runServe(args, env);
    expect(code).toBe(1);
    expect(stderr).toMatch(message);
    expect(stderr).not.toContain('hunter2');
  });

  it('--data with --database is a usage error (exit 2)', async () => {
    const { code, stderr } = await runServe(['--data', '/tmp/x', '--database', 'postgresql://h/db']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^serve: give --data or --database, not both\n/);
  });

  it('an unreachable database: one line naming it, exit 1, no stack trace', async () => {
    const port = await freePort();
    const { code, stderr } = await runServe(['--database', `postgresql://user:secret@127.0.0.1:${port}/db`]);
    expect(code).toBe(1);
    expect(stderr).toMatch(new RegExp(`^serve: cannot reach the database postgresql://user:\\*\\*\\*@127\\.0\\.0\\.1:${port}/db: .*ECONNREFUSED.*\\n$`));
    expect(stderr).not.toContain('secret');
  });

  it('a database that does not exist: one line naming it, exit 1', async () => {
    const url = new URL(database().url);
    url.pathname = '/no_such_database';
    const { code, stderr } = await runServe(['--database', url.toString()]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^serve: cannot reach the database postgresql:\/\/postgres@127\.0\.0\.1:\d+\/no_such_database: database "no_such_database" does not exist.*\n$/);
  });
});
