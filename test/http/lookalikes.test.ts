/**
 * `POST /api/tools/v1/lookalikes` through app.inject over the fixture zones: the report, the deep
 * cap, errors from the catalogue, the stricter rate limits, the OpenAPI entry.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ZoneResolver } from '../../packages/engine/src/dns/zone-resolver.js';
import { findLookalikes } from '../../packages/engine/src/lookalikes/index.js';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';
import { API_DEEP_MAX_CANDIDATES, type LookalikeRun } from '../../src/http/routes/lookalikes.js';
import { bearerA, makeApp } from './helpers.js';

let run: LookalikeRun;
beforeAll(async () => {
  const resolver = new ZoneResolver(await loadZoneDirectory(new URL('../../fixtures/zones/', import.meta.url).pathname));
  run = (domain, options) => findLookalikes(domain, { resolver, ...options });
});

const post = (body: unknown) => ({ method: 'POST' as const, url: '/api/tools/v1/lookalikes', headers: { ...bearerA, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

describe('POST /api/tools/v1/lookalikes', () => {
  it('answers the graded report, worst first', async () => {
    const { app } = await makeApp({ lookalikes: run });
    const response = await app.inject(post({ domain: 'acmebank.example' }));
    expect(response.statusCode).toBe(200);
    const report = response.json();
    expect(report).toMatchObject({ domain: 'acmebank.example', deep: false, counts: { critical: 2, high: 4, medium: 1, protected: 2, unknown: 0 } });
    expect(report.lookalikes[0]).toMatchObject({ domain: 'xn--acmebnk-6fg.example', unicode: 'acmeb\u0430nk.example', grade: 'critical', fuzzers: ['homoglyph'], distance: 1, sharedWithOriginal: false });
    expect(report.queries).toBeGreaterThan(report.generated);
  });

  it('deep runs are capped for the API', async () => {
    const { app } = await makeApp({ lookalikes: run });
    const report = (await app.inject(post({ domain: 'acmebank.example', deep: true }))).json();
    expect(report.deep).toBe(true);
    expect(report.generated).toBe(API_DEEP_MAX_CANDIDATES);
    expect(report.capped).toBe(true);
    expect(report.lookalikes).toHaveLength(9);
  });

  it('a name that is not registrable is INVALID_DOMAIN; a bad body is VALIDATION_FAILED; no key is 401', async () => {
    const { app } = await makeApp({ lookalikes: run });
    const invalid = await app.inject(post({ domain: 'co.uk' }));
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json()).toMatchObject({ code: 'INVALID_DOMAIN' });
    expect(invalid.json().fix).toContain('registrable');
    const extra = await app.inject(post({ domain: 'acmebank.example', fuzzers: ['x'] }));
    expect(extra.json()).toMatchObject({ statusCode: 400, code: 'VALIDATION_FAILED' });
    const anonymous = await app.inject({ method: 'POST', url: '/api/tools/v1/lookalikes', headers: { 'content-type': 'application/json' }, payload: '{"domain":"acmebank.example"}' });
    expect(anonymous.statusCode).toBe(401);
  });

  it('is limited more strictly than the spoof check, and deep runs more strictly still', async () => {
    const { app } = await makeApp({ lookalikes: run, rateLimits: { lookalikes: { max: 3, windowMs: 60_000 }, deepLookalikes: { max: 1, windowMs: 60_000 } } });
    expect((await app.inject(post({ domain: 'acmebank.example', deep: true }))).statusCode).toBe(200);
    const deep = await app.inject(post({ domain: 'acmebank.example', deep: true }));
    expect(deep.statusCode).toBe(429);
    expect(deep.json()).toMatchObject({ code: 'RATE_LIMITED' });
    expect((await app.inject(post({ domain: 'acmebank.example' }))).statusCode).toBe(200);
    const third = await app.inject(post({ domain: 'acmebank.example' }));
    expect(third.statusCode).toBe(429);
    expect(third.json().why).toContain('lookalike runs');
  });

  it('an IPv6 client rotating /64s inside one /48 meets the aggregate limit, counted apart from the spoof check', async () => {
    const { app } = await makeApp({ lookalikes: async (domain) => ({ ...(await run(domain, { deep: false })) }), rateLimits: { lookalikes: { max: 1, windowMs: 60_000 } } });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const response = await app.inject({ ...post({ domain: 'acmebank.example' }), remoteAddress: `2001:db8:9:${(i << 8).toString(16)}::1` });
      statuses.push(response.statusCode);
    }
    // One per /64, and the /48 allows IPV6_48_ALLOWANCE_FACTOR (4) clients' worth.
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    // The spoof check of the same client is not charged.
    const check = await app.inject({ method: 'GET', url: '/api/tools/v1/spoof-checker?domain=example.com', remoteAddress: '2001:db8:9:900::1', headers: bearerA });
    expect(check.statusCode).toBe(200);
  });

  it('is in the OpenAPI document when served, and not served without a runner', async () => {
    const { app } = await makeApp({ lookalikes: run });
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const operation = doc.paths['/api/tools/v1/lookalikes'].post;
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '429', '500']));
    expect(operation.requestBody.content['application/json'].schema.properties.deep.type).toBe('boolean');
    const { app: without } = await makeApp();
    expect((await without.inject(post({ domain: 'acmebank.example' }))).json()).toMatchObject({ code: 'ROUTE_NOT_FOUND' });
  });
});
