import { describe, expect, it } from 'vitest';
import { SpoofCheckError } from '../../packages/engine/src/errors.js';
import { DEFAULT_BODY_LIMIT_BYTES } from '../../src/http/app.js';
import { ApiError, ERROR_CATALOGUE, toApiError, type ErrorCode } from '../../src/http/errors.js';
import { StoreUnavailableError } from '../../src/store/errors.js';
import { bearerA, expectError, makeApp } from './helpers.js';

describe('the error catalogue', () => {
  it('holds exactly the published codes, with their statuses (codes are an API: changing one fails here)', () => {
    const statuses = Object.fromEntries(Object.entries(ERROR_CATALOGUE).map(([code, entry]) => [code, entry.status]));
    expect(statuses).toEqual({
      VALIDATION_FAILED: 400,
      INVALID_JSON: 400,
      MALFORMED_URL: 400,
      UNAUTHORIZED: 401,
      FORBIDDEN: 403,
      NOT_FOUND: 404,
      ROUTE_NOT_FOUND: 404,
      PAYLOAD_TOO_LARGE: 413,
      STORAGE_QUOTA_EXCEEDED: 413,
      REQUEST_TIMEOUT: 408,
      HEADERS_TOO_LARGE: 431,
      UNSUPPORTED_MEDIA_TYPE: 415,
      RATE_LIMITED: 429,
      INVALID_DOMAIN: 400,
      DNS_FAILURE: 502,
      DNS_TIMEOUT: 503,
      DOMAIN_NOT_FOUND: 422,
      NOT_IN_DEMO: 404,
      MONITOR_EXISTS: 409,
      MONITOR_LIMIT_REACHED: 409,
      WEBHOOK_URL_REFUSED: 400,
      NO_WEBHOOK_URL: 409,
      ALERT_CHANNEL_REFUSED: 400,
      ALERT_CHANNEL_LIMIT_REACHED: 409,
      ALERT_EMAIL_NOT_CONFIGURED: 409,
      REPORT_REFUSED: 422,
      REPORT_PARSER_BUSY: 503,
      SERVICE_UNAVAILABLE: 503,
      STORE_UNAVAILABLE: 503,
      INTERNAL: 500,
    });
  });

  it.each(Object.entries(ERROR_CATALOGUE))('%s is SCREAMING_SNAKE with a message, why and fix in plain words', (code, entry) => {
    expect(code).toMatch(/^[A-Z]+(_[A-Z]+)*$/);
    for (const text of [entry.message, entry.why, entry.fix]) {
      expect(text.length).toBeGreaterThanOrEqual(10);
      expect(text).toMatch(/[.)]$/);
    }
  });

  it('ApiError renders { statusCode, code, message, why, fix } and the optional fields only when set', () => {
    expect(new ApiError('NOT_FOUND').toBody()).toEqual({ statusCode: 404, code: 'NOT_FOUND', ...pick(ERROR_CATALOGUE.NOT_FOUND) });
    expect(new ApiError('RATE_LIMITED', { retryAfter: 7 }).toBody()).toMatchObject({ statusCode: 429, retryAfter: 7 });
    const query = { name: 'x.test', type: 'TXT' as const, reason: 'servfail' as const };
    expect(new ApiError('DNS_FAILURE', { query }).toBody()).toMatchObject({ statusCode: 502, query });
  });
});

describe('toApiError', () => {
  const query = { name: '_dmarc.x.test', type: 'TXT' as const, reason: 'timeout' as const };
  it.each<[string, unknown, ErrorCode]>([
    ['an ApiError passes through', new ApiError('NOT_FOUND'), 'NOT_FOUND'],
    ['invalid_domain', new SpoofCheckError('invalid_domain', 'm', { why: 'w', fix: 'f' }), 'INVALID_DOMAIN'],
    ['dns_failure', new SpoofCheckError('dns_failure', 'm', { why: 'w', fix: 'f', query }), 'DNS_FAILURE'],
    ['dns_timeout', new SpoofCheckError('dns_timeout', 'm', { why: 'w', fix: 'f', query }), 'DNS_TIMEOUT'],
    ['a validation error', { validation: [{ keyword: 'required', instancePath: '', params: { requiredProperties: ['x'] } }], validationContext: 'body' }, 'VALIDATION_FAILED'],
    ['malformed JSON', { code: 'FST_ERR_CTP_INVALID_JSON_BODY', statusCode: 400 }, 'INVALID_JSON'],
    ['an empty JSON body', { code: 'FST_ERR_CTP_EMPTY_JSON_BODY', statusCode: 400 }, 'INVALID_JSON'],
    ['a body too large', { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 }, 'PAYLOAD_TOO_LARGE'],
    ['a content type without parser', { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 }, 'UNSUPPORTED_MEDIA_TYPE'],
    ['a bad URL', { code: 'FST_ERR_BAD_URL', statusCode: 400 }, 'MALFORMED_URL'],
    ['the database unreachable', new StoreUnavailableError('connect ECONNREFUSED 10.1.2.3:5432'), 'STORE_UNAVAILABLE'],
    ['a plain Error', new Error('database password is hunter2'), 'INTERNAL'],
    ['a thrown string', 'oops', 'INTERNAL'],
    ['null', null, 'INTERNAL'],
  ])('%s', (_case, error, code) => {
    const mapped = toApiError(error);
    expect(mapped.code).toBe(code);
    expect(mapped.statusCode).toBe(ERROR_CATALOGUE[code].status);
    if (code === 'INTERNAL') expect(JSON.stringify(mapped.toBody())).not.toMatch(/hunter2|oops/);
  });

  it('keeps the failed query of a DNS refusal', () => {
    expect(toApiError(new SpoofCheckError('dns_timeout', 'm', { why: 'w', fix: 'f', query })).toBody().query).toEqual(query);
  });
});

describe('transport errors through the app', () => {
  it('413 PAYLOAD_TOO_LARGE above the body limit (1 MiB by default)', async () => {
    expect(DEFAULT_BODY_LIMIT_BYTES).toBe(1024 * 1024);
    const { app } = await makeApp();
    const big = JSON.stringify({ content: ['x'.repeat(DEFAULT_BODY_LIMIT_BYTES)] });
    const response = await app.inject({ method: 'POST', url: '/api/template/v1/tpl_a/versions', headers: { ...bearerA, 'content-type': 'application/json' }, payload: big });
    expectError(response, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('a body just under a configured limit passes, one byte over does not', async () => {
    const payload = JSON.stringify({ domain: 'example.com' });
    const { app } = await makeApp({ bodyLimit: payload.length });
    const headers = { ...bearerA, 'content-type': 'application/json' };
    expect((await app.inject({ method: 'POST', url: '/api/tools/v1/spoof-checker', headers, payload })).statusCode).toBe(200);
    const over = JSON.stringify({ domain: 'example.com ' });
    expectError(await app.inject({ method: 'POST', url: '/api/tools/v1/spoof-checker', headers, payload: over }), 413, 'PAYLOAD_TOO_LARGE');
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/xml'])('415 UNSUPPORTED_MEDIA_TYPE for %s', async (type) => {
    const { app } = await makeApp();
    const response = await app.inject({ method: 'POST', url: '/api/tools/v1/spoof-checker', headers: { ...bearerA, 'content-type': type }, payload: 'domain=example.com' });
    expectError(response, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it.each([
    ['{"domain": "example.com"', 'truncated'],
    ["{'domain': 'example.com'}", 'single quotes'],
    ['', 'empty body with a JSON content type'],
    ['{"__proto__": {"x": 1}}', 'prototype poisoning'],
  ])('400 INVALID_JSON for %j (%s)', async (payload, _reason) => {
    const { app } = await makeApp();
    const response = await app.inject({ method: 'POST', url: '/api/tools/v1/spoof-checker', headers: { ...bearerA, 'content-type': 'application/json' }, payload });
    expect(response.statusCode).toBe(400);
    expect(['INVALID_JSON', 'VALIDATION_FAILED']).toContain(response.json().code);
    if (_reason !== 'prototype poisoning') expectError(response, 400, 'INVALID_JSON');
  });

  it('a POST without a body is a validation error naming the body', async () => {
    const { app } = await makeApp();
    const body = expectError(await app.inject({ method: 'POST', url: '/api/tools/v1/spoof-checker', headers: bearerA }), 400, 'VALIDATION_FAILED');
    expect(body['message']).toMatch(/^body must be an object/);
  });

  it.each([
    ['GET', '/no-such-page'],
    ['GET', '/api/tools/v2/spoof-checker'],
    ['PUT', '/api/domain/v1/dom_a1'],
    ['GET', '/api/template/v1/tpl_a/versions'],
  ])('404 ROUTE_NOT_FOUND as JSON for %s %s', async (method, url) => {
    const { app } = await makeApp();
    const body = expectError(await app.inject({ method: method as 'GET', url, headers: bearerA }), 404, 'ROUTE_NOT_FOUND');
    expect(body['message']).toContain(url);
  });

  it.each([
    ['with a body that is not JSON', 'not json at all'],
    ['with a large JSON body', JSON.stringify({ padding: 'a'.repeat(900 * 1024) })],
  ])('an unknown route %s is 404 ROUTE_NOT_FOUND, answered before the body is parsed', async (_name, payload) => {
    const { app } = await makeApp();
    for (const headers of [{ 'content-type': 'application/json' }, { ...bearerA, 'content-type': 'application/json' }]) {
      const response = await app.inject({ method: 'POST', url: '/no-such-route', headers, payload });
      const body = expectError(response, 404, 'ROUTE_NOT_FOUND');
      expect(body['message']).toBe('No endpoint matches POST /no-such-route.');
      expect(response.headers['x-log-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('400 MALFORMED_URL for a bad percent-encoding, with a record log id', async () => {
    const { app } = await makeApp();
    const response = await app.inject({ method: 'GET', url: '/api/domain/v1/%E0%A4%A', headers: bearerA });
    expectError(response, 400, 'MALFORMED_URL');
    expect(response.headers['x-log-id']).toBeTypeOf('string');
  });

  it('every error response carries x-log-id', async () => {
    const { app } = await makeApp();
    for (const response of [
      await app.inject({ method: 'GET', url: '/nope' }),
      await app.inject({ method: 'GET', url: '/api/domain/v1' }),
      await app.inject({ method: 'GET', url: '/api/domain/v1?page=0', headers: bearerA }),
    ]) {
      expect(response.statusCode).toBeGreaterThanOrEqual(400);
      expect(response.headers['x-log-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});

function pick(entry: { message: string; why: string; fix: string }) {
  return { message: entry.message, why: entry.why, fix: entry.fix };
}
