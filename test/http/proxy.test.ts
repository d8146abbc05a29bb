/**
 * Behind a proxy: which X-Forwarded-For hop is the client (the rightmost one our proxies did not
 * add, never the leftmost, which the client writes), and per-client rate limits that count an
 * IPv6 client by its /64 and an IPv4-mapped IPv6 client as its IPv4 address.
 */
import { describe, expect, it } from 'vitest';
import { clientRateLimitKey, parseTrustProxy, type TrustProxy } from '../../src/http/client-address.js';
import { KEY_A, makeApp } from './helpers.js';

describe('parseTrustProxy', () => {
  it.each<[string | undefined, TrustProxy]>([
    [undefined, false],
    ['', false],
    ['off', false],
    ['0', false],
    ['1', 1],
    [' 2 ', 2],
    ['10.0.0.0/8', ['10.0.0.0/8']],
    ['10.0.0.0/8, 192.0.2.7 ,fd00::/8', ['10.0.0.0/8', '192.0.2.7', 'fd00::/8']],
  ])('%j → %j', (text, expected) => {
    expect(parseTrustProxy(text)).toEqual(expected);
  });

  it.each([
    ['true', /would believe any X-Forwarded-For/],
    ['17', /hop count must be 0 to 16/],
    ['10.0.0.0/33', /prefix length that is not 0 to 32/],
    ['fd00::/129', /prefix length that is not 0 to 128/],
    ['proxy.internal', /"proxy\.internal" is not an IP address or CIDR block/],
    ['10.0.0.1,,10.0.0.2', /empty entry/],
  ])('refuses %j', (text, message) => {
    expect(() => parseTrustProxy(text)).toThrow(message);
  });
});

describe('clientRateLimitKey', () => {
  it.each([
    ['192.0.2.7', '192.0.2.7'],
    ['::ffff:192.0.2.7', '192.0.2.7'],
    ['::ffff:c000:0207', '192.0.2.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:0db8:0001:0002::1', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::192.0.2.7', '2001:db8:1:2::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
  ])('%s → %s', (address, key) => {
    expect(clientRateLimitKey(address)).toBe(key);
  });
});

/** The record's ip_address for a request from `remoteAddress` with X-Forwarded-For `forwarded`. */
async function clientSeen(trustProxy: TrustProxy, remoteAddress: string, forwarded: string | undefined): Promise<string> {
  const { app } = await makeApp({ trustProxy });
  const response = await app.inject({
    method: 'GET',
    url: '/api/template/v1',
    remoteAddress,
    headers: { 'x-api-key': KEY_A, ...(forwarded !== undefined ? { 'x-forwarded-for': forwarded } : {}) },
  });
  expect(response.statusCode).toBe(200);
  const record = await app.inject({ method: 'GET', url: `/api/logs/v1/${String(response.headers['x-log-id'])}`, headers: { 'x-api-key': KEY_A } });
  await app.close();
  return (record.json() as { ip_address: string }).ip_address;
}

describe('the client address behind proxies', () => {
  it.each<[string, TrustProxy, string, string | undefined, string]>([
    ['no trust: the peer, whatever X-Forwarded-For says', false, '10.0.0.1', '203.0.113.9', '10.0.0.1'],
    ['1 hop: the rightmost entry, not the forged leftmost one', 1, '10.0.0.1', '6.6.6.6, 203.0.113.9', '203.0.113.9'],
    ['2 hops: the second entry from the right', 2, '10.0.0.1', '6.6.6.6, 203.0.113.9, 10.0.0.2', '203.0.113.9'],
    ['1 hop without the header: the peer', 1, '10.0.0.1', undefined, '10.0.0.1'],
    ['CIDR list: skips every trusted proxy, stops at the first untrusted address', ['10.0.0.0/8'], '10.0.0.1', '6.6.6.6, 203.0.113.9, 10.1.2.3', '203.0.113.9'],
    ['CIDR list: a peer outside the list is the client, its header ignored', ['10.0.0.0/8'], '198.51.100.4', '6.6.6.6', '198.51.100.4'],
    ['IPv6 proxy block', ['fd00::/8'], 'fd00::1', '2001:db8::5', '2001:db8::5'],
  ])('%s', async (_case, trust, remote, forwarded, expected) => {
    expect(await clientSeen(trust, remote, forwarded)).toBe(expected);
  });
});

describe('per-client spoof check limit', () => {
  const limit = { spoofCheck: { max: 2, windowMs: 60_000 } };
  const check = (app: Awaited<ReturnType<typeof makeApp>>['app'], remoteAddress: string, forwarded?: string) =>
    app.inject({
      method: 'GET',
      url: '/api/tools/v1/spoof-checker?domain=example.com',
      remoteAddress,
      headers: { 'x-api-key': KEY_A, ...(forwarded ? { 'x-forwarded-for': forwarded } : {}) },
    });

  it('counts the addresses of one IPv6 /64 together, and another /64 apart', async () => {
    const { app } = await makeApp({ rateLimits: limit });
    expect((await check(app, '2001:db8:1:2::1')).statusCode).toBe(200);
    expect((await check(app, '2001:db8:1:2::ffff')).statusCode).toBe(200);
    expect((await check(app, '2001:db8:1:2:aaaa:bbbb:cccc:dddd')).statusCode).toBe(429);
    expect((await check(app, '2001:db8:1:3::1')).statusCode).toBe(200);
  });

  it('counts an IPv4-mapped IPv6 peer as its IPv4 address', async () => {
    const { app } = await makeApp({ rateLimits: limit });
    expect((await check(app, '192.0.2.7')).statusCode).toBe(200);
    expect((await check(app, '::ffff:192.0.2.7')).statusCode).toBe(200);
    expect((await check(app, '192.0.2.7')).statusCode).toBe(429);
  });

  it('behind one proxy, counts the real client: a forged leftmost entry does not give a fresh counter', async () => {
    const { app } = await makeApp({ rateLimits: limit, trustProxy: 1 });
    expect((await check(app, '10.0.0.1', '1.1.1.1, 203.0.113.9')).statusCode).toBe(200);
    expect((await check(app, '10.0.0.1', '2.2.2.2, 203.0.113.9')).statusCode).toBe(200);
    expect((await check(app, '10.0.0.1', '3.3.3.3, 203.0.113.9')).statusCode).toBe(429);
    expect((await check(app, '10.0.0.1', '203.0.113.10')).statusCode).toBe(200);
  });
});
