import { describe, expect, it } from 'vitest';
import { SpoofCheckError, type CheckErrorCode } from '../../packages/engine/src/errors.js';
import { SPOOF_DOMAIN_MAX_LENGTH } from '../../src/http/routes/spoof-checker.js';
import { bearerA, chars, expectError, expectShape, makeApp, SAMPLE_RESULT, SPOOF_RESULT_SHAPE } from './helpers.js';

const URL = '/api/tools/v1/spoof-checker';

describe('POST /api/tools/v1/spoof-checker', () => {
  it('answers the check result with every field of the spec, and passes the domain through', async () => {
    const asked: string[] = [];
    const { app } = await makeApp({ check: async (domain) => (asked.push(domain), { ...SAMPLE_RESULT, domain }) });
    const response = await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain: 'ceo@Example.COM' } });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expectShape(body, SPOOF_RESULT_SHAPE);
    expect(asked).toEqual(['ceo@Example.COM']);
    expect(body.domain).toBe('ceo@Example.COM');
    // `details` is an open object: nested values survive serialization.
    expect(body.details).toEqual(SAMPLE_RESULT.details);
    expect(body.reasons).toEqual(SAMPLE_RESULT.reasons);
  });

  it('GET ?domain= answers the same result (for browsers)', async () => {
    const { app } = await makeApp();
    const response = await app.inject({ method: 'GET', url: `${URL}?domain=example.org`, headers: bearerA });
    expect(response.statusCode).toBe(200);
    expectShape(response.json(), SPOOF_RESULT_SHAPE);
    expect(response.json().domain).toBe('example.org');
  });

  it.each([
    [SPOOF_DOMAIN_MAX_LENGTH, 200, 'the longest domain allowed'],
    [1, 200, 'the shortest domain allowed'],
  ])('accepts a domain of %i characters (status %i: %s)', async (length, status, _reason) => {
    const { app } = await makeApp();
    const response = await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain: chars(length) } });
    expect(response.statusCode).toBe(status);
  });

  it.each([
    [{ domain: chars(SPOOF_DOMAIN_MAX_LENGTH + 1) }, /body\.domain must be at most 255 characters long \(it has 256\)/, 'one character too long'],
    [{ domain: '' }, /body\.domain must be at least 1 character/, 'empty'],
    [{}, /body\.domain is required/, 'missing'],
    [{ domain: 42 }, /body\.domain must be a string/, 'not a string (no coercion)'],
    [{ domain: 'example.com', extra: true }, /body\.extra is not an allowed field/, 'unknown field refused, not stripped'],
    [['example.com'], /body must be an object/, 'an array body'],
  ] as [unknown, RegExp, string][])('refuses %j with 400 VALIDATION_FAILED (%s)', async (payload, message, _reason) => {
    let called = false;
    const { app } = await makeApp({ check: async () => ((called = true), SAMPLE_RESULT) });
    const response = await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: payload as object });
    const body = expectError(response, 400, 'VALIDATION_FAILED');
    expect(body['message']).toMatch(message);
    expect(called).toBe(false);
  });

  it('GET refuses a 256-character domain and a missing one', async () => {
    const { app } = await makeApp();
    expectError(await app.inject({ method: 'GET', url: `${URL}?domain=${chars(256)}`, headers: bearerA }), 400, 'VALIDATION_FAILED');
    const missing = expectError(await app.inject({ method: 'GET', url: URL, headers: bearerA }), 400, 'VALIDATION_FAILED');
    expect(missing['message']).toMatch(/query\.domain is required/);
  });

  const refusals: [CheckErrorCode, number, string][] = [
    ['invalid_domain', 400, 'INVALID_DOMAIN'],
    ['dns_failure', 502, 'DNS_FAILURE'],
    ['dns_timeout', 503, 'DNS_TIMEOUT'],
  ];
  it.each(refusals)('maps SpoofCheckError %s to %i %s with the failed query and no verdict', async (code, status, apiCode) => {
    const query = { name: '_dmarc.example.com', type: 'TXT' as const, reason: code === 'dns_timeout' ? ('timeout' as const) : ('servfail' as const) };
    const { app } = await makeApp({
      check: async () => {
        throw new SpoofCheckError(code, `Lookup of ${query.name} failed`, { why: 'The DMARC record decides the verdict.', fix: 'Retry later.', query });
      },
    });
    const response = await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain: 'example.com' } });
    const body = expectError(response, status, apiCode);
    expect(body).toMatchObject({ message: `Lookup of ${query.name} failed`, why: 'The DMARC record decides the verdict.', fix: 'Retry later.', query });
    expect(body).not.toHaveProperty('verdict');
    expect(body).not.toHaveProperty('spoofable');
  });

  it('a refusal without a query has no query field', async () => {
    const { app } = await makeApp({
      check: async () => {
        throw new SpoofCheckError('invalid_domain', 'An IP address cannot be spoofed as a From domain.', { why: 'w', fix: 'f' });
      },
    });
    const body = expectError(await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain: '192.0.2.1' } }), 400, 'INVALID_DOMAIN');
    expect(body).not.toHaveProperty('query');
  });

  it('an unexpected exception is a 500 that reveals nothing of it', async () => {
    const { app } = await makeApp({
      check: async () => {
        throw new Error('secret internal detail at /srv/app/engine.js:42');
      },
    });
    const response = await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain: 'example.com' } });
    expectError(response, 500, 'INTERNAL');
    expect(response.body).not.toMatch(/secret|engine\.js|stack/);
  });

  it('limits checks per client address, POST and GET together, with Retry-After', async () => {
    const { app } = await makeApp({ rateLimits: { spoofCheck: { max: 2, windowMs: 60_000 } } });
    const first = await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain: 'a.test' } });
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-ratelimit-limit']).toBe('2');
    expect(first.headers['x-ratelimit-remaining']).toBe('1');
    expect((await app.inject({ method: 'GET', url: `${URL}?domain=b.test`, headers: bearerA })).statusCode).toBe(200);
    const limited = await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain: 'c.test' } });
    const body = expectError(limited, 429, 'RATE_LIMITED');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(body['retryAfter']).toBe(retryAfter);
    expect(body['why']).toMatch(/2 request\(s\) per 1 minute\(s\) from one client address/);
    // Another client address has its own counter.
    const other = await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain: 'd.test' }, remoteAddress: '203.0.113.9' });
    expect(other.statusCode).toBe(200);
  });
});

describe('POST /api/tools/v1/spoof-checker with DKIM selectors', () => {
  it('passes the selectors to the check, lower-cased and deduplicated, in order', async () => {
    const asked: unknown[] = [];
    const { app } = await makeApp({ check: async (domain, options) => (asked.push([domain, options]), { ...SAMPLE_RESULT, domain }) });
    const response = await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain: 'example.com', selectors: ['Google', 's1.corp', 'google', 'aweber_key_a'] } });
    expect(response.statusCode).toBe(200);
    expect(asked).toEqual([['example.com', { selectors: ['google', 's1.corp', 'aweber_key_a'] }]]);
  });

  it('without selectors, the check is called with the domain only', async () => {
    const asked: unknown[][] = [];
    const { app } = await makeApp({ check: async (...args) => (asked.push(args), SAMPLE_RESULT) });
    await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain: 'example.com' } });
    expect(asked).toEqual([['example.com']]);
  });

  it.each([
    [['-bad'], /body\.selectors\[0\] \("-bad"\) is not a DKIM selector: "-bad" is not a DNS label: use letters, digits, hyphens and underscores/, 'a label starting with a hyphen'],
    [['ok', 'a..b'], /body\.selectors\[1\] \("a\.\.b"\) is not a DKIM selector: the selector has an empty label/, 'an empty label'],
    [['has space'], /is not a DNS label/, 'a space'],
    [[''], /body\.selectors\[0\] must be at least 1 character/, 'empty'],
    [[chars(64)], /is longer than 63 octets/, 'a label over 63 octets'],
    [[`${chars(60)}.${chars(60)}.${chars(10)}`], /body\.selectors\[0\] must be at most 128 characters/, 'a selector over 128 characters'],
    [Array.from({ length: 51 }, (_, i) => `s${i}`), /body\.selectors must have at most 50 items/, 'more than 50'],
    ['google', /body\.selectors must be an array/, 'a string, not an array'],
  ] as [unknown, RegExp, string][])('refuses selectors %j with 400 (%s), without checking', async (selectors, message, _reason) => {
    let called = false;
    const { app } = await makeApp({ check: async () => ((called = true), SAMPLE_RESULT) });
    const response = await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain: 'example.com', selectors } });
    const body = expectError(response, 400, 'VALIDATION_FAILED');
    expect(body['message']).toMatch(message);
    expect(called).toBe(false);
  });
});
