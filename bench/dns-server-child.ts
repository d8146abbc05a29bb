/**
 * The embedded DNS server in a process of its own, for the cold benchmark: it must not share the
 * engine's event loop or CPU. Speaks JSON lines (bench/stats.ts `serveLines`):
 *   → { "start": { "domains": N, "keys": KeyPool } }   ← { "port": P }
 *   → { "stats": true }                               ← { "udp": n, "tcp": n }
 * and stops when its stdin closes.
 *
 *   (started by bench/engine-cold.ts with the parent's loader flags and `--engine-dir DIR`)
 */
import { engineFromArgs } from './engine.js';
import { serveLines } from './stats.js';
import { syntheticZones, type KeyPool } from './synthetic.js';

type Message = { start: { domains: number; keys: KeyPool } } | { stats: true };

const engine = await engineFromArgs(process.argv.slice(2));
let server: Awaited<ReturnType<typeof engine.server.startDnsServer>> | undefined;

await serveLines(async (raw) => {
  const message = raw as Message;
  if ('start' in message) {
    const resolver = new engine.api.ZoneResolver(syntheticZones(message.start.domains, message.start.keys));
    server = await engine.server.startDnsServer({ resolver, outsideZones: 'nxdomain' });
    return { port: server.address.port };
  }
  return server?.stats() ?? { udp: 0, tcp: 0 };
});
await server?.close();
