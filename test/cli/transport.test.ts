/**
 * `check --transport` against the transport lab (test/transport/lab.ts): in process, and through
 * the built CLI as a separate process (`check --transport --json` with --tls-ca, --connect-ports,
 * --allow-private-addresses), as a kept-back lab would run it.
 */
import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { parseConnectPorts } from '../../src/cli/transport-options.js';
import { LAB_ZONES, startLab, type Lab } from '../transport/lab.js';
import { captureIo } from './helpers.js';

const run = promisify(execFile);
const BIN = new URL('../../bin/spoof-checker.js', import.meta.url).pathname;
const DIST = new URL('../../dist/cli/main.js', import.meta.url).pathname;

let lab: Lab;
beforeAll(async () => {
  lab = await startLab();
});
afterAll(async () => {
  await lab?.close();
});

const labFlags = () => ['--zones', LAB_ZONES, '--transport', '--tls-ca', lab.caFile, '--connect-ports', lab.connectPortsFlag, '--allow-private-addresses'];

describe('spoof-checker check --transport', () => {
  it('adds transport to --json, and the spoof verdict is the same as without it', async () => {
    const without = captureIo();
    expect(await main(['check', 'wrong-name.example', '--zones', LAB_ZONES, '--json'], without.io)).toBe(0);
    const plain = JSON.parse(without.stdout());
    expect(plain.transport).toBeUndefined();

    const withTransport = captureIo();
    expect(await main(['check', 'wrong-name.example', ...labFlags(), '--json'], withTransport.io)).toBe(0);
    const line = JSON.parse(withTransport.stdout());
    expect(line.verdict).toBe(plain.verdict);
    expect(line.reasons).toEqual(plain.reasons);
    expect(line.transport.verdict).toBe('broken');
    expect(line.transport.mx[0].addresses[0].outcome).toBe('cert-name-mismatch');
  });

  it('prints a "Mail sent to you" section in the report', async () => {
    const { io, stdout } = captureIo();
    expect(await main(['check', 'testing-expired.example', ...labFlags()], io)).toBe(0);
    const text = stdout();
    expect(text).toContain('Mail sent to you: opportunistic');
    expect(text).toMatch(/MTA-STS {2}testing, id 7/);
    expect(text).toMatch(/MX 10 mx\.testing-expired\.example, in the policy\n\s+127\.0\.0\.2: cert-expired \(TLSv1\.[23]\)/);
    expect(text).toContain('[warning] MX Certificate Expired (mx-cert-expired)');
  });

  it('without --allow-private-addresses the loopback MX is refused-private and the servers see nothing', async () => {
    const before = { ...lab.seen };
    const { io, stdout } = captureIo();
    expect(await main(['check', 'enforce-ok.example', '--zones', LAB_ZONES, '--transport', '--tls-ca', lab.caFile, '--connect-ports', lab.connectPortsFlag, '--json'], io)).toBe(0);
    const line = JSON.parse(stdout());
    expect(line.transport.mx[0].addresses[0].outcome).toBe('refused-private');
    expect(line.transport.mtaSts.fetch.error).toBe('refused-private');
    expect(lab.seen).toEqual(before);
  });

  it.each([
    [['--tls-ca', '/nonexistent/ca.pem'], /--tls-ca \/nonexistent\/ca\.pem: cannot read it/],
    [['--connect-ports', 'smtp=99999'], /--connect-ports takes smtp=N,https=N/],
    [['--connect-ports', 'imap=143'], /"imap=143" is not one/],
  ])('refuses bad transport flags %j with a usage error', async (flags, message) => {
    const { io, stderr } = captureIo();
    expect(await main(['check', 'enforce-ok.example', '--zones', LAB_ZONES, '--transport', ...flags], io)).toBe(2);
    expect(stderr()).toMatch(message);
  });

  it('refuses a --tls-ca file with no certificate', async () => {
    const file = join(lab.dir, 'not-a-cert.pem');
    writeFileSync(file, 'hello\n');
    const { io, stderr } = captureIo();
    expect(await main(['check', 'enforce-ok.example', '--zones', LAB_ZONES, '--transport', '--tls-ca', file], io)).toBe(2);
    expect(stderr()).toMatch(/hold no PEM certificate/);
  });

  it('refuses transport flags without --transport', async () => {
    const { io, stderr } = captureIo();
    expect(await main(['check', 'enforce-ok.example', '--zones', LAB_ZONES, '--allow-private-addresses'], io)).toBe(2);
    expect(stderr()).toMatch(/add --transport/);
  });

  it('parses --connect-ports', () => {
    expect(parseConnectPorts('smtp=2525,https=8443')).toEqual({ smtp: 2525, https: 8443 });
    expect(parseConnectPorts('https=1')).toEqual({ https: 1 });
    expect(() => parseConnectPorts('smtp=25,smtp=26')).toThrow(/twice/);
    expect(() => parseConnectPorts('smtp=0')).toThrow(/1 to 65535/);
  });

  it('the built CLI: check --transport --json for several lab domains, one process', async () => {
    expect(existsSync(DIST), 'dist/ is missing: run `npm run build` first').toBe(true);
    const { stdout } = await run(process.execPath, [BIN, 'check', 'enforce-ok.example', 'wildcard-shallow.example', 'no-starttls.example', 'two-sts.example', ...labFlags(), '--json']);
    const lines = stdout.trimEnd().split('\n').map((text) => JSON.parse(text));
    expect(lines.map((l) => [l.domain, l.transport.verdict, l.transport.mtaSts.status])).toEqual([
      ['enforce-ok.example', 'enforced', 'enforce'],
      ['wildcard-shallow.example', 'broken', 'enforce'],
      ['no-starttls.example', 'at-risk', 'absent'],
      ['two-sts.example', 'opportunistic', 'invalid'],
    ]);
  });
});

describe('spoof-checker scan --transport', () => {
  it('adds each domain\'s transport verdict to its JSON line, the same as check --transport', async () => {
    const names = ['enforce-ok.example', 'wildcard-shallow.example', 'no-starttls.example', 'two-sts.example'];
    const { io, stdout, stderr } = captureIo(`${names.join('\n')}\n`);
    expect(await main(['scan', '-', ...labFlags(), '--concurrency', '2'], io)).toBe(0);
    expect(stderr()).toContain('4 checked');
    const lines = stdout().trimEnd().split('\n').map((text) => JSON.parse(text));
    const verdicts = Object.fromEntries(lines.map((l) => [l.input, l.transport.verdict]));
    expect(verdicts).toEqual({
      'enforce-ok.example': 'enforced',
      'wildcard-shallow.example': 'broken',
      'no-starttls.example': 'at-risk',
      'two-sts.example': 'opportunistic',
    });
  });

  it.each([
    [['--format', 'csv'], '--format jsonl'],
    [['--concurrency', '65'], '--concurrency must be a whole number from 1 to 64'],
  ])('refuses %j with --transport', async (flags, message) => {
    const { io, stderr } = captureIo('enforce-ok.example\n');
    expect(await main(['scan', '-', ...labFlags(), ...flags], io)).toBe(2);
    expect(stderr()).toContain(message);
  });

  it('refuses transport flags without --transport', async () => {
    const { io, stderr } = captureIo('enforce-ok.example\n');
    expect(await main(['scan', '-', '--zones', LAB_ZONES, '--allow-private-addresses'], io)).toBe(2);
    expect(stderr()).toContain('add --transport');
  });
});
