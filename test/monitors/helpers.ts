/**
 * Shared set-up of the monitor tests: a watched domain whose zone the test rewrites (its DMARC
 * record, or a SERVFAIL), a local webhook receiver on 127.0.0.1 that records every request, and a
 * monitor service over memory or SQL stores with an in-process scheduler on an injected clock.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkDomain } from '../../packages/engine/src/check.js';
import type { DnsAnswer, RecordType, Resolver } from '../../packages/engine/src/dns/types.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import type { MonitorCheck } from '../../src/jobs/monitors/monitor-run.js';
import { InProcessMonitorScheduler, MonitorService, secretOpener } from '../../src/jobs/monitors/monitors.js';
import { DeliveryPump } from '../../src/jobs/monitors/webhooks.js';
import type { MonitorStore } from '../../src/store/monitors.js';
import { parseZone } from '../../packages/engine/src/zones/parse.js';

/** The watched domain. */
export const WATCHED = 'watched.example';
export const REJECT = 'v=DMARC1; p=reject';
export const NONE = 'v=DMARC1; p=none';

/** The watched domain's zone with `dmarc` as its DMARC record. */
export function watchedZone(dmarc: string): string {
  return `$ORIGIN ${WATCHED}.
$TTL 1
@ IN SOA ns1 hostmaster 1 3600 600 86400 1
@ IN NS ns1
@ IN MX 10 mx1
@ IN TXT "v=spf1 ip4:198.51.100.24/29 -all"
_dmarc IN TXT "${dmarc}"
mx1 IN A 198.51.100.25
ns1 IN A 198.51.100.53
`;
}

/** A resolver over the watched zone, whose DMARC record can be changed, or its DMARC lookup made to fail. */
export class MutableResolver implements Resolver {
  #inner: ZoneResolver;
  failDmarc = false;
  constructor(dmarc: string) {
    this.#inner = new ZoneResolver([parseZone(watchedZone(dmarc))]);
  }
  setDmarc(dmarc: string): void {
    this.#inner = new ZoneResolver([parseZone(watchedZone(dmarc))]);
  }
  async resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    if (this.failDmarc && name.startsWith('_dmarc.')) return { kind: 'error', reason: 'servfail' } as DnsAnswer<T>;
    return this.#inner.resolve(name, type);
  }
}

/** The monitor check over a resolver. */
export function checkOver(resolver: Resolver): MonitorCheck {
  return (domain) => checkDomain(domain, { resolver });
}

/** One request the receiver got. */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on 127.0.0.1: answers `status` (200 by default) and records each request. */
export async function startReceiver(): Promise<{ url: string; received: Received[]; connections: () => number; setStatus: (s: number) => void; close: () => Promise<void> }> {
  const received: Received[] = [];
  let status = 200;
  let connections = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(status).end('ok');
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    connections: () => connections,
    setStatus: (s) => (status = s),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A settable clock. */
export class TestClock {
  constructor(public ms: number) {}
  readonly now = (): Date => new Date(this.ms);
  advance(ms: number): void {
    this.ms += ms;
  }
}

/** A monitor service with an in-process scheduler (ticked by the test) and a pump (drained by the test). */
export function monitorService(options: { store: MonitorStore; check: MonitorCheck; clock: TestClock; allowPrivateAddresses?: boolean; serverKey?: Buffer; maxMonitorsPerOrganization?: number }) {
  const serverKey = options.serverKey ?? Buffer.alloc(32, 7);
  const scheduler = new InProcessMonitorScheduler({ store: options.store, check: options.check, now: options.clock.now, tickMs: 0 });
  const pump = new DeliveryPump({ store: options.store, secretFor: secretOpener(options.store, serverKey), allowPrivateAddresses: options.allowPrivateAddresses ?? true, now: options.clock.now });
  const service = new MonitorService({
    store: options.store,
    scheduler,
    serverKey,
    allowPrivateAddresses: options.allowPrivateAddresses ?? true,
    now: options.clock.now,
    ...(options.maxMonitorsPerOrganization !== undefined ? { maxMonitorsPerOrganization: options.maxMonitorsPerOrganization } : {}),
  });
  return { service, scheduler, pump, serverKey };
}
