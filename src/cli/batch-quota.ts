/**
 * `serve`'s daily batch quota from the environment (a bad value is a usage error, exit 2). Here in
 * the CLI, not in jobs/, because it speaks the CLI's language (UsageError).
 */
import { DEFAULT_BATCH_NAMES_PER_DAY } from '../jobs/batches/model.js';
import { MAX_MONITORS_PER_ORGANIZATION } from '../jobs/monitors/monitors.js';
import { UsageError } from './args.js';

/** The variable that sets the daily batch quota of each organisation. */
export const BATCH_QUOTA_VARIABLE = 'SPOOF_CHECKER_BATCH_NAMES_PER_DAY';

/** `SPOOF_CHECKER_BATCH_NAMES_PER_DAY` (default {@link DEFAULT_BATCH_NAMES_PER_DAY}); a bad value is a UsageError naming it. */
export function batchNamesPerDayFromEnv(env: NodeJS.ProcessEnv): number {
  const text = env[BATCH_QUOTA_VARIABLE]?.trim();
  if (text === undefined || text === '') return DEFAULT_BATCH_NAMES_PER_DAY;
  if (!/^[1-9]\d{0,11}$/.test(text)) throw new UsageError(`${BATCH_QUOTA_VARIABLE} must be a whole number of names above 0, not "${text}"`);
  return Number(text);
}

/** The variable that sets how many monitors each organisation may keep. */
export const MONITOR_CAP_VARIABLE = 'SPOOF_CHECKER_MAX_MONITORS';

/** `SPOOF_CHECKER_MAX_MONITORS` (default {@link MAX_MONITORS_PER_ORGANIZATION}); a bad value is a UsageError naming it. */
export function maxMonitorsFromEnv(env: NodeJS.ProcessEnv): number {
  const text = env[MONITOR_CAP_VARIABLE]?.trim();
  if (text === undefined || text === '') return MAX_MONITORS_PER_ORGANIZATION;
  if (!/^[1-9]\d{0,8}$/.test(text)) throw new UsageError(`${MONITOR_CAP_VARIABLE} must be a whole number of monitors above 0, not "${text}"`);
  return Number(text);
}
