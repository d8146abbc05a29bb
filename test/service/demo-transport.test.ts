/**
 * The demo's own transport responders (src/service/demo-transport.ts), for real on loopback: each
 * demo transport domain gets the transport verdict it is there to show, and the responders stop.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDomain } from '../../packages/engine/src/check.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
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

describe('serve --demo', () => {
  it('starts the demo mail servers: the home page lists the transport domains, each answers its verdict, and stop closes them', async () => {
    const { main } = await import('../../src/cli/main.js');
    const { captureIo } = await import('../cli/helpers.js');
    let stop!: (signal: string) => void;
    const { io, stderr } = captureIo('', { stop: new Promise((resolve) => (stop = resolve)) });
    const running = main(['serve', '--demo', '--port', '0', '--log-format', 'json'], io);
    await expect.poll(() => stderr(), { timeout: 15_000 }).toContain('listening on');
    const url = /listening on (http:\/\/[^ ]+)/.exec(stderr())![1]!;
    const home = await (await fetch(`${url}/`)).text();
    for (const { domain } of DEMO_TRANSPORT_DOMAINS) expect(home).toContain(`href="/transport/${domain}"`);
    const verdicts: Record<string, string> = {};
    for (const { domain } of DEMO_TRANSPORT_DOMAINS) {
      verdicts[domain] = ((await (await fetch(`${url}/transport/${domain}`, { headers: { accept: 'application/json' } })).json()) as { verdict: string }).verdict;
    }
    // dnssec-secure.example: DANE (a signed TLSA that matches) enforces TLS without MTA-STS (RFC 7672);
    // brand.example (the BIMI demo) has STARTTLS without MTA-STS: opportunistic.
    expect(verdicts).toEqual({ 'sts-enforced.example': 'enforced', 'sts-testing.example': 'opportunistic', 'sts-broken.example': 'broken', 'sts-none.example': 'at-risk', 'dnssec-secure.example': 'enforced', 'brand.example': 'opportunistic' });
    // The other demo domains keep the guard: their documentation addresses are never connected to.
    const other = (await (await fetch(`${url}/transport/p-none.example`, { headers: { accept: 'application/json' } })).json()) as { mx: { addresses: { outcome: string }[] }[] };
    expect(other.mx.flatMap((m) => m.addresses.map((a) => a.outcome)).every((o) => o.startsWith('refused'))).toBe(true);
    stop('SIGTERM');
    expect(await running).toBe(0);
  }, 60_000);
});
