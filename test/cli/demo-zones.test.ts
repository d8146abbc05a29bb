/**
 * `--demo-zones`: the fixture zones shipped with spoof-checker, found wherever it is installed and
 * whatever the working directory (check, scan, serve, dns-serve, worker); and a `--zones DIR` that
 * is not there fails with a usage error that names the directory and `--demo-zones`.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { FIXTURE_ZONES_DIR } from '../../src/fixtures.js';
import { dnsServe } from '../../src/cli/dns-serve.js';
import type { CliIo } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { serve } from '../../src/cli/serve.js';
import { ROOT } from '../setup/serve-process.js';
import { captureIo } from './helpers.js';

const run = promisify(execFile);
/** What a missing --zones directory says: the directory, and the flag that always works. */
const POINTS_AT_DEMO_ZONES = /(--zones|the zones directory) no\/such\/zones: no such directory \(looked for in .+\)\. For the fixture zones shipped with spoof-checker, wherever it is installed, use --demo-zones instead/;

async function cli(args: string[], stdin = '') {
  const { io, stdout, stderr } = captureIo(stdin);
  const code = await main(args, io);
  return { code, out: stdout(), err: stderr() };
}

/** An io whose stop signal the test sends. */
function stoppableIo() {
  let stop: (signal: string) => void = () => undefined;
  const stopSignal = new Promise<string>((resolve) => (stop = resolve));
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (t) => void out.push(t), err: (t) => void err.push(t), stdin: Readable.from([]), stderrIsTTY: false, env: { SPOOF_CHECKER_DATA: ':memory:', LOG_LEVEL: 'silent' }, stopSignal };
  return { io, stop, out, err };
}

async function waitFor(predicate: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (predicate()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('--demo-zones', () => {
  it('check answers from the shipped fixture zones', async () => {
    const done = await cli(['check', '--demo-zones', '--json', 'p-reject.example']);
    expect(done.code).toBe(0);
    expect(JSON.parse(done.out)).toMatchObject({ domain: 'p-reject.example', verdict: 'protected' });
  });

  it('scan answers from them too', async () => {
    const done = await cli(['scan', '-', '--demo-zones'], 'p-none.example\np-reject.example\n');
    expect(done.code).toBe(0);
    // Lines come in the order the checks finish (zones are read on demand): match them by domain.
    const verdicts = Object.fromEntries(done.out.trimEnd().split('\n').map((line) => JSON.parse(line) as { domain: string; verdict: string }).map((r) => [r.domain, r.verdict]));
    expect(verdicts).toEqual({ 'p-none.example': 'spoofable', 'p-reject.example': 'protected' });
  });

  it('with --zones or --resolver as well: a usage error', async () => {
    for (const other of [['--zones', FIXTURE_ZONES_DIR], ['--resolver', '127.0.0.1:53']]) {
      const done = await cli(['check', '--demo-zones', ...other, 'p-reject.example']);
      expect(done.code, other[0]).toBe(2);
      expect(done.err, other[0]).toMatch(/not both/);
    }
  });

  it('dns-serve serves them', async () => {
    const { io, stop, out } = stoppableIo();
    const exit = dnsServe(['--demo-zones', '--port', '0'], io);
    await waitFor(() => out.join('').includes('listening'), 'dns-serve to listen');
    expect(out.join('')).toMatch(/listening on 127\.0\.0\.1:\d+ \(udp\+tcp\), \d{2,} zones/);
    stop('SIGTERM');
    expect(await exit).toBe(0);
  });

  it('serve answers from them, and says so on its start-up line', async () => {
    const { io, stop, err } = stoppableIo();
    const exit = serve(['--demo-zones', '--port', '0'], io);
    await waitFor(() => err.join('').includes('listening on'), 'serve to listen');
    expect(err.join('')).toMatch(/DNS: \d+ zone\(s\) from the shipped fixture zones \(/);
    stop('SIGTERM');
    expect(await exit).toBe(0);
  });

  it('works from any working directory, from the built package', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'demo-zones-cwd-'));
    const { stdout } = await run(process.execPath, [join(ROOT, 'bin', 'spoof-checker.js'), 'check', '--demo-zones', '--json', 'p-none.example'], { cwd: elsewhere });
    expect(JSON.parse(stdout)).toMatchObject({ verdict: 'spoofable' });
    // `--zones fixtures/zones` only means something in a clone: elsewhere it names --demo-zones.
    const failed = await run(process.execPath, [join(ROOT, 'bin', 'spoof-checker.js'), 'check', '--zones', 'fixtures/zones', 'p-none.example'], { cwd: elsewhere }).catch((error: { code: number; stderr: string }) => error);
    expect(failed).toMatchObject({ code: 2 });
    expect((failed as { stderr: string }).stderr).toContain(`--zones fixtures/zones: no such directory (looked for in ${elsewhere}). For the fixture zones shipped with spoof-checker, wherever it is installed, use --demo-zones instead`);
  });
});

describe('a --zones directory that is not there', () => {
  it.each([
    ['check', ['check', '--zones', 'no/such/zones', 'p-reject.example']],
    ['scan', ['scan', '-', '--zones', 'no/such/zones']],
    ['worker', ['worker', '--redis', 'redis://127.0.0.1:1', '--data', '/tmp/unused', '--zones', 'no/such/zones']],
  ])('%s: a usage error naming the directory and --demo-zones', async (_name, args) => {
    const done = await cli(args, 'p-reject.example\n');
    expect(done.code).toBe(2);
    expect(done.err).toMatch(POINTS_AT_DEMO_ZONES);
  });

  it('serve: the same, exit 2', async () => {
    const { io, err } = stoppableIo();
    expect(await serve(['--zones', 'no/such/zones', '--port', '0'], io)).toBe(2);
    expect(err.join('')).toMatch(POINTS_AT_DEMO_ZONES);
  });

  it('dns-serve: the same, and without any directory it names --demo-zones too', async () => {
    const missing = stoppableIo();
    expect(await dnsServe(['no/such/zones', '--port', '0'], missing.io)).toBe(2);
    expect(missing.err.join('')).toMatch(POINTS_AT_DEMO_ZONES);
    const none = stoppableIo();
    expect(await dnsServe(['--port', '0'], none.io)).toBe(2);
    expect(none.err.join('')).toMatch(/the zones directory is missing \(--demo-zones serves the fixture zones shipped with spoof-checker\)/);
  });
});
