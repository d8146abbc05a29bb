/**
 * The console with a monitor service that has the alert service (src/jobs/monitors/alerts.ts) and the
 * lookalike memory, for the tests of the alerts, lookalikes and failure-report pages.
 */
import { checkDomain } from '../../packages/engine/src/check.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { parseZone } from '../../packages/engine/src/zones/parse.js';
import type { HostLookup } from '@spoof-checker/engine';
import type { AlertSmtpConfig } from '../../src/jobs/monitors/alert-email.js';
import { AlertService } from '../../src/jobs/monitors/alerts.js';
import { InProcessMonitorScheduler, MonitorService } from '../../src/jobs/monitors/monitors.js';
import { createMemoryStores } from '../../src/store/memory.js';
import { TestClock } from '../monitors/helpers.js';
import type { FailureReport } from '../../src/store/failure-reports.js';
import type { RememberedLookalike } from '../../src/store/remembered-lookalikes.js';
import { consoleService, DOMAINS, ORG_A, zoneFor } from './helpers.js';

/**
 * The console with a monitor service that has the alert service and the lookalike memory. `smtp`:
 * true, a relay that is never reached (email channels can be made); or a real relay's settings, with
 * the `lookup` that finds it and the `publicOrigin` the mails link to.
 */
export async function peopleService(options: { smtp?: boolean | AlertSmtpConfig; lookup?: HostLookup; publicOrigin?: string } = {}) {
  const stores = createMemoryStores();
  const clock = new TestClock(Date.parse('2026-03-01T12:00:00.000Z'));
  const resolver = new ZoneResolver(Object.entries(DOMAINS).map(([d, dmarc]) => parseZone(zoneFor(d, dmarc))));
  const serverKey = Buffer.alloc(32, 7);
  const alerts = new AlertService({
    store: stores.alerts,
    serverKey,
    allowPrivateAddresses: true,
    now: clock.now,
    timeoutMs: 5_000,
    ...(options.smtp === true ? { smtp: { scheme: 'smtp' as const, host: '127.0.0.1', port: 1, user: undefined, password: undefined, from: 'alerts@acme.example', extraCa: undefined } } : options.smtp ? { smtp: options.smtp } : {}),
    ...(options.lookup ? { lookup: options.lookup } : {}),
    ...(options.publicOrigin ? { publicOrigin: options.publicOrigin } : {}),
  });
  const scheduler = new InProcessMonitorScheduler({ store: stores.monitors, check: (domain) => checkDomain(domain, { resolver }), now: clock.now, tickMs: 0 });
  const monitors = new MonitorService({ store: stores.monitors, scheduler, serverKey, allowPrivateAddresses: true, now: clock.now, alerts, lookalikes: stores.rememberedLookalikes });
  const built = await consoleService({ stores, clock, extra: { monitors } });
  const close = async () => {
    await scheduler.close();
    await built.monitors.scheduler.close();
    await built.app.close();
  };
  return { ...built, monitors, alerts, close };
}

/** A remembered lookalike of ORG_A's monitor `monitorId`, registered with MX and two changes. */
export const remembered = (domain: string, unicode: string, monitorId: string, overrides: Partial<RememberedLookalike> = {}): RememberedLookalike => ({
  monitorId,
  organizationId: ORG_A.id,
  domain,
  unicode,
  firstSeen: '2026-02-01T10:00:00.000Z',
  lastSeen: '2026-02-28T10:00:00.000Z',
  state: { registered: true, mx: true, spf: false, grade: 'high' },
  pending: null,
  ours: false,
  history: [
    { at: '2026-02-01T10:00:00.000Z', change: 'registered', before: 'unregistered', after: 'registered' },
    { at: '2026-02-10T10:00:00.000Z', change: 'mx-published', before: 'no MX', after: 'MX' },
  ],
  ...overrides,
});

/** A failure report of alpha.example (ORG_A) from `sourceIp`: a DMARC failure, headers only. */
export const failure = (n: number, sourceIp: string, receivedAt: string): FailureReport => ({
  id: `fr_${n}`,
  organizationId: ORG_A.id,
  domain: 'alpha.example',
  identity: `identity-${n}`,
  receivedAt,
  arrivalDate: null,
  sourceIp,
  authFailure: ['dmarc'],
  authenticationResults: ['mx.receiver.example; dmarc=fail header.from=alpha.example'],
  identityAlignment: 'none',
  deliveryResult: n % 2 === 0 ? 'reject' : 'spam',
  reporter: { userAgent: 'Receiver/1.0', from: 'ruf@receiver.example', authenticated: true },
  feedback: [],
  headers: [{ name: 'From', value: 'ceo@alpha.example' }, { name: 'Subject', value: 'Invoice' }],
  localPartsHashed: true,
});
