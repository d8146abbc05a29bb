/**
 * Preloaded (`node --import`) into a `serve` or `worker` child by test/monitors/webhook-process.test.ts:
 * names under `.unroutable.test` resolve to 224.0.0.1, an address a TCP connect() is refused for on
 * the spot with ENETUNREACH (multicast: the kernel sends nothing), as an AAAA-only host is on a
 * machine without an IPv6 route. Every other name goes to the system's lookup as before.
 */
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';

const systemLookup = dns.promises.lookup;
const UNROUTABLE = { address: '224.0.0.1', family: 4 };
dns.promises.lookup = (host, options) =>
  typeof host === 'string' && host.endsWith('.unroutable.test') ? Promise.resolve(options?.all ? [UNROUTABLE] : UNROUTABLE) : systemLookup(host, options);
// `import { lookup } from 'node:dns/promises'` (the address guard) sees the replacement too.
syncBuiltinESMExports();
