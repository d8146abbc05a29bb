/**
 * The shared-infrastructure finding through the API (app.inject over the fixture zones, the real
 * engine and the shipped provider data), and through a real listening server: the providers are
 * named in the reasons and in `details.spf.sharedInfrastructure`.
 */
import { checkDomain } from '../../packages/engine/src/check.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';
import { bearerA, makeApp } from './helpers.js';

const URL = '/api/tools/v1/spoof-checker';
const ZONES = new globalThis.URL('../../fixtures/zones/', import.meta.url).pathname;

let app: FastifyInstance;
beforeAll(async () => {
  const resolver = new ZoneResolver(await loadZoneDirectory(ZONES));
  ({ app } = await makeApp({ check: (domain) => checkDomain(domain, { resolver }) }));
});
afterAll(async () => {
  await app?.close();
});

describe('the API names the rented space that passes SPF', () => {
  it.each([
    ['spf-cloud-ec2.example', 'spoofable', 'spf-shared-infrastructure', /Amazon EC2/, [['aws', 'EC2', 65536, 0]]],
    ['spf-cloud-ipv6.example', 'spoofable', 'spf-shared-infrastructure', /Amazon EC2/, [['aws', 'EC2', 0, 2 ** 95], ['aws', 'EC2', 0, 2 ** 93]]],
    ['spf-ci-runners.example', 'spoofable', 'spf-shared-infrastructure', /GitHub Actions runners/, [['github', 'actions', 65536, 0], ['azure', 'AzureCloud', 65536, 0]]],
    ['spf-cdn-edge.example', 'spoofable', 'spf-shared-infrastructure', /Cloudflare edge/, [['cloudflare', 'edge', 4096, 0]]],
    ['spf-cloud-fixed.example', 'protected', 'dmarc-reject', null, [['aws', 'EC2', 1, 0]]],
    ['p-reject.example', 'protected', 'dmarc-reject', null, []],
  ] as const)('%s: %s (%s)', async (domain, verdict, rule, title, exposures) => {
    const response = await app.inject({ method: 'POST', url: URL, headers: bearerA, payload: { domain } });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ verdict, details: { rule } });
    if (title !== null) expect(body.reasons[0]).toMatchObject({ id: 'spf-shared-infrastructure', severity: 'critical', title: expect.stringMatching(title) });
    const report = body.details.spf.sharedInfrastructure;
    expect((report?.exposures ?? []).map((e: { provider: string; service: string; ipv4Addresses: number; ipv6Addresses: number }) => [e.provider, e.service, e.ipv4Addresses, e.ipv6Addresses])).toEqual(
      exposures.map((e) => [...e]),
    );
    if (report) expect(report.data).toMatchObject({ date: '2025-07-21', stale: expect.any(Boolean), origin: 'shipped snapshot' });
  });

  it('answers the same over a real listening server', async () => {
    const resolver = new ZoneResolver(await loadZoneDirectory(ZONES));
    const { app: served } = await makeApp({ check: (domain) => checkDomain(domain, { resolver }) });
    try {
      const address = await served.listen({ host: '127.0.0.1', port: 0 });
      const response = await fetch(`${address}${URL}`, { method: 'POST', headers: { ...bearerA, 'content-type': 'application/json' }, body: JSON.stringify({ domain: 'www.spf-cloud-ec2.example' }) });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { verdict: string; reasons: { id: string; detail: string }[] };
      expect(body.verdict).toBe('spoofable');
      // Relaxed alignment: the organizational domain's record counts for the subdomain, and says so.
      expect(body.reasons[0]).toMatchObject({ id: 'spf-shared-infrastructure', detail: expect.stringMatching(/^The SPF record of spf-cloud-ec2\.example \(which counts for www\.spf-cloud-ec2\.example under relaxed SPF alignment\)/) });
    } finally {
      await served.close();
    }
  });
});
