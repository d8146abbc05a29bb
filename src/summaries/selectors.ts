/**
 * The DKIM selectors nobody could guess: those the organisation's trusted aggregate reports have seen
 * for a domain join the selectors every check of that organisation probes (RFC 6376 §3.1: a key is
 * found only by its selector). Read from the stored digest (`report_sender_days`), trusted entries
 * only: a forged, unauthenticated report must not make every check probe names of its choosing.
 */
import { digestSelectors } from '@spoof-checker/engine';
import type { ReportStore } from '../store/reports.js';
import { reportWindow } from './summary.js';

/** The window of reports whose DKIM selectors join the selectors a check probes. */
export const SELECTOR_WINDOW_DAYS = 90;
/** How long the selectors of one organisation and domain are remembered. */
export const SELECTOR_CACHE_MS = 5 * 60_000;
/** Organisation and domain pairs remembered at most. */
export const SELECTOR_CACHE_ENTRIES = 10_000;

/**
 * The DKIM selectors of `domain` that the organisation's trusted aggregate reports have seen in the
 * last SELECTOR_WINDOW_DAYS days (the engine's `digestSelectors`: valid labels, `d=` at or below the
 * domain), remembered for SELECTOR_CACHE_MS. A failure of the store gives none: a check never fails
 * for want of a hint.
 */
export function reportSelectorCache(store: ReportStore, now: () => Date = () => new Date()): (organizationId: string, domain: string) => Promise<string[]> {
  const cache = new Map<string, { selectors: string[]; until: number }>();
  return async (organizationId, domain) => {
    const key = `${organizationId} ${domain}`;
    const at = now().getTime();
    const held = cache.get(key);
    if (held && held.until > at) return held.selectors;
    let selectors: string[] = [];
    try {
      // Only domains with reports cost more than one indexed query.
      if ((await store.latestEnd(organizationId, domain)) !== null) {
        const { dayRange } = reportWindow(SELECTOR_WINDOW_DAYS, new Date(at));
        selectors = digestSelectors(await store.senderDays(organizationId, domain, dayRange, true));
      }
    } catch {
      return [];
    }
    if (cache.size >= SELECTOR_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
    cache.set(key, { selectors, until: at + SELECTOR_CACHE_MS });
    return selectors;
  };
}
