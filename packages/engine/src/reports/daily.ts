/**
 * The daily series of a domain's mail (for a chart of pass and fail, and for monitors that watch the
 * pass rate): messages, DMARC passes and failures per UTC day. A report period of one day or less
 * counts on the UTC day it begins (Google ends at begin + 86399, Microsoft at begin + 86400); a longer
 * one (Trustwave sends weeks: parsedmarc#282) is spread over the days it covers in proportion to the
 * seconds of each day, rounded so the days add up to the report's exact counts (largest remainder,
 * as parsedmarc 9 does).
 */
import { atOrBelow, DAY_SECONDS, reportsInWindow, type ReportTotals } from './senders.js';
import type { AggregateReport } from './types.js';

/** One UTC day. */
export interface DailyCount {
  /** YYYY-MM-DD. */
  day: string;
  messages: number;
  dmarcPass: number;
  failing: number;
}

/** Messages, passes and failures of `domain` per UTC day of the window, oldest first; days without reports are absent. */
export function dailyCounts(reports: readonly AggregateReport[], options: { domain: string; days: number; now: Date | number }): DailyCount[] {
  const domain = options.domain.toLowerCase().replace(/\.$/, '');
  const totals: ReportTotals[] = [];
  for (const report of reportsInWindow(reports, options.days, options.now)) {
    let pass = 0;
    let fail = 0;
    for (const record of report.records) {
      if (!atOrBelow(record.headerFrom, domain)) continue;
      if (record.dkimResult === 'pass' || record.spfResult === 'pass') pass += record.count;
      else fail += record.count;
    }
    if (pass + fail > 0) totals.push({ begin: report.dateRange.begin, end: report.dateRange.end, pass, fail });
  }
  return dailyFromTotals(totals);
}

/** The daily series from each report's totals (see `analyseSenders`, which counts them in its own pass). */
export function dailyFromTotals(totals: readonly ReportTotals[]): DailyCount[] {
  const days = new Map<number, DailyCount>();
  const add = (dayStart: number, pass: number, fail: number): void => {
    let entry = days.get(dayStart);
    if (entry === undefined) days.set(dayStart, (entry = { day: new Date(dayStart * 1000).toISOString().slice(0, 10), messages: 0, dmarcPass: 0, failing: 0 }));
    entry.messages += pass + fail;
    entry.dmarcPass += pass;
    entry.failing += fail;
  };
  for (const { begin, end, pass, fail } of totals) {
    const first = begin - (begin % DAY_SECONDS);
    if (end - begin <= DAY_SECONDS) {
      add(first, pass, fail);
      continue;
    }
    // Seconds of the period in each day it touches, then each count spread by largest remainder.
    const shares: { day: number; seconds: number }[] = [];
    for (let day = first; day < end; day += DAY_SECONDS) shares.push({ day, seconds: Math.min(end, day + DAY_SECONDS) - Math.max(begin, day) });
    const total = end - begin;
    const spread = (count: number): number[] => {
      const exact = shares.map((s) => (count * s.seconds) / total);
      const out = exact.map(Math.floor);
      let left = count - out.reduce((a, b) => a + b, 0);
      const order = exact.map((x, i) => [x - Math.floor(x), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
      for (let k = 0; left > 0; k++, left--) out[order[k % order.length]![1]]!++;
      return out;
    };
    const passes = spread(pass);
    const fails = spread(fail);
    shares.forEach((s, i) => {
      if (passes[i]! + fails[i]! > 0) add(s.day, passes[i]!, fails[i]!);
    });
  }
  return [...days.entries()].sort((a, b) => a[0] - b[0]).map(([, entry]) => entry);
}
