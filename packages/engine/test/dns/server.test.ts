/**
 * The embedded server on the wire: raw queries (encoded by hand) over UDP and TCP, answers read back
 * with dns-packet's whole-message decoder. What an authoritative server owes a client: flags,
 * sections, TTLs from the zone, SOA in negative answers, REFUSED outside its zones, ANY per
 * RFC 8482, truncation against the client's buffer.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLASSIC_UDP_PAYLOAD,
  MAX_CHARACTER_STRING_OCTETS,
  SERVER_UDP_PAYLOAD,
  splitCharacterStrings,
  SYNTHETIC_ROOT_SOA,
  startDnsServer,
  type RunningDnsServer,
} from '../../src/zones/server.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import type { Zone } from '../../src/zones/types.js';
import { parseMessage, queryMessage, SOA_COM, tcpExchange, udpExchange, WIRE_TYPE, ZONES, type DecodedMessage } from './helpers.js';

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
    { name: 'out.big.test', type: 'CNAME', ttl: 300, data: 'www.elsewhere.test' },
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

type Decoded = DecodedMessage;
const ask = async (name: string, type: number, options: Parameters<typeof queryMessage>[2] = {}): Promise<Decoded> =>
  parseMessage(await udpExchange(port, queryMessage(name, type, options)));
const rrs = (records: Decoded['answers']) => records.map((record) => ({ name: record.name, type: record.type, ttl: record.ttl }));

describe('embedded DNS server: an authoritative answer', () => {
  it('sets QR and AA, clears RA (it does not recurse), and echoes the id and RD', async () => {
    for (const rd of [true, false]) {
      const reply = await ask('mx1.example.com', WIRE_TYPE.A, { id: 4321, rd });
      expect(reply).toMatchObject({ id: 4321, flag_qr: true, flag_aa: true, flag_ra: false, flag_rd: rd, flag_tc: false, rcode: 'NOERROR' });
      expect(reply.answers).toMatchObject([{ name: 'mx1.example.com', type: 'A', ttl: 120, data: '192.0.2.1' }]);
    }
  });

  it.each([
    ['mx1.example.com', WIRE_TYPE.A, 120],
    ['example.com', WIRE_TYPE.TXT, 300],
    ['example.com', WIRE_TYPE.NS, 3600],
    ['example.com', WIRE_TYPE.SOA, 3600],
    ['target.example.org', WIRE_TYPE.TXT, 60],
    ['1.2.0.192.in-addr.arpa', WIRE_TYPE.PTR, 300],
  ] as [string, number, number][])('gives %s type %i the TTL the zone file says (%i s)', async (name, type, ttl) => {
    const reply = await ask(name, type);
    expect(reply.answers.length).toBeGreaterThan(0);
    for (const record of reply.answers) expect(record).toMatchObject({ ttl });
  });

  it('puts the CNAME chain first in the answer section, each with its own TTL, then the records at its end', async () => {
    const reply = await ask('alias.example.com', WIRE_TYPE.A);
    expect(reply.answers).toMatchObject([
      { name: 'alias.example.com', type: 'CNAME', data: 'target.example.org', ttl: 300 },
      { name: 'target.example.org', type: 'A', data: '198.51.100.7', ttl: 60 },
    ]);
  });

  it.each([
    ['missing.example.com', WIRE_TYPE.TXT, 'NXDOMAIN', 'example.com', 60, 'a name that does not exist: NXDOMAIN'],
    ['example.com', WIRE_TYPE.A, 'NOERROR', 'example.com', 60, 'a name without that type: NODATA'],
    ['sub.example.com', WIRE_TYPE.A, 'NOERROR', 'example.com', 60, 'an empty non-terminal exists: NODATA (RFC 8020 §2)'],
    ['sub.example.com', WIRE_TYPE.TXT, 'NOERROR', 'example.com', 60, 'an empty non-terminal, any type: NODATA'],
    ['x.wild.example.com', WIRE_TYPE.MX, 'NOERROR', 'example.com', 60, 'a wildcard without that type: NODATA'],
    ['nosuch.example.org', WIRE_TYPE.A, 'NXDOMAIN', 'example.org', 120, 'the other zone: its own SOA and MINIMUM'],
    ['9.2.0.192.in-addr.arpa', WIRE_TYPE.PTR, 'NXDOMAIN', '2.0.192.in-addr.arpa', 30, 'MINIMUM below the SOA TTL'],
  ] as [string, number, string, string, number, string][])('%s type %i → %s with the SOA of %s, TTL %i = min(SOA TTL, MINIMUM) (RFC 2308 §3; %s)', async (name, type, rcode, zone, ttl) => {
    const reply = await ask(name, type);
    expect(reply).toMatchObject({ rcode, flag_aa: true });
    expect(reply.answers).toEqual([]);
    expect(reply.authorities).toMatchObject([{ name: zone, type: 'SOA', ttl }]);
  });

  it('takes the SOA from the zone at the end of a CNAME chain (RFC 6604 §3)', async () => {
    const reply = await ask('dangling.example.com', WIRE_TYPE.A);
    expect(reply.rcode).toBe('NXDOMAIN');
    expect(reply.answers).toMatchObject([{ type: 'CNAME', data: 'nothere.example.org' }]);
    expect(reply.authorities).toMatchObject([{ name: 'example.org', type: 'SOA', ttl: 120 }]);
  });

  it.each(['elsewhere.test', 'example.net', 'com'])('REFUSES %s, which lies outside every zone, without AA', async (name) => {
    const reply = await ask(name, WIRE_TYPE.A);
    expect(reply).toMatchObject({ rcode: 'REFUSED', flag_aa: false });
    expect(reply.answers).toEqual([]);
    expect(reply.authorities).toEqual([]);
  });

  it('stops a CNAME chain where it leaves the zones: the CNAME alone, NOERROR, no SOA', async () => {
    const reply = await ask('out.big.test', WIRE_TYPE.TXT);
    expect(reply.rcode).toBe('NOERROR');
    expect(reply.answers).toMatchObject([{ name: 'out.big.test', type: 'CNAME', data: 'www.elsewhere.test' }]);
    expect(reply.authorities).toEqual([]);
  });

  it('owns a wildcard answer by the queried name, in the case it was asked (RFC 4592 §3.3.1)', async () => {
    const reply = await ask('Some.Wild.example.com', WIRE_TYPE.TXT);
    expect(reply.answers).toMatchObject([{ name: 'Some.Wild.example.com', type: 'TXT' }]);
    expect((reply.answers[0] as { data: Buffer[] }).data.map(String)).toEqual(['wildcard']);
    expect(reply.questions).toMatchObject([{ name: 'Some.Wild.example.com' }]);
  });

  it('splits a TXT string longer than 255 octets into character-strings on the wire', async () => {
    const reply = parseMessage(await tcpExchange(port, queryMessage('onestring.big.test', WIRE_TYPE.TXT)));
    const data = (reply.answers[0] as { data: Buffer[] }).data;
    expect(data.map((s) => s.length)).toEqual([255, 255, 90]);
    expect(Buffer.concat(data).toString()).toBe(ONE_LONG_STRING);
  });

  it('answers a type it holds no data of like NODATA, or NXDOMAIN where the name is missing', async () => {
    const existing = await ask('srv.big.test', WIRE_TYPE.SRV);
    expect(existing.rcode).toBe('NOERROR');
    expect(existing.answers).toEqual([]);
    expect(existing.authorities).toMatchObject([{ type: 'SOA' }]);
    expect((await ask('nosrv.big.test', WIRE_TYPE.SRV)).rcode).toBe('NXDOMAIN');
  });
});

describe('embedded DNS server: ANY (RFC 8482)', () => {
  it('answers one RRset of a name that has several, not all of them', async () => {
    const reply = await ask('example.com', WIRE_TYPE.ANY);
    expect(reply.rcode).toBe('NOERROR');
    expect(rrs(reply.answers)).toEqual([{ name: 'example.com', type: 'SOA', ttl: 3600 }]);
  });

  it('answers the CNAME of an alias, without following it', async () => {
    const reply = await ask('alias.example.com', WIRE_TYPE.ANY);
    expect(rrs(reply.answers)).toEqual([{ name: 'alias.example.com', type: 'CNAME', ttl: 300 }]);
  });

  it('answers the one RRset of a name with one type, all its records', async () => {
    const reply = await ask('medium.big.test', WIRE_TYPE.ANY, { edns: 1232 });
    expect(reply.answers).toHaveLength(MEDIUM.length);
    expect(new Set(reply.answers.map((record) => record.type))).toEqual(new Set(['TXT']));
  });

  it.each([
    ['missing.example.com', 'NXDOMAIN'],
    ['sub.example.com', 'NOERROR'],
  ])('answers %s (no RRset at all) %s with the SOA', async (name, rcode) => {
    const reply = await ask(name, WIRE_TYPE.ANY);
    expect(reply.rcode).toBe(rcode);
    expect(reply.answers).toEqual([]);
    expect(reply.authorities).toMatchObject([{ type: 'SOA' }]);
  });
});

describe('embedded DNS server: queries it cannot answer', () => {
  it('refuses classes other than IN', async () => {
    expect((await ask('example.com', WIRE_TYPE.TXT, { cls: 3 })).rcode).toBe('REFUSED');
  });

  it('answers FORMERR to a message with two questions', async () => {
    expect((await ask('example.com', WIRE_TYPE.TXT, { extraQuestion: true })).rcode).toBe('FORMERR');
  });

  it('answers FORMERR, echoing the id, to a header followed by bytes that are not a question', async () => {
    const garbage = Buffer.concat([queryMessage('example.com', WIRE_TYPE.TXT, { id: 777 }).subarray(0, 12), Buffer.from([0x40, 1, 2])]);
    const reply = parseMessage(await udpExchange(port, garbage));
    expect(reply).toMatchObject({ id: 777, rcode: 'FORMERR', flag_qr: true });
  });

  it('never answers a message that is itself a response (RFC 1035 §4.1.1)', async () => {
    await expect(udpExchange(port, queryMessage('example.com', WIRE_TYPE.TXT, { qr: true }), 300)).rejects.toThrow(/no UDP reply/);
  });

  it('answers BADVERS to an EDNS version it does not know (RFC 6891 §6.1.3)', async () => {
    const reply = await ask('example.com', WIRE_TYPE.TXT, { edns: 1232, ednsVersion: 1 });
    // BADVERS is 16: the low 4 bits in the header (0), the high 8 in the OPT record (1).
    expect(reply.rcode).toBe('NOERROR');
    expect(reply.additionals).toMatchObject([{ type: 'OPT', extendedRcode: 1 }]);
  });

  it('answers several queries sent at once on one TCP connection, each in turn (RFC 7766 §6.2.1)', async () => {
    const queries = [queryMessage('example.com', WIRE_TYPE.MX, { id: 1 }), queryMessage('mx1.example.com', WIRE_TYPE.A, { id: 2 })];
    const framed = Buffer.concat(queries.map((query) => Buffer.concat([Buffer.from([0, query.length]), query])));
    const replies = await new Promise<Buffer[]>((resolve, reject) => {
      const socket = net.connect({ port, host: '127.0.0.1' });
      let received = Buffer.alloc(0);
      const found: Buffer[] = [];
      socket.on('error', reject);
      socket.on('data', (chunk) => {
        received = Buffer.concat([received, chunk]);
        while (received.length >= 2 && received.length >= 2 + received.readUInt16BE(0)) {
          found.push(received.subarray(2, 2 + received.readUInt16BE(0)));
          received = received.subarray(2 + received.readUInt16BE(0));
        }
        if (found.length === 2) {
          socket.destroy();
          resolve(found);
        }
      });
      socket.write(framed);
    });
    expect(replies.map((reply) => parseMessage(reply)).map((reply) => [reply.id, reply.answers[0]?.type])).toEqual([
      [1, 'MX'],
      [2, 'A'],
    ]);
  });

  it('answers the same over TCP as over UDP', async () => {
    const overUdp = await udpExchange(port, queryMessage('example.com', WIRE_TYPE.MX));
    const overTcp = await tcpExchange(port, queryMessage('example.com', WIRE_TYPE.MX));
    expect(overTcp.equals(overUdp)).toBe(true);
  });
});

describe("embedded DNS server with outsideZones: 'nxdomain' (the zones are the whole DNS)", () => {
  it('answers NXDOMAIN with the synthesised root SOA for a name outside every zone', async () => {
    const own = await startDnsServer({ resolver: new ZoneResolver(ZONES), outsideZones: 'nxdomain' });
    try {
      const reply = parseMessage(await udpExchange(own.address.port, queryMessage('_dmarc.example', WIRE_TYPE.TXT)));
      expect(reply).toMatchObject({ rcode: 'NXDOMAIN', flag_aa: true });
      expect(reply.authorities).toMatchObject([
        { name: '.', type: 'SOA', ttl: Math.min(SYNTHETIC_ROOT_SOA.ttl, SYNTHETIC_ROOT_SOA.data.minimum) },
      ]);
      // Names inside the zones are answered as always.
      expect(parseMessage(await udpExchange(own.address.port, queryMessage('mx1.example.com', WIRE_TYPE.A))).answers).toHaveLength(1);
    } finally {
      await own.close();
    }
  });
});

describe('embedded DNS server: UDP size and truncation', () => {
  it('truncates an answer over 512 octets when the query has no EDNS (RFC 1035 §4.2.1)', async () => {
    const bytes = await udpExchange(port, queryMessage('medium.big.test', WIRE_TYPE.TXT));
    const reply = parseMessage(bytes);
    expect(bytes.length).toBeLessThanOrEqual(CLASSIC_UDP_PAYLOAD);
    expect(reply.flag_tc).toBe(true);
    expect(reply.answers).toEqual([]);
    expect(reply.questions).toMatchObject([{ name: 'medium.big.test', type: 'TXT' }]);
  });

  it('gives the full answer over TCP', async () => {
    const reply = parseMessage(await tcpExchange(port, queryMessage('large.big.test', WIRE_TYPE.TXT)));
    expect(reply.flag_tc).toBe(false);
    expect(reply.answers.map((a) => Buffer.concat((a as { data: Buffer[] }).data).toString())).toEqual(LARGE);
  });

  it('honours the EDNS payload size: 700 octets fit when the client allows 4096', async () => {
    const bytes = await udpExchange(port, queryMessage('medium.big.test', WIRE_TYPE.TXT, { edns: 4096 }));
    const reply = parseMessage(bytes);
    expect(bytes.length).toBeGreaterThan(CLASSIC_UDP_PAYLOAD);
    expect(reply.flag_tc).toBe(false);
    expect(reply.answers).toHaveLength(MEDIUM.length);
    expect(reply.additionals).toMatchObject([{ type: 'OPT', udpPayloadSize: SERVER_UDP_PAYLOAD }]);
  });

  it(`caps UDP answers at its own ${SERVER_UDP_PAYLOAD} octets whatever the client allows`, async () => {
    const bytes = await udpExchange(port, queryMessage('large.big.test', WIRE_TYPE.TXT, { edns: 65_000 }));
    expect(bytes.length).toBeLessThanOrEqual(SERVER_UDP_PAYLOAD);
    expect(parseMessage(bytes).flag_tc).toBe(true);
  });

  it('treats an EDNS size under 512 as 512 (RFC 6891 §6.2.5)', async () => {
    const small = parseMessage(await udpExchange(port, queryMessage('example.com', WIRE_TYPE.TXT, { edns: 100 })));
    expect(small.flag_tc).toBe(false);
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
      expect(reply.answers).toMatchObject([{ data: '2001:db8::1' }]);
      const overTcp = parseMessage(await tcpExchange(own.address.port, queryMessage('mx1.example.com', WIRE_TYPE.A), 2000, '::1'));
      expect(overTcp.answers).toMatchObject([{ data: '192.0.2.1' }]);
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
