/**
 * The cost of DNSSEC validation (`result.dnssec`): the same checks with validation on and off, over
 * the signed fixture zones (fixtures/dnssec) on the embedded server on loopback, cold (a new DNS
 * cache for every round) and warm (one cache for all rounds). Reports checks per second and, with
 * validation on, the signature verifications per check.
 *
 * Modes: `off`; `on` (each check walks from the anchor again: "warm" warms only the spoof check's
 * own lookups, so on-versus-off is the validation's whole cost); `on+cache` (one `DnssecCache` for
 * all checks of the row, as `check` shares one between its inputs). The server runs in this
 * process, so the figures include its answering.
 *
 *   npx tsx bench/dnssec.ts            full run
 *   npx tsx bench/dnssec.ts --quick    fewer rounds
 *
 * Measured (--quick, 3 rounds × 24 signed domains, concurrency 8, Node 22, the shared 2-core machine
 * at a load average of about 6, 2026-11-27): cold DNS cache 12 checks/s off, 7 on, 12 on with a
 * DnssecCache; warm 7197 off, 276 on, 865 with the cache; 6.8 signature verifications per check
 * (2 with the cache). Validation off costs nothing: no validator, no DNSSEC query.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { checkDomain } from '../packages/engine/src/check.js';
import { CachingResolver } from '../packages/engine/src/dns/cache.js';
import { NetworkResolver } from '../packages/engine/src/dns/network-resolver.js';
import { startDnsServer } from '../packages/engine/src/dns/server.js';
import { ZoneResolver } from '../packages/engine/src/dns/zone-resolver.js';
import { parseTrustAnchors } from '../packages/engine/src/dnssec/anchors.js';
import { DnssecCache } from '../packages/engine/src/dnssec/validate.js';
import { verifyCounter } from '../packages/engine/src/dnssec/verify.js';
import { loadSignedZoneDirectory } from '../packages/engine/src/zones/signed.js';
import { readFileSync } from 'node:fs';

/** Checks in flight. */
export const CONCURRENCY = 8;
/** Rounds over the signed domains (full / quick). */
export const ROUNDS = { full: 20, quick: 3 } as const;

const DIR = fileURLToPath(new URL('../fixtures/dnssec/', import.meta.url));

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const rounds = quick ? ROUNDS.quick : ROUNDS.full;
  const server = await startDnsServer({ resolver: new ZoneResolver([]), signedZones: await loadSignedZoneDirectory(`${DIR}zones`), outsideZones: 'nxdomain' });
  const address = `127.0.0.1:${server.address.port}`;
  const anchors = parseTrustAnchors(readFileSync(`${DIR}root-anchor.ds`, 'utf8'));
  const domains = readdirSync(`${DIR}zones`).filter((f) => f.endsWith('.test.signed') || f.endsWith('.test.zone')).map((f) => f.replace(/\.(signed|zone)$/, ''));
  const network = new NetworkResolver({ servers: [address] });
  const rows: Record<string, unknown>[] = [];
  for (const cache of ['cold', 'warm'] as const) {
    for (const validation of ['off', 'on', 'on+cache'] as const) {
      const zoneCache = new DnssecCache();
      let shared = new CachingResolver(network, { maxEntries: 10_000 });
      const statuses: Record<string, number> = {};
      let checks = 0;
      let failed = 0;
      const verifiesBefore = verifyCounter.count;
      // One unmeasured round so both modes start from the same JIT state; warm keeps its cache.
      for (let round = -1; round < rounds; round++) {
        if (cache === 'cold') shared = new CachingResolver(network, { maxEntries: 10_000 });
        if (round === 0) {
          checks = 0;
          failed = 0;
          verifyCounter.count = verifiesBefore;
          for (const key of Object.keys(statuses)) delete statuses[key];
          startedAt = performance.now();
        }
        const queue = [...domains];
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            for (let domain = queue.shift(); domain; domain = queue.shift()) {
              try {
                const result = await checkDomain(domain, { resolver: shared, ...(validation !== 'off' ? { dnssec: { query: network.dnssecQuery(), anchors, ...(validation === 'on+cache' ? { cache: zoneCache } : {}) } } : {}) });
                const status = result.dnssec?.status ?? 'none';
                statuses[status] = (statuses[status] ?? 0) + 1;
              } catch {
                failed++;
              }
              checks++;
            }
          }),
        );
      }
      const seconds = (performance.now() - startedAt) / 1000;
      rows.push({
        cache,
        validation,
        checks,
        failed,
        checksPerSecond: Math.round(checks / seconds),
        verificationsPerCheck: validation !== 'off' ? +((verifyCounter.count - verifiesBefore) / checks).toFixed(1) : 0,
        statuses,
      });
    }
  }
  network.close();
  await server.close();
  console.log(JSON.stringify({ bench: 'dnssec', quick, rounds, domains: domains.length, concurrency: CONCURRENCY, node: process.version, rows }, null, 2));
}

let startedAt = 0;
await main();
