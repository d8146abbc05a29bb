/**
 * The demo's own transport responders (src/service/demo-transport.ts), for real on loopback: each
 * demo transport domain gets the transport verdict it is there to show, and the responders stop.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDomain } from '../../packages/engine/src/check.js';
import { ZoneResolver } from '../../packages/engine/src/dns/zone-resolver.js';
import { DEMO_TRANSPORT_DOMAINS, startDemoTransport, type DemoTransport } from '../../src/service/demo-transport.js';

let demo: DemoTransport;
beforeAll(async () => {
  demo = await startDemoTransport();
});
afterAll(async () => {
  await demo?.stop();
});

describe('the demo transport responders', () => {
  it.each([
    ['sts-enforced.example', 'enforced'],
    ['sts-testing.example', 'opportunistic'],
    ['sts-broken.example', 'broken'],
    ['sts-none.example', 'at-risk'],
  ])('%s is %s', async (domain, verdict) => {
    const result = await checkDomain(domain, { resolver: new ZoneResolver(demo.zones), transport: demo.options });
    expect(result.transport?.verdict).toBe(verdict);
    // The spoof verdict is the fixture's own: p=reject with a strict SPF.
    expect(result.verdict).toBe('protected');
  });

  it('lists one domain per verdict, each with its zone', () => {
    expect(DEMO_TRANSPORT_DOMAINS.map((d) => d.domain).sort()).toEqual([...demo.domains].sort());
    expect(demo.zones.map((z) => z.origin.replace(/\.$/, '')).sort()).toEqual([...demo.domains].sort());
  });
});
