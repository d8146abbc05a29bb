import { describe, expect, it } from 'vitest';
import { apiKeyA, apiKeyB, bearerA, CONTACT_SHAPE, expectError, expectShape, makeApp } from './helpers.js';

const PATHS = ['/api/contacts/list', '/api/contacts/v1/list'] as const;
const ids = (body: { contacts: { id: string }[] }) => body.contacts.map((c) => c.id);

describe.each(PATHS)('GET %s', (path) => {
  it('answers every field of the spec: contacts newest first, default limit 100, organisation-wide counts', async () => {
    const { app } = await makeApp();
    const response = await app.inject({ method: 'GET', url: path, headers: apiKeyA });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(Object.keys(body).sort()).toEqual(
      ['contacts', 'event', 'limit', 'object', 'page', 'subscribedContacts', 'total', 'totalContacts', 'unsubscribedContacts'].sort(),
    );
    expect(body).toMatchObject({ object: 'contact', total: 4, page: 1, limit: 100, totalContacts: 4, subscribedContacts: 2, unsubscribedContacts: 1, event: 'contact.list' });
    expect(ids(body)).toEqual(['ct_a4', 'ct_a3', 'ct_a2', 'ct_a1']);
    for (const contact of body.contacts) expectShape(contact, CONTACT_SHAPE);
  });

  it('lists every channel of the organisation on each contact: explicit enrolment, else the channel default', async () => {
    const { app } = await makeApp();
    const body = (await app.inject({ method: 'GET', url: path, headers: bearerA })).json();
    const byId = new Map(body.contacts.map((c: { id: string }) => [c.id, c]));
    expect(byId.get('ct_a1')).toMatchObject({
      groups: [{ id: 'grp_a1', name: 'Customers' }],
      channels: [
        { id: 'ch_a1', name: 'Newsletter', subscription: 'opt_in' },
        { id: 'ch_a2', name: 'Product', subscription: 'opt_in' },
      ],
      properties: { plan: 'pro' },
    });
    expect(byId.get('ct_a2')).toMatchObject({
      groups: [
        { id: 'grp_a1', name: 'Customers' },
        { id: 'grp_a2', name: 'Beta' },
      ],
      channels: [
        { id: 'ch_a1', name: 'Newsletter', subscription: 'opt_out' },
        { id: 'ch_a2', name: 'Product', subscription: 'opt_out' },
      ],
    });
    expect(byId.get('ct_a3')).toMatchObject({ status: 'blocked', suppressionReason: 'complaint', suppressedAt: '2025-03-03T01:00:00.000Z', firstName: null, groups: [] });
  });

  it.each([
    ['search=%40R.TEST', ['ct_a4', 'ct_a2', 'ct_a1'], 3, 'case-insensitive substring of the email'],
    ['search=bob', ['ct_a2'], 1, 'matches an upper-case email'],
    ['search=nomatch', [], 0, 'no match'],
    ['status=subscribed', ['ct_a4', 'ct_a1'], 2, 'status filter'],
    ['status=blocked', ['ct_a3'], 1, 'blocked'],
    ['status=subscribed&search=alice', ['ct_a1'], 1, 'both filters'],
    ['limit=2', ['ct_a4', 'ct_a3'], 4, 'first page of 2'],
    ['limit=2&page=2', ['ct_a2', 'ct_a1'], 4, 'second page of 2'],
    ['limit=2&page=3', [], 4, 'past the end'],
  ])('?%s → %j, total %i (%s), organisation-wide counts unchanged', async (query, expected, total, _reason) => {
    const { app } = await makeApp();
    const body = (await app.inject({ method: 'GET', url: `${path}?${query}`, headers: bearerA })).json();
    expect(ids(body)).toEqual(expected);
    expect(body.total).toBe(total);
    expect(body).toMatchObject({ totalContacts: 4, subscribedContacts: 2, unsubscribedContacts: 1 });
  });

  it.each([
    ['limit=100', 200],
    ['limit=1', 200],
    ['limit=101', 400],
    ['limit=0', 400],
    ['page=0', 400],
    ['status=pending', 400],
    ['status=SUBSCRIBED', 400],
    [`search=${'x'.repeat(256)}`, 400],
    ['unknown=1', 400],
  ])('?%s answers %i', async (query, status) => {
    const { app } = await makeApp();
    const response = await app.inject({ method: 'GET', url: `${path}?${query}`, headers: bearerA });
    if (status === 400) expectError(response, 400, 'VALIDATION_FAILED');
    else expect(response.statusCode).toBe(200);
  });

  it('says which value of status is allowed', async () => {
    const { app } = await makeApp();
    const body = expectError(await app.inject({ method: 'GET', url: `${path}?status=pending`, headers: bearerA }), 400, 'VALIDATION_FAILED');
    expect(body['message']).toMatch(/query\.status must be one of 'subscribed', 'unsubscribed', 'blocked'/);
  });

  it("shows only the caller's organisation", async () => {
    const { app } = await makeApp();
    const body = (await app.inject({ method: 'GET', url: path, headers: apiKeyB })).json();
    expect(ids(body)).toEqual(['ct_b1']);
    expect(body).toMatchObject({ total: 1, totalContacts: 1, subscribedContacts: 1, unsubscribedContacts: 0 });
    expect(body.contacts[0].channels).toEqual([{ id: 'ch_b1', name: 'B news', subscription: 'opt_in' }]);
  });
});

describe('contact list rate limit', () => {
  it('is per organisation and shared by both paths', async () => {
    const { app } = await makeApp({ rateLimits: { contactList: { max: 2, windowMs: 60_000 } } });
    expect((await app.inject({ method: 'GET', url: PATHS[0], headers: bearerA })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: PATHS[1], headers: bearerA })).statusCode).toBe(200);
    const limited = await app.inject({ method: 'GET', url: PATHS[0], headers: bearerA });
    expectError(limited, 429, 'RATE_LIMITED');
    expect(limited.headers['retry-after']).toBeDefined();
    expect((await app.inject({ method: 'GET', url: PATHS[1], headers: apiKeyB })).statusCode).toBe(200);
  });
});
