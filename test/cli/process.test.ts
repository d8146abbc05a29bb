/**
 * The CLI as a user runs it: the built bin in a child process, with real pipes, signals and a
 * pseudo-terminal. Needs `npm run build` first (`npm test` does it); a missing build fails, loudly.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type RunningDnsServer } from '../../packages/engine/src/zones/server.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';
import { FIXTURE_ZONES } from './helpers.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const BIN = join(ROOT, 'bin/spoof-checker.js');
const BUILT_IO = join(ROOT, 'dist/cli/io.js');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
/** How many names the large-list tests scan (the issue: "no MaxListeners warning on 20,000 names"). */
const LARGE_LIST = 20_000;
/** A stack trace line, as Node prints one. */
const STACK_LINE = /^\s+at .+[:(]/m;

/** The fixture domains, repeated up to `count` names. */
function nameList(count: number): string {
  const domains = spawnSync('ls', [FIXTURE_ZONES], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter((file) => file.endsWith('.zone'))
    .map((file) => file.slice(0, -'.zone'.length))
    // example.zone is the TLD (a name under it that no other file serves does not exist): not a name to check.
    .filter((name) => name.includes('.'));
  return `${Array.from({ length: count }, (_, i) => domains[i % domains.length]).join('\n')}\n`;
}

interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function collect(child: ChildProcess): Promise<Finished> {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

function bin(args: string[]): ChildProcess {
  return spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Resolves once what `child` wrote on `stream` passes `test` (a pattern, or a predicate). */
function waitFor(child: ChildProcess, stream: 'stdout' | 'stderr', pattern: RegExp | ((seen: string) => boolean)): Promise<void> {
  const test = typeof pattern === 'function' ? pattern : (seen: string) => pattern.test(seen);
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer | string) => {
      seen += chunk.toString();
      if (test(seen)) {
        child[stream]?.off('data', onData);
        resolve();
      }
    };
    child[stream]?.on('data', onData);
    child.on('close', () => reject(new Error(`the process ended before writing ${pattern} on ${stream}; it wrote: ${seen.slice(0, 500)}`)));
  });
}

describe('the spoof-checker bin in a child process', () => {
  let dir: string;
  let largeList: string;

  beforeAll(() => {
    if (!existsSync(join(ROOT, 'dist/cli/main.js'))) throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
    dir = mkdtempSync(join(tmpdir(), 'cli-process-'));
    largeList = join(dir, 'names.txt');
    writeFileSync(largeList, nameList(LARGE_LIST));
  });

  it.each(['--version', '-v'])('%s prints the version from package.json', async (flag) => {
    const done = await collect(bin([flag]));
    expect(done).toMatchObject({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });

  it('says which command was meant for a typo, and exits 2', async () => {
    const done = await collect(bin(['chek', 'example.com']));
    expect(done.code).toBe(2);
    expect(done.stdout).toBe('');
    expect(done.stderr).toBe("spoof-checker: unknown command 'chek'. Did you mean 'check'?\nRun 'spoof-checker --help' for the list of commands.\n");
  });

  it('check --faults: the scenario\'s DNS failure, not a verdict (exit 1); a bad faults file: two lines, exit 2', async () => {
    const faulted = await collect(bin(['check', '--zones', 'fixtures/zones', '--faults', 'fixtures/scenarios.json', 'dmarc-servfail.example']));
    expect(faulted.code).toBe(1);
    expect(faulted.stdout).toMatch(/^dmarc-servfail\.example: cannot check \(dns_failure\)\n {2}The DNS lookup of the DMARC record \(TXT _dmarc\.dmarc-servfail\.example\) failed \(SERVFAIL\)/);
    const bad = join(dir, 'bad-faults.json');
    writeFileSync(bad, '[{"name": "a.example", "fault": {"kind": "explode"}}]');
    const refused = await collect(bin(['check', '--zones', 'fixtures/zones', '--faults', bad, 'dmarc-servfail.example']));
    expect(refused).toMatchObject({ code: 2, stdout: '' });
    expect(refused.stderr).toBe(
      `spoof-checker check: ${bad}: /0/fault/kind must be one of servfail, refused, drop, delay, truncate, malformed (got "explode")\n` +
        "Run 'spoof-checker check --help' for the options.\n",
    );
    expect(refused.stderr).not.toMatch(STACK_LINE);
  });

  it('ends quietly when the reader of stdout goes away (scan … | head -1)', async () => {
    const child = bin(['scan', largeList, '--zones', FIXTURE_ZONES]);
    let firstLine = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      firstLine ||= chunk.toString().split('\n')[0]!;
      child.stdout!.destroy(); // the reader closes after the first line, as `head -1` does
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code, signal] = await new Promise<[number | null, string | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])));
    expect(JSON.parse(firstLine)).toHaveProperty('input');
    expect(signal).toBeNull();
    expect([0, 141]).toContain(code);
    expect(stderr).not.toMatch(STACK_LINE);
    expect(stderr).not.toMatch(/EPIPE|Error/);
  });

  it('stops a scan at once on SIGTERM: whole lines only, the summary on stderr, status 143', async () => {
    const child = bin(['scan', largeList, '--zones', FIXTURE_ZONES]);
    const finished = collect(child);
    await waitFor(child, 'stdout', (seen) => seen.split('\n').length > 50);
    child.kill('SIGTERM');
    const done = await finished;
    expect(done.code).toBe(143);
    expect(done.stdout.endsWith('\n')).toBe(true);
    const lines = done.stdout.trimEnd().split('\n');
    for (const line of lines) expect(JSON.parse(line)).toHaveProperty('input');
    expect(lines.length).toBeLessThan(LARGE_LIST);
    expect(done.stderr).toMatch(new RegExp(`^scan: stopped by SIGTERM at line \\d+ of ${largeList} \\(the checks in flight were cancelled, not written\\)\\n`));
    expect(done.stderr).toContain(`scan: ${lines.length} checked in `);
    expect(done.stderr).toContain('scan: to make a long scan resumable, write it with --out FILE.');
    expect(done.stderr).not.toMatch(STACK_LINE);
  });

  it('stopped by SIGTERM while its reader lags (the pipe full), it still ends on a whole line', async () => {
    const child = bin(['scan', largeList, '--zones', FIXTURE_ZONES]);
    let stdout = '';
    const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await new Promise<void>((resolve) => child.stdout!.once('data', (chunk: Buffer) => ((stdout += chunk.toString()), resolve())));
    // Stop reading while the child writes more than a pipe holds (64 KiB), then stop it.
    child.stdout!.pause();
    await new Promise((resolve) => setTimeout(resolve, 300));
    child.kill('SIGTERM');
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stdout!.resume();
    expect(await closed).toBe(143);
    expect(stdout.endsWith('\n')).toBe(true);
    for (const line of stdout.trimEnd().split('\n')) expect(JSON.parse(line)).toHaveProperty('input');
  });

  it('stops at once on SIGTERM even while every check waits on a DNS server that never answers', async () => {
    const silent = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    const asked = new Promise<void>((resolve) => silent.once('message', () => resolve()));
    try {
      const child = bin(['scan', largeList, '--resolver', `127.0.0.1:${silent.address().port}`, '--timeout', '30000']);
      const finished = collect(child);
      await asked; // the scan is under way: its first query reached the server
      child.kill('SIGTERM');
      const sent = Date.now();
      const done = await finished;
      expect(Date.now() - sent).toBeLessThan(3000);
      expect(done.code).toBe(143);
      expect(done.stdout).toBe('');
      expect(done.stderr).toMatch(/^scan: stopped by SIGTERM at line \d+ of /);
      expect(done.stderr).toMatch(/\nscan: 0 checked in /);
    } finally {
      silent.close();
    }
  });

  it('exits at once on a second signal while the first is being handled', async () => {
    // A command that takes its time to wind down after the first signal (as a server draining
    // connections does): the second signal must not wait for it.
    const script = `
      import { processIo } from ${JSON.stringify(BUILT_IO)};
      const io = processIo();
      io.stopSignal.then((signal) => { io.out('winding down after ' + signal + '\\n'); setTimeout(() => io.out('wound down\\n'), 30_000); });
      io.out('ready\\n');
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const finished = collect(child);
    await waitFor(child, 'stdout', /ready\n/);
    child.kill('SIGTERM');
    await waitFor(child, 'stdout', /winding down after SIGTERM\n/);
    const sent = Date.now();
    child.kill('SIGINT');
    const done = await finished;
    expect(Date.now() - sent).toBeLessThan(5000);
    expect(done.code).toBe(130);
    expect(done.stdout).not.toContain('wound down');
    expect(done.stderr).toBe('');
  });

  describe('large lists', () => {
    let server: RunningDnsServer;

    beforeAll(async () => {
      server = await startDnsServer({ resolver: new ZoneResolver(await loadZoneDirectory(FIXTURE_ZONES)), port: 0, outsideZones: 'nxdomain' });
    });
    afterAll(async () => {
      await server?.close();
    });

    it(`scans ${LARGE_LIST.toLocaleString('en')} names into --out with no warning`, async () => {
      const out = join(dir, 'large.jsonl');
      const done = await collect(bin(['scan', largeList, '--zones', FIXTURE_ZONES, '--out', out]));
      expect(done.stderr).not.toMatch(/Warning/);
      expect(done.stderr).toMatch(new RegExp(`^scan: ${LARGE_LIST} checked in [\\d.]+ s: .*; 0 failed\\n$`));
      expect(done.code).toBe(0);
      expect(readFileSync(out, 'utf8').trimEnd().split('\n')).toHaveLength(LARGE_LIST);
    }, 180_000);

    it('scans over a real DNS server, many checks sharing one stop signal, with no warning', async () => {
      const list = join(dir, 'network.txt');
      writeFileSync(list, nameList(300));
      const done = await collect(bin(['scan', list, '--resolver', `${server.address.host}:${server.address.port}`, '--concurrency', '64']));
      expect(done.stderr).not.toMatch(/Warning/);
      // What the names answer is the corpus tests' business; here every one must have been asked.
      expect(done.stderr).toMatch(/^scan: 300 checked in [\d.]+ s: .*\n$/);
      expect(done.stdout.trimEnd().split('\n')).toHaveLength(300);
    }, 60_000);
  });

  describe('the progress line', () => {
    /** Runs a shell command under a pseudo-terminal (`script`), so that stdout and stderr are TTYs. */
    function underTerminal(command: string): Promise<Finished> {
      const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TERM: 'xterm' } });
      return collect(child);
    }
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

    it('is drawn on a terminal (names/s, done/total, ETA) and erased before the summary', async () => {
      const list = join(dir, 'tty.txt');
      writeFileSync(list, nameList(400));
      const out = join(dir, 'tty.jsonl');
      const done = await underTerminal(`${quote(process.execPath)} ${quote(BIN)} scan ${quote(list)} --zones ${quote(FIXTURE_ZONES)} --out ${quote(out)}`);
      expect(done.code).toBe(0);
      expect(done.stdout).toMatch(/\r\x1b\[Kscan: \d+\/400 checked, \d+ names\/s, 0 failed, ETA \d+s/);
      expect(done.stdout).toMatch(/\r\x1b\[Kscan: 400 checked in [\d.]+ s: /);
    });

    it('is not drawn when stderr is not a terminal', async () => {
      const list = join(dir, 'pipe.txt');
      writeFileSync(list, nameList(400));
      const done = await collect(bin(['scan', list, '--zones', FIXTURE_ZONES, '--out', join(dir, 'pipe.jsonl')]));
      expect(done.code).toBe(0);
      expect(done.stderr).toMatch(/^scan: 400 checked in [\d.]+ s: [^\r\x1b]*\n$/);
    });
  });
});
