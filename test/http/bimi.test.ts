/**
 * `"checks": ["bimi"]` on POST /api/tools/v1/spoof-checker, against the BIMI lab (packages/engine/test/bimi/lab.ts):
 * app.inject; the response schema keeps every field; the OpenAPI document shows it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDomain } from '../../packages/engine/src/check.js';
import { startBimiLab, type BimiLab } from '../../packages/engine/test/bimi/lab.js';
import { bearerA, expectError, makeApp } from './helpers.js';

const URL = '/api/tools/v1/spoof-checker';

let lab: BimiLab;
beforeAll(async () => {
  lab = await startBimiLab();
}, 60_000);
afterAll(async () => {
  await lab?.close();
});

/** The check `serve` binds: the lab's zones, and the BIMI options of its flags. */
function labCheck() {
  const bimi = { tlsCa: lab.tlsCaPem, connectPorts: { https: lab.httpsPort }, allowPrivateAddresses: true, extraRoots: lab.mvaRootPem };
  return (domain: string, options?: { selectors?: string[]; bimi?: boolean }) => checkDomain(domain, { resolver: lab.resolver, ...(options?.bimi ? { bimi } : {}) });
}

describe('POST /api/tools/v1/spoof-checker with "checks": ["bimi"]', () => {
  it('adds bimi, every field kept by the response schema; without it there is none; the verdict is the same', async () => {
    const { app } = await makeApp({ check: labCheck() });
    const plain = await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain: 'vmc.example' } });
    expect(plain.statusCode, plain.body).toBe(200);
    expect(plain.json().bimi).toBeUndefined();
    const response = await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain: 'vmc.example', checks: ['bimi'] } });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    expect(body.verdict).toBe(plain.json().verdict);
    const direct = await labCheck()('vmc.example', { bimi: true });
    expect(body.bimi).toEqual(JSON.parse(JSON.stringify(direct.bimi)));
    expect(body.bimi).toMatchObject({ grade: 'ready-vmc', certificate: { kind: 'VMC', chain: { trusted: true }, bimiEku: true, sanMatch: true, logotype: { hashOk: true } } });
  });

  it('a logo violation comes with its rule and line', async () => {
    const { app } = await makeApp({ check: labCheck() });
    const body = (await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain: 'script.example', checks: ['bimi'] } })).json();
    expect(body.bimi.grade).toBe('not-ready');
    expect(body.bimi.logo.violations).toEqual([expect.objectContaining({ rule: 'script', line: 5 })]);
  });

  it('refuses an unknown check with 400', async () => {
    const { app } = await makeApp({ check: labCheck() });
    expectError(await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain: 'vmc.example', checks: ['bimi', 'bimi'] } }), 400, 'VALIDATION_FAILED');
  });

  it('the OpenAPI document shows "bimi" and its result', async () => {
    const { app } = await makeApp();
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const post = doc.paths['/api/tools/v1/spoof-checker'].post;
    expect(post.requestBody.content['application/json'].schema.properties.checks.items.enum).toContain('bimi');
    const result = post.responses['200'].content['application/json'].schema;
    expect(result.properties.bimi.properties.grade.enum).toEqual(['ready-vmc', 'ready-cmc', 'ready-self-asserted', 'not-ready', 'declined', 'not-published', 'unknown']);
  });
});

describe('the page: "Your logo in the inbox"', () => {
  it('the result page renders the verdict at once, with a placeholder the script fills in', async () => {
    const { app } = await makeApp({ check: labCheck() });
    const before = lab.seen.length;
    const response = await app.inject({ method: 'GET', url: '/check/vmc.example' });
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('data-verdict=');
    expect(response.body).toContain('<h2 id="bimi-title">Your logo in the inbox</h2>');
    expect(response.body).toContain('data-bimi-src="/bimi/vmc.example?fragment=1"');
    expect(response.body).toContain('href="/bimi/vmc.example"');
    // The page itself downloads nothing: the section loads after the verdict.
    expect(lab.seen.length).toBe(before);
  });

  it('/bimi/<domain>: a validated logo is shown as an image (data: URI), never inline', async () => {
    const { app } = await makeApp({ check: labCheck() });
    const response = await app.inject({ method: 'GET', url: '/bimi/vmc.example' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-security-policy']).toContain("img-src 'self' data:");
    expect(response.body).toMatch(/^<!doctype html>/);
    expect(response.body).toContain('id="bimi-grade">Ready (VMC)<');
    expect(response.body).toMatch(/<img class="bimi-logo" id="bimi-logo" src="data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+"/);
    expect(response.body).not.toContain('<title>Brand Ltd</title>');
    expect(response.body).not.toContain('<rect width="100"');
  });

  it('a logo that breaks a rule is not shown; the rule and its line are', async () => {
    const { app } = await makeApp({ check: labCheck() });
    const fragment = await app.inject({ method: 'GET', url: '/bimi/script.example?fragment=1' });
    expect(fragment.statusCode).toBe(200);
    expect(fragment.body.startsWith('<section class="detail"')).toBe(true);
    expect(fragment.body).toContain('data-bimi-grade="not-ready"');
    expect(fragment.body).not.toContain('<img');
    expect(fragment.body).not.toContain('<script>alert');
    expect(fragment.body).toContain('<li data-rule="script">line 5: &lt;script&gt; is not allowed');
    const json = await app.inject({ method: 'GET', url: '/bimi/script.example', headers: { accept: 'application/json' } });
    expect(json.json().grade).toBe('not-ready');
  });
});
