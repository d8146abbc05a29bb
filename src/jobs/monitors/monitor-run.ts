/**
 * One run of a monitor: check the domain, reduce the result to a snapshot, apply it to the
 * confirmation machine, and commit the check, the change it confirmed and the webhook deliveries
 * in one write (src/store/monitors.ts `commitRun`). Used alike by the in-process scheduler, the
 * queue workers and POST …/run.
 *
 * A run is named (`slot:<ms>` or `manual:<uuid>`): the same run done twice (a job retried after
 * its worker died, possibly after it had committed) commits once. Two different runs of one
 * monitor at once: the second to commit recomputes its transition from the first one's state.
 */
import { randomUUID } from 'node:crypto';
import { isSpoofCheckError, MAX_SUMMARY_LIST } from '@spoof-checker/engine';
import type { LookalikeReport, SpoofCheckResult } from '@spoof-checker/engine';
import type { Monitor, MonitorCheckKind, MonitorReportSignals, MonitorSnapshot, NewMonitorHistoryEntry, WebhookDelivery } from '../../store/monitors.js';
import type { MonitorStore } from '../../store/monitors.js';
import { dnsFailureOf, lookalikeAlerts, snapshotOfResult, summaryOf, transition, type LookalikeAlert } from './monitor-changes.js';
import { newDelivery } from './webhooks.js';
import type { LookalikeMemorySource } from './lookalike-memory.js';

/** Tries of a commit that lost a race to another run of the same monitor. */
export const MONITOR_COMMIT_ATTEMPTS = 8;

/** What a monitor's check gives: the spoof check, plus the lookalike search when the monitor asked for it. */
export type MonitorCheckResult = SpoofCheckResult & { lookalikes?: LookalikeReport };

/**
 * Runs the check a monitor asks for (the serve/worker binds `checkDomain` to a resolver).
 * `selectors`: DKIM selectors to probe before the built-in list (those the organisation's DMARC
 * reports have seen signing for the domain).
 */
export type MonitorCheck = (domain: string, options: { checks: MonitorCheckKind[]; selectors?: string[] }) => Promise<MonitorCheckResult>;

/**
 * A monitor check that also runs the lookalike search (`findLookalikes` bound to the same resolver)
 * when the monitor asks for `lookalikes`.
 */
export function withLookalikeSearch(check: MonitorCheck, search: (domain: string) => Promise<LookalikeReport>): MonitorCheck {
  return async (domain, options) => {
    const result = await check(domain, options);
    if (!options.checks.includes('lookalikes')) return result;
    return { ...result, lookalikes: await search(domain) };
  };
}

/** The webhook body of a confirmed change. */
export interface MonitorChangedEvent {
  type: 'monitor.changed';
  monitorId: string;
  domain: string;
  before: MonitorSnapshot;
  after: MonitorSnapshot;
  changes: { field: string; before: unknown; after: unknown }[];
  /** Lookalikes that appeared or whose grade rose (monitors that ask for `lookalikes`). */
  lookalikes?: LookalikeAlert[];
  checkedAt: string;
}

/**
 * The webhook body as sent: every list in it holds at most MAX_SUMMARY_LIST (100) entries, and a
 * list that was cut has a sibling `<name>LeftOut` saying how many were left out (a list inside a
 * list is cut without one). The history keeps the whole snapshots; only what leaves the service is
 * bounded, so a forged report naming thousands of sources cannot make a webhook of any size.
 */
export function capEventLists<T>(value: T): T {
  if (Array.isArray(value)) return value.slice(0, MAX_SUMMARY_LIST).map(capEventLists) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    out[key] = capEventLists(field);
    if (Array.isArray(field) && field.length > MAX_SUMMARY_LIST) out[`${key}LeftOut`] = field.length - MAX_SUMMARY_LIST;
  }
  return out as T;
}

/** What a run needs. */
export interface MonitorRunDeps {
  store: MonitorStore;
  check: MonitorCheck;
  /** The organisation's DMARC report signals for the domain (new unauthorised senders, a pass-rate drop); none when left out. */
  reportSignals?: MonitorReportSource | undefined;
  /**
   * The DKIM selectors the organisation's aggregate reports have seen for the domain, probed first
   * (the API's check does the same), so a key under a selector no list knows is found; none when left out.
   */
  reportSelectors?: MonitorSelectorSource | undefined;
  now: () => Date;
  /**
   * The lookalikes the monitor remembers (src/jobs/monitors/lookalike-memory.ts): with it, lookalike alerts
   * are `lookalike.changed` events from the memory; without it, the snapshot's own.
   */
  lookalikeMemory?: LookalikeMemorySource | undefined;
  /** The deliveries to the organisation's alert channels a confirmed change queues (`AlertService.deliveriesFor`); none when left out. */
  alertDeliveries?: AlertDeliverySource | undefined;
}

/** The channel deliveries of a confirmed change (throws when the store fails: the run is then retried). */
export type AlertDeliverySource = (monitor: Monitor, event: MonitorChangedEvent | LookalikeChangedEvent, eventId: string, at: string) => Promise<WebhookDelivery[]>;

/**
 * The webhook body of lookalikes worth an alert (monitors with the lookalike memory): newly
 * registered, gaining mail, or a grade that rose, each confirmed by two searches; names marked ours
 * never appear.
 */
export interface LookalikeChangedEvent {
  type: 'lookalike.changed';
  monitorId: string;
  domain: string;
  /** Always empty (the lookalikes say what changed); present so that every event has the same fields. */
  changes: { field: string; before: unknown; after: unknown }[];
  lookalikes: LookalikeAlert[];
  checkedAt: string;
}

/** Reads the DKIM selectors an organisation's reports have seen for a domain (never rejects for a store failure: none). */
export type MonitorSelectorSource = (organizationId: string, domain: string) => Promise<string[]>;

/** Reads the report signals of an organisation's domain; null when there is nothing to alert on. */
export type MonitorReportSource = (organizationId: string, domain: string) => Promise<MonitorReportSignals | null>;

/** How a run ended. */
export type RunOutcome = { kind: 'committed'; snapshot: MonitorSnapshot; changed: boolean; deliveries: number } | { kind: 'duplicate' } | { kind: 'gone' };

/** Checks the monitor's domain; DNS failures become `could-not-check`, a domain that does not exist its own state. */
export async function observe(check: MonitorCheck, monitor: Pick<Monitor, 'domain' | 'checks'>, selectors: string[] = []): Promise<MonitorSnapshot> {
  let result: SpoofCheckResult;
  try {
    result = await check(monitor.domain, selectors.length > 0 ? { checks: monitor.checks, selectors } : { checks: monitor.checks });
  } catch (error) {
    if (isSpoofCheckError(error)) {
      if (error.code === 'domain_not_found') return { kind: 'domain-not-found' };
      const query = error.query ? ` (${error.query.type} ${error.query.name}: ${error.query.reason})` : '';
      return { kind: 'could-not-check', reason: `${error.message}${query}` };
    }
    throw error;
  }
  const failure = dnsFailureOf(result);
  if (failure !== undefined) return { kind: 'could-not-check', reason: failure };
  return snapshotOfResult(result, monitor.checks.includes('transport'), monitor.checks.includes('bimi'));
}

/**
 * Runs `monitorId` once as `runId`. `nextRunAt` (scheduled runs) moves the monitor's next slot and
 * releases its lease. Throws only when the store fails (the caller's job is then retried).
 */
export async function runMonitor(deps: MonitorRunDeps, monitorId: string, runId: string, nextRunAt?: (monitor: Monitor, at: Date) => string): Promise<RunOutcome> {
  let monitor = await deps.store.getById(monitorId);
  if (!monitor) return { kind: 'gone' };
  // A store that cannot answer gives no selectors this time: the built-in list is still probed.
  const selectors = deps.reportSelectors ? await deps.reportSelectors(monitor.organizationId, monitor.domain).catch(() => []) : [];
  // The lookalike memory needs the whole search (MX, SPF), not only the snapshot's grades.
  let search: LookalikeReport | undefined;
  const check: MonitorCheck = deps.lookalikeMemory
    ? async (domain, options) => {
        const result = await deps.check(domain, options);
        search = result.lookalikes;
        return result;
      }
    : deps.check;
  let snapshot = await observe(check, monitor, selectors);
  if (snapshot.kind === 'checked' && deps.reportSignals) {
    // A store that cannot answer gives no signal this time (the check itself still counts).
    const signals = await deps.reportSignals(monitor.organizationId, monitor.domain).catch(() => null);
    if (signals) snapshot = { ...snapshot, reports: signals };
  }
  const checkedAt = deps.now();
  const at = checkedAt.toISOString();
  // What this search changes in the remembered lookalikes: written once the run is committed.
  const remembered = deps.lookalikeMemory && search && snapshot.kind === 'checked' ? await deps.lookalikeMemory.observe(monitor, search, at) : undefined;
  for (let attempt = 1; ; attempt++) {
    const step = transition(monitor.machine, snapshot, at);
    const summary = summaryOf(snapshot, at);
    // The snapshot is kept only when it differs from the last check's: the digest says the rest.
    const unchanged = monitor.lastResult?.digest === summary.digest;
    const entries: NewMonitorHistoryEntry[] = [{ type: 'check', id: `chk_${randomUUID()}`, monitorId, at, runId, summary, ...(unchanged ? {} : { snapshot }) }];
    const deliveries: WebhookDelivery[] = [];
    if (step.change) {
      const eventId = `chg_${randomUUID()}`;
      entries.push({ type: 'change', id: eventId, monitorId, at, before: step.change.before, after: step.change.after, changes: step.change.changes });
      // A change of the lookalikes alone is alerted only when one appeared or rose a grade (a name
      // that stopped resolving, or was parked, is history, not an alarm).
      // With the memory, lookalike alerts are its own (`lookalike.changed`, below): names marked ours
      // left out, and gaining mail counted.
      const alerts = deps.lookalikeMemory ? [] : lookalikeAlerts(step.change.before, step.change.after);
      const onlyLookalikes = step.change.changes.every((c) => c.field === 'lookalikes');
      if (!onlyLookalikes || alerts.length > 0) {
        const event: MonitorChangedEvent = {
          type: 'monitor.changed',
          monitorId,
          domain: monitor.domain,
          before: step.change.before,
          after: step.change.after,
          changes: step.change.changes,
          ...(alerts.length > 0 ? { lookalikes: alerts } : {}),
          checkedAt: at,
        };
        if (monitor.webhookUrl !== null) deliveries.push(newDelivery({ monitorId, organizationId: monitor.organizationId, eventId, url: monitor.webhookUrl, body: JSON.stringify(capEventLists(event)), at }));
        // The organisation's alert channels whose rules take it (src/jobs/monitors/alerts.ts), in the same commit.
        if (deps.alertDeliveries) deliveries.push(...(await deps.alertDeliveries(monitor, capEventLists(event), eventId, at)));
      }
    }
    if (remembered && remembered.events.length > 0) {
      const eventId = `lkc_${randomUUID()}`;
      const event: LookalikeChangedEvent = {
        type: 'lookalike.changed',
        monitorId,
        domain: monitor.domain,
        changes: [],
        lookalikes: remembered.events.map((e) => ({ domain: e.domain, before: e.before, after: e.after, change: e.change })),
        checkedAt: at,
      };
      if (monitor.webhookUrl !== null) deliveries.push(newDelivery({ monitorId, organizationId: monitor.organizationId, eventId, url: monitor.webhookUrl, body: JSON.stringify(event), at }));
      if (deps.alertDeliveries) deliveries.push(...(await deps.alertDeliveries(monitor, event, eventId, at)));
    }
    const outcome = await deps.store.commitRun({
      monitorId,
      runId,
      expectedVersion: monitor.version,
      machine: step.machine,
      lastResult: summary,
      at,
      entries,
      deliveries,
      ...(nextRunAt ? { nextRunAt: nextRunAt(monitor, checkedAt) } : {}),
    });
    if (outcome === 'committed') {
      // Written after the commit: a store failure here repeats this search's changes next run (an
      // alert sent twice, never lost).
      await remembered?.save();
      return { kind: 'committed', snapshot, changed: step.change !== undefined, deliveries: deliveries.length };
    }
    if (outcome === 'duplicate') return { kind: 'duplicate' };
    if (outcome === 'gone') return { kind: 'gone' };
    if (attempt >= MONITOR_COMMIT_ATTEMPTS) throw new Error(`monitor ${monitorId}: run ${runId} lost ${attempt} commits in a row to other runs`);
    const fresh = await deps.store.getById(monitorId);
    if (!fresh) return { kind: 'gone' };
    monitor = fresh;
  }
}
