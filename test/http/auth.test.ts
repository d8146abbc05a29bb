import { describe, expect, it } from 'vitest';
import { API_KEY_CACHE_TTL_MS, CachedKeyLookup, forgetRevokedKey, MAX_API_KEY_LENGTH, presentedKey, type PresentedKey } from '../../src/http/auth.js';
import { apiKeyA, bearerA, expectError, KEY_A, KEY_B, makeApp } from './helpers.js';

describe('presentedKey', () => {
  it.each<[string, Record<string, string | string[]>, PresentedKey]>([
    ['Bearer scheme', { authorization: 'Bearer abc' }, { kind: 'key', key: 'abc' }],
    ['scheme is case-insensitive (RFC 7235 §2.1)', { authorization: 'bEaReR abc' }, { kind: 'key', key: 'abc' }],
    ['x-api-key header', { 'x-api-key': 'abc' }, { kind: 'key', key: 'abc' }],
    ['both headers with the same key', { authorization: 'Bearer abc', 'x-api-key': 'abc' }, { kind: 'key', key: 'abc' }],
    ['nothing', {}, { kind: 'none' }],
    ['empty x-api-key', { 'x-api-key': '' }, { kind: 'none' }],
    ['Basic scheme', { authorization: 'Basic YWJjOmRlZg==' }, { kind: 'invalid', reason: "The Authorization header must be 'Bearer <key>'." }],
    ['Bearer without a token', { authorization: 'Bearer' }, { kind: 'invalid', reason: "The Authorization header must be 'Bearer <key>'." }],
    ['two different keys', { authorization: 'Bearer abc', 'x-api-key': 'xyz' }, { kind: 'invalid', reason: 'The Authorization and x-api-key headers carry two different keys.' }],
    ['x-api-key repeated', { 'x-api-key': ['a', 'b'] }, { kind: 'invalid', reason: 'The x-api-key header was sent more than once.' }],
    ['key too long', { 'x-api-key': 'k'.repeat(MAX_API_KEY_LENGTH + 1) }, { kind: 'invalid', reason: 'The API key is not valid.' }],
  ])('%s', (_case, headers, expected) => {
    expect(presentedKey(headers)).toEqual(expected);
  });
});

/** One request per route of the API, each valid apart from its key. */
const ROUTES = [
  { method: 'POST', url: '/api/tools/v1/spoof-checker', payload: { domain: 'example.com' } },
  { method: 'GET', url: '/api/tools/v1/spoof-checker?domain=example.com' },
  { method: 'GET', url: '/api/logs/v1/emails/eml_a1' },
  { method: 'GET', url: '/api/logs/v1/emails' },
  { method: 'GET', url: '/api/logs/v1/00000000-0000-4000-8000-000000000000' },
  { method: 'POST', url: '/api/template/v1/tpl_a/versions', payload: { content: [] } },
  { method: 'GET', url: '/api/template/v1' },
  { method: 'PATCH', url: '/api/domain/v1/dom_a1', payload: {} },
  { method: 'DELETE', url: '/api/domain/v1/dom_a1' },
  { method: 'GET', url: '/api/domain/v1' },
  { method: 'GET', url: '/api/contacts/list' },
  { method: 'GET', url: '/api/contacts/v1/list' },
] as const;

describe.each(ROUTES)('$method $url', (route) => {
  it.each([
    ['no key', {}, 'No API key was sent.'],
    ['an unknown key as Bearer', { authorization: 'Bearer sk_unknown_000000000' }, 'The API key is not valid.'],
    ['an unknown key as x-api-key', { 'x-api-key': 'sk_unknown_000000000' }, 'The API key is not valid.'],
    ['a wrong scheme', { authorization: `Basic ${KEY_A}` }, "The Authorization header must be 'Bearer <key>'."],
    ['two different valid keys', { authorization: `Bearer ${KEY_A}`, 'x-api-key': KEY_B }, 'The Authorization and x-api-key headers carry two different keys.'],
  ])('answers 401 UNAUTHORIZED for %s', async (_case, headers, message) => {
    let checked = false;
    const { app } = await makeApp({ check: async () => ((checked = true), Promise.reject(new Error('must not run'))) });
    const response = await app.inject({ ...route, headers });
    const body = expectError(response, 401, 'UNAUTHORIZED');
    expect(body['message']).toBe(message);
    expect(checked).toBe(false);
  });

  it.each([
    ['Authorization: Bearer', bearerA],
    ['x-api-key', apiKeyA],
  ])('accepts the key as %s', async (_style, headers) => {
    const { app } = await makeApp();
    const response = await app.inject({ ...route, headers });
    // The record log id of the URL above is not a record of org A: 404 is the authenticated answer there.
    expect(response.statusCode, response.body).toBe(route.url.includes('00000000-') ? 404 : 200);
  });
});

describe('public routes', () => {
  it.each(['/openapi.json', '/docs'])('%s needs no key and writes no record', async (url) => {
    const { app } = await makeApp();
    const response = await app.inject({ method: 'GET', url });
    expect(response.statusCode).toBe(200);
    expect(response.headers['x-log-id']).toBeUndefined();
  });

  it('an unknown route answers 404 (not 401) without a key, as JSON', async () => {
    const { app } = await makeApp();
    expectError(await app.inject({ method: 'GET', url: '/admin' }), 404, 'ROUTE_NOT_FOUND');
  });
});

describe('API keys given at start', () => {
  it('adds a key for an existing organisation and one for a new, empty organisation', async () => {
    const { app } = await makeApp({
      apiKeys: [
        { key: 'sk_extra_for_org_a_2dcd4cc9fc3edc0cef608267dc61178f', organizationId: 'org_a' },
        { key: 'sk_fresh_org_key_55c0e82cba28959438d30b5c9443988a', organizationId: 'org_new' },
      ],
    });
    const a = await app.inject({ method: 'GET', url: '/api/logs/v1/emails/eml_a1', headers: { 'x-api-key': 'sk_extra_for_org_a_2dcd4cc9fc3edc0cef608267dc61178f' } });
    expect(a.statusCode).toBe(200);
    const fresh = await app.inject({ method: 'GET', url: '/api/contacts/list', headers: { authorization: 'Bearer sk_fresh_org_key_55c0e82cba28959438d30b5c9443988a' } });
    expect(fresh.json()).toMatchObject({ contacts: [], total: 0, totalContacts: 0 });
    expectError(await app.inject({ method: 'GET', url: '/api/logs/v1/emails/eml_a1', headers: { 'x-api-key': 'sk_fresh_org_key_55c0e82cba28959438d30b5c9443988a' } }), 404, 'NOT_FOUND');
  });

  it('refuses a key that already belongs to another organisation', async () => {
    await expect(makeApp({ apiKeys: [{ key: KEY_A, organizationId: 'org_b' }] })).rejects.toThrow(/already belongs to organisation "org_a"/);
  });
});

describe('the key cache', () => {
  it('remembers a key for API_KEY_CACHE_TTL_MS; a key revoked in this process (forgetRevokedKey) is asked of the store at once', async () => {
    const record = { id: 'key_1', organizationId: 'org', owner: { id: 'u', name: 'n', email: 'e@x.example', image: '' } };
    let held: typeof record | undefined = record;
    let asked = 0;
    let now = 0;
    const cache = new CachedKeyLookup({ findByDigest: async () => (asked++, held) } as never, () => now);
    const digest = Buffer.alloc(32, 1);
    expect(await cache.findByDigest(digest)).toEqual(record);
    held = undefined; // removed from the store by another process: remembered until the TTL
    expect(await cache.findByDigest(digest)).toEqual(record);
    expect(asked).toBe(1);
    now = API_KEY_CACHE_TTL_MS + 1;
    expect(await cache.findByDigest(digest)).toBeUndefined();
    held = record;
    expect(await cache.findByDigest(digest)).toEqual(record);
    held = undefined;
    forgetRevokedKey('key_other');
    expect(await cache.findByDigest(digest)).toEqual(record);
    forgetRevokedKey('key_1');
    expect(await cache.findByDigest(digest)).toBeUndefined();
  });
});
