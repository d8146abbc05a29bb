/**
 * The regression corpus end to end over real DNS: the fixture zones served by the embedded DNS server
 * on 127.0.0.1 (UDP and TCP, port picked by the system), every scenario checked through
 * `NetworkResolver` (c-ares, the resolver production uses), and the projection compared with the
 * same golden the in-memory corpus test uses. Whatever differs is a difference between the wire and
 * the in-memory resolver: encoding, truncation and TCP retry, CNAME chains, NXDOMAIN vs NODATA.
 *
 * Scenarios with DNS faults run one at a time with their plan set on the server (`setFaults`), so the
 * fault happens on the wire: SERVFAIL and REFUSED as RCODEs, `drop` as a real client timeout. Their
 * results are compared in full; a refusal is compared by code and by its message up to the first
 * ": ", since what follows is the failure detail, which names the transport ("injected fault" in
 * memory, c-ares' words on the wire).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetworkResolver } from '../../src/dns/network-resolver.js';
import { startDnsServer, type RunningDnsServer } from '../../src/zones/server.js';
import { isProjectedError, loadCorpusResolver, loadScenarios, readGolden, runScenario, type Projection } from './project.js';

/** Per-query budget for fault-free scenarios: generous, as nothing is meant to time out. */
const QUERY_TIMEOUT_MS = 3000;
/**
 * Per-query budget for fault scenarios: a dropped query costs this long, so it is kept short; the
 * server is on the loopback interface, where a real answer takes well under a millisecond.
 */
const FAULT_QUERY_TIMEOUT_MS = 400;

const scenarios = await loadScenarios();
const faultFree = scenarios.filter((scenario) => !scenario.faults || scenario.faults.length === 0);
const faulty = scenarios.filter((scenario) => scenario.faults && scenario.faults.length > 0);

/** A refusal reduced to what the wire and memory share: the code and the message before its detail. */
function comparable(projection: Projection | undefined): unknown {
  if (projection === undefined || !isProjectedError(projection)) return projection;
  return { error: { code: projection.error.code, message: projection.error.message.split(': ')[0] } };
}

describe('regression corpus over DNS (embedded server, NetworkResolver)', () => {
  let server: RunningDnsServer;
  let servers: string[];

  beforeAll(async () => {
    server = await startDnsServer({ resolver: await loadCorpusResolver(), port: 0, outsideZones: 'nxdomain' });
    servers = [`${server.address.host}:${server.address.port}`];
  });

  afterAll(async () => {
    await server?.close();
  });

  describe('fault-free scenarios give exactly their golden', () => {
    for (const scenario of faultFree) {
      it(scenario.name, async () => {
        const golden = await readGolden(scenario.name);
        expect(golden, `no golden for ${scenario.name}`).toBeDefined();
        const resolver = new NetworkResolver({ servers, timeoutMs: QUERY_TIMEOUT_MS });
        expect(await runScenario(scenario, resolver)).toEqual(golden);
      });
    }
  });

  describe('scenarios with faults injected on the wire give their golden', () => {
    for (const scenario of faulty) {
      it(scenario.name, async () => {
        const golden = await readGolden(scenario.name);
        expect(golden, `no golden for ${scenario.name}`).toBeDefined();
        server.setFaults(scenario.faults ?? []);
        try {
          const resolver = new NetworkResolver({ servers, timeoutMs: FAULT_QUERY_TIMEOUT_MS });
          const projection = await runScenario(scenario, resolver, { applyFaults: false });
          expect(comparable(projection)).toEqual(comparable(golden));
        } finally {
          server.setFaults([]);
        }
      });
    }
  });

  it('actually answered over the network', () => {
    const stats = server.stats();
    // Every fault-free check sends dozens of queries; zero would mean the checks never left memory.
    expect(stats.udp).toBeGreaterThan(faultFree.length * 10);
  });
});
