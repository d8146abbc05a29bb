import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { EMAIL_LOG_SHAPE, expectShape, KEY_A, makeApp, SAMPLE_RESULT, SPOOF_RESULT_SHAPE } from './helpers.js';

let running: FastifyInstance | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function listen(app: FastifyInstance): Promise<string> {
  running = app;
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

describe('over a real listening HTTP server', () => {
  it('answers fetch requests with both key styles, and the record log is readable through x-log-id', async () => {
    const { app } = await makeApp();
    const base = await listen(app);

    const check = await fetch(`${base}/api/tools/v1/spoof-checker`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
      body: JSON.stringify({ domain: 'example.com' }),
    });
    expect(check.status).toBe(200);
    expect(check.headers.get('content-type')).toMatch(/^application\/json/);
    expectShape(await check.json(), SPOOF_RESULT_SHAPE);

    const email = await fetch(`${base}/api/logs/v1/emails/eml_a1`, { headers: { 'x-api-key': KEY_A } });
    expect(email.status).toBe(200);
    expectShape(await email.json(), EMAIL_LOG_SHAPE);

    const logId = check.headers.get('x-log-id');
    const record = await fetch(`${base}/api/logs/v1/${logId}`, { headers: { 'x-api-key': KEY_A } });
    expect(record.status).toBe(200);
    expect(await record.json()).toMatchObject({ uuid: logId, event: 'spoof_check.performed', ip_address: '127.0.0.1', resource_id: 'example.com' });

    const unauthorized = await fetch(`${base}/api/contacts/list`);
    expect(unauthorized.status).toBe(401);
    expect(await unauthorized.json()).toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('close() lets a request in flight finish, then stops accepting', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started: () => void = () => undefined;
    const inFlight = new Promise<void>((resolve) => (started = resolve));
    const { app, stores } = await makeApp({
      check: async (domain) => {
        started();
        await gate;
        return { ...SAMPLE_RESULT, domain };
      },
    });
    const base = await listen(app);
    const pending = fetch(`${base}/api/tools/v1/spoof-checker?domain=slow.test`, { headers: { 'x-api-key': KEY_A } });
    await inFlight;
    let closed = false;
    const closing = app.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toBe(false);
    release();
    const response = await pending;
    expect(response.status).toBe(200);
    expect(((await response.json()) as { domain: string }).domain).toBe('slow.test');
    expect(response.headers.get('connection')).toBe('close');
    await closing;
    running = undefined;
    await expect(fetch(`${base}/openapi.json`)).rejects.toThrow();
  });

  it("a request that arrives while closing gets the catalogue's 503, with Connection: close, its record log readable by the key's organisation", async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started: () => void = () => undefined;
    const inFlight = new Promise<void>((resolve) => (started = resolve));
    const { app, stores } = await makeApp({
      check: async (domain) => {
        started();
        await gate;
        return { ...SAMPLE_RESULT, domain };
      },
    });
    const base = await listen(app);
    const pending = fetch(`${base}/api/tools/v1/spoof-checker?domain=slow.test`, { headers: { 'x-api-key': KEY_A } });
    await inFlight;
    // A second connection starts a request before close() and finishes it after: it is not idle,
    // so close() does not drop it, and the request arrives while the server is closing.
    const socket = connect(Number(new globalThis.URL(base).port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let raw = '';
    socket.on('data', (chunk) => (raw += String(chunk)));
    const ended = new Promise((resolve) => socket.once('close', resolve));
    socket.write('GET /api/template/v1 HTTP/1.1\r\nHost: localhost\r\n');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const closing = app.close();
    await new Promise((resolve) => setTimeout(resolve, 20));
    socket.write(`x-api-key: ${KEY_A}\r\n\r\n`);
    await ended;
    expect(raw).toMatch(/^HTTP\/1\.1 503/);
    expect(raw).toMatch(/connection: close/i);
    expect(raw).toContain('"code":"SERVICE_UNAVAILABLE"');
    const logId = /x-log-id: (\S+)/i.exec(raw)?.[1] ?? '';
    expect(await stores.recordLogs.get('org_a', logId)).toMatchObject({ uuid: logId, status_code: 503 });
    release();
    expect((await pending).status).toBe(200);
    await closing;
    running = undefined;
  });
});
