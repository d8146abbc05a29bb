/**
 * What a monitor adds to its snapshot from the organisation's DMARC reports, so that its usual
 * machinery (a change seen twice is confirmed, then sent to its webhook) alerts on it: the sources
 * the last week classes as unauthorised, and a fall of the DMARC pass rate. Read from the trusted
 * digest only: an unauthenticated report anyone could forge never raises an alert.
 */
import { capList, summariseDigestSenders } from '@spoof-checker/engine';
import type { MonitorReportSignals } from '../store/monitors.js';
import type { ReportDayTotals, ReportStore } from '../store/reports.js';
import { DAY_SECONDS, readReportWindow } from './summary.js';

/** The recent window a monitor's report signals look at. */
export const SIGNAL_RECENT_DAYS = 7;
/** The weeks before it, the baseline of the pass rate. */
export const SIGNAL_BASELINE_DAYS = 28;
/** Messages an unauthorised source must have sent in the recent window to be alerted on (low volume is background noise). */
export const SIGNAL_MIN_UNAUTHORISED_MESSAGES = 10;
/** Messages each window needs before a pass rate is compared. */
export const SIGNAL_MIN_MESSAGES = 100;
/** A fall of the DMARC pass rate by this much (a fraction, 0.10 = ten points) is a drop. */
export const SIGNAL_PASS_RATE_DROP = 0.1;

/**
 * What a monitor of `domain` adds to its snapshot from the organisation's trusted reports: the
 * sources the last SIGNAL_RECENT_DAYS days class as unauthorised (over
 * SIGNAL_MIN_UNAUTHORISED_MESSAGES; at most MAX_SUMMARY_LIST, the rest counted), and whether the
 * DMARC pass rate of those days fell SIGNAL_PASS_RATE_DROP below the SIGNAL_BASELINE_DAYS before.
 * Null when neither holds, so a monitor without reports keeps its snapshot (and its digest).
 */
export function monitorReportSignals(store: ReportStore, now: () => Date = () => new Date()): (organizationId: string, domain: string) => Promise<MonitorReportSignals | null> {
  return async (organizationId, domain) => {
    if ((await store.latestEnd(organizationId, domain)) === null) return null;
    const at = now();
    const window = await readReportWindow({ store, organizationId, domain, days: SIGNAL_RECENT_DAYS + SIGNAL_BASELINE_DAYS, now: at });
    const recentFrom = new Date(at.getTime() - SIGNAL_RECENT_DAYS * DAY_SECONDS * 1000).toISOString().slice(0, 10);
    const recent = window.senders.filter((e) => e.day >= recentFrom);
    // Every sender classed (the summary's list is capped; the alert's list is capped below, the rest counted).
    const senders = summariseDigestSenders(recent, { domain, days: SIGNAL_RECENT_DAYS, now: at, ranges: null });
    const unauthorisedAll = senders
      .filter((s) => s.class === 'unauthorised' && s.messages >= SIGNAL_MIN_UNAUTHORISED_MESSAGES)
      .map((s) => s.source)
      .sort();
    const rate = (days: readonly ReportDayTotals[]) => {
      const total = days.reduce((n, p) => n + p.messages, 0);
      return { total, rate: total === 0 ? 1 : days.reduce((n, p) => n + p.dmarcPass, 0) / total };
    };
    const trustedDays = window.totals.filter((t) => t.trusted);
    const now7 = rate(trustedDays.filter((p) => p.day >= recentFrom));
    const before = rate(trustedDays.filter((p) => p.day < recentFrom));
    const passRateDropped = now7.total >= SIGNAL_MIN_MESSAGES && before.total >= SIGNAL_MIN_MESSAGES && now7.rate < before.rate - SIGNAL_PASS_RATE_DROP;
    const unauthorised = capList(unauthorisedAll);
    return unauthorised.items.length > 0 || passRateDropped ? { unauthorised: unauthorised.items, ...(unauthorised.leftOut > 0 ? { unauthorisedLeftOut: unauthorised.leftOut } : {}), passRateDropped } : null;
  };
}
