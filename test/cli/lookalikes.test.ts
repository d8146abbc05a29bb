/**
 * `spoof-checker lookalikes` in-process over the fixture zones: the JSON the issue names, the readable
 * report, refusals and usage errors.
 */
import { describe, expect, it } from 'vitest';
import { startDnsServer } from '../../packages/engine/src/zones/server.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';
import { main } from '../../src/cli/main.js';
import { captureIo, FIXTURE_ZONES } from './helpers.js';

describe('spoof-checker lookalikes', () => {
  it('--json: the graded lookalikes, worst first, none counted not listed', async () => {
    const { io, stdout } = captureIo();
    expect(await main(['lookalikes', 'acmebank.example', '--zones', FIXTURE_ZONES, '--json'], io)).toBe(0);
    const report = JSON.parse(stdout()) as Record<string, unknown> & { lookalikes: Record<string, unknown>[]; counts: Record<string, number> };
    for (const key of ['domain', 'generated', 'probed', 'queries', 'lookalikes']) expect(report).toHaveProperty(key);
    expect(report.domain).toBe('acmebank.example');
    for (const l of report.lookalikes) {
      expect(Object.keys(l)).toEqual(expect.arrayContaining(['domain', 'unicode', 'fuzzers', 'distance', 'grade', 'mx', 'spf', 'dmarc', 'sharedWithOriginal']));
    }
    expect(report.lookalikes.map((l) => [l.domain, l.grade])).toEqual([
      ['xn--acmebnk-6fg.example', 'critical'],
      ['acmebanks.example', 'critical'],
      ['acrnebank.example', 'high'],
      ['xn--acmbank-dya.example', 'high'],
      ['acmebnak.example', 'high'],
      ['acme-bank.example', 'high'],
      ['acmeebank.example', 'medium'],
      ['acmebamk.example', 'protected'],
      ['acmebnk.example', 'protected'],
    ]);
    expect(report.lookalikes.every((l) => l.grade !== 'none')).toBe(true);
    expect(report.counts.none).toBe((report.generated as number) - 9);
  });

  it('end to end over the wire: the same grades from the embedded DNS server on loopback (--resolver)', async () => {
    const server = await startDnsServer({ resolver: new ZoneResolver(await loadZoneDirectory(FIXTURE_ZONES)), outsideZones: 'nxdomain' });
    try {
      const { io, stdout } = captureIo();
      expect(await main(['lookalikes', 'acmebank.example', '--resolver', `127.0.0.1:${server.address.port}`, '--json'], io)).toBe(0);
      const overWire = JSON.parse(stdout()) as { queries: number; generated: number; lookalikes: { domain: string; grade: string; fuzzers: string[] }[] };
      const inMemory = captureIo();
      await main(['lookalikes', 'acmebank.example', '--zones', FIXTURE_ZONES, '--json'], inMemory.io);
      const expected = JSON.parse(inMemory.stdout()) as typeof overWire;
      expect(overWire.lookalikes.map((l) => [l.domain, l.grade, l.fuzzers])).toEqual(expected.lookalikes.map((l) => [l.domain, l.grade, l.fuzzers]));
      expect(overWire.queries).toBe(expected.queries);
      expect(server.stats().udp + server.stats().tcp).toBeGreaterThanOrEqual(overWire.generated);
    } finally {
      await server.close();
    }
  });

  it('prints a readable report with the parking records', async () => {
    const { io, stdout } = captureIo();
    expect(await main(['lookalikes', 'https://www.acmebank.example/', '--zones', FIXTURE_ZONES], io)).toBe(0);
    const text = stdout();
    expect(text).toContain('acmebank.example: 9 lookalikes resolve');
    expect(text).toContain('CRITICAL  acmebаnk.example (xn--acmebnk-6fg.example)  [homoglyph; distance 1]');
    expect(text).toContain('probably yours (defensive registration)');
    expect(text).toContain('MX 0 .');
    expect(text).toContain('"v=spf1 -all"');
    expect(text).toContain('"v=DMARC1; p=reject;"');
  });

  it('--deep tries more names, the TLD swap and the dictionary among them', async () => {
    const { io, stdout } = captureIo();
    expect(await main(['lookalikes', 'acmebank.example', '--zones', FIXTURE_ZONES, '--json', '--deep'], io)).toBe(0);
    const report = JSON.parse(stdout()) as { generated: number; deep: boolean; lookalikes: { grade: string }[] };
    expect(report.deep).toBe(true);
    expect(report.generated).toBeGreaterThan(1000);
    expect(report.lookalikes).toHaveLength(9);
  });

  it('input that is not a registrable domain: exit 1 with what to send; usage errors: exit 2', async () => {
    const bad = captureIo();
    expect(await main(['lookalikes', 'co.uk', '--zones', FIXTURE_ZONES, '--json'], bad.io)).toBe(1);
    expect(JSON.parse(bad.stdout())).toMatchObject({ input: 'co.uk', error: { code: 'invalid_domain' } });
    const none = captureIo();
    expect(await main(['lookalikes', '--zones', FIXTURE_ZONES], none.io)).toBe(2);
    expect(none.stderr()).toContain('give exactly one domain');
    const typo = captureIo();
    expect(await main(['lookalikes', 'a.example', '--depp'], typo.io)).toBe(2);
    expect(typo.stderr()).toContain("unknown option '--depp'");
    const help = captureIo();
    expect(await main(['lookalikes', '--help'], help.io)).toBe(0);
    expect(help.stdout()).toContain('--smtp-probe');
  });
});
