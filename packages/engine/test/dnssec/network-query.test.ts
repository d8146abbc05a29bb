/**
 * The DNSSEC questions go through the network resolver (issue 39 item 1, issue 43 item 1): one
 * socket pool (no socket per question), one TCP fallback for truncated answers (RFC 7766 §5), the
 * same attempts and timeout, DO and CD set (RFC 4035 §4.9.2, RFC 6840 §5.9), and the same raw
 * answers as the validator's standalone client. Counted in sockets, not timed.
 */
import dgram from 'node:dgram';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { NetworkResolver, UDP_SOCKETS_PER_SERVER } from '../../src/dns/network-resolver.js';
import { startDnsServer, type RunningDnsServer } from '../../src/zones/server.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { createRawQuery } from '../../src/dnssec/query.js';
import { Validator } from '../../src/dnssec/validate.js';
import { TYPE } from '../../src/dns/canonical.js';
import { loadSignedZoneDirectory } from '../../src/zones/signed.js';
import { DNSSEC_FIXTURES, FIXED_NOW, fixtureAnchors } from './helpers.js';

let server: RunningDnsServer;
beforeAll(async () => {
  const signedZones = await loadSignedZoneDirectory(`${DNSSEC_FIXTURES}zones`);
  // The MX of alg13.test comes truncated over UDP: the question must go on over TCP.
  server = await startDnsServer({ resolver: new ZoneResolver([]), signedZones, outsideZones: 'nxdomain', faults: [{ name: 'alg13.test', type: 'MX', fault: { kind: 'truncate' } }] });
});
afterAll(async () => {
  await server?.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('NetworkResolver.dnssecQuery', () => {
  it(`200 questions use at most ${UDP_SOCKETS_PER_SERVER} UDP sockets (the resolver's pool)`, async () => {
    const network = new NetworkResolver({ servers: [`127.0.0.1:${server.address.port}`] });
    const created = vi.spyOn(dgram, 'createSocket');
    const query = network.dnssecQuery();
    const names = Array.from({ length: 200 }, (_, i) => `sel${i}._domainkey.secure-nsec.test`);
    const responses = await Promise.all(names.map((name) => query(name, TYPE.TXT)));
    expect(responses.every((r) => r.kind === 'response' && r.message.rcode === 3)).toBe(true);
    expect(created.mock.calls.length).toBeLessThanOrEqual(UDP_SOCKETS_PER_SERVER);
    network.close();
  });

  it('the same raw answers as the standalone client, DO and CD set; a truncated answer is asked again over TCP', async () => {
    const network = new NetworkResolver({ servers: [`127.0.0.1:${server.address.port}`] });
    const standalone = createRawQuery([server.address]);
    for (const [name, type] of [
      ['secure-nsec.test', TYPE.MX],
      ['alg13.test', TYPE.MX],
      ['test', TYPE.DNSKEY],
      ['nope.secure-nsec3.test', TYPE.TXT],
    ] as const) {
      const [ours, theirs] = await Promise.all([network.dnssecQuery()(name, type), standalone(name, type)]);
      if (ours.kind !== 'response' || theirs.kind !== 'response') throw new Error(`no answer for ${name}`);
      expect(ours.message.flags & 0x0200).toBe(0); // not truncated: the TCP answer
      expect(ours.message.opt?.do).toBe(true);
      expect(ours.message.flags & 0x0010).toBe(0x0010); // CD copied back
      expect({ answer: ours.message.answer, authority: ours.message.authority, rcode: ours.message.rcode }).toEqual({ answer: theirs.message.answer, authority: theirs.message.authority, rcode: theirs.message.rcode });
    }
    network.close();
  });

  it('validation through it gives the fixture states', async () => {
    const network = new NetworkResolver({ servers: [`127.0.0.1:${server.address.port}`] });
    const validator = new Validator({ query: network.dnssecQuery(), anchors: fixtureAnchors(), now: () => FIXED_NOW });
    expect((await validator.validate('secure-nsec3.test', TYPE.MX)).status).toBe('secure');
    expect((await validator.validate('alg13.test', TYPE.MX)).status).toBe('secure');
    expect((await validator.validate('tampered.test', TYPE.MX)).status).toBe('bogus');
    network.close();
  });

  it('a server that does not answer: an error after the attempts, never a rejection', async () => {
    const silent = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    const network = new NetworkResolver({ servers: [`127.0.0.1:${silent.address().port}`], timeoutMs: 100, attempts: 2 });
    const response = await network.dnssecQuery()('secure-nsec.test', TYPE.MX);
    expect(response.kind).toBe('error');
    network.close();
    silent.close();
  });
});
