/**
 * A registrable domain that does not exist is not a verdict: the real engine over the fixture zones
 * answers 422 DOMAIN_NOT_FOUND through the route, while a missing subdomain of a domain that exists
 * still gets its verdict (np applies to it).
 */
import { describe, expect, it } from 'vitest';
import { checkDomain } from '../../packages/engine/src/check.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';
import { bearerA, expectError, makeApp } from './helpers.js';

const URL = '/api/tools/v1/spoof-checker';
const FIXTURE_ZONES = new globalThis.URL('../../fixtures/zones/', import.meta.url).pathname;
const resolver = new ZoneResolver(await loadZoneDirectory(FIXTURE_ZONES));
const check = async (domain: string) => checkDomain(domain, { resolver });

describe('the spoof checker and domains that do not exist', () => {
  it('answers 422 DOMAIN_NOT_FOUND, saying the domain does not exist, for POST and GET', async () => {
    const { app } = await makeApp({ check });
    for (const response of [
      await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain: 'no-such-domain.example' } }),
      await app.inject({ method: 'GET', url: `${URL}?domain=ceo@www.no-such-domain.example`, headers: bearerA }),
    ]) {
      const body = expectError(response, 422, 'DOMAIN_NOT_FOUND');
      expect(body['message']).toMatch(/^The domain no-such-domain\.example .*does not exist/);
      expect(body['fix']).toMatch(/spelling/);
    }
    await app.close();
  });

  it('still answers a verdict for a subdomain that does not exist under a domain that does', async () => {
    const { app } = await makeApp({ check });
    const response = await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain: 'ghost.np-reject.example' } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ verdict: 'protected', details: { dmarc: { appliedTag: 'np', nameExists: false } } });
    await app.close();
  });
});
