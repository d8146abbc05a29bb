import { describe, expect, it } from 'vitest';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import type { Zone } from '../../src/zones/types.js';

const soa = { mname: 'ns.example.com', rname: 'hostmaster.example.com', serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum: 60 };
const zone: Zone = {
  origin: 'example.com',
  records: [
    { name: 'example.com', type: 'SOA', ttl: 3600, data: soa },
    { name: 'example.com', type: 'TXT', ttl: 300, data: ['v=spf1 ', '-all'] },
    { name: 'a.b.example.com', type: 'A', ttl: 300, data: '192.0.2.1' },
    { name: '*.wild.example.com', type: 'TXT', ttl: 300, data: ['wild'] },
    { name: 'alias.example.com', type: 'CNAME', ttl: 300, data: 'a.b.example.com' },
    { name: 'out.example.com', type: 'CNAME', ttl: 300, data: 'target.example.org' },
    { name: 'loop1.example.com', type: 'CNAME', ttl: 300, data: 'loop2.example.com' },
    { name: 'loop2.example.com', type: 'CNAME', ttl: 300, data: 'loop1.example.com' },
  ],
};
const other: Zone = { origin: 'example.org', records: [{ name: 'target.example.org', type: 'A', ttl: 60, data: '198.51.100.7' }] };
const resolver = new ZoneResolver([zone, other]);

describe('ZoneResolver', () => {
  it.each([
    ['example.com', 'TXT', { kind: 'records', records: [['v=spf1 ', '-all']], ttl: 300 }],
    ['EXAMPLE.com.', 'TXT', { kind: 'records', records: [['v=spf1 ', '-all']], ttl: 300 }],
    ['example.com', 'A', { kind: 'nodata', ttl: 60 }],
    ['b.example.com', 'A', { kind: 'nodata', ttl: 60 }],
    ['nothere.example.com', 'A', { kind: 'nxdomain', ttl: 60 }],
    ['x.wild.example.com', 'TXT', { kind: 'records', records: [['wild']], ttl: 300 }],
    ['y.x.wild.example.com', 'TXT', { kind: 'records', records: [['wild']], ttl: 300 }],
    ['x.wild.example.com', 'A', { kind: 'nodata', ttl: 60 }],
    ['alias.example.com', 'A', { kind: 'records', records: ['192.0.2.1'], ttl: 300, cnames: ['a.b.example.com'] }],
    ['alias.example.com', 'CNAME', { kind: 'records', records: ['a.b.example.com'], ttl: 300 }],
    ['out.example.com', 'A', { kind: 'records', records: ['198.51.100.7'], ttl: 60, cnames: ['target.example.org'] }],
    ['elsewhere.test', 'A', { kind: 'nxdomain' }],
  ] as const)('%s %s', async (name, type, expected) => {
    expect(await resolver.resolve(name, type)).toEqual(expected);
  });

  it('reports a CNAME loop as a server failure, not as a missing record', async () => {
    const answer = await resolver.resolve('loop1.example.com', 'TXT');
    expect(answer.kind).toBe('error');
    expect(answer.kind === 'error' && answer.reason).toBe('servfail');
  });

  it('refuses invalid names before any lookup', async () => {
    expect(await resolver.resolve('a..example.com', 'A')).toMatchObject({ kind: 'error', reason: 'invalid-name' });
    expect(await resolver.resolve(`${'a'.repeat(64)}.example.com`, 'A')).toMatchObject({ kind: 'error', reason: 'invalid-name' });
  });
});
