/**
 * Every result computed from zone files says so: `"source": "fixture-zones"` in the JSON and a line
 * in the CLI report (fixtures/zones has a stand-in google.com, which must never read as Google's own
 * DNS); answers from a DNS server say `"source": "dns"`. The resolver is what knows (ZoneResolver,
 * and every wrapper passes its inner resolver's source on); `CheckOptions.source` overrides it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDomain } from '../../packages/engine/src/check.js';
import { CachingResolver } from '../../packages/engine/src/dns/cache.js';
import { FaultyResolver } from '../../packages/engine/src/dns/faults.js';
import { ConcurrencyLimitedResolver } from '../../packages/engine/src/dns/limits.js';
import { startDnsServer, type RunningDnsServer } from '../../packages/engine/src/zones/server.js';
import { checkSourceOf } from '../../packages/engine/src/dns/types.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';
import { main } from '../../src/cli/main.js';
import { FIXTURE_ZONES_LINE } from '../../src/cli/report.js';
import { toHtmlString } from '../../src/web/html.js';
import { resultPage } from '../../src/web/result-view.js';
import { captureIo, FIXTURE_ZONES } from './helpers.js';

let zones: ZoneResolver;
let server: RunningDnsServer;
beforeAll(async () => {
  zones = new ZoneResolver(await loadZoneDirectory(FIXTURE_ZONES));
  server = await startDnsServer({ resolver: zones, port: 0, outsideZones: 'nxdomain' });
});
afterAll(async () => {
  await server?.close();
});

async function run(args: string[]) {
  const { io, stdout, stderr } = captureIo();
  const code = await main(args, io);
  return { code, out: stdout(), err: stderr() };
}

describe('check --zones says its answers are stand-ins', () => {
  it('the report of google.com from fixtures/zones has the fixture-zones line right under the verdict', async () => {
    const { code, out } = await run(['check', '--zones', FIXTURE_ZONES, 'google.com']);
    expect(code).toBe(0);
    const lines = out.split('\n');
    expect(lines[0]).toMatch(/^google\.com: /);
    expect(lines[1]).toBe('  Source: fixture zones. These answers come from zone files loaded in memory (--zones), not from the');
    expect(out.replace(/\n\s+/g, ' ')).toContain(FIXTURE_ZONES_LINE);
  });

  it('--json carries "source": "fixture-zones" at the top level', async () => {
    const { out } = await run(['check', '--zones', FIXTURE_ZONES, '--json', 'google.com', 'p-reject.example']);
    const results = out.trim().split('\n').map((line) => JSON.parse(line));
    expect(results.map((r) => r.source)).toEqual(['fixture-zones', 'fixture-zones']);
  });

  it('the same zones served over DNS (--resolver) are the DNS: "source": "dns", and no fixture line', async () => {
    const resolver = `${server.address.host}:${server.address.port}`;
    const json = await run(['check', '--resolver', resolver, '--json', 'p-reject.example']);
    expect(JSON.parse(json.out)).toMatchObject({ source: 'dns', verdict: 'protected' });
    const report = await run(['check', '--resolver', resolver, 'p-reject.example']);
    expect(report.out).not.toContain('Source: fixture zones');
  });

  it('scan --zones writes the source in every JSON line', async () => {
    const { io, stdout } = captureIo('p-reject.example\ngoogle.com\n');
    await main(['scan', '-', '--zones', FIXTURE_ZONES], io);
    expect(stdout().trim().split('\n').map((line) => JSON.parse(line).source)).toEqual(['fixture-zones', 'fixture-zones']);
  });
});

describe('the resolver knows its source', () => {
  it('a ZoneResolver is fixture-zones, and the wrappers pass it on; other resolvers are dns', () => {
    expect(checkSourceOf(zones)).toBe('fixture-zones');
    expect(checkSourceOf(new FaultyResolver(zones, []))).toBe('fixture-zones');
    expect(checkSourceOf(new CachingResolver(new ConcurrencyLimitedResolver(zones)))).toBe('fixture-zones');
    expect(checkSourceOf({ resolve: zones.resolve.bind(zones) })).toBe('dns');
  });

  it('checkDomain reports it, and CheckOptions.source overrides it', async () => {
    expect((await checkDomain('p-reject.example', { resolver: new FaultyResolver(zones, []) })).source).toBe('fixture-zones');
    expect((await checkDomain('p-reject.example', { resolver: { resolve: zones.resolve.bind(zones) } })).source).toBe('dns');
    expect((await checkDomain('p-reject.example', { resolver: { resolve: zones.resolve.bind(zones) }, source: 'fixture-zones' })).source).toBe('fixture-zones');
  });

  it('the result page says so outside the demo (whose banner already does), and names the source in "About this check"', async () => {
    const result = await checkDomain('google.com', { resolver: zones });
    const outside = toHtmlString(resultPage(result, { origin: null }));
    expect(outside).toContain('id="source-note"');
    expect(outside).toMatch(/From fixture zones\.<\/strong> These answers come from zone files loaded in memory, not from the live DNS/);
    expect(outside).toContain('data-source="fixture-zones"');
    const live = toHtmlString(resultPage({ ...result, source: 'dns' }, { origin: null }));
    expect(live).not.toContain('id="source-note"');
    expect(live).toContain('data-source="dns"');
  });
});
