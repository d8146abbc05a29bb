/**
 * `"checks": ["transport"]` on POST /api/tools/v1/spoof-checker, and the page's "Mail sent to you"
 * (/transport/<domain>), against the transport lab: app.inject, and a real listening server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDomain } from '../../packages/engine/src/check.js';
import { buildApp } from '../../src/service/compose.js';
import { TransportCache } from '../../packages/engine/src/transport/check.js';
import { startLab, type Lab } from '../transport/lab.js';
import { bearerA, expectError, makeApp, seededStores } from './helpers.js';

const URL = '/api/tools/v1/spoof-checker';

let lab: Lab;
beforeAll(async () => {
  lab = await startLab();
});
afterAll(async () => {
  await lab?.close();
});

/** The check `serve` binds: the lab's zones, and the transport options of its flags. */
function labCheck(allowPrivateAddresses = true) {
  const transport = { cache: new TransportCache(), tlsCa: lab.caPem, connectPorts: { smtp: lab.smtpPort, https: lab.httpsPort }, allowPrivateAddresses };
  return (domain: string, options?: { selectors?: string[]; transport?: boolean }) =>
    checkDomain(domain, { resolver: lab.resolver, ...(options?.selectors ? { selectors: options.selectors } : {}), ...(options?.transport ? { transport } : {}) });
}

describe('POST /api/tools/v1/spoof-checker with checks', () => {
  it('"checks": ["transport"] adds transport; without it there is none; the spoof verdict is the same', async () => {
    const { app } = await makeApp({ check: labCheck() });
    const plain = await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain: 'wildcard-shallow.example' } });
    expect(plain.statusCode).toBe(200);
    expect(plain.json().transport).toBeUndefined();
    const response = await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain: 'wildcard-shallow.example', checks: ['transport'] } });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.verdict).toBe(plain.json().verdict);
    // Every field of the shape survives the serializer.
    expect(body.transport.verdict).toBe('broken');
    expect(body.transport.mtaSts).toMatchObject({ status: 'enforce', record: 'v=STSv1; id=1', id: '1', policy: { mode: 'enforce', maxAge: 604800, mx: ['*.wildcard-shallow.example'] }, fetch: { httpStatus: 200, error: null }, problems: [] });
    expect(body.transport.mx[0]).toMatchObject({ host: 'a.b.wildcard-shallow.example', preference: 10, mtaStsCovered: false });
    expect(body.transport.mx[0].addresses[0]).toMatchObject({ address: '127.0.0.2', outcome: 'ok', tlsVersion: expect.stringMatching(/^TLSv1/) });
    expect(Object.keys(body.transport.mx[0].addresses[0].certificate).sort()).toEqual(['issuer', 'notAfter', 'notBefore', 'san', 'subject']);
    expect(body.transport.findings.map((f: { id: string }) => f.id)).toContain('mta-sts-mx-not-covered');
  });

  it.each([
    [{ checks: ['smtp'] }, /body\.checks/],
    [{ checks: 'transport' }, /body\.checks must be an array/],
    [{ checks: ['transport', 'transport'] }, /body\.checks/],
  ])('refuses %j with 400 VALIDATION_FAILED', async (extra, message) => {
    let called = false;
    const { app } = await makeApp({ check: async (...args) => ((called = true), labCheck()(...args)) });
    const body = expectError(await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain: 'enforce-ok.example', ...extra } }), 400, 'VALIDATION_FAILED');
    expect(body['message']).toMatch(message);
    expect(called).toBe(false);
  });

  it('transport checks have their own, lower rate limit; plain checks go on', async () => {
    let transportChecks = 0;
    const check = labCheck();
    const { app } = await makeApp({
      check: async (domain, options) => {
        if (options?.transport) transportChecks++;
        return check(domain, options);
      },
      rateLimits: { spoofCheck: { max: 100, windowMs: 60_000 }, transportCheck: { max: 2, windowMs: 60_000 } },
    });
    const ask = (checks?: string[]) => app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain: 'no-starttls.example', ...(checks ? { checks } : {}) } });
    expect((await ask(['transport'])).statusCode).toBe(200);
    expect((await ask(['transport'])).statusCode).toBe(200);
    const limited = expectError(await ask(['transport']), 429, 'RATE_LIMITED');
    expect(limited['why']).toMatch(/2 request\(s\) per 1 minute\(s\) with transport checks/);
    expect(transportChecks).toBe(2);
    expect((await ask()).statusCode).toBe(200);
  });

  it('the OpenAPI document shows checks and transport', async () => {
    const { app } = await makeApp();
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const post = doc.paths['/api/tools/v1/spoof-checker'].post;
    const body = post.requestBody.content['application/json'].schema;
    expect(body.properties.checks.items.enum).toEqual(['transport', 'bimi']);
    const result = post.responses['200'].content['application/json'].schema;
    expect(result.properties.transport.properties.verdict.enum).toEqual(['enforced', 'opportunistic', 'at-risk', 'broken', 'untested', 'no-mail']);
    expect(result.properties.transport.properties.mx.items.properties.addresses.items.properties.outcome.enum).toContain('refused-private');
  });

  it('a real listening server: the guard holds by default (refused-private, no connection)', async () => {
    const app = await buildApp({ stores: await seededStores(), check: labCheck(false), rateLimits: false });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const { port } = app.server.address() as { port: number };
      const before = { ...lab.seen };
      const response = await fetch(`http://127.0.0.1:${port}${URL}`, { method: 'POST', headers: { ...bearerA, 'content-type': 'application/json' }, body: JSON.stringify({ domain: 'enforce-ok.example', checks: ['transport'] }) });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { transport: { mx: { addresses: { outcome: string }[] }[]; verdict: string } };
      expect(body.transport.mx[0]!.addresses[0]!.outcome).toBe('refused-private');
      // Nothing could be probed: a value of its own, never "opportunistic" (which says TLS was seen).
      expect(body.transport.verdict).toBe('untested');
      expect(lab.seen).toEqual(before);
    } finally {
      await app.close();
    }
  });
});

describe('the page: "Mail sent to you"', () => {
  it('the result page renders the verdict at once, with a link and a fragment URL for the section', async () => {
    const { app } = await makeApp({ check: labCheck() });
    const before = { ...lab.seen };
    const response = await app.inject({ method: 'GET', url: '/check/enforce-ok.example' });
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('data-verdict=');
    expect(response.body).toContain('<h2 id="transport-title">Mail sent to you</h2>');
    expect(response.body).toContain('href="/transport/enforce-ok.example"');
    expect(response.body).toContain('data-transport-src="/transport/enforce-ok.example?fragment=1"');
    // The page itself probes nothing: the section loads after.
    expect(lab.seen).toEqual(before);
  });

  it('/transport/<domain> renders the section in a whole page (no JavaScript needed), escaped', async () => {
    const { app } = await makeApp({ check: labCheck() });
    const response = await app.inject({ method: 'GET', url: '/transport/testing-expired.example' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-security-policy']).toContain("script-src 'self'");
    expect(response.body).toMatch(/^<!doctype html>/);
    expect(response.body).toContain('id="transport-verdict">Opportunistic<');
    expect(response.body).toContain('data-outcome="cert-expired"');
    expect(response.body).not.toMatch(/<script>(?!<\/script>)/);
  });

  it('?fragment=1 answers the section alone, and JSON when asked', async () => {
    const { app } = await makeApp({ check: labCheck() });
    const fragment = await app.inject({ method: 'GET', url: '/transport/no-starttls.example?fragment=1' });
    expect(fragment.statusCode).toBe(200);
    expect(fragment.body.startsWith('<section class="detail"')).toBe(true);
    expect(fragment.body).toContain('data-transport-verdict="at-risk"');
    const json = await app.inject({ method: 'GET', url: '/transport/no-starttls.example', headers: { accept: 'application/json' } });
    expect(json.json().verdict).toBe('at-risk');
  });

  it('the page rate-limits transport checks on their own', async () => {
    const { app } = await makeApp({ check: labCheck(), rateLimits: { spoofCheck: { max: 100, windowMs: 60_000 }, transportCheck: { max: 1, windowMs: 60_000 } } });
    expect((await app.inject({ method: 'GET', url: '/transport/no-starttls.example?fragment=1' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/transport/no-starttls.example?fragment=1' })).statusCode).toBe(429);
    expect((await app.inject({ method: 'GET', url: '/check/no-starttls.example' })).statusCode).toBe(200);
  });

  it('a server whose check has no transport says so', async () => {
    const { app } = await makeApp();
    const response = await app.inject({ method: 'GET', url: '/transport/example.com?fragment=1' });
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('not available on this server');
  });
});

describe('serve with the transport flags', () => {
  it('--tls-ca, --connect-ports and --allow-private-addresses reach the API\'s transport checks', async () => {
    const { serve } = await import('../../src/cli/serve.js');
    const { Readable } = await import('node:stream');
    const { LAB_ZONES } = await import('../transport/lab.js');
    let stop: (signal: string) => void = () => undefined;
    const err: string[] = [];
    const io = {
      out: () => undefined,
      err: (t: string) => void err.push(t),
      stdin: Readable.from([]),
      stderrIsTTY: false,
      env: { SPOOF_CHECKER_DATA: ':memory:', LOG_LEVEL: 'silent', SPOOF_CHECKER_API_KEYS: 'sk_transport_serve_key_5f2c9a0e7b3d41a6c8e0f9b2d7a4c1e3:org_t' },
      stopSignal: new Promise<string>((resolve) => (stop = resolve)),
    };
    const exit = serve(['--zones', LAB_ZONES, '--port', '0', '--host', '127.0.0.1', '--tls-ca', lab.caFile, '--connect-ports', lab.connectPortsFlag, '--allow-private-addresses'], io);
    for (let i = 0; i < 400 && !err.join('').includes('listening on'); i++) await new Promise((r) => setTimeout(r, 25));
    const base = /listening on (http:\/\/\S+)/.exec(err.join(''))?.[1];
    expect(base, err.join('')).toBeDefined();
    try {
      const response = await fetch(`${base}${URL}`, { method: 'POST', headers: { authorization: 'Bearer sk_transport_serve_key_5f2c9a0e7b3d41a6c8e0f9b2d7a4c1e3', 'content-type': 'application/json' }, body: JSON.stringify({ domain: 'enforce-ok.example', checks: ['transport'] }) });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { transport: { verdict: string } };
      expect(body.transport.verdict).toBe('enforced');
    } finally {
      stop('SIGTERM');
      expect(await exit).toBe(0);
    }
  });

  it('a bad --connect-ports is a usage error (exit 2)', async () => {
    const { serve } = await import('../../src/cli/serve.js');
    const { Readable } = await import('node:stream');
    const err: string[] = [];
    const io = { out: () => undefined, err: (t: string) => void err.push(t), stdin: Readable.from([]), stderrIsTTY: false, env: { SPOOF_CHECKER_DATA: ':memory:' }, stopSignal: new Promise<string>(() => undefined) };
    expect(await serve(['--connect-ports', 'smtp=x'], io)).toBe(2);
    expect(err.join('')).toMatch(/--connect-ports takes smtp=N,https=N/);
  });
});
