/**
 * When monitors run: every monitor has a fixed grid of slots, `phase + k × interval` (milliseconds
 * since the epoch), whose phase comes from a hash of its id. Start times are spread evenly over the
 * interval (no thundering herd at midnight) and deterministic: every scheduler, in any process,
 * computes the same slots, and a run is named by its slot (`slot:<ms>`), so the store refuses a slot
 * run twice. The Redis scheduler hands BullMQ the same grid (startDate on a slot, `every` the
 * interval, `offset` the phase), so both modes run the same slots.
 */
import { createHash } from 'node:crypto';

/** One minute of schedule time (tests and the benchmark scale it down). */
export const MINUTE_MS = 60_000;
/** Shortest and longest interval a monitor may have, in minutes. */
export const MIN_INTERVAL_MINUTES = 5;
export const MAX_INTERVAL_MINUTES = 10_080;
/** Interval without `intervalMinutes`: once a day. */
export const DEFAULT_INTERVAL_MINUTES = 1_440;
/**
 * A new monitor's first scheduled run comes at least this many minutes (or one interval, if
 * shorter) after its creation: POST …/run checks at once when a baseline is wanted sooner.
 */
export const FIRST_RUN_GRACE_MINUTES = 10;

/** The phase of a monitor's grid: where in each interval it runs, from its id. */
export function phaseOf(id: string, intervalMs: number): number {
  const hash = createHash('sha256').update(id).digest();
  return hash.readUIntBE(0, 6) % intervalMs;
}

/** The first slot at or after `t`. */
export function slotAtOrAfter(id: string, intervalMs: number, t: number): number {
  const phase = phaseOf(id, intervalMs);
  return phase + Math.ceil((t - phase) / intervalMs) * intervalMs;
}

/** The first slot strictly after `t`. */
export function slotAfter(id: string, intervalMs: number, t: number): number {
  return slotAtOrAfter(id, intervalMs, t + 1);
}

/** The first slot of a monitor created at `createdAt`. */
export function firstSlot(id: string, intervalMs: number, createdAt: number, minuteMs: number = MINUTE_MS): number {
  return slotAtOrAfter(id, intervalMs, createdAt + Math.min(intervalMs, FIRST_RUN_GRACE_MINUTES * minuteMs));
}

/** The run id of a slot. */
export function slotRunId(slotMs: number): string {
  return `slot:${slotMs}`;
}
