/**
 * `"checks": ["bimi"]` on POST /api/tools/v1/spoof-checker, against the BIMI lab (test/bimi/lab.ts):
 * app.inject; the response schema keeps every field; the OpenAPI document shows it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDomain } from '../../packages/engine/src/check.js';
import { startBimiLab, type BimiLab } from '../bimi/lab.js';
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
