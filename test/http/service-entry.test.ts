/**
 * The two entries: `spoof-checker` (src/index.ts) is the engine and never loads Fastify;
 * `spoof-checker/service` (src/service.ts) is the HTTP service, whose plugin form mounts in another
 * Fastify host.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import * as service from '../../src/service.js';
import { KEY_A, SAMPLE_RESULT, seededStores } from './helpers.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** Every package (bare specifier) reachable from `entry` through static and dynamic imports of src files. */
function packagesReachedFrom(entry: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const pending = [entry];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    // `import … from 'x'`, `export … from 'x'`, `import 'x'`, `import('x')`; type-only imports load nothing.
    for (const match of text.matchAll(/(?:^|\n)\s*(import|export)(\s+type)?\b[^'";]*?from\s+'([^']+)'|(?:^|\n)\s*import\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g)) {
      if (match[2]) continue;
      const specifier = match[3] ?? match[4] ?? match[5] ?? '';
      if (specifier.startsWith('.')) pending.push(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
      else if (!specifier.startsWith('node:')) packages.add(specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/'));
    }
  }
  return packages;
}

describe('the engine entry (@spoof-checker/engine, re-exported by spoof-checker)', () => {
  it('reaches no HTTP package: no fastify, @fastify/*, ioredis, database driver', () => {
    // spoof-checker's own entry names only the engine package (and its fixtures path).
    expect([...packagesReachedFrom(resolve(SRC, 'index.ts'))]).toEqual(['@spoof-checker/engine']);
    const packages = [...packagesReachedFrom(resolve(SRC, '../packages/engine/src/index.ts'))];
    expect(packages.filter((name) => /fastify|ioredis|^pg$|better-sqlite3|kysely|bullmq/.test(name))).toEqual([]);
    // The walker does see packages: the engine's own dependencies are found.
    expect(packages).toEqual(expect.arrayContaining(['tldts']));
  });

  it('the service entry does reach Fastify (the walker can tell the two apart)', () => {
    expect([...packagesReachedFrom(resolve(SRC, 'service.ts'))]).toEqual(expect.arrayContaining(['fastify']));
  });
});

describe('the service entry (spoof-checker/service)', () => {
  it('exports the app, the plugin, the stores, seeds, errors and the client-address helpers', () => {
    for (const name of ['buildApp', 'spoofCheckerService', 'createMemoryStores', 'loadSeedFile', 'applySeed', 'parseSeed', 'clientRateLimitKey', 'parseTrustProxy', 'connectRateLimitRedis', 'StoreUnavailableError', 'ApiError']) {
      expect(typeof (service as Record<string, unknown>)[name], name).toBe('function');
    }
    expect(service.ERROR_CATALOGUE.STORE_UNAVAILABLE.status).toBe(503);
    expect(service.schemas.SpoofCheckResultSchema).toBeTypeOf('object');
  });

  it('mounts in another Fastify host under a prefix, beside the host’s own routes', async () => {
    const host = Fastify();
    host.get('/', async () => ({ host: true }));
    await host.register(service.spoofCheckerService, {
      prefix: '/email',
      stores: await seededStores(),
      check: async (domain) => ({ ...SAMPLE_RESULT, domain }),
      rateLimits: false,
    });
    await host.ready();
    expect((await host.inject({ method: 'GET', url: '/' })).json()).toEqual({ host: true });
    const check = await host.inject({ method: 'POST', url: '/email/api/tools/v1/spoof-checker', headers: { 'x-api-key': KEY_A }, payload: { domain: 'mounted.test' } });
    expect(check.statusCode).toBe(200);
    expect(check.json().domain).toBe('mounted.test');
    expect(check.headers['x-log-id']).toBeTypeOf('string');
    const unauthorized = await host.inject({ method: 'GET', url: '/email/api/template/v1' });
    expect(unauthorized.statusCode).toBe(401);
    expect(unauthorized.json().code).toBe('UNAUTHORIZED');
    expect((await host.inject({ method: 'GET', url: '/email/healthz' })).statusCode).toBe(200);
    await host.close();
  });
});
