/**
 * The examples of docs/library.md, run as written (from the sources; test/package.test.ts covers the
 * installed package): the fixture zones found from the package and not from the working
 * directory, `CachingResolver` with `maxEntries` alone, and `buildApp` from `spoof-checker/service`.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CachingResolver, checkDomain, loadZoneDirectory, ZoneResolver } from '../packages/engine/src/index.js';
import { FIXTURE_ZONES_DIR } from '../src/index.js';
import { buildApp, createMemoryStores } from '../src/service.js';

const doc = readFileSync(new URL('../docs/library.md', import.meta.url), 'utf8');
const apps: { close(): Promise<unknown> }[] = [];
afterAll(async () => {
  for (const app of apps) await app.close();
});

describe('docs/library.md', () => {
  it('finds the fixture zones from the package, whatever the working directory', async () => {
    expect(doc).toContain('loadZoneDirectory(FIXTURE_ZONES_DIR)');
    // The package root's fixtures/zones, as the doc's import.meta.resolve form computes it from dist/index.js.
    const packageEntry = new URL('../dist/index.js', import.meta.url);
    expect(FIXTURE_ZONES_DIR).toBe(fileURLToPath(new URL('../fixtures/zones/', packageEntry)));
    const cwd = process.cwd();
    process.chdir('/');
    try {
      const resolver = new ZoneResolver(await loadZoneDirectory(FIXTURE_ZONES_DIR));
      const result = await checkDomain('spf-too-many-lookups.example', { resolver });
      expect(result.verdict).toBe('protected');
      expect(result.nextStep.title).toBe('Bring your SPF record down to 10 DNS lookups');
      expect(doc).toContain(`console.log(result.nextStep.title); // ${result.nextStep.title}`);
    } finally {
      process.chdir(cwd);
    }
  });

  it('builds the service with buildApp, and answers the API with the key given at start', async () => {
    expect(doc).toContain("import { buildApp, createMemoryStores } from 'spoof-checker/service';");
    const resolver = new CachingResolver(new ZoneResolver(await loadZoneDirectory(FIXTURE_ZONES_DIR)), { maxEntries: 50_000 });
    const app = await buildApp({
      stores: createMemoryStores(),
      check: (domain, options) => checkDomain(domain, { resolver, ...options }),
      apiKeys: [{ key: 'sk_library_doc_4d42bbba281cc2205e15e4a5e776792d', organizationId: 'my-org' }],
    });
    apps.push(app);
    const response = await app.inject({
      method: 'POST',
      url: '/api/tools/v1/spoof-checker',
      headers: { authorization: 'Bearer sk_library_doc_4d42bbba281cc2205e15e4a5e776792d' },
      payload: { domain: 'p-none.example' },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ domain: 'p-none.example', verdict: 'spoofable' });
    // The public page comes with it (the composition registers src/web).
    expect((await app.inject({ url: '/' })).statusCode).toBe(200);
    // pages: false leaves it out.
    const apiOnly = await buildApp({ stores: createMemoryStores(), check: (domain) => checkDomain(domain, { resolver }), pages: false });
    apps.push(apiOnly);
    expect((await apiOnly.inject({ url: '/' })).statusCode).toBe(404);
  });
});
