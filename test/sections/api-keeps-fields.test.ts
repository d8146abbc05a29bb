/**
 * The API's spoof check answer keeps, and its OpenAPI document describes, every field of the engine's
 * result (issue 39 item 4): real checks with every optional section on (the demo's transport
 * responders, BIMI logo host and signed zones, all on loopback), served through `app.inject` and
 * compared key by key with the result itself. The service serializes with JSON.stringify (app.ts),
 * so answers keep fields; the hand-written response schema did not describe the sections' envelope
 * (`transport.status`, `dnssec.findings`…): the OpenAPI test fails on it. The schema is now built
 * from the engine's JSON Schema (src/http/result-schema.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDomain, type CheckOptions } from '../../packages/engine/src/check.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';
import type { SpoofCheckResult } from '../../packages/engine/src/result.js';
import { startDemoTransport, type DemoTransport } from '../../src/service/demo-transport.js';
import { loadDemoDnssec, type DemoDnssec } from '../../src/service/demo-dnssec.js';
import { DEMO_ZONES_DIR } from '../../src/cli/serve.js';
import { bearerA, makeApp } from '../http/helpers.js';

let demo: DemoTransport;
let dnssec: DemoDnssec;
let resolver: ZoneResolver;
beforeAll(async () => {
  demo = await startDemoTransport();
  dnssec = await loadDemoDnssec();
  resolver = new ZoneResolver([...(await loadZoneDirectory(DEMO_ZONES_DIR)), ...demo.zones]);
}, 60_000);
afterAll(async () => {
  await demo?.stop();
});

/** Every key path of a JSON value, array items as `[]`. */
function keyPaths(value: unknown, prefix = '', into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) keyPaths(item, `${prefix}[]`, into);
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      into.add(`${prefix}.${key}`);
      keyPaths(item, `${prefix}.${key}`, into);
    }
  }
  return into;
}

/** A check with every optional section on, as `serve --demo` runs it. */
async function fullCheck(domain: string): Promise<SpoofCheckResult> {
  const options: CheckOptions = {
    resolver,
    transport: demo.options,
    bimi: { tlsCa: demo.options.tlsCa, connectPorts: demo.options.connectPorts, allowPrivateAddresses: demo.options.allowPrivateAddresses, extraRoots: demo.bimiRoots },
    dnssec: dnssec.domains.has(domain) ? dnssec.options : 'Not a signed demo domain.',
  };
  return checkDomain(domain, options);
}

describe('POST /api/tools/v1/spoof-checker with every check on', () => {
  it.each(['dnssec-secure.example', 'brand.example', 'sts-broken.example'])('%s: the answer holds every key and value of the engine result', async (domain) => {
    const result = await fullCheck(domain);
    expect(result.transport).toBeDefined();
    expect(result.bimi).toBeDefined();
    expect(result.dnssec).toBeDefined();
    const { app } = await makeApp({ check: async () => result });
    try {
      const response = await app.inject({ method: 'POST', url: '/api/tools/v1/spoof-checker', headers: bearerA, payload: { domain, checks: ['transport', 'bimi'] } });
      expect(response.statusCode, response.body).toBe(200);
      const answer: unknown = response.json();
      const expected: unknown = JSON.parse(JSON.stringify(result));
      expect([...keyPaths(answer)].sort()).toEqual([...keyPaths(expected)].sort());
      expect(answer).toEqual(expected);
    } finally {
      await app.close();
    }
  });
});

/** Every key path a JSON Schema documents (through anyOf/oneOf and array items), as `keyPaths` names them. */
function documentedPaths(schema: unknown, prefix = '', into = new Set<string>()): Set<string> {
  if (schema === null || typeof schema !== 'object') return into;
  const node = schema as { properties?: Record<string, unknown>; items?: unknown; anyOf?: unknown[]; oneOf?: unknown[]; additionalProperties?: unknown };
  for (const branch of [...(node.anyOf ?? []), ...(node.oneOf ?? [])]) documentedPaths(branch, prefix, into);
  if (node.items !== undefined) documentedPaths(node.items, `${prefix}[]`, into);
  for (const [key, inner] of Object.entries(node.properties ?? {})) {
    into.add(`${prefix}.${key}`);
    documentedPaths(inner, `${prefix}.${key}`, into);
  }
  return into;
}

describe('the OpenAPI document of POST /api/tools/v1/spoof-checker', () => {
  it('documents every key of real results with every section on (details aside: an open object)', async () => {
    const { app } = await makeApp();
    try {
      const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
      const documented = documentedPaths(doc.paths['/api/tools/v1/spoof-checker'].post.responses['200'].content['application/json'].schema);
      for (const domain of ['dnssec-secure.example', 'brand.example', 'sts-broken.example']) {
        const seen = [...keyPaths(JSON.parse(JSON.stringify(await fullCheck(domain))))].filter((path) => !path.startsWith('.details.'));
        expect(seen.filter((path) => !documented.has(path)), domain).toEqual([]);
      }
    } finally {
      await app.close();
    }
  });
});
