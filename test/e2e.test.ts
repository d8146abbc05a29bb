/**
 * End to end over real sockets: a listening HTTP server whose spoof check is the real `checkDomain`,
 * asking the embedded DNS server on loopback through the network resolver. Nothing is faked between
 * the HTTP request and the DNS packets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { checkDomain } from '../packages/engine/src/check.js';
import type { SpoofCheckResult } from '../packages/engine/src/result.js';
import { CachingResolver } from '../packages/engine/src/dns/cache.js';
import { NetworkResolver } from '../packages/engine/src/dns/network-resolver.js';
import { startDnsServer, type RunningDnsServer } from '../packages/engine/src/zones/server.js';
import { ZoneResolver } from '../packages/engine/src/zones/zone-resolver.js';
import { buildApp } from '../src/service/compose.js';
import { createMemoryStores } from '../src/store/memory.js';
import { loadZoneDirectory } from '../packages/engine/src/zones/load.js';

const ZONES = new URL('./cli/zones/', import.meta.url).pathname;
const KEY = 'sk_e2e_1b558d4bdddf89665c1f9bd6ddf3f90e';

let dns: RunningDnsServer;
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  dns = await startDnsServer({ resolver: new ZoneResolver(await loadZoneDirectory(ZONES)), port: 0, outsideZones: 'nxdomain' });
  const network = new NetworkResolver({ servers: [`127.0.0.1:${dns.address.port}`], timeoutMs: 600, attempts: 1 });
  const resolver = new CachingResolver(network, { maxEntries: 1000, defaultTtlSeconds: 60, maxTtlSeconds: 60 });
  app = await buildApp({
    stores: createMemoryStores(),
    check: (domain) => checkDomain(domain, { resolver }),
    apiKeys: [{ key: KEY, organizationId: 'org_e2e' }],
    rateLimits: false,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});

afterAll(async () => {
  await app?.close();
  await dns?.close();
});

const post = (domain: string) =>
  fetch(`${base}/api/tools/v1/spoof-checker`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ domain }),
  });

describe('HTTP → checkDomain → DNS server, over real sockets', () => {
  it('answers a verdict from real DNS packets', async () => {
    const response = await post('https://demo.example/pricing');
    expect(response.status).toBe(200);
    expect(response.headers.get('x-log-id')).toMatch(/^[0-9a-f-]{36}$/);
    const body = (await response.json()) as SpoofCheckResult;
    expect(body).toMatchObject({
      domain: 'demo.example',
      verdict: 'protected',
      spoofable: false,
      inboxOutcome: 'rejected',
      dmarc: { published: true, policy: 'reject', subdomainPolicy: 'none', percentage: 100 },
      spf: { published: true, qualifier: '~all', lookupCount: 1 },
      mx: { published: true, provider: 'Google Workspace' },
    });
    expect(body.reasons.map((r) => r.id)).toContain('subdomain-hole');
    expect((body.details.dns as { queries: number }).queries).toBeGreaterThan(30);
  });

  it('answers 502 naming the query when the DMARC lookup gets SERVFAIL, never a verdict', async () => {
    dns.setFaults([{ name: '_dmarc.open.example', fault: { kind: 'servfail' } }]);
    try {
      const response = await post('open.example');
      expect(response.status).toBe(502);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ statusCode: 502, code: 'DNS_FAILURE' });
      expect(JSON.stringify(body)).toContain('_dmarc.open.example');
      expect(body.verdict).toBeUndefined();
    } finally {
      dns.setFaults([]);
    }
  });

  it('answers 503 when the DMARC lookup times out', async () => {
    dns.setFaults([{ name: '_dmarc.open.example', fault: { kind: 'drop' } }]);
    try {
      const response = await post('open.example');
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ code: 'DNS_TIMEOUT' });
    } finally {
      dns.setFaults([]);
    }
  });

  it('serves the guide a next step links to', async () => {
    const body = (await (await post('open.example')).json()) as SpoofCheckResult;
    expect(body.nextStep.href).toBe('/guides/spf-open?domain=open.example');
    const guide = await fetch(`${base}${body.nextStep.href}`);
    expect(guide.status).toBe(200);
    // An HTML page rendered from docs/guides/spf-open.md (src/web).
    expect(guide.headers.get('content-type')).toContain('text/html');
    expect(await guide.text()).toContain('<h1>Your SPF record lets any server send as you</h1>');
    expect((await fetch(`${base}/guides/nope`)).status).toBe(404);
  });
});
