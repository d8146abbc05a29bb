import { describe, expect, it } from 'vitest';
import { REDACTED } from '../../src/http/audit.js';
import { apiKeyA, apiKeyB, bearerA, bearerB, chars, EMAIL_LOG_SHAPE, expectError, expectShape, KEY_A, makeApp, RECORD_LOG_SHAPE, seededStores } from './helpers.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('GET /api/logs/v1/emails/:id', () => {
  it('answers the email log with every field of the spec and its events in lifecycle order', async () => {
    const { app } = await makeApp();
    const response = await app.inject({ method: 'GET', url: '/api/logs/v1/emails/eml_a1', headers: bearerA });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expectShape(body, EMAIL_LOG_SHAPE);
    expect(body).toMatchObject({ id: 'eml_a1', organizationId: 'org_a', ccEmails: ['cc@r.test'], headers: { 'X-Test': '1' }, size: 1234 });
    // Stored out of order; answered by createdAt ascending.
    expect(body.events.map((e: { id: string }) => e.id)).toEqual(['ev1', 'ev2', 'ev3']);
    expect(body.events[0].metadata).toBeNull();
    expect(body.events[2].metadata).toEqual({ smtp: '250' });
  });

  it('fills absent optional fields with null and empty lists', async () => {
    const { app } = await makeApp();
    const body = (await app.inject({ method: 'GET', url: '/api/logs/v1/emails/eml_a2', headers: apiKeyA })).json();
    expectShape(body, EMAIL_LOG_SHAPE);
    expect(body).toMatchObject({ fromName: null, replyTo: null, sentAt: null, ccEmails: [], bccEmails: [], headers: {}, events: [] });
  });

  it("answers 404 for another organisation's email log, never its data", async () => {
    const { app } = await makeApp();
    const response = await app.inject({ method: 'GET', url: '/api/logs/v1/emails/eml_b1', headers: bearerA });
    expectError(response, 404, 'NOT_FOUND');
    expect(response.body).not.toContain('b.test');
    // …while its owner reads it.
    expect((await app.inject({ method: 'GET', url: '/api/logs/v1/emails/eml_b1', headers: bearerB })).statusCode).toBe(200);
  });

  it('answers 404 for an unknown id, and 400 for an id longer than 255', async () => {
    const { app } = await makeApp();
    expectError(await app.inject({ method: 'GET', url: '/api/logs/v1/emails/nope', headers: bearerA }), 404, 'NOT_FOUND');
    expectError(await app.inject({ method: 'GET', url: `/api/logs/v1/emails/${chars(256)}`, headers: bearerA }), 400, 'VALIDATION_FAILED');
  });
});

describe('GET /api/logs/v1/emails (beyond the spec)', () => {
  it('lists the organisation’s email logs newest first with pagination fields', async () => {
    const { app } = await makeApp();
    const body = (await app.inject({ method: 'GET', url: '/api/logs/v1/emails', headers: bearerA })).json();
    expect(Object.keys(body).sort()).toEqual(['emails', 'event', 'limit', 'page', 'total']);
    expect(body).toMatchObject({ total: 2, page: 1, limit: 20, event: 'email.list' });
    expect(body.emails.map((e: { id: string }) => e.id)).toEqual(['eml_a2', 'eml_a1']);
    for (const email of body.emails) expectShape(email, EMAIL_LOG_SHAPE);
    const second = (await app.inject({ method: 'GET', url: '/api/logs/v1/emails?page=2&limit=1', headers: bearerA })).json();
    expect(second).toMatchObject({ total: 2, page: 2, limit: 1 });
    expect(second.emails.map((e: { id: string }) => e.id)).toEqual(['eml_a1']);
  });
});

describe('route precedence', () => {
  it('/api/logs/v1/emails/<id> reaches the email handler, /api/logs/v1/<uuid> the record log', async () => {
    const { app } = await makeApp();
    const email = await app.inject({ method: 'GET', url: '/api/logs/v1/emails/eml_a1', headers: bearerA });
    expect(email.json()).toHaveProperty('messageId');
    const record = await app.inject({ method: 'GET', url: `/api/logs/v1/${String(email.headers['x-log-id'])}`, headers: bearerA });
    expect(record.statusCode).toBe(200);
    expect(record.json()).toMatchObject({ event: 'email_log.viewed', resource_id: 'eml_a1' });
    // The email list path is not mistaken for a record log id either.
    expect((await app.inject({ method: 'GET', url: '/api/logs/v1/emails', headers: bearerA })).json()).toHaveProperty('emails');
  });
});

describe('the record log (audit trail)', () => {
  it('writes a record for a success, readable through x-log-id, with every field of the spec', async () => {
    const { app } = await makeApp({ environment: 'production' });
    const patch = await app.inject({
      method: 'PATCH',
      url: '/api/domain/v1/dom_a1?trace=1',
      headers: { ...bearerA, 'user-agent': 'vitest/1', traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
      payload: { tls: 'enforced' },
    });
    expect(patch.statusCode).toBe(200);
    const logId = String(patch.headers['x-log-id']);
    expect(logId).toMatch(UUID);
    const response = await app.inject({ method: 'GET', url: `/api/logs/v1/${logId}`, headers: apiKeyA });
    expect(response.statusCode).toBe(200);
    const record = response.json();
    expectShape(record, RECORD_LOG_SHAPE);
    expect(record).toMatchObject({
      uuid: logId,
      event: 'domain.updated',
      level: 'info',
      trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
      status_code: 200,
      created_at: '2025-06-01T00:00:00.000Z',
      request_body: { tls: 'enforced' },
      email: null,
      actor_type: 'api_key',
      actor_id: 'key_a',
      resource_type: 'domain',
      resource_id: 'dom_a1',
      service: 'domain',
      action: 'updated',
      ip_address: '127.0.0.1',
      user_agent: 'vitest/1',
      environment: 'production',
    });
    // Issue 38: a parameter the route does not declare is counted, never kept.
    expect(record.requestDetails).toMatchObject({ method: 'PATCH', path: '/api/domain/v1/dom_a1', query: { '…': '1 undeclared parameter(s) not recorded' } });
    expect(record.metadata).toMatchObject({ route: '/api/domain/v1/:domain_id', errorCode: null });
  });

  it('records the email a request was about', async () => {
    const { app } = await makeApp();
    const read = await app.inject({ method: 'GET', url: '/api/logs/v1/emails/eml_a1', headers: bearerA });
    const record = (await app.inject({ method: 'GET', url: `/api/logs/v1/${String(read.headers['x-log-id'])}`, headers: bearerA })).json();
    expect(record.email).toEqual({ id: 'eml_a1', messageId: '<a1@mail.a.test>', status: 'delivered' });
  });

  it.each([
    ['a validation error', { method: 'PATCH', url: '/api/domain/v1/dom_a1', payload: { tls: 'none' } }, 400, 'domain.update_failed', 'warn', 'VALIDATION_FAILED'],
    ['an unknown id', { method: 'DELETE', url: '/api/domain/v1/nope' }, 404, 'domain.delete_failed', 'warn', 'NOT_FOUND'],
    ['an unknown route', { method: 'GET', url: '/api/nothing/here' }, 404, 'route.match_failed', 'warn', 'ROUTE_NOT_FOUND'],
    ['invalid JSON', { method: 'POST', url: '/api/template/v1/tpl_a/versions', payload: '{"content": [', headers: { 'content-type': 'application/json' } }, 400, 'template_version.create_failed', 'warn', 'INVALID_JSON'],
  ] as const)('writes a failure record for %s', async (_what, request, status, event, level, code) => {
    const { app } = await makeApp();
    const response = await app.inject({ ...request, headers: { ...bearerA, ...('headers' in request ? request.headers : {}) } });
    expect(response.statusCode).toBe(status);
    const record = (await app.inject({ method: 'GET', url: `/api/logs/v1/${String(response.headers['x-log-id'])}`, headers: bearerA })).json();
    expectShape(record, RECORD_LOG_SHAPE);
    expect(record).toMatchObject({ event, level, status_code: status, actor_type: 'api_key', actor_id: 'key_a' });
    expect(record.metadata.errorCode).toBe(code);
  });

  it('writes a failure record for a 500, level error', async () => {
    const { app } = await makeApp({
      check: async () => {
        throw new Error('boom');
      },
    });
    const response = await app.inject({ method: 'POST', url: '/api/tools/v1/spoof-checker', headers: bearerA, payload: { domain: 'x.test' } });
    const record = (await app.inject({ method: 'GET', url: `/api/logs/v1/${String(response.headers['x-log-id'])}`, headers: bearerA })).json();
    expect(record).toMatchObject({ event: 'spoof_check.perform_failed', level: 'error', status_code: 500, resource_id: 'x.test', service: 'tools' });
  });

  it('writes a rate-limited record for a 429, level warn', async () => {
    const { app } = await makeApp({ rateLimits: { domainUpdate: { max: 1, windowMs: 60_000 } } });
    await app.inject({ method: 'PATCH', url: '/api/domain/v1/dom_a1', headers: bearerA, payload: {} });
    const limited = await app.inject({ method: 'PATCH', url: '/api/domain/v1/dom_a1', headers: bearerA, payload: {} });
    expect(limited.statusCode).toBe(429);
    const record = (await app.inject({ method: 'GET', url: `/api/logs/v1/${String(limited.headers['x-log-id'])}`, headers: bearerA })).json();
    expect(record).toMatchObject({ event: 'domain.update_rate_limited', level: 'warn', status_code: 429 });
  });

  it('logs a request without a valid key (401) but lets nobody read it', async () => {
    const { app, stores } = await makeApp();
    const response = await app.inject({ method: 'GET', url: '/api/logs/v1/emails/eml_a1', headers: { 'x-api-key': 'sk_wrong_key_000000' } });
    expectError(response, 401, 'UNAUTHORIZED');
    const logId = String(response.headers['x-log-id']);
    expect(logId).toMatch(UUID);
    // Written (the store holds it)…
    const held = (stores.recordLogs as unknown as { size: number }).size;
    expect(held).toBeGreaterThan(0);
    // …but readable by no organisation.
    expectError(await app.inject({ method: 'GET', url: `/api/logs/v1/${logId}`, headers: bearerA }), 404, 'NOT_FOUND');
    expectError(await app.inject({ method: 'GET', url: `/api/logs/v1/${logId}`, headers: bearerB }), 404, 'NOT_FOUND');
  });

  it("answers 404 for another organisation's record", async () => {
    const { app } = await makeApp();
    const mine = await app.inject({ method: 'GET', url: '/api/template/v1', headers: bearerA });
    const logId = String(mine.headers['x-log-id']);
    const theirs = await app.inject({ method: 'GET', url: `/api/logs/v1/${logId}`, headers: apiKeyB });
    expectError(theirs, 404, 'NOT_FOUND');
    expect(theirs.body).not.toContain('key_a');
    expect((await app.inject({ method: 'GET', url: `/api/logs/v1/${logId}`, headers: apiKeyA })).statusCode).toBe(200);
  });

  it('redacts secrets in headers, query and body, and never records the key', async () => {
    const { app } = await makeApp();
    const response = await app.inject({
      method: 'POST',
      url: '/api/template/v1/tpl_a/versions?api_key=leaked-in-query&page=1',
      headers: { ...bearerA, 'x-api-key': KEY_A, cookie: 'session=s3cr3t' },
      payload: { content: [{ block: 'text', password: 'hunter2', nested: { apiKey: 'k-123', token: 't-456' } }], description: 'kept' },
    });
    expect(response.statusCode).toBe(200);
    const read = await app.inject({ method: 'GET', url: `/api/logs/v1/${String(response.headers['x-log-id'])}`, headers: bearerA });
    const text = read.body;
    for (const secret of [KEY_A, 's3cr3t', 'hunter2', 'k-123', 't-456', 'leaked-in-query']) expect(text).not.toContain(secret);
    const record = read.json();
    expect(record.requestDetails.headers).toMatchObject({ authorization: REDACTED, 'x-api-key': REDACTED, cookie: REDACTED });
    // Issue 38: undeclared parameters and fields are counted, free text is kept as its size.
    expect(record.requestDetails.query).toEqual({ '…': '2 undeclared parameter(s) not recorded' });
    expect(record.request_body).toEqual({ content: [{ '…': '3 undeclared field(s) not recorded' }], description: '[not recorded, 4 chars]' });
    expect(record.actor_id).toBe('key_a');
  });

  it('takes a fresh trace id when traceparent is missing or invalid', async () => {
    const { app } = await makeApp();
    const ids = new Set<string>();
    for (const traceparent of [undefined, 'garbage', '00-00000000000000000000000000000000-00f067aa0ba902b7-01']) {
      const r = await app.inject({ method: 'GET', url: '/api/template/v1', headers: { ...bearerA, ...(traceparent ? { traceparent } : {}) } });
      const record = (await app.inject({ method: 'GET', url: `/api/logs/v1/${String(r.headers['x-log-id'])}`, headers: bearerA })).json();
      expect(record.trace_id).toMatch(/^[0-9a-f]{32}$/);
      expect(record.trace_id).not.toBe('00000000000000000000000000000000');
      ids.add(record.trace_id);
    }
    expect(ids.size).toBe(3);
  });

  it('log_id: minimum length 1 (an empty id is a 400 naming the bound), at most 255', async () => {
    const { app } = await makeApp();
    const empty = expectError(await app.inject({ method: 'GET', url: '/api/logs/v1/', headers: bearerA }), 400, 'VALIDATION_FAILED');
    expect(empty['message']).toBe('path.log_id must be at least 1 character(s) long (it has 0).');
    expectError(await app.inject({ method: 'GET', url: `/api/logs/v1/${chars(255)}`, headers: bearerA }), 404, 'NOT_FOUND');
    expectError(await app.inject({ method: 'GET', url: `/api/logs/v1/${chars(256)}`, headers: bearerA }), 400, 'VALIDATION_FAILED');
  });

  it('the record log route is itself authenticated', async () => {
    const { app } = await makeApp();
    expectError(await app.inject({ method: 'GET', url: '/api/logs/v1/anything' }), 401, 'UNAUTHORIZED');
  });
});

describe('when the record log store fails', () => {
  it('still answers the request (the operation happened), without x-log-id', async () => {
    const stores = await seededStores();
    stores.recordLogs = {
      append: async () => {
        throw new Error('database down');
      },
      get: async () => undefined,
    };
    const { app } = await makeApp({ stores });
    const response = await app.inject({ method: 'DELETE', url: '/api/domain/v1/dom_a1', headers: bearerA });
    expect(response.statusCode).toBe(200);
    expect(response.headers['x-log-id']).toBeUndefined();
    expect(await stores.domains.get('org_a', 'dom_a1')).toBeUndefined();
  });
});
