/**
 * Monitors as a service: what the routes call (create, change, delete, run now, redeliver) over
 * the store, a scheduler and the webhook pump.
 *
 * Two schedulers keep the same rules (src/jobs/monitors/monitor-schedule.ts: one run per slot, slots spread
 * by a hash of the id, the slot names the run so the store refuses it twice):
 * - {@link InProcessMonitorScheduler}: without Redis; a timer takes due monitors from the store,
 *   each with a lease (a process killed mid-check leaves the lease to run out, then the same slot is
 *   run again, and committed once);
 * - `RedisMonitorScheduler` (src/jobs/monitors/monitor-queue.ts): BullMQ job schedulers keyed by monitor id,
 *   run by `spoof-checker worker`s.
 */
import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import { normaliseDomainInput } from '@spoof-checker/engine';
import type { HostLookup } from '@spoof-checker/engine';
import type { Monitor, MonitorCheckKind, MonitorStore, WebhookDelivery } from '../../store/monitors.js';
import { INITIAL_MACHINE } from './monitor-changes.js';
import { runMonitor, type AlertDeliverySource, type MonitorCheck, type MonitorReportSource, type MonitorSelectorSource, type RunOutcome } from './monitor-run.js';
import { firstSlot, MINUTE_MS, slotAfter, slotRunId } from './monitor-schedule.js';
import { keyFromText, newServerKey, newWebhookSecret, openSecret, sealSecret } from './monitor-secrets.js';
import { DeliveryPump, newDelivery, resolveWebhookAddress } from './webhooks.js';
import type { AlertService } from './alerts.js';
import type { RememberedLookalikeStore } from '../../store/remembered-lookalikes.js';
import type { LookalikeMemorySource } from './lookalike-memory.js';

/** How often the in-process scheduler looks for due monitors. */
export const SCHEDULER_TICK_MS = 1_000;
/** Due monitors the in-process scheduler takes per look. */
export const SCHEDULER_BATCH = 100;
/** How long a scheduler holds a due run; past it, another takes the slot again. */
export const MONITOR_RUN_LEASE_MS = 5 * 60 * 1000;
/** Checks the in-process scheduler runs at once. */
export const DEFAULT_MONITOR_CONCURRENCY = 16;
/** Longest webhook URL accepted. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;
/** Most monitors one organisation may keep (the default of `maxMonitorsPerOrganization`; `SPOOF_CHECKER_MAX_MONITORS` in `serve`). */
export const MAX_MONITORS_PER_ORGANIZATION = 1_000;

/** Runs monitors on a schedule and now. */
export interface MonitorScheduler {
  readonly kind: 'in-process' | 'redis';
  /** Starts running (the Redis scheduler syncs every monitor's job scheduler). */
  start(): Promise<void>;
  /** The monitor is new or its interval changed. */
  schedule(monitor: Monitor): Promise<void>;
  /** The monitor is gone. */
  unschedule(monitorId: string): Promise<void>;
  /** Runs the monitor as soon as possible, as `runId`. */
  runNow(monitorId: string, runId: string): Promise<void>;
  close(): Promise<void>;
}

/** Why a monitor could not be created or changed. */
export type MonitorRefusal =
  | { kind: 'invalid-domain'; message: string; fix: string }
  /** `existingId`: the monitor of that domain the organisation has (undefined if it went away meanwhile). */
  | { kind: 'duplicate-domain'; domain: string; existingId: string | undefined }
  | { kind: 'webhook-refused'; message: string }
  | { kind: 'too-many-monitors'; max: number }
  /** A redelivery asked of a monitor whose webhook URL was removed (`webhookUrl: null`): it goes nowhere, least of all to the old URL. */
  | { kind: 'no-webhook'; monitorId: string };

/** What a client sends to create a monitor. */
export interface NewMonitorInput {
  domain: string;
  intervalMinutes?: number;
  webhookUrl?: string | null;
  checks?: MonitorCheckKind[];
}

/** What a client sends to change a monitor. */
export interface MonitorPatchInput {
  intervalMinutes?: number;
  webhookUrl?: string | null;
  checks?: MonitorCheckKind[];
}

/** Options of {@link MonitorService}. */
export interface MonitorServiceOptions {
  store: MonitorStore;
  scheduler: MonitorScheduler;
  /** The key that seals webhook secrets (see {@link serverKeyFor}). */
  serverKey: Buffer;
  /** Lifts the private-address guard on webhook URLs (labs, tests). */
  allowPrivateAddresses: boolean;
  /** The delivery pump this process runs (none: another process delivers). */
  pump?: DeliveryPump;
  now?: () => Date;
  /** One schedule minute (tests scale it down). */
  minuteMs?: number;
  lookup?: HostLookup;
  /** Webhooks to loopback addresses only (the demo). */
  loopbackOnly?: boolean;
  /** Most monitors one organisation may keep (default {@link MAX_MONITORS_PER_ORGANIZATION}). */
  maxMonitorsPerOrganization?: number;
  /** The organisation's alert channels (src/jobs/monitors/alerts.ts), sent through this service's pump. */
  alerts?: AlertService;
  /** The lookalikes monitors remember (src/store/remembered-lookalikes.ts), for the routes. */
  lookalikes?: RememberedLookalikeStore;
}

/** The key that seals webhook secrets: SPOOF_CHECKER_SECRET_KEY when given, else the store's own. */
export async function serverKeyFor(store: MonitorStore, keyText: string | undefined): Promise<Buffer> {
  if (keyText !== undefined && keyText !== '') return keyFromText(keyText);
  return store.serverKey(newServerKey);
}

/** Monitors for the routes. */
export class MonitorService {
  readonly store: MonitorStore;
  readonly scheduler: MonitorScheduler;
  readonly #options: MonitorServiceOptions;
  readonly #now: () => Date;
  readonly minuteMs: number;
  /** The creation under way per organisation: creations of one organisation run one at a time, so that the count and the insert agree. */
  readonly #creating = new Map<string, Promise<unknown>>();

  constructor(options: MonitorServiceOptions) {
    this.#options = options;
    this.store = options.store;
    this.scheduler = options.scheduler;
    this.#now = options.now ?? (() => new Date());
    this.minuteMs = options.minuteMs ?? MINUTE_MS;
  }

  /** Starts the scheduler and the pump. */
  async start(): Promise<void> {
    await this.scheduler.start();
    this.#options.pump?.start();
  }

  async close(): Promise<void> {
    await this.scheduler.close();
    await this.#options.pump?.close();
  }

  /** The lookalikes monitors remember, when this service keeps them. */
  get lookalikes(): RememberedLookalikeStore | undefined {
    return this.#options.lookalikes;
  }

  /** The alert channels, when this service sends them. */
  get alerts(): AlertService | undefined {
    return this.#options.alerts;
  }

  /** Whether webhooks to private addresses are allowed (`--allow-private-addresses`). */
  get allowPrivateAddresses(): boolean {
    return this.#options.allowPrivateAddresses;
  }

  /** Checks a webhook URL: http(s), and a host that resolves to an allowed address. */
  async checkWebhookUrl(url: string): Promise<string | undefined> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return `"${url.slice(0, 100)}" is not a URL.`;
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return `the webhook URL must start with https:// or http://, not ${parsed.protocol}//.`;
    if (parsed.username !== '' || parsed.password !== '') return 'the webhook URL must not carry a user name or password.';
    const checked = await resolveWebhookAddress(parsed.hostname, this.#options.allowPrivateAddresses, this.#options.lookup, this.#options.loopbackOnly === true);
    if (checked.ok) return undefined;
    return checked.kind === 'forbidden'
      ? `${parsed.hostname} resolves to ${checked.address}, ${checked.reason}: webhooks are not sent to private or reserved addresses.`
      : `${checked.reason}.`;
  }

  /** Most monitors one organisation may keep. */
  get maxMonitorsPerOrganization(): number {
    return this.#options.maxMonitorsPerOrganization ?? MAX_MONITORS_PER_ORGANIZATION;
  }

  /**
   * Creates a monitor; the secret is returned this once. Refused past the organisation's cap
   * ({@link MAX_MONITORS_PER_ORGANIZATION}): the creations of one organisation run one at a time in
   * this process, so the cap holds exactly here (replicas sharing a store may each let one through
   * at the same instant).
   */
  async create(organizationId: string, input: NewMonitorInput): Promise<{ monitor: Monitor; secret: string } | MonitorRefusal> {
    const before = this.#creating.get(organizationId) ?? Promise.resolve();
    const mine = before.then(() => this.#create(organizationId, input));
    const settled = mine.catch(() => undefined);
    this.#creating.set(organizationId, settled);
    try {
      return await mine;
    } finally {
      if (this.#creating.get(organizationId) === settled) this.#creating.delete(organizationId);
    }
  }

  async #create(organizationId: string, input: NewMonitorInput): Promise<{ monitor: Monitor; secret: string } | MonitorRefusal> {
    const max = this.maxMonitorsPerOrganization;
    if ((await this.store.list(organizationId, { page: 1, limit: 1 })).total >= max) return { kind: 'too-many-monitors', max };
    const normalised = normaliseDomainInput(input.domain);
    if (!normalised.ok) return { kind: 'invalid-domain', message: normalised.message, fix: normalised.fix };
    const webhookUrl = input.webhookUrl ?? null;
    if (webhookUrl !== null) {
      const problem = await this.checkWebhookUrl(webhookUrl);
      if (problem !== undefined) return { kind: 'webhook-refused', message: problem };
    }
    const now = this.#now();
    const id = `mon_${randomUUID()}`;
    const intervalMinutes = input.intervalMinutes ?? 1440;
    const secret = newWebhookSecret();
    const monitor: Monitor = {
      id,
      organizationId,
      domain: normalised.domain,
      intervalMinutes,
      webhookUrl,
      checks: [...new Set(input.checks ?? [])],
      sealedSecret: sealSecret(secret, this.#options.serverKey),
      machine: INITIAL_MACHINE,
      lastResult: null,
      nextRunAt: new Date(firstSlot(id, intervalMinutes * this.minuteMs, now.getTime(), this.minuteMs)).toISOString(),
      leaseUntil: null,
      version: 0,
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
    };
    if ((await this.store.create(monitor)) === 'duplicate-domain') return { kind: 'duplicate-domain', domain: monitor.domain, existingId: await this.idOfDomain(organizationId, monitor.domain) };
    await this.scheduler.schedule(monitor);
    return { monitor, secret };
  }

  /** Changes a monitor; undefined when not found. A new webhook URL keeps the secret. */
  /** The id of the organisation's monitor of `domain` (for a conflict's message): its pages read until found. */
  private async idOfDomain(organizationId: string, domain: string): Promise<string | undefined> {
    const limit = 100;
    for (let page = 1; (page - 1) * limit < this.maxMonitorsPerOrganization + limit; page++) {
      const found = await this.store.list(organizationId, { page, limit });
      const match = found.items.find((m) => m.domain === domain);
      if (match) return match.id;
      if (page * limit >= found.total) return undefined;
    }
    return undefined;
  }

  async update(organizationId: string, id: string, patch: MonitorPatchInput): Promise<Monitor | undefined | MonitorRefusal> {
    const current = await this.store.get(organizationId, id);
    if (!current) return undefined;
    if (patch.webhookUrl !== undefined && patch.webhookUrl !== null) {
      const problem = await this.checkWebhookUrl(patch.webhookUrl);
      if (problem !== undefined) return { kind: 'webhook-refused', message: problem };
    }
    const now = this.#now();
    const intervalChanged = patch.intervalMinutes !== undefined && patch.intervalMinutes !== current.intervalMinutes;
    const updated = await this.store.update(
      organizationId,
      id,
      {
        ...(patch.intervalMinutes !== undefined ? { intervalMinutes: patch.intervalMinutes } : {}),
        ...(patch.webhookUrl !== undefined ? { webhookUrl: patch.webhookUrl } : {}),
        ...(patch.checks !== undefined ? { checks: [...new Set(patch.checks)] } : {}),
        ...(intervalChanged ? { nextRunAt: new Date(slotAfter(id, patch.intervalMinutes! * this.minuteMs, now.getTime())).toISOString() } : {}),
      },
      now.toISOString(),
    );
    if (updated && intervalChanged) await this.scheduler.schedule(updated);
    return updated;
  }

  /** Deletes a monitor with its history; false when not found. */
  async delete(organizationId: string, id: string): Promise<boolean> {
    const deleted = await this.store.delete(organizationId, id);
    if (deleted) await this.scheduler.unschedule(id);
    // SQL drops them with the monitor (a cascade); the memory store is told.
    if (deleted) await this.#options.lookalikes?.forget(id);
    return deleted;
  }

  /** Queues a run now; its id, or undefined when the monitor is not found. */
  async runNow(organizationId: string, id: string): Promise<string | undefined> {
    if (!(await this.store.get(organizationId, id))) return undefined;
    const runId = `manual:${randomUUID()}`;
    await this.scheduler.runNow(id, runId);
    return runId;
  }

  /** A new delivery of a past delivery's body (due now); undefined when not found. */
  async redeliver(organizationId: string, monitorId: string, deliveryId: string): Promise<WebhookDelivery | undefined | MonitorRefusal> {
    const monitor = await this.store.get(organizationId, monitorId);
    const past = monitor && (await this.store.getDelivery(organizationId, monitorId, deliveryId));
    if (!monitor || !past) return undefined;
    // A channel's delivery goes to the channel again (its target as it is now, read at the attempt).
    if (past.channelId != null) {
      const again: WebhookDelivery = { ...newDelivery({ monitorId, organizationId, eventId: past.eventId, url: past.url, body: past.body, at: this.#now().toISOString(), redeliveryOf: past.id }), channelId: past.channelId };
      await this.store.addDelivery(again);
      this.#options.pump?.poke();
      return again;
    }
    // To the monitor's URL as it is now (it may have been corrected since), checked again. A URL
    // removed with `webhookUrl: null` was withdrawn: the old one is never used again.
    if (monitor.webhookUrl === null) return { kind: 'no-webhook', monitorId };
    const url = monitor.webhookUrl;
    const problem = await this.checkWebhookUrl(url);
    if (problem !== undefined) return { kind: 'webhook-refused', message: problem };
    const delivery = newDelivery({ monitorId, organizationId, eventId: past.eventId, url, body: past.body, at: this.#now().toISOString(), redeliveryOf: past.id });
    await this.store.addDelivery(delivery);
    this.#options.pump?.poke();
    return delivery;
  }
}

/** Opens a monitor's secret with the server key (the pump's `secretFor`). */
export function secretOpener(store: MonitorStore, serverKey: Buffer): (monitorId: string) => Promise<string | undefined> {
  return async (monitorId) => {
    const monitor = await store.getById(monitorId);
    return monitor && openSecret(monitor.sealedSecret, serverKey);
  };
}

/** Options of {@link InProcessMonitorScheduler}. */
export interface InProcessSchedulerOptions {
  store: MonitorStore;
  check: MonitorCheck;
  /** DMARC report signals added to each snapshot (src/jobs/monitors/monitor-run.ts). */
  reportSignals?: MonitorReportSource | undefined;
  /** The DKIM selectors the organisation's reports have seen (see `MonitorRunDeps`). */
  reportSelectors?: MonitorSelectorSource | undefined;
  /** The deliveries to alert channels a confirmed change queues (src/jobs/monitors/alerts.ts). */
  alertDeliveries?: AlertDeliverySource | undefined;
  /** The lookalikes monitors remember (src/jobs/monitors/lookalike-memory.ts). */
  lookalikeMemory?: LookalikeMemorySource | undefined;
  now?: () => Date;
  minuteMs?: number;
  concurrency?: number;
  /** Look for due monitors every this many ms (0: never by itself; tests call tick()). */
  tickMs?: number;
  /** Called after every run (the pump is poked when a change was confirmed). */
  onRun?: (monitorId: string, outcome: RunOutcome) => void;
  log?: (message: string, error?: unknown) => void;
}

/** Runs monitors in this process, from the store's due list. */
export class InProcessMonitorScheduler implements MonitorScheduler {
  readonly kind = 'in-process' as const;
  readonly #options: InProcessSchedulerOptions;
  readonly #now: () => Date;
  readonly #minuteMs: number;
  readonly #gate: ReturnType<typeof pLimit>;
  readonly #inFlight = new Set<Promise<unknown>>();
  #timer: NodeJS.Timeout | undefined;
  #ticking: Promise<number> | undefined;
  #closed = false;

  constructor(options: InProcessSchedulerOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => new Date());
    this.#minuteMs = options.minuteMs ?? MINUTE_MS;
    this.#gate = pLimit(options.concurrency ?? DEFAULT_MONITOR_CONCURRENCY);
  }

  async start(): Promise<void> {
    const tickMs = this.#options.tickMs ?? SCHEDULER_TICK_MS;
    if (tickMs > 0) {
      this.#timer = setInterval(() => void this.tick().catch((error: unknown) => this.#options.log?.('monitor scheduler failed', error)), tickMs);
      this.#timer.unref();
    }
  }

  // The store holds the schedule (nextRunAt): nothing to do here.
  async schedule(): Promise<void> {}
  async unschedule(): Promise<void> {}

  async runNow(monitorId: string, runId: string): Promise<void> {
    this.#track(this.#gate(() => this.#run(monitorId, runId)));
  }

  /**
   * Runs every monitor due now (each leased first, so another scheduler on the same store does not
   * run it too) and resolves when their runs are committed. Returns how many it started.
   */
  async tick(): Promise<number> {
    if (this.#ticking) return this.#ticking;
    this.#ticking = this.#tickOnce().finally(() => (this.#ticking = undefined));
    return this.#ticking;
  }

  async #tickOnce(): Promise<number> {
    let started = 0;
    const runs: Promise<unknown>[] = [];
    for (;;) {
      if (this.#closed) break;
      const now = this.#now();
      const due = await this.#options.store.due(now.toISOString(), SCHEDULER_BATCH);
      let leased = 0;
      for (const monitor of due) {
        const until = new Date(now.getTime() + MONITOR_RUN_LEASE_MS).toISOString();
        if (!(await this.#options.store.lease(monitor.id, monitor.leaseUntil, until, now.toISOString()))) continue;
        leased++;
        const runId = slotRunId(Date.parse(monitor.nextRunAt));
        const run = this.#gate(() => this.#run(monitor.id, runId, true));
        this.#track(run);
        runs.push(run);
      }
      started += leased;
      if (due.length < SCHEDULER_BATCH || leased === 0) break;
    }
    await Promise.allSettled(runs);
    return started;
  }

  async #run(monitorId: string, runId: string, scheduled = false): Promise<void> {
    if (this.#closed) return;
    try {
      const outcome = await runMonitor({ store: this.#options.store, check: this.#options.check, reportSignals: this.#options.reportSignals, reportSelectors: this.#options.reportSelectors, alertDeliveries: this.#options.alertDeliveries, lookalikeMemory: this.#options.lookalikeMemory, now: this.#now }, monitorId, runId, scheduled ? (m, at) => nextSlotIso(m, at, this.#minuteMs) : undefined);
      this.#options.onRun?.(monitorId, outcome);
    } catch (error) {
      // The lease runs out and the slot is taken again; a manual run is lost (the client may retry).
      this.#options.log?.(`monitor ${monitorId} run ${runId} failed`, error);
    }
  }

  #track(promise: Promise<unknown>): void {
    this.#inFlight.add(promise);
    void promise.finally(() => this.#inFlight.delete(promise));
  }

  /** Resolves when every run started so far has ended (tests). */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    await this.#ticking?.catch(() => 0);
    await this.idle();
  }
}

/** The slot after a scheduled run (the next one strictly after both its own slot and now). */
export function nextSlotIso(monitor: Monitor, at: Date, minuteMs: number): string {
  const intervalMs = monitor.intervalMinutes * minuteMs;
  return new Date(slotAfter(monitor.id, intervalMs, Math.max(at.getTime(), Date.parse(monitor.nextRunAt)))).toISOString();
}
