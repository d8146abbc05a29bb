/**
 * Response compression (src/http/compression.ts): the negotiation of Accept-Encoding (RFC 9110
 * §12.5.3) as a table; then, through `inject`, every kind of response the service sends under every
 * kind of Accept-Encoding, each compressed answer decompressed and compared byte for byte with the
 * identity answer, with `Vary: Accept-Encoding`; streamed bodies (a batch's results, a route that
 * waits between lines) still streamed; and one real listening server fetched end to end.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { brotliDecompressSync, createBrotliDecompress, createGunzip, gunzipSync, gzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceRoutes } from '../../src/http/app.js';
import { COMPRESSION_THRESHOLD_BYTES, isCompressibleType, negotiateEncoding, type ContentCoding } from '../../src/http/compression.js';
import { ApiError } from '../../src/http/errors.js';
import { ASSETS } from '../../src/web/assets.js';
import { batchApp, BATCHES, VERDICT_NAMES } from '../jobs/helpers.js';
import { bearerA, makeApp } from './helpers.js';

describe('negotiateEncoding (RFC 9110 §12.5.3)', () => {
  const cases: [string | undefined, ContentCoding][] = [
    [undefined, 'identity'],
    ['', 'identity'],
    ['br', 'br'],
    ['gzip', 'gzip'],
    ['x-gzip', 'gzip'],
    ['GZIP', 'gzip'],
    ['gzip, deflate, br, zstd', 'br'], // Chromium
    ['deflate, gzip, br, zstd', 'br'], // curl --compressed
    ['gzip, deflate', 'gzip'],
    ['deflate', 'identity'],
    ['zstd', 'identity'],
    ['identity', 'identity'],
    ['*', 'br'],
    ['*;q=0', 'identity'],
    ['br;q=0, *', 'gzip'],
    ['br;q=0', 'identity'],
    ['br;q=0, gzip;q=0', 'identity'],
    ['gzip;q=0, br', 'br'],
    ['br;q=0.5, gzip;q=0.8', 'gzip'],
    ['br;q=0.8, gzip;q=0.8', 'br'],
    ['br;q=1.0, gzip', 'br'],
    ['gzip ; q=0.001', 'gzip'],
    ['identity;q=1, gzip;q=0.5', 'identity'],
    ['identity;q=0, gzip', 'gzip'],
    ['br;q=2', 'identity'], // not a qvalue: not acceptable
    ['br;q=abc, gzip', 'gzip'],
    ['br;q=0.5, br;q=0, gzip;q=0.4', 'br'], // a repeated coding keeps its best weight
  ];
  it.each(cases)('%j → %s', (header, expected) => {
    expect(negotiateEncoding(header)).toBe(expected);
  });
  it('reads a header sent more than once as one list', () => {
    expect(negotiateEncoding(['gzip;q=0.5', 'br'])).toBe('br');
  });
});

describe('isCompressibleType', () => {
  const cases: [string | undefined, boolean][] = [
    ['text/html; charset=utf-8', true],
    ['text/css; charset=utf-8', true],
    ['text/javascript; charset=utf-8', true],
    ['application/javascript', true],
    ['text/plain', true],
    ['application/json; charset=utf-8', true],
    ['application/problem+json', true],
    ['application/x-ndjson', true],
    ['image/svg+xml', true],
    ['application/xml', true],
    ['text/event-stream', false],
    ['image/png', false],
    ['application/gzip', false],
    ['application/zip', false],
    ['application/octet-stream', false],
    ['font/woff2', false],
    [undefined, false],
  ];
  it.each(cases)('%s → %s', (type, expected) => {
    expect(isCompressibleType(type)).toBe(expected);
  });
});

/** Decompresses a body as its Content-Encoding says. */
function decoded(body: Buffer, encoding: string | undefined): Buffer {
  if (encoding === 'br') return brotliDecompressSync(body);
  if (encoding === 'gzip') return gunzipSync(body);
  expect(encoding).toBeUndefined();
  return body;
}

const varies = (vary: unknown) => String(vary ?? '').split(',').map((member) => member.trim().toLowerCase());

const LONG_TEXT = Array.from({ length: 200 }, (_, i) => `line ${i}: the same words again and again\n`).join('');
// Bytes that do not compress (a PNG's body already is deflated data).
const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 251))]);
const LINES = Array.from({ length: 50 }, (_, i) => JSON.stringify({ cursor: String(i), domain: `name-${i}.example`, verdict: 'protected' }) + '\n');

let gateOpen: () => void = () => undefined;

/** Routes added for the test: the types and cases the service's own routes do not cover. */
const testRoutes: ServiceRoutes = async (app) => {
  const config = { public: true };
  const schema = { hide: true };
  app.get('/test/text', { config, schema }, async (_request, reply) => reply.type('text/plain; charset=utf-8').send(LONG_TEXT));
  app.get('/test/small', { config, schema }, async (_request, reply) => reply.type('text/plain; charset=utf-8').send('x'.repeat(COMPRESSION_THRESHOLD_BYTES - 1)));
  app.get('/test/problem', { config, schema }, async (_request, reply) => reply.type('application/problem+json').send(JSON.stringify({ type: 'about:blank', detail: LONG_TEXT })));
  app.get('/test/png', { config, schema }, async (_request, reply) => reply.type('image/png').send(PNG));
  app.get('/test/encoded', { config, schema }, async (_request, reply) => reply.type('text/plain; charset=utf-8').header('content-encoding', 'gzip').send(gzipSync(LONG_TEXT)));
  app.get('/test/no-transform', { config, schema }, async (_request, reply) => reply.type('text/plain; charset=utf-8').header('cache-control', 'no-transform').send(LONG_TEXT));
  app.get('/test/empty', { config, schema }, async (_request, reply) => reply.code(204).send());
  app.get('/test/stream', { config, schema }, async (_request, reply) => reply.type('application/x-ndjson').send(Readable.from(LINES)));
  // One line, then nothing until the test opens the gate: the client must get the line before the end.
  app.get('/test/gated', { config, schema }, async (_request, reply) => {
    const gate = new Promise<void>((resolve) => (gateOpen = resolve));
    async function* lines() {
      yield LINES[0]!;
      await gate;
      yield LINES[1]!;
    }
    return reply.type('application/x-ndjson').send(Readable.from(lines()));
  });
  // Marked constant, but its body changes: the kept compressed form must never outlive its body.
  let version = 0;
  app.get('/test/changing', { config: { public: true, constantBody: true }, schema }, async (_request, reply) => reply.type('text/plain; charset=utf-8').send(`${LONG_TEXT}version ${++version}\n`));
  // A catalogue error with a long message: the error handler's JSON goes through the hook too.
  app.get('/test/error', { config, schema }, async () => {
    throw new ApiError('VALIDATION_FAILED', { message: `Too long: ${LONG_TEXT}` });
  });
};

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

async function app(options: Parameters<typeof makeApp>[0] = {}): Promise<FastifyInstance> {
  const built = (await makeApp({ routes: [testRoutes], ...options })).app;
  apps.push(built);
  return built;
}

/** Accept-Encoding values and the coding each must get for a compressible body over the threshold. */
const ENCODINGS: [string | undefined, string | undefined][] = [
  ['br', 'br'],
  ['gzip', 'gzip'],
  ['gzip, deflate, br, zstd', 'br'],
  ['*', 'br'],
  ['br;q=0, gzip', 'gzip'],
  ['br;q=0, gzip;q=0', undefined],
  ['identity', undefined],
  [undefined, undefined],
];

describe('compressed responses (inject)', () => {
  /** Paths of compressible answers over the threshold, and the type each has. */
  const compressible: [string, RegExp, Record<string, string>?][] = [
    ['/', /^text\/html/],
    ['/docs', /^text\/html/],
    [ASSETS.stylesheet.path, /^text\/css/],
    [ASSETS.script.path, /^text\/javascript/],
    ['/openapi.json', /^application\/json/],
    ['/check/example.com', /^text\/html/],
    ['/check/example.com', /^application\/json/, { accept: 'application/json' }],
    ['/guides/spf?domain=example.com', /^text\/html/],
    ['/test/text', /^text\/plain/],
    ['/test/problem', /^application\/problem\+json/],
    ['/test/error', /^application\/json/],
  ];
  const rows = compressible.flatMap(([path, type, headers]) => ENCODINGS.map(([accept, coding]) => [path, type, headers ?? {}, accept, coding] as const));

  it.each(rows)('GET %s (%s, %j) with Accept-Encoding %j → %s, the same bytes', async (path, type, headers, accept, coding) => {
    const server = await app();
    const identity = await server.inject({ method: 'GET', url: path, headers });
    const response = await server.inject({ method: 'GET', url: path, headers: { ...headers, ...(accept === undefined ? {} : { 'accept-encoding': accept }) } });
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.rawPayload.length).toBeGreaterThanOrEqual(COMPRESSION_THRESHOLD_BYTES);
    expect(response.statusCode).toBe(identity.statusCode);
    expect(response.headers['content-type']).toMatch(type);
    expect(response.headers['content-encoding']).toBe(coding);
    expect(decoded(response.rawPayload, response.headers['content-encoding'] as string | undefined).equals(identity.rawPayload)).toBe(true);
    expect(Number(response.headers['content-length'])).toBe(response.rawPayload.length);
    if (coding !== undefined) expect(response.rawPayload.length).toBeLessThan(identity.rawPayload.length);
    expect(varies(response.headers['vary'])).toContain('accept-encoding');
    expect(varies(identity.headers['vary'])).toContain('accept-encoding');
  });

  it('keeps the Vary the route set (Accept) and the page security headers beside Accept-Encoding', async () => {
    const server = await app();
    const response = await server.inject({ url: '/check/example.com', headers: { 'accept-encoding': 'br' } });
    expect(response.headers['content-encoding']).toBe('br');
    expect(varies(response.headers['vary'])).toEqual(['accept', 'accept-encoding']);
    expect(response.headers['content-security-policy']).toMatch(/default-src 'self'/);
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['cache-control']).toBe('no-store');
  });

  /** Answers left as they are whatever the client accepts: [path, why, whether Vary names Accept-Encoding]. */
  const uncompressed: [string, string, boolean][] = [
    ['/test/small', 'under the threshold', true],
    [ASSETS.icon.path, 'an SVG under the threshold', true],
    ['/api/nope', "the catalogue's small 404", true],
    ['/test/png', 'an image (not a compressible type)', false],
    ['/test/encoded', 'a body already encoded', true],
    ['/test/no-transform', 'Cache-Control: no-transform', true],
  ];
  it.each(uncompressed.flatMap(([path, why, vary]) => ['br', 'gzip', '*'].map((accept) => [path, why, vary, accept] as const)))(
    'GET %s (%s) with %j: sent as it is',
    async (path, _why, vary, accept) => {
      const server = await app();
      const identity = await server.inject({ url: path });
      const response = await server.inject({ url: path, headers: { 'accept-encoding': accept } });
      expect(response.statusCode).toBe(identity.statusCode);
      expect(response.headers['content-encoding']).toBe(identity.headers['content-encoding']);
      expect(response.rawPayload.equals(identity.rawPayload)).toBe(true);
      expect(varies(response.headers['vary']).includes('accept-encoding')).toBe(vary);
    },
  );

  it('the already-encoded body is the route\'s own gzip, not encoded twice', async () => {
    const server = await app();
    const response = await server.inject({ url: '/test/encoded', headers: { 'accept-encoding': 'br' } });
    expect(response.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(response.rawPayload).toString()).toBe(LONG_TEXT);
  });

  it.each(['/', ASSETS.stylesheet.path, '/openapi.json', '/test/text'])('HEAD %s: no body, and the Content-Encoding and length GET sends (RFC 9110 §9.3.2; issue 42), Vary', async (path) => {
    const server = await app();
    const get = await server.inject({ method: 'GET', url: path, headers: { 'accept-encoding': 'br, gzip' } });
    const head = await server.inject({ method: 'HEAD', url: path, headers: { 'accept-encoding': 'br, gzip' } });
    expect(head.statusCode).toBe(200);
    expect(get.headers['content-encoding']).toBe('br');
    expect(head.headers['content-encoding']).toBe(get.headers['content-encoding']);
    expect(head.rawPayload.length).toBe(0);
    expect(Number(head.headers['content-length'])).toBe(get.rawPayload.length);
    expect(varies(head.headers['vary'])).toContain('accept-encoding');
    // Without Accept-Encoding, HEAD and GET both answer identity.
    const plain = await server.inject({ method: 'HEAD', url: path });
    expect(plain.headers['content-encoding']).toBeUndefined();
  });

  it('a 204 has no body and no Content-Encoding', async () => {
    const server = await app();
    const response = await server.inject({ url: '/test/empty', headers: { 'accept-encoding': 'br' } });
    expect(response.statusCode).toBe(204);
    expect(response.headers['content-encoding']).toBeUndefined();
    expect(response.rawPayload.length).toBe(0);
  });

  it('a constant body (the stylesheet, the home page) is compressed once, at the highest settings, and the same bytes are sent each time', async () => {
    const server = await app();
    for (const path of ['/', ASSETS.stylesheet.path, ASSETS.script.path]) {
      for (const coding of ['br', 'gzip']) {
        const first = await server.inject({ url: path, headers: { 'accept-encoding': coding } });
        const second = await server.inject({ url: path, headers: { 'accept-encoding': coding } });
        expect(first.headers['content-encoding']).toBe(coding);
        expect(second.rawPayload.equals(first.rawPayload)).toBe(true);
      }
    }
    // Brotli at quality 11 beats the per-request quality on the stylesheet.
    const { brotliCompressSync, constants } = await import('node:zlib');
    const kept = await server.inject({ url: ASSETS.stylesheet.path, headers: { 'accept-encoding': 'br' } });
    const dynamic = brotliCompressSync(ASSETS.stylesheet.body, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } });
    expect(kept.rawPayload.length).toBeLessThan(dynamic.length);
  });

  it('a constant route whose body changes is compressed again: the decoded bytes are always the body of that request', async () => {
    const server = await app();
    for (let request = 1; request <= 4; request++) {
      const response = await server.inject({ url: '/test/changing', headers: { 'accept-encoding': request % 2 === 0 ? 'gzip' : 'br' } });
      expect(decoded(response.rawPayload, response.headers['content-encoding'] as string).toString()).toBe(`${LONG_TEXT}version ${request}\n`);
    }
  });

  it('compression: false leaves every answer as it is', async () => {
    const server = await app({ compression: false });
    const response = await server.inject({ url: '/', headers: { 'accept-encoding': 'br' } });
    expect(response.headers['content-encoding']).toBeUndefined();
    expect(varies(response.headers['vary'])).not.toContain('accept-encoding');
  });
});

describe('streamed responses stay streamed', () => {
  it.each(ENCODINGS)('a streamed NDJSON body with %j → %s, the same bytes', async (accept, coding) => {
    const server = await app();
    const response = await server.inject({ url: '/test/stream', headers: accept === undefined ? {} : { 'accept-encoding': accept } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-encoding']).toBe(coding);
    expect(response.headers['content-length']).toBeUndefined();
    expect(decoded(response.rawPayload, coding).toString()).toBe(LINES.join(''));
    expect(varies(response.headers['vary'])).toContain('accept-encoding');
  });

  it.each(ENCODINGS)("a batch's results (GET …/results) with %j → %s, the same lines as identity", async (accept, coding) => {
    const { app: server, runner } = await batchApp();
    apps.push(server);
    const submitted = await server.inject({ method: 'POST', url: BATCHES, headers: bearerA, payload: { domains: [...VERDICT_NAMES, ...VERDICT_NAMES] } });
    expect(submitted.statusCode).toBe(202);
    await runner!.idle();
    const url = `${BATCHES}/${submitted.json().id}/results`;
    const identity = await server.inject({ url, headers: bearerA });
    const response = await server.inject({ url, headers: { ...bearerA, ...(accept === undefined ? {} : { 'accept-encoding': accept }) } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(response.headers['content-encoding']).toBe(coding);
    expect(response.headers['x-log-id']).toEqual(expect.any(String));
    expect(decoded(response.rawPayload, coding).equals(identity.rawPayload)).toBe(true);
    expect(identity.rawPayload.length).toBeGreaterThan(0);
  });
});

describe('over a real listening server', () => {
  async function listen(server: FastifyInstance): Promise<string> {
    await server.listen({ host: '127.0.0.1', port: 0 });
    return `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  }

  /** A raw GET (no decoding by the client), its headers and its body as the wire carried it. */
  function rawGet(url: string, headers: Record<string, string>): Promise<{ response: IncomingMessage; body: Buffer }> {
    return new Promise((resolve, reject) => {
      httpRequest(url, { headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ response, body: Buffer.concat(chunks) }));
        response.on('error', reject);
      })
        .on('error', reject)
        .end();
    });
  }

  it('fetch with Accept-Encoding: the home page, the stylesheet and the OpenAPI document arrive compressed and decode to the identity bytes', async () => {
    const server = await app();
    const base = await listen(server);
    for (const path of ['/', ASSETS.stylesheet.path, '/openapi.json']) {
      const identity = await rawGet(`${base}${path}`, {});
      expect(identity.response.headers['content-encoding']).toBeUndefined();
      for (const coding of ['br', 'gzip']) {
        const raw = await rawGet(`${base}${path}`, { 'accept-encoding': coding });
        expect(raw.response.headers['content-encoding']).toBe(coding);
        expect(varies(raw.response.headers['vary'])).toContain('accept-encoding');
        expect(Number(raw.response.headers['content-length'])).toBe(raw.body.length);
        expect(decoded(raw.body, coding).equals(identity.body)).toBe(true);
        // fetch (undici) decodes the body itself, as a browser does.
        const fetched = await fetch(`${base}${path}`, { headers: { 'accept-encoding': coding } });
        expect(fetched.headers.get('content-encoding')).toBe(coding);
        expect(Buffer.from(await fetched.arrayBuffer()).equals(identity.body)).toBe(true);
      }
    }
  });

  it.each(['br', 'gzip'])('a streamed body compressed with %s reaches the client line by line: the first line arrives before the route ends', async (coding) => {
    const server = await app();
    const base = await listen(server);
    const received = await new Promise<{ first: string; rest: Promise<string>; response: IncomingMessage }>((resolve, reject) => {
      httpRequest(`${base}/test/gated`, { headers: { 'accept-encoding': coding } }, (response) => {
        const decoder = coding === 'br' ? createBrotliDecompress() : createGunzip();
        response.pipe(decoder);
        let text = '';
        let resolved = false;
        const rest = new Promise<string>((resolveRest) => decoder.on('end', () => resolveRest(text)));
        decoder.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (!resolved && text.includes('\n')) {
            resolved = true;
            resolve({ first: text, rest, response });
          }
        });
        decoder.on('error', reject);
      })
        .on('error', reject)
        .end();
    });
    expect(received.response.headers['content-encoding']).toBe(coding);
    expect(received.response.headers['transfer-encoding']).toBe('chunked');
    // The route is still waiting at its gate: the first line was flushed through the compressor.
    expect(received.first).toBe(LINES[0]);
    gateOpen();
    expect(await received.rest).toBe(LINES[0]! + LINES[1]!);
  });
});
