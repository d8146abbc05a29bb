/**
 * `check --bimi` against the BIMI lab (packages/engine/test/bimi/lab.ts): in process, with --zones, --tls-ca,
 * --connect-ports https=N, --allow-private-addresses and --bimi-roots, as a kept-back lab runs it.
 */
import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { startBimiLab, type BimiLab } from '../../packages/engine/test/bimi/lab.js';
import { captureIo } from './helpers.js';

const run = promisify(execFile);
const BIN = new URL('../../bin/spoof-checker.js', import.meta.url).pathname;
const DIST = new URL('../../dist/cli/main.js', import.meta.url).pathname;

let lab: BimiLab;
beforeAll(async () => {
  lab = await startBimiLab();
}, 60_000);
afterAll(async () => {
  await lab?.close();
});

const labFlags = () => ['--zones', lab.zonesDir, '--bimi', '--tls-ca', lab.tlsCaFile, '--connect-ports', `https=${lab.httpsPort}`, '--allow-private-addresses', '--bimi-roots', lab.mvaRootFile];

describe('spoof-checker check --bimi', () => {
  it('adds bimi to --json per domain, and the spoof verdict is the same as without it', async () => {
    const without = captureIo();
    expect(await main(['check', 'vmc.example', '--zones', lab.zonesDir, '--json'], without.io)).toBe(0);
    const plain = JSON.parse(without.stdout());
    expect(plain.bimi).toBeUndefined();
    const withBimi = captureIo();
    expect(await main(['check', 'vmc.example', 'cmc.example', 'forged.example', 'pnone.example', 'fetchfail.example', 'none.example', ...labFlags(), '--json'], withBimi.io)).toBe(0);
    const lines = withBimi.stdout().trim().split('\n').map((l) => JSON.parse(l));
    expect(lines[0].verdict).toBe(plain.verdict);
    expect(lines[0].reasons).toEqual(plain.reasons);
    expect(lines.map((l) => [l.domain, l.bimi.grade])).toEqual([
      ['vmc.example', 'ready-vmc'],
      ['cmc.example', 'ready-cmc'],
      ['forged.example', 'not-ready'],
      ['pnone.example', 'not-ready'],
      ['fetchfail.example', 'unknown'],
      ['none.example', 'not-published'],
    ]);
    expect(lines[2].bimi.certificate.chain.trusted).toBe(false);
  });

  it('prints a BIMI section with the violation line and the next step', async () => {
    const { io, stdout } = captureIo();
    expect(await main(['check', 'script.example', ...labFlags()], io)).toBe(0);
    const text = stdout();
    expect(text).toContain('BIMI (brand logo): not-ready');
    expect(text).toContain('line 5 [script]');
    expect(text).toMatch(/Next steps:\n\s+1\. /);
  });

  it('--faults applies to the BIMI lookups: SERVFAIL gives unknown', async () => {
    const faults = join(lab.dir, 'faults.json');
    writeFileSync(faults, JSON.stringify([{ name: 'default._bimi.self.example', type: 'TXT', fault: { kind: 'servfail' } }]));
    const { io, stdout } = captureIo();
    expect(await main(['check', 'self.example', ...labFlags(), '--faults', faults, '--json'], io)).toBe(0);
    expect(JSON.parse(stdout()).bimi.grade).toBe('unknown');
  });

  it('--at DATE judges the mark certificate at that date: the lab VMC (a year long) is ready now and expired in two years (issue 42)', async () => {
    // An hour from now (the lab's certificates start now), and two years on.
    const inHours = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString();
    const grade = async (at: string) => {
      const { io, stdout } = captureIo();
      expect(await main(['check', 'vmc.example', ...labFlags(), '--at', at, '--json'], io)).toBe(0);
      return JSON.parse(stdout()).bimi as { grade: string; certificate: { daysLeft: number } };
    };
    expect((await grade(inHours(1))).grade).toBe('ready-vmc');
    const later = await grade(inHours(2 * 365 * 24).slice(0, 10));
    expect(later.grade).not.toBe('ready-vmc');
    expect(later.certificate.daysLeft).toBeLessThan(-300);
  });

  it('--at refuses what is not a date, and needs --bimi or DNSSEC validation', async () => {
    for (const [args, message] of [
      [['check', 'x.example', '--bimi', '--at', '2027-02-30'], '--at 2027-02-30: not a date; give YYYY-MM-DD (2027-06-01) or a date-time (2027-06-01T12:00:00Z)'],
      [['check', 'x.example', '--bimi', '--at', 'tomorrow'], '--at tomorrow: not a date'],
      [['check', 'x.example', '--bimi', '--at', '2027-06-01T25:00:00Z'], 'not a date'],
      [['check', 'x.example', '--no-dnssec', '--at', '2027-06-01'], '--at sets the time BIMI certificates and DNSSEC signatures are judged at: add --bimi, or drop --no-dnssec'],
    ] as const) {
      const { io, stderr } = captureIo();
      expect(await main([...args], io)).toBe(2);
      expect(stderr()).toContain(message);
    }
  });

  it('usage errors name the flag: --bimi-selector without --bimi, a bad selector, an unreadable roots file', async () => {
    for (const [args, message] of [
      [['check', 'x.example', '--bimi-selector', 'brand'], '--bimi-selector and --bimi-roots apply to --bimi'],
      [['check', 'x.example', '--bimi', '--bimi-selector', 'bad_sel'], '--bimi-selector: the BIMI selector "bad_sel"'],
      [['check', 'x.example', '--bimi', '--bimi-roots', '/nonexistent/roots.pem'], '--bimi-roots /nonexistent/roots.pem: cannot read it'],
      [['check', 'x.example', '--tls-ca', '/x.pem'], 'apply to --transport and --bimi'],
    ] as const) {
      const { io, stderr } = captureIo();
      expect(await main([...args], io)).toBe(2);
      expect(stderr()).toContain(message);
    }
  });

  it('the built CLI: check --bimi --json for every lab domain, one process, as a kept-back lab runs it', async () => {
    expect(existsSync(DIST), 'dist/ is missing: run `npm run build` first').toBe(true);
    const domains = ['none.example', 'pnone.example', 'self.example', 'script.example', 'vmc.example', 'cmc.example', 'wrongsan.example', 'noeku.example', 'mismatch.example', 'forged.example', 'fetchfail.example'];
    const { stdout } = await run(process.execPath, [BIN, 'check', ...domains, ...labFlags(), '--json']);
    const lines = stdout.trimEnd().split('\n').map((text) => JSON.parse(text));
    expect(lines.map((l) => [l.domain, l.bimi.grade])).toEqual([
      ['none.example', 'not-published'],
      ['pnone.example', 'not-ready'],
      ['self.example', 'ready-self-asserted'],
      ['script.example', 'not-ready'],
      ['vmc.example', 'ready-vmc'],
      ['cmc.example', 'ready-cmc'],
      ['wrongsan.example', 'not-ready'],
      ['noeku.example', 'not-ready'],
      ['mismatch.example', 'not-ready'],
      ['forged.example', 'not-ready'],
      ['fetchfail.example', 'unknown'],
    ]);
    const by = Object.fromEntries(lines.map((l) => [l.domain, l.bimi]));
    expect(by['script.example'].logo.violations).toEqual([expect.objectContaining({ rule: 'script', line: 5 })]);
    expect(by['wrongsan.example'].certificate).toMatchObject({ sanMatch: false, chain: { trusted: true } });
    expect(by['noeku.example'].certificate.bimiEku).toBe(false);
    expect(by['mismatch.example'].certificate.logotype.hashOk).toBe(false);
    expect(by['forged.example'].certificate.chain).toMatchObject({ trusted: false, problems: [expect.stringContaining('does not verify')] });
    expect(by['vmc.example'].providers).toMatchObject({ gmail: { eligible: true }, apple: { eligible: true }, yahoo: { eligible: true } });
    expect(by['self.example'].providers).toMatchObject({ gmail: { eligible: false }, apple: { eligible: false }, yahoo: { eligible: true } });
  });
});
