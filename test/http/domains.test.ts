import { describe, expect, it } from 'vitest';
import { apiKeyA, bearerA, bearerB, DOMAIN_SHAPE, DNS_RECORD_SHAPE, expectError, expectShape, makeApp } from './helpers.js';

const url = (id = 'dom_a1') => `/api/domain/v1/${id}`;

describe('PATCH /api/domain/v1/:domain_id', () => {
  it('answers the Domain with every field of the spec and event domain.update, non-deleted DNS records only', async () => {
    const { app } = await makeApp();
    const response = await app.inject({ method: 'PATCH', url: url(), headers: bearerA, payload: { click_tracking: true } });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expectShape(body, DOMAIN_SHAPE);
    expect(body).toMatchObject({ object: 'domain', id: 'dom_a1', domain: 'a.test', event: 'domain.update', updatedAt: '2025-06-01T00:00:00.000Z' });
    // dns_a3 is soft-deleted in the seed.
    expect(body.dnsRecords.map((r: { id: string }) => r.id)).toEqual(['dns_a1', 'dns_a2']);
    expect(body.dnsRecords[0]).toMatchObject({ recordType: 'MX', priority: 10, ttl: 'Auto', status: 'active' });
    expect(body.dnsRecords[1].priority).toBeNull();
  });

  it.each([
    [{ click_tracking: true }, { isClickTrackingEnabled: true }],
    [{ open_tracking: true }, { isOpenTrackingEnabled: true }],
    [{ sending_email: false }, { isSendingEmailEnabled: false }],
    [{ receiving_email: true }, { isReceivingEmailEnabled: true }],
    [{ tls: 'enforced' }, { tls: 'enforced' }],
    [{ tls: 'opportunistic' }, { tls: 'opportunistic' }],
  ])('maps %j (snake case) to %j and leaves every other field alone', async (payload, expected) => {
    const { app } = await makeApp();
    const before = (await app.inject({ method: 'GET', url: '/api/domain/v1', headers: bearerA })).json().domains.find((d: { id: string }) => d.id === 'dom_a1');
    const after = (await app.inject({ method: 'PATCH', url: url(), headers: bearerA, payload })).json();
    const { event, updatedAt, ...rest } = after;
    expect(event).toBe('domain.update');
    expect(updatedAt).toBe('2025-06-01T00:00:00.000Z');
    expect(rest).toEqual({ ...withoutUpdatedAt(before), ...expected });
  });

  it('keeps the change: a later read shows it', async () => {
    const { app } = await makeApp();
    await app.inject({ method: 'PATCH', url: url(), headers: bearerA, payload: { tls: 'enforced', open_tracking: true } });
    const list = (await app.inject({ method: 'GET', url: '/api/domain/v1', headers: bearerA })).json();
    expect(list.domains.find((d: { id: string }) => d.id === 'dom_a1')).toMatchObject({ tls: 'enforced', isOpenTrackingEnabled: true });
  });

  it('accepts an empty object and a missing body: nothing changes but updatedAt', async () => {
    const { app } = await makeApp();
    for (const request of [{ payload: {} }, {}]) {
      const response = await app.inject({ method: 'PATCH', url: url(), headers: bearerA, ...request });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ updatedAt: '2025-06-01T00:00:00.000Z', isClickTrackingEnabled: false, tls: 'opportunistic' });
    }
  });

  it.each([
    [{ tls: 'none' }, /body\.tls must be one of 'opportunistic', 'enforced' \(got "none"\)/, 'tls outside the enum'],
    [{ click_tracking: 'true' }, /body\.click_tracking must be true or false/, 'no coercion of "true"'],
    [{ open_tracking: 1 }, /body\.open_tracking must be true or false/, 'no coercion of 1'],
    [{ clickTracking: true }, /body\.clickTracking is not an allowed field/, 'camelCase names are not the API'],
    [{ status: 'active' }, /body\.status is not an allowed field/, 'read-only field'],
    [null, /body must be an object/, 'JSON null'],
  ] as [unknown, RegExp, string][])('refuses %j (%s)', async (payload, message, _reason) => {
    const { app } = await makeApp();
    const response = await app.inject({ method: 'PATCH', url: url(), headers: { ...bearerA, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
    const body = expectError(response, 400, 'VALIDATION_FAILED');
    expect(body['message']).toMatch(message);
  });

  it('refuses a body that is not JSON with 415', async () => {
    const { app } = await makeApp();
    expectError(await app.inject({ method: 'PATCH', url: url(), headers: { ...bearerA, 'content-type': 'text/plain' }, payload: 'tls=enforced' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it("answers 404 for another organisation's domain and leaves it unchanged", async () => {
    const { app } = await makeApp();
    const response = await app.inject({ method: 'PATCH', url: url('dom_b1'), headers: bearerA, payload: { tls: 'enforced' } });
    const body = expectError(response, 404, 'NOT_FOUND');
    expect(body['message']).toBe('Domain not found.');
    expect(response.body).not.toContain('b.test');
    const theirs = (await app.inject({ method: 'GET', url: '/api/domain/v1', headers: bearerB })).json();
    expect(theirs.domains[0]).toMatchObject({ id: 'dom_b1', tls: 'opportunistic' });
  });
});

describe('DELETE /api/domain/v1/:domain_id', () => {
  it('soft-deletes: answers the Domain with event domain.delete, then the domain answers 404 everywhere', async () => {
    const { app, stores } = await makeApp();
    const response = await app.inject({ method: 'DELETE', url: url(), headers: bearerA });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expectShape(body, DOMAIN_SHAPE);
    expect(body).toMatchObject({ id: 'dom_a1', event: 'domain.delete', updatedAt: '2025-06-01T00:00:00.000Z' });
    // The records the deletion removed (the already-deleted one is not among them).
    expect(body.dnsRecords.map((r: { id: string }) => r.id)).toEqual(['dns_a1', 'dns_a2']);
    for (const record of body.dnsRecords) expectShape(record, DNS_RECORD_SHAPE);
    expect(body.dnsRecords[0].updatedAt).toBe('2025-06-01T00:00:00.000Z');

    expectError(await app.inject({ method: 'DELETE', url: url(), headers: bearerA }), 404, 'NOT_FOUND');
    expectError(await app.inject({ method: 'PATCH', url: url(), headers: bearerA, payload: { tls: 'enforced' } }), 404, 'NOT_FOUND');
    const list = (await app.inject({ method: 'GET', url: '/api/domain/v1', headers: apiKeyA })).json();
    expect(list.domains.map((d: { id: string }) => d.id)).toEqual(['dom_a2']);
    expect(list.total).toBe(1);
    // Soft: still held, marked deleted.
    expect(await stores.domains.get('org_a', 'dom_a1')).toBeUndefined();
  });

  it("answers 404 for another organisation's domain and does not delete it", async () => {
    const { app } = await makeApp();
    expectError(await app.inject({ method: 'DELETE', url: url('dom_b1'), headers: bearerA }), 404, 'NOT_FOUND');
    expect((await app.inject({ method: 'GET', url: '/api/domain/v1', headers: bearerB })).json().total).toBe(1);
  });
});

describe('GET /api/domain/v1 (beyond the spec)', () => {
  it('lists domains newest first: {domains, total, page, limit, event: domain.list}', async () => {
    const { app } = await makeApp();
    const body = (await app.inject({ method: 'GET', url: '/api/domain/v1?limit=1', headers: bearerA })).json();
    expect(Object.keys(body).sort()).toEqual(['domains', 'event', 'limit', 'page', 'total']);
    expect(body).toMatchObject({ total: 2, page: 1, limit: 1, event: 'domain.list' });
    expect(body.domains.map((d: { id: string }) => d.id)).toEqual(['dom_a2']);
    const { event: _event, ...itemShape } = DOMAIN_SHAPE;
    expectShape(body.domains[0], itemShape);
  });
});

describe('rate limits of domain operations', () => {
  it('counts update and delete apart, per organisation, with Retry-After on 429', async () => {
    const { app } = await makeApp({ rateLimits: { domainUpdate: { max: 2, windowMs: 60_000 }, domainDelete: { max: 1, windowMs: 60_000 } } });
    for (let i = 0; i < 2; i++) expect((await app.inject({ method: 'PATCH', url: url(), headers: bearerA, payload: {} })).statusCode).toBe(200);
    const limited = await app.inject({ method: 'PATCH', url: url(), headers: apiKeyA, payload: {} });
    const body = expectError(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(body['retryAfter']).toBe(Number(limited.headers['retry-after']));
    expect(body['why']).toMatch(/for one organisation/);
    // Deletes have their own counter…
    expect((await app.inject({ method: 'DELETE', url: url('dom_a2'), headers: bearerA })).statusCode).toBe(200);
    expectError(await app.inject({ method: 'DELETE', url: url('dom_a1'), headers: bearerA }), 429, 'RATE_LIMITED');
    // …and another organisation is not affected, even from the same address.
    expect((await app.inject({ method: 'PATCH', url: url('dom_b1'), headers: bearerB, payload: {} })).statusCode).toBe(200);
  });
});

function withoutUpdatedAt<T extends Record<string, unknown>>(domain: T): Omit<T, 'updatedAt'> {
  const { updatedAt: _updatedAt, ...rest } = domain;
  return rest;
}
