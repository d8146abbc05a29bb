/**
 * Issue 42, item 1: a command given `--zones DIR` or `--demo-zones`, and `serve --demo` with what
 * its demo starts (its monitors, their webhooks, its own mail servers), sends no packet anywhere:
 * not a query to the system resolver, not a connection outside loopback.
 *
 * Each command runs twice, from the built bin (`npm run build` first), with the preload
 * test/setup/offline-guard.mjs, which counts every call to the system resolver (node:dns) and every
 * UDP send or TCP connect outside loopback:
 * - inside a network namespace that holds only `lo` (`unshare -n`, as root): nothing could leave;
 * - outside it, on this machine's network: the same output, and still nothing counted.
 * A command that went online would differ (a failed lookup instead of an answer) or be counted.
 * Every command that takes `--zones` takes `--demo-zones` and lists it in its `--help`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { BIN, ROOT } from '../setup/serve-process.js';
import { captureIo } from './helpers.js';

const GUARD = join(ROOT, 'test/setup/offline-guard.mjs');
const NODE = process.execPath;
const scratch = mkdtempSync(join(tmpdir(), 'offline-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** What the guard saw: system resolver calls and packets outside loopback. */
interface Seen {
  systemResolver: string[];
  outside: string[];
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  seen: Seen[];
}

let runs = 0;

/**
 * Runs a shell script (its `$SC` is the CLI under the guard, `$GUARD_OUT_n` distinct guard files
 * through `$G`), inside a network namespace with only `lo` up, or on this machine's network.
 */
async function runScript(script: string, where: 'namespace' | 'host', stdin = ''): Promise<Ran> {
  const id = ++runs;
  const guardDir = join(scratch, `guard-${id}`);
  spawnSync('mkdir', ['-p', guardDir]);
  // Each CLI process writes its own counts, into a file of its own.
  // `sc ARGS` runs the CLI in the foreground; a background one is `OFFLINE_GUARD_OUT=$(gout) $SCB ARGS &`
  // (a simple command, so that $! is the node process itself and `kill $!` reaches it).
  const prelude =
    `gout() { mktemp -p "${guardDir}" XXXXXX.json; }\nSCB="${NODE} --import ${GUARD} ${BIN}"\n` +
    `sc() { OFFLINE_GUARD_OUT="$(gout)" "${NODE}" --import "${GUARD}" "${BIN}" "$@"; }\n`;
  const body = where === 'namespace' ? `ip link set lo up\n${prelude}${script}` : `${prelude}${script}`;
  const argv = where === 'namespace' ? ['unshare', '-n', 'sh', '-c', body] : ['sh', '-c', body];
  const child = spawn(argv[0]!, argv.slice(1), { cwd: ROOT, env: { PATH: process.env['PATH'], HOME: scratch, LOG_LEVEL: 'silent', SPOOF_CHECKER_RATE_LIMIT: 'off' } });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  child.stdin.end(stdin);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const files = spawnSync('ls', [guardDir], { encoding: 'utf8' }).stdout.split('\n').filter((f) => f.endsWith('.json'));
  const seen = files.map((f) => JSON.parse(readFileSync(join(guardDir, f), 'utf8')) as Seen);
  return { code, stdout, stderr, seen };
}

/** The output with what changes from run to run (times) left out. */
function stable(text: string): string {
  return text
    .replace(/"(resolvedAt|responseTimeMs|checkedAt|generatedAt|durationMs|elapsedMs|createdAt|updatedAt|importedAt|receivedAt)":("[^"]*"|\d+)/g, '"$1":_')
    .replace(/\d+ ms\b/g, '_ ms')
    // The MTA-STS policy id the transport check suggests is the time of the check.
    .replace(/id=\d{14}/g, 'id=_')
    .replace(/organisation-\S+|\/tmp\/offline-\S+/g, '_');
}

function expectOffline(ran: Ran, processes: number): void {
  expect(ran.seen.length, `every process wrote its counts; stderr: ${ran.stderr}`).toBe(processes);
  for (const seen of ran.seen) {
    expect(seen.systemResolver, 'system resolver calls').toEqual([]);
    expect(seen.outside, 'packets outside loopback').toEqual([]);
  }
}

describe('the guard and the namespace themselves', () => {
  it('the namespace holds only lo, and a lookup there is counted (the guard sees what it must)', async () => {
    const links = await runScript('ip -o link | wc -l', 'namespace');
    expect(links.stdout.trim()).toBe('1');
    const probe = await runScript(`OFFLINE_GUARD_OUT="${scratch}/probe.json" "${NODE}" --import "${GUARD}" -e "require('node:dns').promises.lookup('example.com').catch(() => {}); require('node:dgram').createSocket('udp4').send('x', 53, '192.0.2.53', (e) => process.exit(0))"; cat "${scratch}/probe.json"`, 'namespace');
    const seen = JSON.parse(probe.stdout) as Seen;
    expect(seen.systemResolver).toEqual(['dns.lookup(example.com)']);
    expect(new Set(seen.outside)).toEqual(new Set(['udp 192.0.2.53']));
  });
});

/** Commands, each a script of CLI runs (`sc` is the CLI under the guard), and how many processes it starts. */
const COMMANDS: { name: string; script: string; processes: number; stdin?: string; code?: number }[] = [
  // sts-enforced.example's MX is on loopback, which only serve --demo's own mail servers answer: exit 1 ("could not be checked"), the same in both places.
  { name: 'check --demo-zones --transport --bimi', script: 'sc check --demo-zones --json --transport --bimi p-reject.example sts-enforced.example', processes: 1, code: 1 },
  { name: 'check --zones fixtures/zones', script: 'sc check --zones fixtures/zones p-none.example reject-sp-none.example', processes: 1, code: 0 },
  { name: 'scan --demo-zones --transport', script: 'sc scan - --demo-zones --transport', stdin: 'p-none.example\np-reject.example\nno-such-domain.example\n', processes: 1, code: 1 },
  { name: 'lookalikes --demo-zones', script: 'sc lookalikes acmebank.example --demo-zones --json', processes: 1, code: 0 },
  { name: 'lookalikes --zones --smtp-probe', script: 'sc lookalikes acmebank.example --zones fixtures/zones --smtp-probe', processes: 1, code: 0 },
  {
    name: 'reports import and show --demo-zones',
    script:
      'D=$(mktemp -d); sc reports import fixtures/reports/src --demo-zones --data "$D" || true\n' +
      'sc reports show spf-cloud-ec2.example --demo-zones --data "$D" --until 2026-11-30 --days 60 --json; rm -rf "$D"',
    processes: 2,
    code: 0,
  },
  {
    name: 'dns-serve --demo-zones, asked by check --resolver',
    script:
      'OFFLINE_GUARD_OUT=$(gout) $SCB dns-serve --demo-zones --port 15353 --outside nxdomain > /dev/null 2>&1 & P=$!; trap "kill $P 2>/dev/null" EXIT; sleep 1.5\n' +
      'sc check p-none.example --resolver 127.0.0.1:15353 --no-dnssec --json; rc=$?; kill -TERM $P; wait $P; exit $rc',
    processes: 2,
    code: 0,
  },
  {
    name: 'worker --demo-zones (Redis on loopback)',
    script:
      'D=$(mktemp -d); redis-server --port 16399 --bind 127.0.0.1 --save "" --appendonly no --daemonize yes --pidfile "$D/r.pid" --dir "$D" > /dev/null; sleep 0.5\n' +
      'trap \'kill $(cat "$D/r.pid") 2>/dev/null; rm -rf "$D"\' EXIT\n' +
      'OFFLINE_GUARD_OUT=$(gout) $SCB worker --redis redis://127.0.0.1:16399 --data "$D" --demo-zones > /dev/null 2> "$D/err" & P=$!\n' +
      'for i in $(seq 1 150); do grep -q "worker: ready" "$D/err" && break; sleep 0.2; done; sleep 1; kill -TERM $P; wait $P; echo "worker exit $?"; grep -o "worker: ready" "$D/err"',
    processes: 1,
    code: 0,
  },
];

describe('every command with --zones or --demo-zones sends nothing, and answers the same inside a namespace with only lo', () => {
  it.each(COMMANDS)('$name', { timeout: 120_000 }, async ({ script, processes, stdin, code }) => {
    const inside = await runScript(script, 'namespace', stdin);
    expect(inside.code, inside.stderr).toBe(code);
    expectOffline(inside, processes);
    const outside = await runScript(script, 'host', stdin);
    expect(outside.code, outside.stderr).toBe(code);
    expectOffline(outside, processes);
    // scan writes in completion order: the same lines, in any order.
    const lines = (text: string) => stable(text).split('\n').sort();
    expect(lines(inside.stdout)).toEqual(lines(outside.stdout));
    expect(inside.stdout.length).toBeGreaterThan(0);
  });

  it('lookalikes --demo-zones finds the fixture lookalikes (it used to ask the system resolver: 0 found)', async () => {
    const ran = await runScript('sc lookalikes acmebank.example --demo-zones --json', 'namespace');
    const report = JSON.parse(ran.stdout) as { lookalikes: unknown[]; counts: { unknown: number } };
    expect(report.lookalikes).toHaveLength(9);
    expect(report.counts.unknown).toBe(0);
  });
});

describe('serve --demo with everything it starts', () => {
  it('its monitors (with every check and a webhook), API checks, lookalikes and pages send nothing', { timeout: 120_000 }, async () => {
    const api = 'http://127.0.0.1:18797/api/tools/v1';
    const auth = "-H 'Authorization: Bearer sk_demo_0123456789abcdef' -H 'Content-Type: application/json'";
    const script = [
      'OFFLINE_GUARD_OUT=$(gout) $SCB serve --demo --port 18797 --log-format json > /dev/null 2>&1 & P=$!; trap "kill $P 2>/dev/null" EXIT',
      'for i in $(seq 1 150); do curl -s -o /dev/null http://127.0.0.1:18797/healthz && break; sleep 0.2; done',
      `curl -s -X POST ${api}/spoof-checker ${auth} -d '{"domain":"sts-enforced.example","checks":["transport","bimi"]}' | head -c 60; echo`,
      `curl -s -X POST ${api}/lookalikes ${auth} -d '{"domain":"acmebank.example"}' | head -c 40; echo`,
      `curl -s -X POST ${api}/spoof-checker/monitors ${auth} -d '{"domain":"p-reject.example","webhookUrl":"https://hooks.p-reject.example/spoof","checks":["transport","lookalikes","bimi"]}' > m.json; head -c 80 m.json; echo`,
      `ID=$(sed 's/.*"id":"\\(mon_[^"]*\\)".*/\\1/' m.json); rm m.json`,
      `curl -s -X POST ${api}/spoof-checker/monitors/$ID/run ${auth} | head -c 40; echo`,
      `curl -s -X POST ${api}/spoof-checker/monitors/$ID/run ${auth} > /dev/null; sleep 3`,
      `curl -s ${api}/spoof-checker/monitors/$ID ${auth} | grep -o '"status":"[a-z-]*"' | head -1`,
      'curl -s -o /dev/null -w "%{http_code}\\n" http://127.0.0.1:18797/check/p-none.example',
      'curl -s -o /dev/null -w "%{http_code}\\n" http://127.0.0.1:18797/transport/sts-enforced.example',
      'kill -TERM $P; wait $P',
    ].join('\n');
    const inside = await runScript(script, 'namespace');
    expect(inside.code, inside.stderr).toBe(0);
    expectOffline(inside, 1);
    expect(inside.stdout).toContain('{"domain":"sts-enforced.example"');
    expect(inside.stdout).toContain('{"domain":"acmebank.example"');
    // The webhook host is looked up in the demo's zones (none there), never by the system resolver.
    expect(inside.stdout).toMatch(/WEBHOOK_URL_REFUSED|"object":"monitor"/);
    expect(inside.stdout).toMatch(/\n200\n200\n$/);
  });
});

describe('--demo-zones is taken and listed by every command that takes --zones', () => {
  it.each([['check'], ['scan'], ['serve'], ['worker'], ['dns-serve'], ['lookalikes'], ['reports']])('%s --help lists --demo-zones', async (command) => {
    const { io, stdout } = captureIo();
    expect(await main([command, '--help'], io)).toBe(0);
    expect(stdout()).toMatch(command === 'dns-serve' ? /<zones-dir>/ : /--zones/);
    expect(stdout()).toMatch(/--demo-zones/);
  });

  it('reports show --demo-zones computes the SPF tightening (it used to say "not computed")', async () => {
    const data = mkdtempSync(join(scratch, 'reports-'));
    const imported = captureIo();
    await main(['reports', 'import', join(ROOT, 'fixtures/reports/src'), '--data', data], imported.io);
    const shown = captureIo();
    expect(await main(['reports', 'show', 'spf-cloud-ec2.example', '--demo-zones', '--data', data, '--until', '2026-11-30', '--days', '60'], shown.io)).toBe(0);
    expect(shown.stdout()).not.toMatch(/not computed/);
  });
});
