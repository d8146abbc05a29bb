/**
 * The embedded server on the wire: raw queries over UDP and TCP, answers read back with dns2's
 * decoder. What a stub resolver relies on: flags, sections, SOA in negative answers, truncation.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLASSIC_UDP_PAYLOAD,
  MAX_CHARACTER_STRING_OCTETS,
  SERVER_UDP_PAYLOAD,
  splitCharacterStrings,
  startDnsServer,
  type RunningDnsServer,
} from '../../src/dns/server.js';
import { ZoneResolver } from '../../src/dns/zone-resolver.js';
import type { Zone } from '../../src/zones/types.js';
import { parseMessage, queryMessage, SOA_COM, tcpExchange, udpExchange, WIRE_TYPE, ZONES } from './helpers.js';

/** About 700 octets of TXT: over 512, under 1232. */
const MEDIUM = Array.from({ length: 7 }, (_, i) => `medium record ${i} `.padEnd(90, 'm'));
/** About 3000 octets of TXT: over 1232. */
const LARGE = Array.from({ length: 15 }, (_, i) => `large record ${i} `.padEnd(200, 'l'));
/** One string of 600 octets, as a program (not a zone file) may hold it. */
const ONE_LONG_STRING = 'x'.repeat(600);

const EXTRA: Zone = {
  origin: 'big.test',
  records: [
    { name: 'big.test', type: 'SOA', ttl: 3600, data: { ...SOA_COM, mname: 'ns.big.test' } },
    ...MEDIUM.map((text) => ({ name: 'medium.big.test', type: 'TXT' as const, ttl: 300, data: [text] })),
    ...LARGE.map((text) => ({ name: 'large.big.test', type: 'TXT' as const, ttl: 300, data: [text] })),
    { name: 'onestring.big.test', type: 'TXT', ttl: 300, data: [ONE_LONG_STRING] },
    { name: 'srv.big.test', type: 'A', ttl: 300, data: '192.0.2.80' },
  ],
};

let server: RunningDnsServer;
let port: number;
beforeAll(async () => {
  server = await startDnsServer({ resolver: new ZoneResolver([...ZONES, EXTRA]) });
  port = server.address.port;
});
afterAll(async () => {
  await server.close();
});

describe('splitCharacterStrings (RFC 1035 §3.3.14)', () => {
  it.each([
    [[''], [0], 'an empty string stays one empty character-string'],
    [[], [0], 'a record needs at least one character-string'],
    [['a'.repeat(255)], [255], 'exactly 255 octets fit in one'],
    [['a'.repeat(256)], [255, 1], 'one octet more needs a second'],
    [['a'.repeat(600)], [255, 255, 90], '600 octets: three pieces'],
    [['é'.repeat(200)], [255, 145], 'lengths are UTF-8 octets, not characters (400 octets)'],
    [['abc', 'd'.repeat(300)], [3, 255, 45], 'strings already short are kept; only the long one is split'],
  ] as [string[], number[], string][])('%j → %j (%s)', (strings, lengths) => {
    const pieces = splitCharacterStrings(strings);
    expect(pieces.map((piece) => piece.length)).toEqual(lengths);
    expect(Buffer.concat(pieces).toString('utf8')).toBe(strings.join(''));
    for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(MAX_CHARACTER_STRING_OCTETS);
  });
});

describe('embedded DNS server: answers', () => {
  it('answers with QR, RA and AA set, the id and RD echoed', async () => {
    for (const rd of [true, false]) {
      const reply = parseMessage(await udpExchange(port, queryMessage('mx1.example.com', WIRE_TYPE.A, { id: 4321, rd })));
      expect(reply.header).toMatchObject({ id: 4321, qr: 1, ra: 1, aa: 1, rd: rd ? 1 : 0, rcode: 0, tc: 0 });
      expect(reply.answers).toMatchObject([{ name: 'mx1.example.com', type: WIRE_TYPE.A, ttl: 120, address: '192.0.2.1' }]);
    }
  });

  it('puts the CNAME chain first in the answer section, then the records at its end', async () => {
    const reply = parseMessage(await udpExchange(port, queryMessage('alias.example.com', WIRE_TYPE.A)));
    expect(reply.answers).toMatchObject([
      { name: 'alias.example.com', type: WIRE_TYPE.CNAME, domain: 'target.example.org', ttl: 300 },
      { name: 'target.example.org', type: WIRE_TYPE.A, address: '198.51.100.7', ttl: 60 },
    ]);
  });

  it('gives NXDOMAIN with the zone SOA in the authority section, TTL min(SOA TTL, MINIMUM) (RFC 2308 §3)', async () => {
    const reply = parseMessage(await udpExchange(port, queryMessage('missing.example.com', WIRE_TYPE.TXT)));
    expect(reply.header).toMatchObject({ rcode: 3, aa: 1 });
    expect(reply.answers).toEqual([]);
    expect(reply.authorities).toMatchObject([{ name: 'example.com', type: WIRE_TYPE.SOA, ttl: 60, primary: 'ns1.example.com', minimum: 60 }]);
  });

  it('gives NODATA as NOERROR, no answers, and the SOA in the authority section', async () => {
    const reply = parseMessage(await udpExchange(port, queryMessage('example.com', WIRE_TYPE.A)));
    expect(reply.header).toMatchObject({ rcode: 0, aa: 1 });
    expect(reply.answers).toEqual([]);
    expect(reply.authorities).toMatchObject([{ name: 'example.com', type: WIRE_TYPE.SOA }]);
  });

  it('takes the SOA from the zone at the end of a CNAME chain', async () => {
    const reply = parseMessage(await udpExchange(port, queryMessage('dangling.example.com', WIRE_TYPE.A)));
    expect(reply.header.rcode).toBe(3);
    expect(reply.answers).toMatchObject([{ type: WIRE_TYPE.CNAME, domain: 'nothere.example.org' }]);
    expect(reply.authorities).toMatchObject([{ name: 'example.org', type: WIRE_TYPE.SOA, ttl: 120 }]);
  });

  it('answers NXDOMAIN without AA or SOA for a name outside every zone', async () => {
    const reply = parseMessage(await udpExchange(port, queryMessage('elsewhere.test', WIRE_TYPE.A)));
    expect(reply.header).toMatchObject({ rcode: 3, aa: 0 });
    expect(reply.authorities).toEqual([]);
  });

  it('owns a wildcard answer by the queried name (RFC 4592 §3.3.1)', async () => {
    const reply = parseMessage(await udpExchange(port, queryMessage('Some.Wild.example.com', WIRE_TYPE.TXT)));
    expect(reply.answers).toMatchObject([{ name: 'Some.Wild.example.com', data: ['wildcard'] }]);
    expect(reply.questions).toMatchObject([{ name: 'Some.Wild.example.com' }]);
  });

  it('splits a TXT string longer than 255 octets into character-strings on the wire', async () => {
    const reply = parseMessage(await tcpExchange(port, queryMessage('onestring.big.test', WIRE_TYPE.TXT)));
    expect(reply.errors).toEqual([]);
    const data = reply.answers[0]?.data as string[];
    expect(data.map((s) => s.length)).toEqual([255, 255, 90]);
    expect(data.join('')).toBe(ONE_LONG_STRING);
  });

  it('answers a type it holds no data of like NODATA, or NXDOMAIN where the name is missing', async () => {
    const existing = parseMessage(await udpExchange(port, queryMessage('srv.big.test', WIRE_TYPE.SRV)));
    expect(existing.header.rcode).toBe(0);
    expect(existing.answers).toEqual([]);
    const missing = parseMessage(await udpExchange(port, queryMessage('nosrv.big.test', WIRE_TYPE.SRV)));
    expect(missing.header.rcode).toBe(3);
  });

  it('refuses classes other than IN', async () => {
    const reply = parseMessage(await udpExchange(port, queryMessage('example.com', WIRE_TYPE.TXT, { cls: 3 })));
    expect(reply.header.rcode).toBe(5);
  });

  it('answers FORMERR to a message with two questions', async () => {
    const reply = parseMessage(await udpExchange(port, queryMessage('example.com', WIRE_TYPE.TXT, { extraQuestion: true })));
    expect(reply.header.rcode).toBe(1);
  });

  it('answers BADVERS to an EDNS version it does not know (RFC 6891 §6.1.3)', async () => {
    const reply = parseMessage(await udpExchange(port, queryMessage('example.com', WIRE_TYPE.TXT, { edns: 1232, ednsVersion: 1 })));
    expect(reply.header.rcode).toBe(16);
    expect(reply.additionals).toMatchObject([{ type: WIRE_TYPE.OPT }]);
  });

  it('answers the same over TCP as over UDP', async () => {
    const overUdp = await udpExchange(port, queryMessage('example.com', WIRE_TYPE.MX));
    const overTcp = await tcpExchange(port, queryMessage('example.com', WIRE_TYPE.MX));
    expect(overTcp.equals(overUdp)).toBe(true);
  });
});

describe('embedded DNS server: UDP size and truncation', () => {
  it('truncates an answer over 512 octets when the query has no EDNS (RFC 1035 §4.2.1)', async () => {
    const bytes = await udpExchange(port, queryMessage('medium.big.test', WIRE_TYPE.TXT));
    const reply = parseMessage(bytes);
    expect(bytes.length).toBeLessThanOrEqual(CLASSIC_UDP_PAYLOAD);
    expect(reply.header.tc).toBe(1);
    expect(reply.answers).toEqual([]);
    expect(reply.questions).toMatchObject([{ name: 'medium.big.test', type: WIRE_TYPE.TXT }]);
  });

  it('gives the full answer over TCP', async () => {
    const reply = parseMessage(await tcpExchange(port, queryMessage('large.big.test', WIRE_TYPE.TXT)));
    expect(reply.header.tc).toBe(0);
    expect(reply.answers.map((a) => (a.data as string[]).join(''))).toEqual(LARGE);
  });

  it('honours the EDNS payload size: 700 octets fit when the client allows 4096', async () => {
    const bytes = await udpExchange(port, queryMessage('medium.big.test', WIRE_TYPE.TXT, { edns: 4096 }));
    const reply = parseMessage(bytes);
    expect(bytes.length).toBeGreaterThan(CLASSIC_UDP_PAYLOAD);
    expect(reply.header.tc).toBe(0);
    expect(reply.answers).toHaveLength(MEDIUM.length);
    expect(reply.additionals).toMatchObject([{ type: WIRE_TYPE.OPT, class: SERVER_UDP_PAYLOAD }]);
  });

  it(`caps UDP answers at its own ${SERVER_UDP_PAYLOAD} octets whatever the client allows`, async () => {
    const bytes = await udpExchange(port, queryMessage('large.big.test', WIRE_TYPE.TXT, { edns: 65_000 }));
    expect(bytes.length).toBeLessThanOrEqual(SERVER_UDP_PAYLOAD);
    expect(parseMessage(bytes).header.tc).toBe(1);
  });

  it('treats an EDNS size under 512 as 512 (RFC 6891 §6.2.5)', async () => {
    const small = parseMessage(await udpExchange(port, queryMessage('example.com', WIRE_TYPE.TXT, { edns: 100 })));
    expect(small.header.tc).toBe(0);
    expect(small.answers).toHaveLength(2);
  });
});

describe('embedded DNS server: life cycle', () => {
  it('closes while a TCP client waits on a dropped query', async () => {
    const own = await startDnsServer({ resolver: new ZoneResolver(ZONES), faults: [{ name: 'example.com', fault: { kind: 'drop' } }] });
    const waiting = tcpExchange(own.address.port, queryMessage('example.com', WIRE_TYPE.TXT), 5000).catch((error: Error) => error);
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    await own.close();
    const outcome = await waiting;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toMatch(/closed the connection/);
  });

  it('refuses to start on a port already taken', async () => {
    await expect(startDnsServer({ resolver: new ZoneResolver(ZONES), port })).rejects.toThrow(/EADDRINUSE/);
  });

  it('refuses to start when only the TCP side of the port is taken, and releases the UDP side', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as net.AddressInfo).port;
    try {
      await expect(startDnsServer({ resolver: new ZoneResolver(ZONES), port: taken })).rejects.toThrow(/EADDRINUSE/);
      const udp = dgram.createSocket('udp4');
      await new Promise<void>((resolve, reject) => {
        udp.once('error', reject);
        udp.bind(taken, '127.0.0.1', resolve);
      });
      udp.close();
    } finally {
      blocker.close();
    }
  });

  it('listens on IPv6 loopback too', async () => {
    const own = await startDnsServer({ resolver: new ZoneResolver(ZONES), host: '::1' });
    try {
      const reply = parseMessage(await udpExchange(own.address.port, queryMessage('mx1.example.com', WIRE_TYPE.AAAA), 2000, '::1'));
      expect(reply.answers).toMatchObject([{ address: '2001:db8::1' }]);
      const overTcp = parseMessage(await tcpExchange(own.address.port, queryMessage('mx1.example.com', WIRE_TYPE.A), 2000, '::1'));
      expect(overTcp.answers).toMatchObject([{ address: '192.0.2.1' }]);
    } finally {
      await own.close();
    }
  });

  it('counts the queries it receives per transport', async () => {
    const before = server.stats();
    await udpExchange(port, queryMessage('example.com', WIRE_TYPE.NS));
    await tcpExchange(port, queryMessage('example.com', WIRE_TYPE.NS));
    expect(server.stats()).toEqual({ udp: before.udp + 1, tcp: before.tcp + 1 });
  });
});
