/**
 * No input gets a 500: generated bad requests (random methods, paths built from every route with
 * random parameters and traversal, random headers and keys, random bodies and content types, deep
 * nesting) against every route, asserting no 5xx and no error in the server log.
 */
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KEY_A, makeApp } from './helpers.js';

/** Generated cases per run: enough to cover every route many times, in a few seconds. */
const RUNS = 1_500;

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

/** Paths of the app, `:param` where a segment is generated. */
const ROUTES = [
  '/api/tools/v1/spoof-checker',
  '/api/logs/v1/emails',
  '/api/logs/v1/emails/:id',
  '/api/logs/v1/:id',
  '/api/template/v1',
  '/api/template/v1/:id/versions',
  '/api/domain/v1',
  '/api/domain/v1/:id',
  '/api/contacts/list',
  '/api/contacts/v1/list',
  '/healthz',
  '/readyz',
  '/openapi.json',
  '/docs',
  '/docs/:id',
  '/guides/:id',
  '/',
  '/:id',
];

// Weighted towards what passes the earlier checks (real ids, a valid key, JSON), so that the
// generated bodies reach validation, the handlers, the stores and the serializer.
const segment = fc.oneof(
  { arbitrary: fc.constantFrom('tpl_a', 'dom_a1', 'eml_a1'), weight: 4 },
  fc.constantFrom('index.html', '..', '.', '%2e%2e', '%', '%zz', '%00', '', 'a'.repeat(300), 'a'.repeat(3000)),
  fc.string({ maxLength: 40 }).map((text) => encodeURIComponent(text)),
  fc.string({ unit: 'binary', maxLength: 20 }).map((text) => encodeURIComponent(text)),
);

const suffix = fc.oneof({ arbitrary: fc.constant(''), weight: 6 }, fc.constantFrom('/', '/..', '/../..', '/x', '//', '/%2e%2e', '?', '#frag'));

const query = fc.option(
  fc.array(fc.tuple(fc.constantFrom('domain', 'page', 'limit', 'search', 'status', 'api_key', 'x'), fc.string({ maxLength: 30 })), { maxLength: 4 }).map(
    (pairs) => `?${pairs.map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join('&')}`,
  ),
  { nil: '' },
);

/** The method each route answers, so that most generated requests reach a handler. */
function methodFor(route: string): (typeof METHODS)[number] {
  if (route.endsWith('/versions')) return 'POST';
  if (route === '/api/domain/v1/:id') return 'PATCH';
  return 'GET';
}

const path = fc.tuple(fc.constantFrom(...ROUTES), segment, suffix, query).map(([route, param, tail, search]) => ({ route, url: `${route.replace(':id', param)}${tail}${search}` }));

/** The route's own method mostly, any method sometimes (and POST for the spoof checker often). */
const target = fc.tuple(path, fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, fc.constantFrom(...METHODS))).map(([{ route, url }, other]) => ({
  method: other ?? methodFor(route),
  url,
}));

const nested = fc.integer({ min: 1, max: 5_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`);

const body = fc.oneof(
  fc.constant(undefined),
  fc.json({ maxDepth: 4 }),
  fc.string({ maxLength: 200 }),
  nested,
  fc.record({ domain: fc.constantFrom('example.com', 'a.test'), selectors: fc.array(fc.constantFrom('s1', 'google', 'a.b', 'UPPER', '-bad', 'x'.repeat(70), ''), { maxLength: 5 }) }).map((value) => JSON.stringify(value)),
  fc.record({ domain: fc.string({ maxLength: 300 }), selectors: fc.array(fc.string({ maxLength: 80 }), { maxLength: 60 }) }).map((value) => JSON.stringify(value)),
  // Built as text: fast-check would overflow the stack printing a value nested this deep.
  { arbitrary: fc.tuple(nested, fc.boolean()).map(([content, isMajor]) => `{"content":[${content}],"isMajor":${isMajor}}`), weight: 3 },
  fc.record({ content: fc.array(fc.anything({ maxDepth: 3 }), { maxLength: 5 }), name: fc.string({ maxLength: 300 }), variables: fc.anything({ maxDepth: 2 }) }, { requiredKeys: [] }).map((value) => JSON.stringify(value)),
  fc.record({ click_tracking: fc.anything({ maxDepth: 1 }), tls: fc.constantFrom('enforced', 'opportunistic', 'x', null) }, { requiredKeys: [] }).map((value) => JSON.stringify(value)),
  fc.constantFrom('{', '{"__proto__":{"a":1}}', '{"constructor":{"prototype":{}}}', 'null', '[]', '1e999', '"\\ud800"'),
);

const headerValue = fc.string({ maxLength: 60 }).map((text) => text.replace(/[^\x20-\x7e]/g, ''));

const headers = fc.record(
  {
    'content-type': fc.oneof({ arbitrary: fc.constant('application/json'), weight: 5 }, fc.constantFrom('application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', '*/*', 'application/json; charset=latin1', '')),
    authorization: fc.oneof({ arbitrary: fc.constant(`Bearer ${KEY_A}`), weight: 5 }, fc.constantFrom('Bearer nope', 'Basic dXNlcjpwYXNz', 'Bearer', 'bearer  x  y', '')),
    'x-api-key': fc.constantFrom(KEY_A, KEY_A, 'wrong', ''),
    'x-forwarded-for': fc.constantFrom('1.2.3.4', 'garbage', '::1, 10.0.0.1', ''),
    traceparent: headerValue,
    accept: fc.constantFrom('application/json', 'text/html', '*/*', ''),
    'x-random': headerValue,
  },
  { requiredKeys: ['content-type', 'authorization'] },
);

describe('generated bad requests', () => {
  it(`${RUNS} random requests across every route: never a 5xx, never an error in the server log`, async () => {
    const logged: string[] = [];
    const { app } = await makeApp({ rateLimits: {}, logger: { level: 'error', stream: { write: (line: string) => void logged.push(line) } } });
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(target, headers, body, async ({ method, url }, sent, payload) => {
        const response = await app.inject({ method, url, headers: Object.fromEntries(Object.entries(sent).filter(([, v]) => v !== '')), ...(payload !== undefined ? { payload } : {}) });
        seen.add(response.statusCode);
        expect(response.statusCode, `${method} ${url.slice(0, 200)} → ${response.body.slice(0, 300)}`).toBeLessThan(500);
      }),
      {
        numRuns: RUNS,
        // The two inputs that answered 500 before (a depth limit and the docs' static files fixed them).
        examples: [
          [{ method: 'POST', url: '/api/template/v1/tpl_a/versions' }, { 'content-type': 'application/json', authorization: `Bearer ${KEY_A}` }, `{"content":[${'['.repeat(3000)}${']'.repeat(3000)}]}`],
          [{ method: 'GET', url: '/docs/index.html/..' }, { 'content-type': 'application/json', authorization: '' }, undefined],
        ],
      },
    );
    expect(logged, logged.join('\n').slice(0, 2000)).toEqual([]);
    // The generator reaches successes and the main refusals, so the property is not vacuous.
    expect([...seen]).toEqual(expect.arrayContaining([200, 400, 401, 404]));
    await app.close();
  }, 120_000);

  it('paths that climb out of /docs over a real socket are 404s, and the server log holds no stack trace', async () => {
    const logged: string[] = [];
    const { app } = await makeApp({ logger: { level: 'info', stream: { write: (line: string) => void logged.push(line) } } });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const { port } = app.server.address() as AddressInfo;
      for (const target of ['/docs/static/index.html/..', '/docs/static/../../package.json', '/docs/static/%2e%2e/%2e%2e/package.json']) {
        const raw = await new Promise<string>((resolve, reject) => {
          const socket = connect(port, '127.0.0.1');
          let text = '';
          socket.on('data', (chunk) => (text += String(chunk)));
          socket.on('close', () => resolve(text));
          socket.on('error', reject);
          socket.write(`GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
        });
        expect(raw, target).toMatch(/^HTTP\/1\.1 404/);
        expect(raw).toContain('"code":"ROUTE_NOT_FOUND"');
      }
      expect(logged.join('\n')).not.toMatch(/stack|"level":50/);
    } finally {
      await app.close();
    }
  });
});
