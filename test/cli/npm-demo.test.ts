/**
 * `npm run demo` as a user (or a process manager) runs it: a real npm, a real shell, the built
 * server. SIGTERM to npm must stop the server. npm forwards the signal to the script's shell only;
 * the scripts `exec` the server so that the shell's process is the server's and the signal lands.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from '../setup/serve-process.js';

/** How long npm and the server may take to start, and to stop (the suite shares two cores). */
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

const started: { kill(signal: NodeJS.Signals): boolean }[] = [];
/** The server's own pid (from its log line), so that a failed test leaves no server behind. */
const serverPids: number[] = [];
afterEach(() => {
  for (const child of started.splice(0)) child.kill('SIGKILL');
  for (const pid of serverPids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone: what the test wants.
    }
  }
});

/** Resolves with `read()`'s first defined value; rejects after `ms`. */
async function waitFor<T>(read: () => T | undefined, ms: number, what: string): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('npm run demo', () => {
  it('the start and demo scripts exec the server (no shell left between npm and it)', () => {
    const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    // Built first (the package has no install script), then the shell is replaced by the server.
    expect(scripts['demo']).toMatch(/^npm run build --silent && exec node bin\/spoof-checker\.js serve --demo$/);
    expect(scripts['start']).toMatch(/^npm run build --silent && exec node bin\/spoof-checker\.js serve$/);
  });

  it('stops the server when npm gets SIGTERM', { timeout: START_TIMEOUT_MS + STOP_TIMEOUT_MS + 10_000 }, async () => {
    const npm = spawn('npm', ['run', '--silent', 'demo'], {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', SPOOF_CHECKER_RATE_LIMIT: 'off' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started.push(npm);
    let stderr = '';
    let stdout = '';
    npm.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    npm.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
    const base = await waitFor(() => /listening on (http:\/\/\S+)/.exec(stderr)?.[1], START_TIMEOUT_MS, `the demo to listen; stderr: ${stderr}`);
    const pid = await waitFor(() => /"pid":(\d+)/.exec(stdout)?.[1], START_TIMEOUT_MS, 'the server log line');
    serverPids.push(Number(pid));
    // The demo's page says where its answers come from, and answers only for its own domains.
    const home = await fetch(`${base}/`);
    expect(home.status).toBe(200);
    expect(await home.text()).toContain('id="demo-banner"');
    expect((await fetch(`${base}/check/google.com`)).status).toBe(404);
    expect((await fetch(`${base}/check/p-none.example`)).status).toBe(200);

    npm.kill('SIGTERM');
    // The server itself got the signal (it says so), and its port closes.
    await waitFor(() => (stderr.includes('SIGTERM: finishing requests in flight, then stopping') ? true : undefined), STOP_TIMEOUT_MS, `the server to see SIGTERM; stderr: ${stderr}`);
    const closed = await (async () => {
      const until = Date.now() + STOP_TIMEOUT_MS;
      while (Date.now() < until) {
        const refused = await fetch(`${base}/`).then(
          () => false,
          () => true,
        );
        if (refused) return true;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return false;
    })();
    expect(closed, 'the server still answers after npm got SIGTERM').toBe(true);
    await exited;
  });
});
