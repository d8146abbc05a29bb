/**
 * Loading the provider data: the snapshot shipped with the package (`data/shared-infrastructure.json`,
 * read the first time a check needs it, never before) or a file `ranges update` wrote.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { decodeRangesFile } from './codec.js';
import type { RangeData } from './types.js';

/** Data older than this many days is named stale in results and in `serve`'s start-up line. */
export const RANGES_STALE_AFTER_DAYS = 90;

/** The shipped snapshot: `<package>/data/shared-infrastructure.json` (from `src/ranges/` and from `dist/ranges/` alike). */
export const SHIPPED_RANGES_FILE = fileURLToPath(new URL('../../data/shared-infrastructure.json', import.meta.url));

/** A loaded data file, or why it cannot be used. */
export type LoadRangesResult = { ok: true; data: RangeData } | { ok: false; error: string };

/**
 * Reads and checks a data file (synchronously: a check that needs it must not wait on a promise).
 * A file dated after `now`'s day (UTC) is refused: its age would read 0 days and never go stale.
 */
export function loadRangesFile(path: string, now: Date = new Date()): LoadRangesResult {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return { ok: false, error: `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    return { ok: false, error: `${path} is not JSON: ${(error as Error).message}` };
  }
  const decoded = decodeRangesFile(value, path);
  if (!decoded.ok) return { ok: false, error: `${path}: ${decoded.error}` };
  const today = now.toISOString().slice(0, 10);
  if (decoded.data.date > today) return { ok: false, error: `${path}: "date" is ${decoded.data.date}, later than today (${today})` };
  return decoded;
}

let shipped: RangeData | null = null;

/**
 * The shipped snapshot, read on first use and kept. Throws only when the package is broken (the
 * file is part of it); the message says which file.
 */
export function shippedRanges(): RangeData {
  if (shipped !== null) return shipped;
  const loaded = loadRangesFile(SHIPPED_RANGES_FILE);
  if (!loaded.ok) throw new Error(`the shipped provider data is unusable (${loaded.error}); reinstall spoof-checker or pass --ranges FILE`);
  shipped = { ...loaded.data, origin: 'shipped snapshot' };
  return shipped;
}

/** The data's date as milliseconds, parsed once per data object (a check asks for every result). */
const dayOf = new WeakMap<RangeData, number>();

/** Whole days from the data's date to `now` (0 when the data is dated later). */
export function rangesAgeDays(data: RangeData, now: Date): number {
  let day = dayOf.get(data);
  if (day === undefined) dayOf.set(data, (day = Date.parse(`${data.date}T00:00:00Z`)));
  return Math.max(0, Math.floor((now.getTime() - day) / 86_400_000));
}

/** Whether the data is older than `RANGES_STALE_AFTER_DAYS` at `now`. */
export function isStale(data: RangeData, now: Date): boolean {
  return rangesAgeDays(data, now) > RANGES_STALE_AFTER_DAYS;
}
