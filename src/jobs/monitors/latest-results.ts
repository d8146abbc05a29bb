/**
 * Keeps each monitored domain's latest full result (the console's domain page shows it with the
 * public page's sections, and its overview reads rows, never checks): the monitor's check, with its
 * result written to the console store as a side effect. A store failure is logged and the run goes on:
 * the result page lags, the monitor's own state and alerts do not.
 */
import type { ConsoleStore } from '../../store/console.js';
import type { MonitorCheck } from './monitor-run.js';

/** The monitor check `check`, whose every result is kept as its domain's latest. */
export function withLatestResults(check: MonitorCheck, store: ConsoleStore, options: { now?: () => Date; onError?: (error: unknown) => void } = {}): MonitorCheck {
  const now = options.now ?? (() => new Date());
  return async (domain, checkOptions) => {
    const result = await check(domain, checkOptions);
    try {
      await store.putLatestResult({ domain: result.domain, checkedAt: now().toISOString(), result: JSON.stringify(result) });
    } catch (error) {
      options.onError?.(error);
    }
    return result;
  };
}
