/**
 * The cost of a lookalike search (`findLookalikes`, `spoof-checker lookalikes`, the API's and the
 * page's "Names that look like yours"): for real-shaped names, how many candidates each mode makes
 * and how many DNS queries the run sends, and the time of one run against the embedded DNS server
 * (`startDnsServer` over fixtures/zones, names outside them NXDOMAIN) through the network client,
 * cold (a fresh cache per run) and warm (a shared `CachingResolver`, as `serve` has).
 *
 * The names: short (`ibm.com`), long (`bankofamerica.com`), an IDN-enabled TLD (`example.de`,
 * DENIC registers Latin letters), a two-level suffix (`example.co.uk`, Nominet registers no IDN),
 * an IDN name (`bücher.de`), and the fixture original `acmebank.example` with nine registered
 * lookalikes. Only acmebank.example has names that exist; for the others every candidate is
 * NXDOMAIN (one query each), which is what most candidates of a real name are.
 *
 *   npx tsx bench/lookalikes.ts            full run (5 timed runs per name and mode)
 *   npx tsx bench/lookalikes.ts --quick    1 timed run
 */
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { CachingResolver } from '../packages/engine/src/dns/cache.js';
import { NetworkResolver } from '../packages/engine/src/dns/network-resolver.js';
import { startDnsServer } from '../packages/engine/src/zones/server.js';
import { ZoneResolver } from '../packages/engine/src/zones/zone-resolver.js';
import { findLookalikes } from '../packages/engine/src/lookalikes/index.js';
import { loadZoneDirectory } from '../packages/engine/src/zones/load.js';
import { ANONYMOUS_LOOKALIKE_MAX_CANDIDATES, ANONYMOUS_LOOKALIKE_MAX_QUERIES } from '../src/web/plugin.js';
import { API_DEEP_MAX_CANDIDATES } from '../src/http/routes/lookalikes.js';

const NAMES = ['ibm.com', 'bankofamerica.com', 'example.de', 'example.co.uk', 'bücher.de', 'acmebank.example'] as const;
/** Timed runs per name and mode (full / quick); the median is reported. */
const RUNS = process.argv.includes('--quick') ? 1 : 5;

const zones = new ZoneResolver(await loadZoneDirectory(fileURLToPath(new URL('../fixtures/zones/', import.meta.url))));
const server = await startDnsServer({ resolver: zones, outsideZones: 'nxdomain' });
const serverAddress = `127.0.0.1:${server.address.port}`;
const network = (): NetworkResolver => new NetworkResolver({ servers: [serverAddress], timeoutMs: 2000 });

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

interface Row {
  name: string;
  mode: string;
  candidates: number;
  beforeCap: number;
  existing: number;
  queries: number;
  coldMs: number;
  warmMs: number;
}

const rows: Row[] = [];
const modes = [
  { mode: 'default', options: {} },
  { mode: 'page', options: { maxCandidates: ANONYMOUS_LOOKALIKE_MAX_CANDIDATES, maxQueries: ANONYMOUS_LOOKALIKE_MAX_QUERIES } },
  { mode: 'api deep', options: { deep: true, maxCandidates: API_DEEP_MAX_CANDIDATES } },
  { mode: 'deep', options: { deep: true } },
] as const;

for (const name of NAMES) {
  for (const { mode, options } of modes) {
    const cold: number[] = [];
    let report;
    for (let i = 0; i < RUNS; i++) {
      const resolver = new CachingResolver(network());
      const started = performance.now();
      report = await findLookalikes(name, { resolver, ...options });
      cold.push(performance.now() - started);
    }
    const shared = new CachingResolver(network());
    await findLookalikes(name, { resolver: shared, ...options });
    const warm: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      await findLookalikes(name, { resolver: shared, ...options });
      warm.push(performance.now() - started);
    }
    rows.push({
      name,
      mode,
      candidates: report!.generated,
      beforeCap: report!.candidatesBeforeCap,
      existing: report!.lookalikes.length,
      queries: report!.queries,
      coldMs: Math.round(median(cold)),
      warmMs: Math.round(median(warm)),
    });
  }
}
await server.close();

console.log(`Lookalike searches against the embedded DNS server (${serverAddress}), median of ${RUNS} run(s)`);
console.log('| name | mode | candidates (before cap) | resolving | DNS queries | cold ms | warm ms |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.name} | ${r.mode} | ${r.candidates} (${r.beforeCap}) | ${r.existing} | ${r.queries} | ${r.coldMs} | ${r.warmMs} |`);
console.log(`\nThe page's worst case per request: ${ANONYMOUS_LOOKALIKE_MAX_QUERIES} DNS queries (its budget; ${ANONYMOUS_LOOKALIKE_MAX_CANDIDATES} names at most).`);
