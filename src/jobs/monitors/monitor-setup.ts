/**
 * What `serve` and `worker` call to run monitors: the scheduler (BullMQ with Redis, else in this
 * process), the webhook pump, the server key; and the demo's monitor with a history.
 */
import type { MonitorStore } from '../../store/monitors.js';
import { INITIAL_MACHINE, summaryOf, transition } from './monitor-changes.js';
import { RedisMonitorScheduler, startMonitorWorker, type MonitorWorker } from './monitor-queue.js';
import { observe, type MonitorCheck, type MonitorReportSource, type MonitorSelectorSource } from './monitor-run.js';
import { InProcessMonitorScheduler, MonitorService, secretOpener, serverKeyFor, type MonitorScheduler } from './monitors.js';
import { DeliveryPump, type WebhookConnector } from './webhooks.js';
import type { HostLookup } from '@spoof-checker/engine';
import type { AlertStore } from '../../store/alerts.js';
import type { RememberedLookalikeStore } from '../../store/remembered-lookalikes.js';
import { lookalikeMemory } from './lookalike-memory.js';
import { AlertService } from './alerts.js';
import type { AlertSmtpConfig } from './alert-email.js';

/** The alert channels' settings of `serve` and `worker` (src/jobs/monitors/alerts.ts). */
export interface AlertSetup {
  store: AlertStore;
  /** The lookalikes monitors remember (src/jobs/monitors/lookalike-memory.ts); without it, lookalike alerts come from the snapshot. */
  lookalikes?: RememberedLookalikeStore | undefined;
  /** The mail relay (`--alert-smtp`, `--alert-from`); without it, no email channels. */
  smtp?: AlertSmtpConfig | undefined;
  /** The origin console links start with. */
  publicOrigin?: string | undefined;
}

/** The alert service over the monitors' server key and send options. */
function alertServiceFor(setup: AlertSetup, serverKey: Buffer, allowPrivateAddresses: boolean, webhooks: WebhookSendOptions | undefined, now: (() => Date) | undefined): AlertService {
  return new AlertService({
    store: setup.store,
    serverKey,
    allowPrivateAddresses,
    smtp: setup.smtp,
    publicOrigin: setup.publicOrigin,
    ...(webhooks?.timeoutMs !== undefined ? { timeoutMs: webhooks.timeoutMs } : {}),
    ...(webhooks?.lookup ? { lookup: webhooks.lookup } : {}),
    ...(webhooks?.connect ? { connect: webhooks.connect } : {}),
    ...(now ? { now } : {}),
  });
}

/** How webhooks are sent (tests inject a lookup, a connector that fails like the network, a short timeout). */
export interface WebhookSendOptions {
  timeoutMs?: number;
  lookup?: HostLookup;
  /** Webhooks to loopback addresses only (`serve --demo`: nothing leaves the machine). */
  loopbackOnly?: boolean;
  connect?: WebhookConnector;
  /** How often the pump looks for due deliveries. */
  pollMs?: number;
}
import { SECRET_KEY_VARIABLE } from './monitor-secrets.js';

/** Options of {@link startMonitorService}. */
export interface StartMonitorServiceOptions {
  store: MonitorStore;
  check: MonitorCheck;
  /** DMARC report signals added to each snapshot (in-process runs; a worker takes its own). */
  reportSignals?: MonitorReportSource | undefined;
  /** The DKIM selectors the organisation's reports have seen (see `MonitorRunDeps`). */
  reportSelectors?: MonitorSelectorSource | undefined;
  /** With a URL, runs go on the BullMQ queue for `spoof-checker worker`s. */
  redisUrl?: string | undefined;
  allowPrivateAddresses: boolean;
  env: NodeJS.ProcessEnv;
  /** One schedule minute (tests scale it down). */
  minuteMs?: number;
  /** Key prefix in Redis (tests). */
  prefix?: string;
  now?: () => Date;
  log?: (message: string, error?: unknown) => void;
  webhooks?: WebhookSendOptions;
  /** Most monitors one organisation may keep (default MAX_MONITORS_PER_ORGANIZATION). */
  maxMonitorsPerOrganization?: number;
  /** Alert channels (Slack, Teams, email, signed webhooks) sent through the same pump. */
  alerts?: AlertSetup | undefined;
}

/** Builds and starts the monitor service of `serve`; `close()` it at shutdown. */
export async function startMonitorService(options: StartMonitorServiceOptions): Promise<MonitorService> {
  const log = options.log ?? (() => {});
  const serverKey = await serverKeyFor(options.store, options.env[SECRET_KEY_VARIABLE]);
  const alerts = options.alerts ? alertServiceFor(options.alerts, serverKey, options.allowPrivateAddresses, options.webhooks, options.now) : undefined;
  const pump = new DeliveryPump({
    store: options.store,
    secretFor: secretOpener(options.store, serverKey),
    allowPrivateAddresses: options.allowPrivateAddresses,
    log,
    ...options.webhooks,
    ...(options.now ? { now: options.now } : {}),
    ...(alerts ? { sendToChannel: (delivery) => alerts.sendDelivery(delivery) } : {}),
  });
  const scheduler: MonitorScheduler =
    options.redisUrl !== undefined
      ? new RedisMonitorScheduler(options.store, {
          redisUrl: options.redisUrl,
          log,
          ...(options.minuteMs !== undefined ? { minuteMs: options.minuteMs } : {}),
          ...(options.prefix !== undefined ? { prefix: options.prefix } : {}),
        })
      : new InProcessMonitorScheduler({
          store: options.store,
          check: options.check,
          reportSignals: options.reportSignals,
          reportSelectors: options.reportSelectors,
          alertDeliveries: alerts ? (monitor, event, eventId, at) => alerts.deliveriesFor(monitor, event, eventId, at) : undefined,
          lookalikeMemory: options.alerts?.lookalikes ? lookalikeMemory(options.alerts.lookalikes) : undefined,
          log,
          onRun: (_id, outcome) => {
            if (outcome.kind === 'committed' && outcome.deliveries > 0) pump.poke();
          },
          ...(options.minuteMs !== undefined ? { minuteMs: options.minuteMs } : {}),
          ...(options.now ? { now: options.now } : {}),
        });
  const service = new MonitorService({
    store: options.store,
    scheduler,
    serverKey,
    allowPrivateAddresses: options.allowPrivateAddresses,
    // The webhook URL's host is looked up as the deliveries will look it up (zones, when offline).
    ...(options.webhooks?.lookup ? { lookup: options.webhooks.lookup } : {}),
    ...(options.webhooks?.loopbackOnly ? { loopbackOnly: true } : {}),
    pump,
    ...(alerts ? { alerts } : {}),
    ...(options.alerts?.lookalikes ? { lookalikes: options.alerts.lookalikes } : {}),
    ...(options.maxMonitorsPerOrganization !== undefined ? { maxMonitorsPerOrganization: options.maxMonitorsPerOrganization } : {}),
    ...(options.minuteMs !== undefined ? { minuteMs: options.minuteMs } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  await service.start();
  return service;
}

/** One line for the start-up message. */
export function describeMonitorMode(redisUrl: string | undefined): string {
  return redisUrl === undefined ? 'monitors in this process' : 'monitors on the Redis queue';
}

/** What a `worker` runs for monitors: the run jobs and a webhook pump. */
export async function startMonitorWorkerWithPump(options: {
  store: MonitorStore;
  check: MonitorCheck;
  reportSignals?: MonitorReportSource | undefined;
  /** The DKIM selectors the organisation's reports have seen (see `MonitorRunDeps`). */
  reportSelectors?: MonitorSelectorSource | undefined;
  redisUrl: string;
  allowPrivateAddresses: boolean;
  env: NodeJS.ProcessEnv;
  lockDurationMs?: number;
  minuteMs?: number;
  prefix?: string;
  log?: (message: string, error?: unknown) => void;
  webhooks?: WebhookSendOptions;
  /** Alert channels, sent by this worker's pump too (give it the same relay as `serve`). */
  alerts?: AlertSetup | undefined;
}): Promise<MonitorWorker> {
  const serverKey = await serverKeyFor(options.store, options.env[SECRET_KEY_VARIABLE]);
  const alerts = options.alerts ? alertServiceFor(options.alerts, serverKey, options.allowPrivateAddresses, options.webhooks, undefined) : undefined;
  const pump = new DeliveryPump({
    store: options.store,
    secretFor: secretOpener(options.store, serverKey),
    allowPrivateAddresses: options.allowPrivateAddresses,
    ...(options.log ? { log: options.log } : {}),
    ...options.webhooks,
    ...(alerts ? { sendToChannel: (delivery) => alerts.sendDelivery(delivery) } : {}),
  });
  const worker = startMonitorWorker({
    redisUrl: options.redisUrl,
    store: options.store,
    check: options.check,
    reportSignals: options.reportSignals,
    reportSelectors: options.reportSelectors,
    alertDeliveries: alerts ? (monitor, event, eventId, at) => alerts.deliveriesFor(monitor, event, eventId, at) : undefined,
    lookalikeMemory: options.alerts?.lookalikes ? lookalikeMemory(options.alerts.lookalikes) : undefined,
    onRun: (_job, outcome) => {
      if (outcome.kind === 'committed' && outcome.deliveries > 0) pump.poke();
    },
    ...(options.lockDurationMs !== undefined ? { lockDurationMs: options.lockDurationMs } : {}),
    ...(options.minuteMs !== undefined ? { minuteMs: options.minuteMs } : {}),
    ...(options.prefix !== undefined ? { prefix: options.prefix } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  pump.start();
  return {
    ready: () => worker.ready(),
    close: async (force = false) => {
      await worker.close(force);
      await pump.close();
    },
  };
}

/** The demo's monitored domain gets this many days of made-up history. */
const DEMO_HISTORY_DAYS = 3;

/**
 * For `serve --demo`: one monitor of `domain` in `organizationId` with a short history, so that the
 * history and change endpoints have something to show. The history is made up from today's check:
 * three days ago the domain published `p=reject`; the next two daily checks saw today's record,
 * which confirmed one change. Does nothing when the organisation already monitors the domain.
 */
export async function seedDemoMonitor(service: MonitorService, organizationId: string, domain: string, check: MonitorCheck, now: Date): Promise<void> {
  const created = await service.create(organizationId, { domain, intervalMinutes: 1440 });
  if (!('monitor' in created)) return;
  const today = await observe(check, created.monitor);
  if (today.kind !== 'checked') return;
  const before = {
    ...today,
    dmarc: { status: 'found', record: `v=DMARC1; p=reject; rua=mailto:dmarc@${domain}` },
    verdict: 'protected',
    inboxOutcome: 'rejected',
    findings: [...today.findings.filter((id) => !id.startsWith('dmarc-')), 'dmarc-protected'].sort(),
  };
  let machine = INITIAL_MACHINE;
  let version = created.monitor.version;
  const snapshots = [before, today, today];
  for (let i = 0; i < snapshots.length; i++) {
    const snapshot = snapshots[i]!;
    const at = new Date(now.getTime() - (DEMO_HISTORY_DAYS - i) * 86_400_000).toISOString();
    const step = transition(machine, snapshot, at);
    const summary = summaryOf(snapshot, at);
    await service.store.commitRun({
      monitorId: created.monitor.id,
      runId: `demo:${i}`,
      expectedVersion: version,
      machine: step.machine,
      lastResult: summary,
      at,
      entries: [
        { type: 'check', id: `chk_demo_${i}`, monitorId: created.monitor.id, at, runId: `demo:${i}`, summary, snapshot },
        ...(step.change ? [{ type: 'change' as const, id: `chg_demo_${i}`, monitorId: created.monitor.id, at, ...step.change }] : []),
      ],
      deliveries: [],
    });
    machine = step.machine;
    version++;
  }
}
