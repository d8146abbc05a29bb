import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { isStale, loadRangesFile, rangesAgeDays, RANGES_STALE_AFTER_DAYS, SHIPPED_RANGES_FILE, shippedRanges } from '@spoof-checker/engine';
import type { RangeData } from '@spoof-checker/engine';
import { UsageError } from './args.js';

/** The environment variable that stands for `--ranges FILE` (check, scan, serve, worker). */
export const RANGES_VARIABLE = 'SPOOF_CHECKER_RANGES';

/** The file `ranges update` writes without `--out`, under the user data directory. */
export const USER_RANGES_FILE_NAME = 'shared-infrastructure.json';
/** The folder of spoof-checker's data in the user data directory. */
export const USER_DATA_FOLDER = 'spoof-checker';

/** The help line of `--ranges` every checking command shows. */
export const RANGES_HELP = `  --ranges FILE        classify the SPF pass set with the provider data in FILE (from 'ranges update --out FILE')
                       [${RANGES_VARIABLE}] (default: the data 'ranges update' keeps in the user data directory
                       if there is some, else the shipped snapshot)`;

/**
 * Where `ranges update` keeps the installation's provider data, read in preference to the shipped
 * snapshot: `$XDG_DATA_HOME/spoof-checker/shared-infrastructure.json` (XDG Base Directory
 * Specification: only an absolute XDG_DATA_HOME counts), else `$HOME/.local/share/spoof-checker/…`.
 * Undefined when neither variable is set (then only `--ranges FILE` and the snapshot exist).
 */
export function userRangesFile(env: NodeJS.ProcessEnv): string | undefined {
  const xdg = env['XDG_DATA_HOME'];
  if (xdg !== undefined && xdg !== '' && isAbsolute(xdg)) return join(xdg, USER_DATA_FOLDER, USER_RANGES_FILE_NAME);
  const home = env['HOME'];
  if (home !== undefined && home !== '') return join(home, '.local', 'share', USER_DATA_FOLDER, USER_RANGES_FILE_NAME);
  return undefined;
}

/** The provider data a command uses and the file it came from. */
export interface RangesInUse {
  /** Undefined for the shipped snapshot (read on first use). */
  data: RangeData | undefined;
  /** The file: `--ranges FILE`, the user data file, or the shipped snapshot's. */
  source: string;
  /** Which of the three. */
  kind: 'flag' | 'user' | 'shipped';
}

/**
 * The provider data to use: `--ranges FILE` (or `SPOOF_CHECKER_RANGES`), else the file
 * `ranges update` wrote in the user data directory, else the shipped snapshot. A named or user file
 * is loaded and checked now, so that a bad one is a usage error at start, not a failure in the
 * middle of a scan.
 */
export function rangesInUse(flag: string | undefined, env: NodeJS.ProcessEnv): RangesInUse {
  const path = flag ?? (env[RANGES_VARIABLE] || undefined);
  if (path !== undefined) {
    const loaded = loadRangesFile(path);
    if (!loaded.ok) throw new UsageError(`--ranges / ${RANGES_VARIABLE}: ${loaded.error}; build one with 'spoof-checker ranges update --out FILE'`);
    return { data: loaded.data, source: path, kind: 'flag' };
  }
  const user = userRangesFile(env);
  if (user !== undefined && existsSync(user)) {
    const loaded = loadRangesFile(user);
    if (!loaded.ok) throw new UsageError(`the provider data 'ranges update' keeps is unusable: ${loaded.error}; run 'spoof-checker ranges update' again, or delete the file to use the shipped snapshot`);
    return { data: loaded.data, source: user, kind: 'user' };
  }
  return { data: undefined, source: SHIPPED_RANGES_FILE, kind: 'shipped' };
}

/** `rangesInUse(…).data`: undefined for the shipped snapshot. */
export function rangesFromFlag(flag: string | undefined, env: NodeJS.ProcessEnv): RangeData | undefined {
  return rangesInUse(flag, env).data;
}

/**
 * One phrase for start-up lines (the operator's log, never a page): which provider data, its date,
 * and whether it is stale (older than `RANGES_STALE_AFTER_DAYS`), with the command that refreshes it.
 * Reading the shipped snapshot here is what the first check would do anyway.
 */
export function describeRanges(data: RangeData | undefined, now: Date): string {
  const used = data ?? shippedRanges();
  const age = rangesAgeDays(used, now);
  const where = data === undefined ? 'the shipped snapshot' : used.origin;
  return isStale(used, now)
    ? `provider ranges from ${where}, dated ${used.date}: STALE (${age} days old, over ${RANGES_STALE_AFTER_DAYS}); refresh with 'spoof-checker ranges update' (then restart)`
    : `provider ranges from ${where}, dated ${used.date} (${age} days old)`;
}
