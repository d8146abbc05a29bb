/**
 * `result.dnssec` end to end: `spoof-checker check --resolver ADDR --trust-anchor FILE --json` against
 * the signed fixture zones on the embedded server (what the kept-back lab does with NSD), the
 * report's DNSSEC lines, `--no-dnssec`, zone files (`not-checked`), and a verdict that does not
 * depend on DNSSEC.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDomain } from '../../packages/engine/src/check.js';
import type { RunningDnsServer } from '../../packages/engine/src/zones/server.js';
import { NetworkResolver } from '../../packages/engine/src/dns/network-resolver.js';
import { main } from '../../src/cli/main.js';
import { captureIo, FIXTURE_ZONES } from '../cli/helpers.js';
import { FIXED_NOW, fixtureAnchors, ROOT_ANCHOR_FILE, startSignedServer } from '../../packages/engine/test/dnssec/helpers.js';

let server: RunningDnsServer;
let address: string;

beforeAll(async () => {
  server = await startSignedServer();
  address = `127.0.0.1:${server.address.port}`;
});
afterAll(async () => {
  await server?.close();
});

describe('check --resolver --trust-anchor --json', () => {
  it.each([
    ['secure-nsec.test', 'secure', null],
    ['secure-nsec3.test', 'secure', null],
    ['alg15.test', 'secure', null],
    ['expired.test', 'bogus', 7],
    ['future.test', 'bogus', 8],
    ['tampered.test', 'bogus', 6],
    ['no-rrsig.test', 'bogus', 10],
    ['ds-mismatch.test', 'bogus', 9],
    ['unsigned.test', 'insecure', null],
    ['unsupported-alg.test', 'insecure', 1],
  ] as const)('%s: %s', async (domain, status, code) => {
    const { io, stdout } = captureIo();
    const exit = await main(['check', domain, '--resolver', address, '--trust-anchor', ROOT_ANCHOR_FILE, '--json'], io);
    expect(exit).toBe(0);
    const result = JSON.parse(stdout());
    expect([result.dnssec.status, result.dnssec.reason.code]).toEqual([status, code]);
    expect(result.dnssec.rrsets.map((r: { name: string; type: string }) => `${r.name} ${r.type}`)).toEqual([`${domain} TXT`, `_dmarc.${domain} TXT`, `${domain} MX`]);
    // The spoof verdict never depends on DNSSEC: every fixture child publishes p=reject and -all.
    expect(result.verdict).toBe('protected');
  });

  it('prints the DNSSEC lines in the report', async () => {
    const { io, stdout } = captureIo();
    await main(['check', 'expired.test', '--resolver', address, '--trust-anchor', ROOT_ANCHOR_FILE], io);
    const text = stdout();
    expect(text).toContain('DNSSEC: bogus (EDE 7)');
    expect(text).toMatch(/expired\.test MX: bogus \(EDE 7\)/);
    expect(text).toContain('Next step: the signatures expired: re-sign the zone now');
  });

  it('a DS that matches no key says which DS to publish at the registrar', async () => {
    const { io, stdout } = captureIo();
    await main(['check', 'ds-mismatch.test', '--resolver', address, '--trust-anchor', ROOT_ANCHOR_FILE, '--json'], io);
    const dnssec = JSON.parse(stdout()).dnssec;
    expect(dnssec.reason.text).toMatch(/Publish at the registrar the DS of the key the zone now serves:\n  ds-mismatch\.test\. IN DS \d+ 13 2 [0-9A-F]{64}$/m);
  });

  it('--no-dnssec: not-checked, and no DNSSEC lines', async () => {
    const { io, stdout } = captureIo();
    await main(['check', 'expired.test', '--resolver', address, '--no-dnssec', '--json'], io);
    expect(JSON.parse(stdout()).dnssec).toMatchObject({ status: 'not-checked', rrsets: [] });
  });

  it('the IANA anchors over a server whose root is not the real one: never secure', async () => {
    const { io, stdout } = captureIo();
    await main(['check', 'secure-nsec.test', '--resolver', address, '--json'], io);
    expect(JSON.parse(stdout()).dnssec.status).toBe('bogus');
  });

  it('zone files: not-checked, with the reason', async () => {
    const { io, stdout } = captureIo();
    await main(['check', 'p-none.example', '--zones', FIXTURE_ZONES, '--json'], io);
    const dnssec = JSON.parse(stdout()).dnssec;
    expect(dnssec.status).toBe('not-checked');
    expect(dnssec.reason.text).toMatch(/zone files/);
  });

  it('refuses contradictory or bad flags, saying what to do', async () => {
    for (const [args, message] of [
      [['--trust-anchor', ROOT_ANCHOR_FILE, '--no-dnssec'], /not both/],
      [['--zones', FIXTURE_ZONES, '--trust-anchor', ROOT_ANCHOR_FILE], /needs DNS servers/],
      [['--trust-anchor', '/nonexistent/anchor'], /cannot read the trust anchor file/],
    ] as const) {
      const { io, stderr } = captureIo();
      expect(await main(['check', 'a.test', ...(args[0] === '--zones' ? [] : ['--resolver', address]), ...args], io)).toBe(2);
      expect(stderr()).toMatch(message);
    }
  });
});

describe('checkDomain({ dnssec })', () => {
  it('takes an injected clock: in 2036 the valid zone is expired', async () => {
    const network = new NetworkResolver({ servers: [address] });
    const result = await checkDomain('secure-nsec.test', {
      resolver: network,
      dnssec: { query: network.dnssecQuery(), anchors: fixtureAnchors(), now: () => Date.UTC(2036, 0, 1) / 1000 },
    });
    expect([result.dnssec?.status, result.dnssec?.reason.code]).toEqual(['bogus', 7]);
    const now = await checkDomain('secure-nsec.test', { resolver: network, dnssec: { query: network.dnssecQuery(), anchors: fixtureAnchors(), now: () => FIXED_NOW } });
    expect(now.dnssec?.status).toBe('secure');
    // Every fixture signature of the chain (root, test., the zone) expires on 2035-01-01.
    expect(now.dnssec?.signaturesExpire).toBe('2035-01-01T00:00:00.000Z');
    network.close();
  });

  it('without the option: not-checked', async () => {
    const network = new NetworkResolver({ servers: [address] });
    expect((await checkDomain('secure-nsec.test', { resolver: network })).dnssec?.status).toBe('not-checked');
    network.close();
  });
});
