/**
 * Starts a throw-away PostgreSQL server for the tests and the benchmarks: `initdb` in a temp dir,
 * trust authentication, listening on 127.0.0.1 at a free port, fsync off (data is disposable).
 *
 * PostgreSQL refuses to run as root, so when this process is root the binaries run as the
 * `postgres` user (`runuser -u postgres --`) in a directory chowned to it. Shared by the vitest
 * global setup (test/setup/services.ts) and bench/store.ts; imports nothing from src/.
 */
import { execFile, spawn } from 'node:child_process';
import { chown, mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Where Debian installs the PostgreSQL server binaries, one directory per major version. */
const POSTGRES_LIB_DIR = '/usr/lib/postgresql';
/** Ports tried before giving up on starting PostgreSQL. */
const POSTGRES_START_ATTEMPTS = 3;
/** How long `pg_ctl start` may take before we give up. */
const POSTGRES_START_TIMEOUT_SECONDS = 30;

/** A running throw-away PostgreSQL server. */
export interface TestPostgres {
  /** `postgresql://postgres@127.0.0.1:PORT/postgres`: the maintenance database. */
  url: string;
  port: number;
  /** The bin directory of the PostgreSQL that runs (its path names the major version). */
  binDir: string;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
  /**
   * Stops the server, keeping its data (to test a database that goes away): `fast` (the default)
   * ends every session cleanly, `immediate` as a crash would (recovery replays the WAL at start).
   */
  pause(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts a paused server again, on the same port with the same data. */
  resume(): Promise<void>;
}

/** Why a service could not be started, with the Debian package that provides it. */
export class MissingServiceError extends Error {
  override readonly name = 'MissingServiceError';
}

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The newest installed PostgreSQL's bin directory, or a MissingServiceError naming the package. */
export async function postgresBinDir(): Promise<string> {
  let versions: string[];
  try {
    versions = (await readdir(POSTGRES_LIB_DIR)).filter((name) => /^\d+(\.\d+)?$/.test(name));
  } catch {
    versions = [];
  }
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (newest === undefined) {
    throw new MissingServiceError(`PostgreSQL is not installed (no ${POSTGRES_LIB_DIR}/<version>/bin): install the Debian package "postgresql"`);
  }
  return join(POSTGRES_LIB_DIR, newest, 'bin');
}

const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

/** Runs a PostgreSQL binary, as the `postgres` user when we are root (PostgreSQL refuses root). */
async function runAsPostgres(binary: string, args: string[]): Promise<void> {
  const [command, commandArgs] = isRoot() ? ['runuser', ['-u', 'postgres', '--', binary, ...args]] : [binary, args];
  await run(command, commandArgs, { timeout: POSTGRES_START_TIMEOUT_SECONDS * 1000 });
}

/**
 * Initialises and starts a PostgreSQL server in a new temp dir. Tests run it with fsync off (the
 * data is disposable); `durable: true` keeps PostgreSQL's defaults (fsync, synchronous commit), for
 * benchmarks that compare it with SQLite's synchronous=FULL fairly.
 */
export async function startPostgres(options: { durable?: boolean } = {}): Promise<TestPostgres> {
  const bin = await postgresBinDir();
  const root = await mkdtemp(join(tmpdir(), 'spoof-checker-pg-'));
  const dataDir = join(root, 'data');
  const socketDir = root;
  if (isRoot()) {
    const { stdout } = await run('id', ['-u', 'postgres']).catch(() => {
      throw new MissingServiceError('there is no "postgres" user to run PostgreSQL as: install the Debian package "postgresql"');
    });
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(root, Number(stdout.trim()), Number(gid.trim()));
  }
  let port = await freePort();
  const start = () =>
    runAsPostgres(join(bin, 'pg_ctl'), [
      '-D', dataDir,
      '-l', join(root, 'postgres.log'),
      '-w', '-t', String(POSTGRES_START_TIMEOUT_SECONDS),
      // Disposable data: no fsync, so the suite is not slowed by the disk.
      '-o', `-c listen_addresses=127.0.0.1 -p ${port} -k ${socketDir} -c max_connections=200${options.durable ? '' : ' -c fsync=off -c synchronous_commit=off -c full_page_writes=off'}`,
      'start',
    ]);
  try {
    await runAsPostgres(join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
    // The free port was only free when asked: another process may take it first, so try a few.
    for (let attempt = 1; ; attempt++) {
      try {
        await start();
        break;
      } catch (error) {
        if (attempt >= POSTGRES_START_ATTEMPTS) throw error;
        port = await freePort();
      }
    }
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw new Error(`could not start PostgreSQL from ${bin}: ${(error as { stderr?: string }).stderr?.trim() || (error as Error).message}`);
  }
  let stopped = false;
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    port,
    binDir: bin,
    async stop() {
      if (stopped) return;
      stopped = true;
      // `fast` waits for every backend to exit, so no process still writes into the directory we remove.
      await runAsPostgres(join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'fast', '-w', 'stop']).catch(() => undefined);
      await rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    },
    async pause(mode: 'fast' | 'immediate' = 'fast') {
      await runAsPostgres(join(bin, 'pg_ctl'), ['-D', dataDir, '-m', mode, '-w', 'stop']);
    },
    async resume() {
      await start();
    },
  };
}

/** A running throw-away Redis server. */
export interface TestRedis {
  /** `redis://127.0.0.1:PORT`. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** How long Redis may take to accept connections. */
const REDIS_START_TIMEOUT_MS = 10_000;

/** Starts `redis-server` on 127.0.0.1 at a free port, without persistence. */
export async function startRedis(): Promise<TestRedis> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const ready = new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start within ${REDIS_START_TIMEOUT_MS} ms: ${output}`)), REDIS_START_TIMEOUT_MS);
    child.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(error.code === 'ENOENT' ? new MissingServiceError('redis-server is not installed: install the Debian package "redis-server"') : error);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited ${code}: ${output}`));
    });
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  try {
    await ready;
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  child.removeAllListeners('exit');
  child.stdout.resume();
  child.stderr.resume();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
