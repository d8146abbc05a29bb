/**
 * The embedded DNS server in a process of its own, for the cold benchmark: it must not share the
 * engine's event loop or CPU. Speaks JSON lines (bench/stats.ts `serveLines`):
 *   → { "start": { "domains": N, "keys": KeyPool, "onDemand"?: true } }   ← { "port": P }
 *   → { "stats": true }                                                   ← { "udp": n, "tcp": n }
 * and stops when its stdin closes.
 *
 * `onDemand` (bench/scale.ts, up to a million domains): the zones are not all parsed at start (a
 * million parsed zones would take gigabytes); a domain's zone is built from its index at its first
 * query and kept in a bounded cache (`ON_DEMAND_ZONE_CACHE`), so the server's memory stays flat.
 *
 *   (started by bench/engine-cold.ts and bench/scale.ts with the parent's loader flags and `--engine-dir DIR`)
 */
import { engineFromArgs } from './engine.js';
import { serveLines } from './stats.js';
import { domainZoneText, sharedZoneTexts, syntheticZones, type KeyPool } from './synthetic.js';

type Message = { start: { domains: number; keys: KeyPool; onDemand?: boolean } } | { stats: true };

/** Per-domain zones the on-demand server keeps parsed (least recently built dropped first). */
export const ON_DEMAND_ZONE_CACHE = 20_000;

const engine = await engineFromArgs(process.argv.slice(2));
type ZoneResolver = InstanceType<typeof engine.api.ZoneResolver>;
let server: Awaited<ReturnType<typeof engine.server.startDnsServer>> | undefined;

/** The synthetic domain a name lies in (`brand000042.example` and names under it), by index. */
const DOMAIN_NAME = /(?:^|\.)brand(\d{6,})\.example\.?$/i;

/**
 * A resolver with the shared zones parsed once and each synthetic domain's zone built on its first
 * query (the same text `syntheticZones` parses), a bounded number kept: the answers are the same as
 * a `ZoneResolver` over every zone.
 */
function onDemandResolver(domains: number, keys: KeyPool): ZoneResolver {
  const { ZoneResolver, parseZone } = engine.api;
  const shared = new ZoneResolver(Object.values(sharedZoneTexts()).map((text) => parseZone(text, { requireSoaAndNs: true })));
  const built = new Map<number, ZoneResolver>();
  const resolverFor = (name: string): ZoneResolver => {
    const match = DOMAIN_NAME.exec(name);
    const index = match ? Number(match[1]) : -1;
    if (index < 0 || index >= domains) return shared;
    let zone = built.get(index);
    if (zone) return zone;
    zone = new ZoneResolver([parseZone(domainZoneText(index, keys), { requireSoaAndNs: true })]);
    built.set(index, zone);
    if (built.size > ON_DEMAND_ZONE_CACHE) built.delete(built.keys().next().value as number);
    return zone;
  };
  // The server asks only these two of its resolver (packages/engine/src/zones/server.ts).
  return {
    locate: (name: string) => resolverFor(name).locate(name),
    resolveSync: (name: string, type: never) => resolverFor(name).resolveSync(name, type),
  } as unknown as ZoneResolver;
}

await serveLines(async (raw) => {
  const message = raw as Message;
  if ('start' in message) {
    const { domains, keys, onDemand } = message.start;
    const resolver = onDemand ? onDemandResolver(domains, keys) : new engine.api.ZoneResolver(syntheticZones(domains, keys));
    server = await engine.server.startDnsServer({ resolver, outsideZones: 'nxdomain' });
    return { port: server.address.port };
  }
  return server?.stats() ?? { udp: 0, tcp: 0 };
});
await server?.close();
