/**
 * The attacks of issue 26, repeated against the app: rotating IPv6 /64s inside one /48, a global
 * flood of page checks, forged forwarded headers on a direct connection, wrong keys by the
 * thousand, disk-filling writes. Each must meet a limit (429/413 with Retry-After, from the catalogue).
 */
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { isValidForwardedFor, parseTrustProxy, trustProxyWarning } from '../../src/http/client-address.js';
import { IPV6_48_ALLOWANCE_FACTOR, IPV6_56_ALLOWANCE_FACTOR } from '../../src/http/rate-limits.js';
import type { SpoofCheckRequestOptions } from '../../src/http/routes/spoof-checker.js';
import { ANONYMOUS_CHECK_MAX_QUERIES } from '../../src/web/plugin.js';
import { bearerA, expectError, KEY_A, makeApp, SAMPLE_RESULT } from './helpers.js';

const MINUTE = 60_000;
const PER_CLIENT = 2;
const page = (remoteAddress: string, headers: Record<string, string> = {}) => ({ method: 'GET' as const, url: '/check/example.com', remoteAddress, headers: { accept: 'text/html', ...headers } });

describe('the page: aggregate limits per IPv6 /56 and /48, and a global budget', () => {
  it(`a /48 gets at most ${IPV6_48_ALLOWANCE_FACTOR} clients' worth of checks, however many /64s it rotates through`, async () => {
    const { app } = await makeApp({ rateLimits: { spoofCheck: { max: PER_CLIENT, windowMs: MINUTE } } });
    const statuses: number[] = [];
    // One /64 in each of 200 /56s of 2001:db8:1::/48: each /64 and each /56 is under its own limit.
    for (let i = 0; i < 200; i++) statuses.push((await app.inject(page(`2001:db8:1:${(i << 8).toString(16)}::1`))).statusCode);
    const allowed = PER_CLIENT * IPV6_48_ALLOWANCE_FACTOR;
    expect(statuses.slice(0, allowed).every((status) => status === 200)).toBe(true);
    expect(statuses.slice(allowed).every((status) => status === 429)).toBe(true);
    const refused = await app.inject(page('2001:db8:1:ff00::1'));
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body).toContain('from one IPv6 network (/56 or /48) together');
    // Another /48 is not affected.
    expect((await app.inject(page('2001:db8:2::1'))).statusCode).toBe(200);
    await app.close();
  });

  it(`a /56 gets at most ${IPV6_56_ALLOWANCE_FACTOR} clients' worth`, async () => {
    const { app } = await makeApp({ rateLimits: { spoofCheck: { max: PER_CLIENT, windowMs: MINUTE } } });
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await app.inject(page(`2001:db8:5:${i.toString(16)}::1`))).statusCode);
    const allowed = PER_CLIENT * IPV6_56_ALLOWANCE_FACTOR;
    expect(statuses).toEqual([...new Array<number>(allowed).fill(200), ...new Array<number>(20 - allowed).fill(429)]);
    await app.close();
  });

  it('the API check has the same aggregate limits: rotating /64s of one /48 meets a 429', async () => {
    const { app } = await makeApp({ rateLimits: { spoofCheck: { max: PER_CLIENT, windowMs: MINUTE } } });
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const response = await app.inject({ method: 'GET', url: '/api/tools/v1/spoof-checker?domain=example.com', remoteAddress: `2001:db8:9:${(i << 8).toString(16)}::1`, headers: bearerA });
      statuses.push(response.statusCode);
    }
    const allowed = PER_CLIENT * IPV6_48_ALLOWANCE_FACTOR;
    expect(statuses).toEqual([...new Array<number>(allowed).fill(200), ...new Array<number>(40 - allowed).fill(429)]);
    await app.close();
  });

  it('the global budget holds across many IPv4 clients; refused clients do not use it up', async () => {
    const { app } = await makeApp({ rateLimits: { spoofCheck: { max: 1, windowMs: MINUTE }, anonymousChecks: { max: 3, windowMs: MINUTE } } });
    // One client over its own limit: refused, and its refusals are not charged to everyone.
    expect((await app.inject(page('198.51.100.1'))).statusCode).toBe(200);
    for (let i = 0; i < 5; i++) expect((await app.inject(page('198.51.100.1'))).statusCode).toBe(429);
    expect((await app.inject(page('198.51.100.2'))).statusCode).toBe(200);
    expect((await app.inject(page('198.51.100.3'))).statusCode).toBe(200);
    const busy = await app.inject(page('198.51.100.4'));
    expect(busy.statusCode).toBe(429);
    expect(busy.body).toContain('The checker is busy');
    const json = await app.inject({ ...page('198.51.100.5'), headers: { accept: 'application/json' } });
    const body = expectError(json, 429, 'RATE_LIMITED');
    expect(body['why']).toContain('from all visitors together');
    await app.close();
  });

  it(`a page check may make at most ${ANONYMOUS_CHECK_MAX_QUERIES} DNS lookups (far below the engine's 500)`, async () => {
    const seen: (SpoofCheckRequestOptions | undefined)[] = [];
    const { app } = await makeApp({
      check: async (domain, options) => {
        seen.push(options);
        return { ...SAMPLE_RESULT, domain };
      },
    });
    expect((await app.inject(page('198.51.100.9'))).statusCode).toBe(200);
    expect(seen).toEqual([{ maxQueries: ANONYMOUS_CHECK_MAX_QUERIES }]);
    expect(ANONYMOUS_CHECK_MAX_QUERIES).toBeLessThanOrEqual(150);
    await app.close();
  });
});

describe('forwarded headers are believed only from the configured proxies, and only as IP addresses', () => {
  it.each([
    ['203.0.113.9', true],
    ['203.0.113.9, 10.0.0.2', true],
    ['2001:db8::1', true],
    ['<script>x</script>', false],
    ['203.0.113.9, evil', false],
    ['203.0.113.9:443', false],
    ['', false],
    [undefined, true],
  ])('X-Forwarded-For %j valid: %s', (value, valid) => {
    expect(isValidForwardedFor(value)).toBe(valid);
  });

  it('a hop count is warned about; addresses are not', () => {
    expect(trustProxyWarning(parseTrustProxy('1'))).toMatch(/believes X-Forwarded-For from whoever connects.*--trust-proxy 10\.0\.0\.0\/8,127\.0\.0\.1/);
    expect(trustProxyWarning(parseTrustProxy('10.0.0.0/8,127.0.0.1'))).toBeNull();
    expect(trustProxyWarning(false)).toBeNull();
  });

  it('a forged X-Forwarded-For from a trusted proxy that is not an address is ignored: the record names the proxy', async () => {
    const { app } = await makeApp({ trustProxy: ['10.0.0.0/8'] });
    const response = await app.inject({ method: 'GET', url: '/api/template/v1', remoteAddress: '10.1.2.3', headers: { ...bearerA, 'x-forwarded-for': '<script>x</script>' } });
    expect(response.statusCode).toBe(200);
    const record = await app.inject({ method: 'GET', url: `/api/logs/v1/${String(response.headers['x-log-id'])}`, headers: bearerA });
    expect(record.json()).toMatchObject({ ip_address: '10.1.2.3' });
    expect(record.body).not.toContain('script');
    await app.close();
  });

  it('X-Forwarded-Host never reaches the page; the configured public URL does', async () => {
    const forged = { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https', host: 'checker.internal' };
    const { app } = await makeApp({ trustProxy: ['127.0.0.0/8'] });
    const plain = await app.inject(page('127.0.0.1', forged));
    expect(plain.statusCode).toBe(200);
    expect(plain.body).not.toContain('evil.example');
    expect(plain.body).toContain('http://checker.internal/check/example.com');
    await app.close();
    const { app: configured } = await makeApp({ trustProxy: ['127.0.0.0/8'], publicUrl: 'https://checker.example' });
    const withUrl = await configured.inject(page('127.0.0.1', forged));
    expect(withUrl.body).not.toContain('evil.example');
    expect(withUrl.body).toContain('https://checker.example/check/example.com');
    await configured.close();
  });

  it('on a real socket, a client that connects directly cannot escape the limit with a fresh X-Forwarded-For each time', async () => {
    const { app } = await makeApp({ trustProxy: ['10.0.0.0/8'], rateLimits: { spoofCheck: { max: 3, windowMs: MINUTE } } });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const response = await fetch(`http://127.0.0.1:${port}/check/example.com`, { headers: { 'x-forwarded-for': `203.0.113.${i + 1}`, accept: 'text/html' } });
      await response.arrayBuffer();
      statuses.push(response.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429, 429, 429]);
    await app.close();
  });
});

describe('failed authentication is limited per client', () => {
  it('past the limit, the client gets 429 with Retry-After, even for a valid key; other clients are unaffected', async () => {
    const { app } = await makeApp({ rateLimits: { failedAuth: { max: 5, windowMs: MINUTE } } });
    const attempt = (key: string, remoteAddress = '198.51.100.66') => app.inject({ method: 'GET', url: '/api/template/v1', remoteAddress, headers: { 'x-api-key': key } });
    for (let i = 0; i < 5; i++) expectError(await attempt(`wrong-${i}`), 401, 'UNAUTHORIZED');
    const locked = await attempt('wrong-5');
    const body = expectError(locked, 429, 'RATE_LIMITED');
    expect(body['message']).toMatch(/missing or wrong API key/);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    // A right guess is refused too, so that guessing tells nothing.
    expectError(await attempt(KEY_A), 429, 'RATE_LIMITED');
    expect((await attempt(KEY_A, '198.51.100.67')).statusCode).toBe(200);
    await app.close();
  });
});

describe('per-organisation write limits and storage quota', () => {
  it('writes past the per-organisation rate get 429 with Retry-After; reads go on', async () => {
    const { app } = await makeApp({ rateLimits: { organizationWrites: { max: 3, windowMs: MINUTE } } });
    const write = () => app.inject({ method: 'POST', url: '/api/template/v1/tpl_a/versions', headers: bearerA, payload: { content: ['hello'] } });
    for (let i = 0; i < 3; i++) expect((await write()).statusCode).toBe(200);
    const refused = await write();
    const body = expectError(refused, 429, 'RATE_LIMITED');
    expect(body['message']).toBe('Your organisation is writing too fast.');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await app.inject({ method: 'GET', url: '/api/template/v1', headers: bearerA })).statusCode).toBe(200);
    await app.close();
  });

  it('bytes written past the daily quota get 413 STORAGE_QUOTA_EXCEEDED with Retry-After, and nothing is stored', async () => {
    const { app, stores } = await makeApp({ rateLimits: { organizationWriteBytes: { max: 50_000, windowMs: 86_400_000 } } });
    const write = () => app.inject({ method: 'POST', url: '/api/template/v1/tpl_a/versions', headers: bearerA, payload: { content: ['x'.repeat(20_000)] } });
    expect((await write()).statusCode).toBe(200);
    expect((await write()).statusCode).toBe(200);
    const before = (await stores.templates.listVersions('org_a', 'tpl_a'))?.length;
    const refused = await write();
    const body = expectError(refused, 413, 'STORAGE_QUOTA_EXCEEDED');
    expect(body['why']).toContain('50000 bytes');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3600);
    expect((await stores.templates.listVersions('org_a', 'tpl_a'))?.length).toBe(before);
    await app.close();
  });
});

describe('the documentation page', () => {
  it('carries a CSP that refuses framing and loads nothing from elsewhere, and X-Frame-Options DENY', async () => {
    const { app } = await makeApp();
    for (const url of ['/docs']) {
      const response = await app.inject({ method: 'GET', url });
      const final = response.statusCode >= 300 && response.statusCode < 400 ? await app.inject({ method: 'GET', url: new URL(String(response.headers['location']), 'http://x/docs/').pathname }) : response;
      expect(final.statusCode).toBe(200);
      const csp = String(final.headers['content-security-policy'] ?? '');
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("default-src 'self'");
      expect(csp).not.toMatch(/https:|frame-ancestors 'self'|upgrade-insecure-requests|unsafe-inline/);
      expect(final.headers['x-frame-options']).toBe('DENY');
      expect(final.headers['x-content-type-options']).toBe('nosniff');
    }
    await app.close();
  });
});

describe('unknown query parameters are refused on every read', () => {
  it.each([
    '/api/template/v1?limt=5',
    '/api/domain/v1?limt=5',
    '/api/logs/v1/emails?limt=5',
    '/api/contacts/list?limt=5',
    '/api/logs/v1/emails/eml_a1?x=1',
    '/api/tools/v1/spoof-checker?domain=example.com&x=1',
  ])('%s → 400 naming the parameter', async (url) => {
    const { app } = await makeApp();
    const body = expectError(await app.inject({ method: 'GET', url, headers: bearerA }), 400, 'VALIDATION_FAILED');
    expect(body['message']).toMatch(/^query\.(limt|x) is not an allowed field\.$/);
    await app.close();
  });

  it.each(['/healthz?x=1', '/readyz?x=1', '/openapi.json?x=1'])('%s (public, no key) → 400 from the catalogue naming the parameter', async (url) => {
    const { app } = await makeApp();
    const body = expectError(await app.inject({ method: 'GET', url }), 400, 'VALIDATION_FAILED');
    expect(body['message']).toBe('query.x is not an allowed field.');
    // Without a query they answer as before.
    expect((await app.inject({ method: 'GET', url: url.split('?')[0]! })).statusCode).toBe(200);
    await app.close();
  });
});

describe('key lookups are remembered for a few seconds', () => {
  it('a found key is looked up in the store once per TTL; an unknown key is never remembered', async () => {
    const { CachedKeyLookup, API_KEY_CACHE_TTL_MS } = await import('../../src/http/auth.js');
    let now = 0;
    const lookups: string[] = [];
    const known = Buffer.alloc(32, 1);
    const record = { id: 'key_x', organizationId: 'org', sha256: known, owner: { id: 'u', name: 'U', email: '', image: '' } };
    const cache = new CachedKeyLookup(
      {
        findByDigest: async (digest: Buffer) => {
          lookups.push(digest.toString('hex').slice(0, 2));
          return digest.equals(known) ? record : undefined;
        },
      },
      () => now,
    );
    for (let i = 0; i < 5; i++) expect(await cache.findByDigest(known)).toBe(record);
    expect(await cache.findByDigest(Buffer.alloc(32, 2))).toBeUndefined();
    expect(await cache.findByDigest(Buffer.alloc(32, 2))).toBeUndefined();
    expect(lookups).toEqual(['01', '02', '02']);
    now += API_KEY_CACHE_TTL_MS;
    await cache.findByDigest(known);
    expect(lookups).toEqual(['01', '02', '02', '01']);
  });
});
