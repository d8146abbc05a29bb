/**
 * A hostile domain served over real DNS: `fixtures/zones/hostile-padded.example.zone` publishes an SPF
 * and a DMARC record of about 60 KB each (236 character-strings, so the answers come over TCP), padded
 * where the old backtracking parsers were quadratic (a 59,918-letter top label ending in "!", 59,907
 * spaces inside a `rua` URI). Before the parsers were made linear, checking it took seconds of CPU on
 * the event loop, and every other request waited as long. Now the check is well under a second, and a
 * check of an ordinary domain started at the same moment is not held up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDomain } from '../../src/check.js';
import { NetworkResolver } from '../../src/dns/network-resolver.js';
import { startDnsServer, type RunningDnsServer } from '../../src/zones/server.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { loadZoneDirectory } from '../../src/zones/load.js';

const ZONES_DIR = new URL('../../../../fixtures/zones/', import.meta.url).pathname;
const HOSTILE = 'hostile-padded.example';
/** An ordinary fixture domain (the baseline company), checked beside the hostile one. */
const ORDINARY = 'p-reject.example';
/** Per-query budget: generous, as the server is on the loopback interface. */
const QUERY_TIMEOUT_MS = 3000;
/**
 * "Well under a second" for the whole hostile check over DNS (the quadratic parsers took 6.8 s).
 * Loose enough for a loaded two-core CI machine; the old code misses it by a factor of seven or more.
 */
const HOSTILE_CHECK_BUDGET_MS = 1000;
/** The ordinary check's latency while the hostile one runs, with the same allowance. */
const CONCURRENT_CHECK_BUDGET_MS = 1000;

describe('a domain with 60 KB SPF and DMARC records, over DNS', () => {
  let server: RunningDnsServer;
  let servers: string[];

  beforeAll(async () => {
    server = await startDnsServer({ resolver: new ZoneResolver(await loadZoneDirectory(ZONES_DIR)), port: 0, outsideZones: 'nxdomain' });
    servers = [`${server.address.host}:${server.address.port}`];
  });

  afterAll(async () => {
    await server?.close();
  });

  const resolver = (): NetworkResolver => new NetworkResolver({ servers, timeoutMs: QUERY_TIMEOUT_MS });

  it(`is checked in under ${HOSTILE_CHECK_BUDGET_MS} ms, with both records read in full`, async () => {
    const started = performance.now();
    const result = await checkDomain(HOSTILE, { resolver: resolver() });
    const elapsed = performance.now() - started;
    // The records arrived whole (over TCP: 60 KB does not fit a UDP answer) and were parsed.
    expect(result.spf.rawRecord?.length).toBe(59_978);
    expect(result.spf.rawRecord?.endsWith('! -all')).toBe(true);
    expect(result.dmarc.rawRecord?.length).toBe(59_987);
    expect(result.dmarc.policy).toBe('reject');
    expect(server.stats().tcp).toBeGreaterThan(0);
    expect(elapsed, `the hostile check took ${elapsed.toFixed(0)} ms`).toBeLessThan(HOSTILE_CHECK_BUDGET_MS);
  });

  it(`does not hold up a check of another domain started at the same time (< ${CONCURRENT_CHECK_BUDGET_MS} ms)`, async () => {
    const hostile = checkDomain(HOSTILE, { resolver: resolver() });
    const started = performance.now();
    const ordinary = await checkDomain(ORDINARY, { resolver: resolver() });
    const ordinaryElapsed = performance.now() - started;
    await hostile;
    expect(ordinary.dmarc.policy).toBe('reject');
    expect(ordinaryElapsed, `the ordinary check took ${ordinaryElapsed.toFixed(0)} ms beside the hostile one`).toBeLessThan(CONCURRENT_CHECK_BUDGET_MS);
  });
});
