/**
 * The network resolver's own rules: server addresses, unreachable servers, TCP fallback for big
 * answers, TXT text decoding. The answers themselves are covered by resolver-contract.test.ts.
 */
import dgram from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DNS_PORT, NetworkResolver, parseServerAddress, utf8FromLatin1, type ServerAddress } from '../../src/dns/network-resolver.js';
import { startDnsServer, type RunningDnsServer } from '../../src/dns/server.js';
import { ZoneResolver } from '../../src/dns/zone-resolver.js';
import type { Zone } from '../../src/zones/types.js';
import { SOA_COM, ZONES } from './helpers.js';

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

describe('utf8FromLatin1', () => {
  it.each([
    ['v=spf1 -all', 'v=spf1 -all', 'ASCII is left alone'],
    [Buffer.from('héllo ✓', 'utf8').toString('latin1'), 'héllo ✓', 'UTF-8 octets seen as Latin-1 are decoded'],
    ['caf\u00e9', 'caf\u00e9', 'a lone Latin-1 octet is not UTF-8: kept'],
    ['✓ already text', '✓ already text', 'characters above U+00FF mean it was already decoded'],
  ])('%j → %j (%s)', (input, expected) => {
    expect(utf8FromLatin1(input)).toBe(expected);
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
  it('answers refused or timeout, never NXDOMAIN or NODATA, within the timeout', async () => {
    const resolver = new NetworkResolver({ servers: [`127.0.0.1:${await closedPort()}`], timeoutMs: 500, attempts: 2 });
    const started = Date.now();
    const answer = await resolver.resolve('example.com', 'TXT');
    expect(answer.kind).toBe('error');
    expect(['refused', 'timeout']).toContain(answer.kind === 'error' ? answer.reason : answer.kind);
    expect(Date.now() - started).toBeLessThan(500 + 300);
  });
});
