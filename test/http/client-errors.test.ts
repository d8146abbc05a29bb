/**
 * Errors before routing: what Node's HTTP parser refuses (a malformed request, headers over its
 * limit, a request that took too long) is answered from the catalogue ({ statusCode, code,
 * message, why, fix } and x-log-id) and recorded, like every other refusal. A real listening
 * server, raw sockets.
 */
import { connect, type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordLog } from '../../src/store/types.js';
import { makeApp } from './helpers.js';

let running: FastifyInstance | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function listen(): Promise<{ port: number; records: RecordLog[] }> {
  const { app, stores } = await makeApp({ timeouts: { headersMs: 300, requestMs: 600, keepAliveMs: 200 } });
  const records: RecordLog[] = [];
  const append = stores.recordLogs.append.bind(stores.recordLogs);
  stores.recordLogs.append = async (organizationId, record) => {
    records.push(record);
    return append(organizationId, record);
  };
  running = app;
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { port: (app.server.address() as AddressInfo).port, records };
}

/** Sends `bytes` on a new connection; resolves with everything the server sent before closing. */
async function exchange(port: number, bytes: string): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let raw = '';
  socket.on('data', (chunk) => (raw += String(chunk)));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(bytes);
  await closed;
  return raw;
}

function parse(raw: string): { status: number; headers: Record<string, string>; body: Record<string, unknown> } {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) as Record<string, unknown> };
}

describe('errors before routing', () => {
  it.each([
    ['a malformed header line', 400, 'VALIDATION_FAILED', 'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n'],
    ['a request line that is not HTTP', 400, 'VALIDATION_FAILED', 'HELLO THERE\r\n\r\n'],
    ['headers over 16 KiB', 431, 'HEADERS_TOO_LARGE', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`],
    ['half a request, then silence', 408, 'REQUEST_TIMEOUT', 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: '],
  ])('%s: %i %s from the catalogue, with a record log', async (_case, status, code, bytes) => {
    const { port, records } = await listen();
    const response = parse(await exchange(port, bytes));
    expect(response.status).toBe(status);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toMatchObject({ statusCode: status, code });
    for (const field of ['message', 'why', 'fix']) expect(String(response.body[field]).length).toBeGreaterThan(10);
    const logId = response.headers['x-log-id'];
    expect(logId).toMatch(/^[0-9a-f-]{36}$/);
    expect(records.find((record) => record.uuid === logId)).toMatchObject({ status_code: status, level: 'warn', ip_address: '127.0.0.1', metadata: { errorCode: code } });
  });
});
