/**
 * The network resolver's own rules: server addresses, unreachable servers, TCP fallback for big
 * answers, TXT text decoding. The answers themselves are covered by resolver-contract.test.ts.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  DNS_PORT,
  EDNS_UDP_PAYLOAD,
  NetworkResolver,
  parseServerAddress,
  TCP_CONNECTIONS_PER_SERVER,
  UDP_SOCKET_MAX_QUERIES,
  UDP_SOCKETS_PER_SERVER,
  type ServerAddress,
} from '../../src/dns/network-resolver.js';
import type { RecordType } from '../../src/dns/types.js';
import { textOfOctets } from '../../src/dns/wire.js';
import { startDnsServer, type RunningDnsServer } from '../../src/zones/server.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import type { Zone } from '../../src/zones/types.js';
import { parseMessage, SOA_COM, ZONES, type DecodedMessage } from './helpers.js';

/** 20 TXT records of 200 octets: about 4 KB, more than any UDP limit the server uses. */
const BIG = Array.from({ length: 20 }, (_, i) => `big record ${String(i).padStart(2, '0')} `.padEnd(200, 'z'));
const BIG_ZONE: Zone = {
  origin: 'big.test',
  records: [
    { name: 'big.test', type: 'SOA', ttl: 3600, data: { ...SOA_COM, mname: 'ns.big.test' } },
    ...BIG.map((text) => ({ name: 'big.test', type: 'TXT' as const, ttl: 300, data: [text] })),
  ],
};

/** A UDP port on loopback with nothing listening (bound, then released). */
async function closedPort(): Promise<number> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

describe('parseServerAddress', () => {
  it.each([
    ['192.0.2.1', { host: '192.0.2.1', port: DNS_PORT }, 'IPv4 without a port: 53'],
    ['192.0.2.1:5353', { host: '192.0.2.1', port: 5353 }, 'IPv4 with a port'],
    ['::1', { host: '::1', port: DNS_PORT }, 'bare IPv6'],
    ['[::1]', { host: '::1', port: DNS_PORT }, 'bracketed IPv6 without a port'],
    ['[2001:db8::53]:8053', { host: '2001:db8::53', port: 8053 }, 'bracketed IPv6 with a port'],
    [' 127.0.0.1:53 ', { host: '127.0.0.1', port: 53 }, 'surrounding spaces are ignored'],
    ['2001:db8::1:53', { host: '2001:db8::1:53', port: DNS_PORT }, 'without brackets the last group belongs to the address'],
  ] as [string, ServerAddress, string][])('%s → %j (%s)', (text, expected) => {
    expect(parseServerAddress(text)).toEqual(expected);
  });

  it.each([
    ['dns.google', 'a host name: servers are addresses'],
    ['192.0.2.1:0', 'port 0'],
    ['192.0.2.1:65536', 'port over 65535'],
    ['192.0.2.1:fifty', 'port not a number'],
    ['[192.0.2.1]:53', 'brackets around IPv4'],
    ['300.1.1.1', 'not an IPv4 address'],
    ['', 'empty'],
  ])('%s is refused (%s)', (text) => {
    expect(parseServerAddress(text)).toHaveProperty('error');
  });

  it('refuses a bad server address when the resolver is made', () => {
    expect(() => new NetworkResolver({ servers: ['dns.google'] })).toThrow(TypeError);
    expect(() => new NetworkResolver({ timeoutMs: 0 })).toThrow(TypeError);
    expect(() => new NetworkResolver({ attempts: 0 })).toThrow(TypeError);
  });
});

describe('textOfOctets (TXT character-strings as text)', () => {
  it.each([
    [Buffer.from('v=spf1 -all'), 'v=spf1 -all', 'ASCII is left alone'],
    [Buffer.from('héllo ✓', 'utf8'), 'héllo ✓', 'valid UTF-8 is decoded as UTF-8'],
    [Buffer.from([0x63, 0x61, 0x66, 0xe9]), 'caf\u00e9', 'a lone Latin-1 octet is not UTF-8: one character per octet'],
    [Buffer.alloc(0), '', 'an empty string stays empty'],
  ])('%j → %j (%s)', (input, expected) => {
    expect(textOfOctets(input)).toBe(expected);
  });
});

describe('NetworkResolver against the embedded server', () => {
  let server: RunningDnsServer;
  beforeAll(async () => {
    server = await startDnsServer({ resolver: new ZoneResolver([...ZONES, BIG_ZONE]) });
  });
  afterAll(async () => {
    await server.close();
  });

  it('gets a 4 KB answer in full: UDP says TC, the client asks again over TCP', async () => {
    const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.address.port}`], timeoutMs: 2000 });
    const before = server.stats();
    const answer = await resolver.resolve('big.test', 'TXT');
    expect(answer.kind === 'records' && answer.records.map((strings) => strings.join(''))).toEqual(BIG);
    const after = server.stats();
    expect(after.udp - before.udp).toBe(1);
    expect(after.tcp - before.tcp).toBe(1);
  });

  it('reaches a server given as [::1]:port', async () => {
    const v6 = await startDnsServer({ resolver: new ZoneResolver(ZONES), host: '::1' });
    try {
      const resolver = new NetworkResolver({ servers: [`[::1]:${v6.address.port}`], timeoutMs: 2000 });
      expect(resolver.servers()).toEqual([`[::1]:${v6.address.port}`]);
      expect(await resolver.resolve('mx1.example.com', 'A')).toMatchObject({ kind: 'records', records: ['192.0.2.1'] });
    } finally {
      await v6.close();
    }
  });

  it('moves on to the next server when the first is unreachable', async () => {
    const resolver = new NetworkResolver({ servers: [`127.0.0.1:${await closedPort()}`, `127.0.0.1:${server.address.port}`], timeoutMs: 2000 });
    expect(await resolver.resolve('mx1.example.com', 'A')).toMatchObject({ kind: 'records', records: ['192.0.2.1'] });
  });

  it('asks the servers it is given, not the system resolvers', async () => {
    const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.address.port}`] });
    expect(resolver.servers()).toEqual([`127.0.0.1:${server.address.port}`]);
  });
});

describe('NetworkResolver with nobody listening', () => {
  it('answers servfail (naming the dead server) or timeout, never NXDOMAIN, NODATA or the DNS REFUSED, within the timeout', async () => {
    const resolver = new NetworkResolver({ servers: [`127.0.0.1:${await closedPort()}`], timeoutMs: 500, attempts: 2 });
    const started = Date.now();
    const answer = await resolver.resolve('example.com', 'TXT');
    expect(answer.kind).toBe('error');
    expect(['servfail', 'timeout']).toContain(answer.kind === 'error' ? answer.reason : answer.kind);
    if (answer.kind === 'error' && answer.reason === 'servfail') expect(answer.detail).toMatch(/the DNS server 127\.0\.0\.1:\d+ cannot be reached: no DNS server listens there/);
    expect(Date.now() - started).toBeLessThan(500 + 300);
  });
});

/** What a scripted server does with one query: the replies to send (in order), or none. */
type Script = (query: DecodedMessage, raw: Buffer, transport: 'udp' | 'tcp') => Buffer[];

interface ScriptedServer {
  port: number;
  queries: { transport: 'udp' | 'tcp'; query: DecodedMessage; sourcePort: number }[];
  close(): Promise<void>;
}

/**
 * A DNS server on UDP (and TCP unless `tcp` is false) that answers as `script` says, for the client
 * rules the embedded server cannot break on purpose: wrong ids, wrong questions, odd RDATA.
 */
async function scriptedServer(script: Script, options: { tcp?: boolean; delayMs?: number } = {}): Promise<ScriptedServer> {
  // UDP takes a free port; TCP may find that same number taken (another test's socket): then both
  // start again on another port, as startDnsServer does.
  for (let attempt = 1; ; attempt++) {
    try {
      return await scriptedServerOnce(script, options);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= SCRIPTED_PORT_ATTEMPTS) throw error;
    }
  }
}

/** How many free UDP ports a scripted server tries before giving up on finding TCP free as well. */
const SCRIPTED_PORT_ATTEMPTS = 20;

async function scriptedServerOnce(script: Script, options: { tcp?: boolean; delayMs?: number }): Promise<ScriptedServer> {
  const udp = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
  const { port } = udp.address();
  const queries: ScriptedServer['queries'] = [];
  const timers = new Set<NodeJS.Timeout>();
  udp.on('message', (raw, peer) => {
    const query = parseMessage(raw);
    queries.push({ transport: 'udp', query, sourcePort: peer.port });
    const replies = script(query, raw, 'udp');
    const send = () => {
      for (const reply of replies) udp.send(reply, peer.port, peer.address);
    };
    if (options.delayMs) timers.add(setTimeout(send, options.delayMs));
    else send();
  });
  const sockets = new Set<net.Socket>();
  const tcp = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    // RFC 7766 §6.2.1: several length-prefixed queries per connection, each answered in turn; a
    // query the script gives no reply closes the connection.
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const raw = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
        buffered = buffered.subarray(2 + raw.length);
        const query = parseMessage(raw);
        queries.push({ transport: 'tcp', query, sourcePort: socket.remotePort ?? 0 });
        const replies = script(query, raw, 'tcp');
        if (replies.length === 0) {
          socket.destroy();
          return;
        }
        for (const reply of replies) {
          const prefix = Buffer.alloc(2);
          prefix.writeUInt16BE(reply.length);
          socket.write(Buffer.concat([prefix, reply]));
        }
      }
    });
  });
  if (options.tcp !== false) {
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(port, '127.0.0.1', () => {
          tcp.off('error', reject);
          resolve();
        });
      });
    } catch (error) {
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      throw error;
    }
  }
  return {
    port,
    queries,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      if (tcp.listening) await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}

type PacketAnswer = NonNullable<Parameters<typeof dnsPacket.encode>[0]['answers']>[number];

/** A response to `query` built with dns-packet; `change` may alter any field before encoding. */
function reply(
  query: DecodedMessage,
  sections: { answers?: PacketAnswer[]; authorities?: PacketAnswer[]; rcode?: number; tc?: boolean; opt?: boolean },
  change: (packet: { id: number; name: string; type: string; class: string }) => void = () => {},
): Buffer {
  const question = query.questions[0]!;
  const fields = { id: query.id, name: question.name, type: question.type, class: question.class };
  change(fields);
  const flags = (sections.rcode ?? 0) | (sections.tc ? dnsPacket.TRUNCATED_RESPONSE : 0) | dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE;
  return dnsPacket.encode({
    id: fields.id,
    type: 'response',
    flags,
    questions: [{ name: fields.name, type: fields.type as 'A', class: fields.class as 'IN' }],
    answers: sections.answers ?? [],
    authorities: sections.authorities ?? [],
    additionals: sections.opt === false ? [] : [],
  });
}

const SOA_RECORD = (ttl: number, minimum: number): PacketAnswer => ({
  name: 'scripted.test',
  type: 'SOA',
  ttl,
  data: { mname: 'ns.scripted.test', rname: 'hostmaster.scripted.test', serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum },
});
const A_RECORD = (ttl = 77): PacketAnswer => ({ name: 'www.scripted.test', type: 'A', ttl, data: '192.0.2.7' });

/** Scheduling slack on a machine shared by many test runs. */
const SLACK_MS = 250;

describe('NetworkResolver: what it sends', () => {
  it('asks with RD, EDNS0 advertising 1232 octets, a random ID, and source ports that vary from query to query', async () => {
    const server = await scriptedServer((query) => [reply(query, { answers: [A_RECORD()] })]);
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 1000, attempts: 1 });
      for (let i = 0; i < 20; i++) expect((await resolver.resolve('www.scripted.test', 'A')).kind).toBe('records');
      expect(server.queries).toHaveLength(20);
      for (const { query } of server.queries) {
        expect(query.flag_rd).toBe(true);
        expect(query.additionals).toMatchObject([{ type: 'OPT', udpPayloadSize: EDNS_UDP_PAYLOAD }]);
        expect(query.questions).toMatchObject([{ name: 'www.scripted.test', type: 'A', class: 'IN' }]);
      }
      // 20 draws from 65536 IDs collide rarely; 15 distinct is lenient.
      expect(new Set(server.queries.map(({ query }) => query.id)).size).toBeGreaterThanOrEqual(15);
      // RFC 5452 §9.2: the source port adds entropy to the ID. Queries go out over a pool of up to
      // UDP_SOCKETS_PER_SERVER sockets, each on its own random port, taken in turn: the ports vary
      // (consecutive queries never share one) rather than being new for every query.
      const ports = server.queries.map(({ sourcePort }) => sourcePort);
      expect(new Set(ports).size).toBeGreaterThanOrEqual(Math.min(15, UDP_SOCKETS_PER_SERVER));
      for (let i = 1; i < ports.length; i++) expect(ports[i]).not.toBe(ports[i - 1]);
    } finally {
      await server.close();
    }
  });

  it('asks again without EDNS when the server answers FORMERR without an OPT record (RFC 6891 §7)', async () => {
    const server = await scriptedServer((query) =>
      query.additionals.length > 0 ? [reply(query, { rcode: 1 })] : [reply(query, { answers: [A_RECORD()] })],
    );
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 1000, attempts: 1 });
      expect(await resolver.resolve('www.scripted.test', 'A')).toMatchObject({ kind: 'records', records: ['192.0.2.7'] });
      expect(server.queries.map(({ query }) => query.additionals.length)).toEqual([1, 0]);
    } finally {
      await server.close();
    }
  });
});

describe('NetworkResolver: many queries in flight over the socket pool', () => {
  it('answers 200 concurrent queries, each with its own answer, when replies come back out of order', async () => {
    const server = await scriptedServer((query) => {
      const name = query.questions[0]!.name;
      const index = Number(/^q(\d+)\./.exec(name)![1]);
      return [reply(query, { answers: [{ name, type: 'A', ttl: 60, data: `192.0.2.${index % 250}` }] })];
    }, { delayMs: 20 });
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 2000, attempts: 1 });
      const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => resolver.resolve(`q${i}.scripted.test`, 'A')));
      answers.forEach((answer, i) => expect(answer).toMatchObject({ kind: 'records', records: [`192.0.2.${i % 250}`] }));
      const ports = new Set(server.queries.map(({ sourcePort }) => sourcePort));
      expect(ports.size).toBeGreaterThan(1);
      expect(ports.size).toBeLessThanOrEqual(UDP_SOCKETS_PER_SERVER);
      // On any one socket, the IDs in flight differ (RFC 5452 §9.1: id + source port + question).
      const pairs = server.queries.map(({ sourcePort, query }) => `${sourcePort}/${query.id}`);
      expect(new Set(pairs).size).toBe(pairs.length);
      resolver.close();
    } finally {
      await server.close();
    }
  });

  it(`retires each socket after ${UDP_SOCKET_MAX_QUERIES} queries for a fresh one on a new random port (RFC 5452 §9.2)`, async () => {
    const server = await scriptedServer((query) => [reply(query, { answers: [A_RECORD()] })]);
    const created = vi.spyOn(dgram, 'createSocket');
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 2000, attempts: 1 });
      const total = UDP_SOCKETS_PER_SERVER * UDP_SOCKET_MAX_QUERIES * 2;
      const batch = 64;
      for (let sent = 0; sent < total; sent += batch) {
        const answers = await Promise.all(Array.from({ length: batch }, () => resolver.resolve('www.scripted.test', 'A')));
        expect(answers.every((answer) => answer.kind === 'records')).toBe(true);
      }
      expect(server.queries).toHaveLength(total);
      // Taken in turn, each socket carries exactly its share and is then replaced: two generations.
      expect(created.mock.calls.length).toBe(total / UDP_SOCKET_MAX_QUERIES);
      // The replacements are on other ports than the ones they replaced.
      expect(new Set(server.queries.map(({ sourcePort }) => sourcePort)).size).toBeGreaterThan(UDP_SOCKETS_PER_SERVER);
      resolver.close();
    } finally {
      created.mockRestore();
      await server.close();
    }
  });

  it('close() ends the queries in flight on a socket already retired, too', async () => {
    const server = await scriptedServer(() => []); // never answers
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 60_000, attempts: 1 });
      // One more query than the sockets carry: the first socket is retired with its queries in flight.
      const answers = Array.from({ length: UDP_SOCKETS_PER_SERVER * UDP_SOCKET_MAX_QUERIES + 1 }, (_, i) => resolver.resolve(`q${i}.scripted.test`, 'A'));
      resolver.close();
      const settled = await Promise.all(answers);
      expect(settled.every((answer) => answer.kind === 'error' && answer.reason === 'servfail')).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('keeps working after close(): sockets are made again when needed', async () => {
    const server = await scriptedServer((query) => [reply(query, { answers: [A_RECORD()] })]);
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 1000, attempts: 1 });
      expect((await resolver.resolve('www.scripted.test', 'A')).kind).toBe('records');
      resolver.close();
      expect((await resolver.resolve('www.scripted.test', 'A')).kind).toBe('records');
      resolver.close();
    } finally {
      await server.close();
    }
  });
});

describe('NetworkResolver: names it will not send', () => {
  it.each([
    ['a..example.com', 'an empty label'],
    [`${'é'.repeat(40)}.example`, 'a label of 40 characters but 80 octets in UTF-8'],
    [`${'é'.repeat(30)}.`.repeat(5) + 'example', 'a name over 255 octets in UTF-8'],
  ])('answers invalid-name for %s (%s) without sending anything', async (name) => {
    const server = await scriptedServer((query) => [reply(query, { answers: [A_RECORD()] })]);
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 500, attempts: 1 });
      expect(await resolver.resolve(name, 'A')).toMatchObject({ kind: 'error', reason: 'invalid-name' });
      expect(server.queries).toHaveLength(0);
    } finally {
      await server.close();
    }
  });
});

describe('NetworkResolver: a reply must answer the question (RFC 5452 §4.3)', () => {
  it.each([
    ['another ID', (p: { id: number }) => void (p.id = (p.id + 1) & 0xffff)],
    ['another name', (p: { name: string }) => void (p.name = 'evil.scripted.test')],
    ['another type', (p: { type: string }) => void (p.type = 'AAAA')],
    ['another class', (p: { class: string }) => void (p.class = 'CH')],
  ] as [string, (p: { id: number; name: string; type: string; class: string }) => void][])(
    'ignores a reply with %s and takes the right one that follows',
    async (_label, change) => {
      const forged = { name: 'www.scripted.test', type: 'A' as const, ttl: 300, data: '203.0.113.66' };
      const server = await scriptedServer((query) => [reply(query, { answers: [forged] }, change), reply(query, { answers: [A_RECORD()] })]);
      try {
        const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 1000, attempts: 1 });
        expect(await resolver.resolve('www.scripted.test', 'A')).toMatchObject({ kind: 'records', records: ['192.0.2.7'] });
      } finally {
        await server.close();
      }
    },
  );

  it('times out when only mismatched replies come: they are never taken', async () => {
    const server = await scriptedServer((query) => [reply(query, { answers: [A_RECORD()] }, (p) => void (p.id = (p.id + 1) & 0xffff))]);
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 150, attempts: 2 });
      expect(await resolver.resolve('www.scripted.test', 'A')).toMatchObject({ kind: 'error', reason: 'timeout' });
      expect(server.queries).toHaveLength(2);
    } finally {
      await server.close();
    }
  });

  it('takes a reply whose name differs only in case (DNS names are case-insensitive)', async () => {
    const server = await scriptedServer((query) => [reply(query, { answers: [{ ...A_RECORD(), name: 'WWW.Scripted.TEST' }] }, (p) => void (p.name = 'WWW.Scripted.TEST'))]);
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 1000, attempts: 1 });
      expect(await resolver.resolve('www.scripted.test', 'A')).toMatchObject({ kind: 'records', records: ['192.0.2.7'] });
    } finally {
      await server.close();
    }
  });
});

describe('NetworkResolver: what an answer means', () => {
  it.each([
    ['records: the smallest TTL of the RRset', { answers: [A_RECORD(300), { ...A_RECORD(40), data: '192.0.2.8' }] }, { kind: 'records', ttl: 40 }],
    ['NXDOMAIN: min(SOA TTL, MINIMUM) (RFC 2308 §5)', { rcode: 3, authorities: [SOA_RECORD(3600, 90)] }, { kind: 'nxdomain', ttl: 90 }],
    ['NODATA: min(SOA TTL, MINIMUM)', { authorities: [SOA_RECORD(45, 600)] }, { kind: 'nodata', ttl: 45 }],
    ['NODATA without an SOA: TTL 0, not cached (RFC 2308 §5)', {}, { kind: 'nodata', ttl: 0 }],
    ['NXDOMAIN without an SOA: TTL 0', { rcode: 3 }, { kind: 'nxdomain', ttl: 0 }],
    ['records of another owner do not count (RFC 2181 §5.4.1)', { answers: [{ ...A_RECORD(), name: 'other.scripted.test' }], authorities: [SOA_RECORD(60, 60)] }, { kind: 'nodata', ttl: 60 }],
    ['SERVFAIL', { rcode: 2 }, { kind: 'error', reason: 'servfail' }],
    ['REFUSED', { rcode: 5 }, { kind: 'error', reason: 'refused' }],
    ['NOTIMP', { rcode: 4 }, { kind: 'error', reason: 'refused' }],
  ] as [string, Parameters<typeof reply>[1], object][])('%s', async (_label, sections, expected) => {
    const server = await scriptedServer((query) => [reply(query, sections)]);
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 1000, attempts: 1 });
      expect(await resolver.resolve('www.scripted.test', 'A')).toMatchObject(expected);
    } finally {
      await server.close();
    }
  });

  it.each([
    ['A RDATA of 5 octets', (rdata: Buffer) => Buffer.concat([rdata, Buffer.from([9])]), 'A'],
    ['A RDATA of 3 octets', (rdata: Buffer) => rdata.subarray(0, 3), 'A'],
    ['TXT character-string longer than its RDATA', () => Buffer.from([10, 0x61, 0x62]), 'TXT'],
    ['MX with a name that runs past its RDATA', () => Buffer.from([0, 10, 5, 0x61]), 'MX'],
  ] as [string, (rdata: Buffer) => Buffer, RecordType][])('reads %s as error: malformed, never as records', async (_label, mangle, type) => {
    const server = await scriptedServer((query) => {
      const head = reply(query, {});
      head.writeUInt16BE(1, 6); // ANCOUNT 1
      const rdata = mangle(Buffer.from([192, 0, 2, 7]));
      const record = Buffer.alloc(12);
      record.writeUInt16BE(0xc00c, 0);
      record.writeUInt16BE(type === 'A' ? 1 : type === 'TXT' ? 16 : 15, 2);
      record.writeUInt16BE(1, 4);
      record.writeUInt32BE(60, 6);
      record.writeUInt16BE(rdata.length, 10);
      return [Buffer.concat([head, record, rdata])];
    });
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 1000, attempts: 1 });
      expect(await resolver.resolve('www.scripted.test', type)).toMatchObject({ kind: 'error', reason: 'malformed' });
    } finally {
      await server.close();
    }
  });

  it('asks for the rest of a CNAME chain the server left unfinished (RFC 1034 §5.3.3)', async () => {
    const server = await scriptedServer((query) =>
      query.questions[0]!.name === 'www.scripted.test'
        ? [reply(query, { answers: [{ name: 'www.scripted.test', type: 'CNAME', ttl: 50, data: 'cdn.elsewhere.test' }] })]
        : [reply(query, { answers: [{ name: 'cdn.elsewhere.test', type: 'A', ttl: 500, data: '198.51.100.9' }] })],
    );
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 1000, attempts: 1 });
      expect(await resolver.resolve('www.scripted.test', 'A')).toEqual({ kind: 'records', records: ['198.51.100.9'], ttl: 50, cnames: ['cdn.elsewhere.test'] });
      expect(server.queries.map(({ query }) => query.questions[0]!.name)).toEqual(['www.scripted.test', 'cdn.elsewhere.test']);
    } finally {
      await server.close();
    }
  });

  it('reports a CNAME loop as servfail', async () => {
    const server = await scriptedServer((query) => [
      reply(query, {
        answers: [
          { name: 'www.scripted.test', type: 'CNAME', ttl: 50, data: 'b.scripted.test' },
          { name: 'b.scripted.test', type: 'CNAME', ttl: 50, data: 'www.scripted.test' },
        ],
      }),
    ]);
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 1000, attempts: 1 });
      expect(await resolver.resolve('www.scripted.test', 'A')).toMatchObject({ kind: 'error', reason: 'servfail' });
    } finally {
      await server.close();
    }
  });
});

describe('NetworkResolver: truncation', () => {
  it('asks again over TCP and takes the full answer', async () => {
    const server = await scriptedServer((query, _raw, transport) => [transport === 'udp' ? reply(query, { tc: true }) : reply(query, { answers: [A_RECORD()] })]);
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 1000, attempts: 1 });
      expect(await resolver.resolve('www.scripted.test', 'A')).toMatchObject({ kind: 'records', records: ['192.0.2.7'] });
      expect(server.queries.map(({ transport }) => transport)).toEqual(['udp', 'tcp']);
    } finally {
      await server.close();
    }
  });

  it.each([
    ['truncated again over TCP', { tcp: true }, (query: DecodedMessage) => [reply(query, { tc: true })], 'malformed'],
    ['the TCP connection closed without an answer', { tcp: true }, () => [], 'servfail'],
    ['nothing listening on TCP', { tcp: false }, () => [], 'refused'],
  ] as [string, { tcp: boolean }, (query: DecodedMessage) => Buffer[], string][])(
    'is an error, never "no record", when the TCP retry fails: %s',
    async (_label, options, overTcp, reason) => {
      const server = await scriptedServer((query, _raw, transport) => (transport === 'udp' ? [reply(query, { tc: true })] : overTcp(query)), options);
      try {
        const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 500, attempts: 1 });
        expect(await resolver.resolve('www.scripted.test', 'A')).toMatchObject({ kind: 'error', reason });
      } finally {
        await server.close();
      }
    },
  );
});

describe('NetworkResolver: TCP connections are reused (RFC 7766 §6.2.1)', () => {
  /** Every UDP answer truncated; over TCP, the answer for the name asked. */
  const truncatingScript: Script = (query, _raw, transport) => {
    const name = query.questions[0]!.name;
    return [transport === 'udp' ? reply(query, { tc: true }) : reply(query, { answers: [{ name, type: 'A', ttl: 60, data: '192.0.2.7' }] })];
  };

  it('pipelines truncated retries over at most TCP_CONNECTIONS_PER_SERVER connections, one after another and at once', async () => {
    const server = await scriptedServer(truncatingScript);
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 1000, attempts: 1 });
      for (let i = 0; i < 3; i++) expect(await resolver.resolve(`s${i}.scripted.test`, 'A')).toMatchObject({ kind: 'records', records: ['192.0.2.7'] });
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => resolver.resolve(`c${i}.scripted.test`, 'A')));
      for (const answer of answers) expect(answer).toMatchObject({ kind: 'records', records: ['192.0.2.7'] });
      const overTcp = server.queries.filter(({ transport }) => transport === 'tcp');
      expect(overTcp).toHaveLength(23);
      // The first three went one after another: one connection, kept open between them.
      expect(new Set(overTcp.slice(0, 3).map(({ sourcePort }) => sourcePort)).size).toBe(1);
      expect(new Set(overTcp.map(({ sourcePort }) => sourcePort)).size).toBeLessThanOrEqual(TCP_CONNECTIONS_PER_SERVER);
      resolver.close();
    } finally {
      await server.close();
    }
  });

  it('a connection the server closes fails only the queries in flight on it, which the next attempt answers', async () => {
    let tcpQueries = 0;
    const server = await scriptedServer((query, raw, transport) => {
      if (transport === 'tcp' && ++tcpQueries === 2) return []; // the second TCP query: the server drops the connection
      return truncatingScript(query, raw, transport);
    });
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 1000, attempts: 2 });
      expect(await resolver.resolve('first.scripted.test', 'A')).toMatchObject({ kind: 'records' });
      expect(await resolver.resolve('second.scripted.test', 'A')).toMatchObject({ kind: 'records', records: ['192.0.2.7'] });
      const overTcp = server.queries.filter(({ transport }) => transport === 'tcp');
      expect(overTcp.map(({ query }) => query.questions[0]!.name)).toEqual(['first.scripted.test', 'second.scripted.test', 'second.scripted.test']);
      expect(overTcp[2]!.sourcePort).not.toBe(overTcp[1]!.sourcePort); // a new connection for the retry
      resolver.close();
    } finally {
      await server.close();
    }
  });

  it('close() closes the idle connections', async () => {
    const server = await scriptedServer(truncatingScript);
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 1000, attempts: 1 });
      expect(await resolver.resolve('www.scripted.test', 'A')).toMatchObject({ kind: 'records' });
      resolver.close();
      expect(await resolver.resolve('www.scripted.test', 'A')).toMatchObject({ kind: 'records' });
      const ports = server.queries.filter(({ transport }) => transport === 'tcp').map(({ sourcePort }) => sourcePort);
      expect(ports[1]).not.toBe(ports[0]);
      resolver.close();
    } finally {
      await server.close();
    }
  });
});

describe('NetworkResolver: timeout and attempts, exactly as configured', () => {
  it.each([
    [150, 1],
    [150, 3],
    [400, 2],
  ])('a server that never answers: %i ms × %i attempts, then timeout', async (timeoutMs, attempts) => {
    const server = await scriptedServer(() => []);
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs, attempts });
      const started = Date.now();
      expect(await resolver.resolve('www.scripted.test', 'A')).toMatchObject({ kind: 'error', reason: 'timeout' });
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(timeoutMs * attempts - 5);
      expect(elapsed).toBeLessThan(timeoutMs * attempts + SLACK_MS);
      expect(server.queries).toHaveLength(attempts);
    } finally {
      await server.close();
    }
  });

  it('waits as long as told: an answer 2.3 s late is taken with a 3 s timeout (c-ares gave up near 2 s)', async () => {
    const server = await scriptedServer((query) => [reply(query, { answers: [A_RECORD()] })], { delayMs: 2300 });
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 3000, attempts: 1 });
      const started = Date.now();
      expect(await resolver.resolve('www.scripted.test', 'A')).toMatchObject({ kind: 'records', records: ['192.0.2.7'] });
      expect(Date.now() - started).toBeGreaterThanOrEqual(2290);
      expect(server.queries).toHaveLength(1);
    } finally {
      await server.close();
    }
  }, 10_000);

  it('goes through the servers in turn: each attempt to the next, one query each', async () => {
    const first = await scriptedServer(() => []);
    const second = await scriptedServer(() => []);
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${first.port}`, `127.0.0.1:${second.port}`], timeoutMs: 100, attempts: 2 });
      expect(await resolver.resolve('www.scripted.test', 'A')).toMatchObject({ kind: 'error', reason: 'timeout' });
      expect([first.queries.length, second.queries.length]).toEqual([1, 1]);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('takes the next server after a SERVFAIL when there is one', async () => {
    const failing = await scriptedServer((query) => [reply(query, { rcode: 2 })]);
    const working = await scriptedServer((query) => [reply(query, { answers: [A_RECORD()] })]);
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${failing.port}`, `127.0.0.1:${working.port}`], timeoutMs: 500, attempts: 2 });
      const answers = [await resolver.resolve('www.scripted.test', 'A'), await resolver.resolve('www.scripted.test', 'A')];
      for (const answer of answers) expect(answer).toMatchObject({ kind: 'records', records: ['192.0.2.7'] });
    } finally {
      await failing.close();
      await working.close();
    }
  });
});
