import { isStale, loadRangesFile, rangesAgeDays, RANGES_STALE_AFTER_DAYS, shippedRanges } from '@spoof-checker/engine';
import type { RangeData } from '@spoof-checker/engine';
import { UsageError } from './args.js';

/** The environment variable that stands for `--ranges FILE` (check, scan, serve, worker). */
export const RANGES_VARIABLE = 'SPOOF_CHECKER_RANGES';

/** The help line of `--ranges` every checking command shows. */
export const RANGES_HELP = `  --ranges FILE        classify the SPF pass set with the provider data in FILE (from 'ranges update')
                       instead of the shipped snapshot [${RANGES_VARIABLE}]`;

/**
 * The provider data `--ranges FILE` (or `SPOOF_CHECKER_RANGES`) names, loaded and checked now so
 * that a bad file is a usage error at start, not a failure in the middle of a scan; undefined (the
 * shipped snapshot, read on first use) when neither is given.
 */
export function rangesFromFlag(flag: string | undefined, env: NodeJS.ProcessEnv): RangeData | undefined {
  const path = flag ?? (env[RANGES_VARIABLE] || undefined);
  if (path === undefined) return undefined;
  const loaded = loadRangesFile(path);
  if (!loaded.ok) throw new UsageError(`--ranges / ${RANGES_VARIABLE}: ${loaded.error}; build one with 'spoof-checker ranges update --out FILE'`);
  return loaded.data;
}

/**
 * One phrase for start-up lines: which provider data, its date, and whether it is stale (older than
 * `RANGES_STALE_AFTER_DAYS`). Reading the shipped snapshot here is what the first check would do anyway.
 */
export function describeRanges(data: RangeData | undefined, now: Date): string {
  const used = data ?? shippedRanges();
  const age = rangesAgeDays(used, now);
  const where = data === undefined ? 'the shipped snapshot' : used.origin;
  return isStale(used, now)
    ? `provider ranges from ${where}, dated ${used.date}: STALE (${age} days old, over ${RANGES_STALE_AFTER_DAYS}); refresh with 'spoof-checker ranges update --out FILE' and pass --ranges FILE`
    : `provider ranges from ${where}, dated ${used.date} (${age} days old)`;
}
