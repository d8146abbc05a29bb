/**
 * Bounded under abuse: time limits cut off clients that send half a request or sit idle, a request
 * without a key costs a 401 and nothing more, what a record keeps is bounded whatever the request
 * carried, JSON nesting is limited, and memory stays flat under a flood of unauthenticated requests.
 */
import { execFile } from 'node:child_process';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_TIMEOUTS } from '../../src/http/app.js';
import { MAX_LOGGED_BODY_CHARS, MAX_LOGGED_HEADERS, recordedHeaders } from '../../src/http/audit.js';
import { jsonDepthProblem, MAX_JSON_DEPTH } from '../../src/http/validation.js';
import { bearerA, chars, expectError, KEY_A, makeApp } from './helpers.js';

const run = promisify(execFile);

describe('time limits (a real listening server with short limits)', () => {
  const SHORT = { headersMs: 300, requestMs: 600, keepAliveMs: 200 };
  let running: FastifyInstance | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function listen(): Promise<number> {
    const { app } = await makeApp({ timeouts: SHORT });
    running = app;
    await app.listen({ host: '127.0.0.1', port: 0 });
    return (app.server.address() as AddressInfo).port;
  }

  /** Opens a raw connection and resolves, when the server closes it, with what it sent and when. */
  async function rawConnection(port: number): Promise<{ socket: Socket; closed: Promise<{ raw: string; afterMs: number }> }> {
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const opened = Date.now();
    let raw = '';
    socket.on('data', (chunk) => (raw += String(chunk)));
    socket.on('error', () => undefined);
    const closed = new Promise<{ raw: string; afterMs: number }>((resolve) => socket.once('close', () => resolve({ raw, afterMs: Date.now() - opened })));
    return { socket, closed };
  }

  it('defaults: headers 10 s, whole request 30 s, idle keep-alive 5 s', () => {
    expect(DEFAULT_TIMEOUTS).toEqual({ headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000 });
  });

  it('a client that sends half its headers is cut off after the header limit (408)', async () => {
    const { socket, closed } = await rawConnection(await listen());
    socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: ');
    const { raw, afterMs } = await closed;
    expect(raw).toMatch(/^HTTP\/1\.1 408/);
    expect(afterMs).toBeGreaterThanOrEqual(SHORT.headersMs - 50);
    expect(afterMs).toBeLessThan(SHORT.requestMs + 1_500);
  });

  it('a client that sends half its body is cut off after the request limit', async () => {
    const { socket, closed } = await rawConnection(await listen());
    socket.write(
      `POST /api/template/v1/tpl_a/versions HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${KEY_A}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"content":[`,
    );
    const { raw, afterMs } = await closed;
    expect(raw).toMatch(/^HTTP\/1\.1 408/);
    expect(afterMs).toBeGreaterThanOrEqual(SHORT.requestMs - 50);
    expect(afterMs).toBeLessThan(SHORT.requestMs + 1_500);
  });

  it('an idle kept-alive connection is closed after the keep-alive limit', async () => {
    const { socket, closed } = await rawConnection(await listen());
    socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    const { raw, afterMs } = await closed;
    expect(raw).toMatch(/^HTTP\/1\.1 200/);
    expect(raw).toMatch(/keep-alive/i);
    expect(afterMs).toBeLessThan(SHORT.keepAliveMs + 1_500);
  });
});

describe('a request without a valid key costs a 401', () => {
  it('its body is never read: a body over the limit still answers 401, not 413', async () => {
    const { app } = await makeApp();
    const response = await app.inject({
      method: 'POST',
      url: '/api/template/v1/tpl_a/versions',
      headers: { 'content-type': 'application/json' },
      payload: `{"content":[${'1,'.repeat(700_000)}1]}`,
    });
    expectError(response, 401, 'UNAUTHORIZED');
  });
});

describe('what a record keeps is bounded', () => {
  it('headers: only listed names, values from closed sets, others counted (issue 38: no free text)', () => {
    const headers: Record<string, string> = { 'x-big': chars(12 * 1024), [`x-${chars(500, 'n')}`]: 'v', authorization: `Bearer ${chars(300)}`, 'user-agent': chars(300), 'content-type': 'application/json; charset=utf-8', 'content-length': '12' };
    for (let i = 0; i < 100; i++) headers[`x-h${i}`] = String(i);
    const kept = recordedHeaders(headers);
    expect(kept).toEqual({ authorization: '[REDACTED]', 'user-agent': '[not recorded, 300 chars]', 'content-type': 'application/json', 'content-length': '12', '…': '102 other header(s) not recorded' });
    expect(Object.keys(kept).length).toBeLessThanOrEqual(MAX_LOGGED_HEADERS + 1);
  });

  it('a request with 12 KB headers, a 2 KB URL and a large body leaves a record of a few KB', async () => {
    const { app } = await makeApp();
    const headers: Record<string, string> = { ...bearerA, 'content-type': 'application/json', 'x-big': chars(12 * 1024), 'user-agent': chars(2000, 'u') };
    const response = await app.inject({
      method: 'POST',
      url: `/api/template/v1/tpl_a/versions?${Array.from({ length: 100 }, (_, i) => `p${i}=${chars(20)}`).join('&')}`,
      headers,
      payload: { content: [chars(200 * 1024)] },
    });
    expect(response.statusCode, response.body).toBe(200);
    const record = (await app.inject({ method: 'GET', url: `/api/logs/v1/${String(response.headers['x-log-id'])}`, headers: bearerA })).json();
    expect(JSON.stringify(record).length).toBeLessThan(8 * 1024);
    expect(record.requestDetails.headers['x-big']).toBeUndefined();
    expect(record.user_agent).toBe('[not recorded, 2000 chars]');
    // Free text is kept as its size (issue 38), so the body's record is small whatever its size.
    expect(record.request_body).toEqual({ content: [`[not recorded, ${200 * 1024} chars]`] });
    expect(JSON.stringify(record.request_body).length).toBeLessThan(MAX_LOGGED_BODY_CHARS);
    expect(record.requestDetails.query['…']).toBe('more parameters not recorded');
  });
});

describe('JSON nesting is limited (a body nested thousands deep once overflowed the stack: 500)', () => {
  const nested = (depth: number): unknown => {
    let value: unknown = 'x';
    for (let i = 0; i < depth; i++) value = [value];
    return value;
  };

  it.each([
    ['a scalar', 'x', null],
    ['an empty object (depth 1)', {}, null],
    [`arrays nested ${MAX_JSON_DEPTH} deep`, nested(MAX_JSON_DEPTH), null],
    [`arrays nested ${MAX_JSON_DEPTH + 1} deep`, nested(MAX_JSON_DEPTH + 1), `more than ${MAX_JSON_DEPTH} levels`],
    ['objects nested 3,000 deep', JSON.parse(`${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}`) as unknown, `more than ${MAX_JSON_DEPTH} levels`],
  ])('%s', (_case, value, problem) => {
    const found = jsonDepthProblem(value);
    if (problem === null) expect(found).toBeNull();
    else expect(found).toContain(problem);
  });

  it('template content nested 3,000 deep is a 400 naming the limit, and nothing is stored', async () => {
    const { app, stores } = await makeApp();
    const before = await stores.templates.listVersions('org_a', 'tpl_a');
    const response = await app.inject({ method: 'POST', url: '/api/template/v1/tpl_a/versions', headers: bearerA, payload: { content: [nested(3000)] } });
    const body = expectError(response, 400, 'VALIDATION_FAILED');
    expect(body['message']).toContain(`at most ${MAX_JSON_DEPTH} levels`);
    expect(await stores.templates.listVersions('org_a', 'tpl_a')).toHaveLength(before?.length ?? -1);
  });

  it(`content nested to the limit (body ${MAX_JSON_DEPTH} levels) is accepted`, async () => {
    const { app } = await makeApp();
    // body object (1) > content array (2) > … : MAX_JSON_DEPTH levels in all.
    const response = await app.inject({ method: 'POST', url: '/api/template/v1/tpl_a/versions', headers: bearerA, payload: { content: [nested(MAX_JSON_DEPTH - 3)] } });
    expect(response.statusCode, response.body).toBe(200);
  });
});

describe('memory stays flat under a flood of unauthenticated requests', () => {
  it('10,000 requests with 12 KB headers grow the heap by less than 4 MB (after GC, record log ring of 1,000)', async () => {
    const script = fileURLToPath(new URL('./fixtures/heap-flood.ts', import.meta.url));
    const { stdout } = await run(process.execPath, ['--expose-gc', '--import', 'tsx', script, '10000', String(12 * 1024), '1000'], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      timeout: 60_000,
    });
    const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { growth: number; requests: number };
    expect(result.requests).toBe(10_000);
    expect(result.growth).toBeLessThan(4 * 1024 * 1024);
  }, 60_000);
});
