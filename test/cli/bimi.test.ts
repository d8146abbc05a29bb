/**
 * `check --bimi` against the BIMI lab (test/bimi/lab.ts): in process, with --zones, --tls-ca,
 * --connect-ports https=N, --allow-private-addresses and --bimi-roots, as a kept-back lab runs it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { startBimiLab, type BimiLab } from '../bimi/lab.js';
import { captureIo } from './helpers.js';

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
});
