/**
 * `spoof-checker serve` as a real child process (node bin/spoof-checker.js on the built dist/), for
 * the tests that need the real binary, real signals and a durable store. A missing build fails
 * loudly, never skips.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
/** The built bin. */
export const BIN = join(ROOT, 'bin/spoof-checker.js');

/** How a child ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running `serve`. */
export interface Served {
  /** The URL it printed ("listening on …"). */
  base: string;
  child: ChildProcess;
  /** Everything it has written on stderr so far. */
  stderr: () => string;
  exit: Promise<Exit>;
}

/** Options of `startServeProcess`. */
export interface ServeProcessOptions {
  /** The environment: only PATH is taken from this process, so a caller's SPOOF_CHECKER_* or DATABASE_URL cannot change the store. */
  env?: NodeJS.ProcessEnv;
  /** How long it may take to print its address. */
  startTimeoutMs: number;
  /** The children started, so that a test that fails midway can kill them (`killAll`). */
  children: Set<ChildProcess>;
}

/** Starts `serve …args` and waits for "listening on URL"; rejects with its stderr when it exits first or is too slow. */
export async function startServeProcess(args: readonly string[], options: ServeProcessOptions): Promise<Served> {
  if (!existsSync(join(ROOT, 'dist/cli/serve.js'))) throw new Error('dist/ is missing or stale: run `npm run build` first (npm test does)');
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'], LOG_LEVEL: 'silent', ...options.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  options.children.add(child);
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exit = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => {
      options.children.delete(child);
      resolve({ code, signal });
    }),
  );
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start within ${options.startTimeoutMs} ms; stderr: ${stderr}`)), options.startTimeoutMs);
    const poll = setInterval(() => {
      const url = /listening on (http:\/\/\S+)/.exec(stderr)?.[1];
      if (url) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve(url);
      }
    }, 20);
    void exit.then(({ code, signal }) => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`serve exited (code ${code}, signal ${signal}) before listening; stderr: ${stderr}`));
    });
  });
  return { base, child, stderr: () => stderr, exit };
}

/** Kills every child still running (for `afterEach`). */
export function killAll(children: Set<ChildProcess>): void {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
}
