/**
 * Lookalikes remembered (issue 41): each run of a monitor that asks for `lookalikes` updates what
 * the monitor remembers of every name its searches have found (src/store/remembered-lookalikes.ts):
 * first and last seen registered, the confirmed state (registered, MX, SPF, grade), and every
 * confirmed change of it. A new state is believed when two searches in a row see it
 * (CONFIRMATIONS_NEEDED, as a monitor's own changes), so a name caught mid-propagation or a one-off
 * answer changes nothing. The first search of a monitor is its baseline: remembered, never alerted.
 *
 * The events worth an alert: a name newly registered, a name that gains mail capability (MX or an
 * SPF record that authorises senders), a grade that rises (protected < medium < high < critical).
 * A name a person marked as "ours" is remembered like any other, and never alerted. `unknown` (a
 * lookup that failed) is no observation at all: never read as "gone".
 */
import type { LookalikeReport } from '@spoof-checker/engine';
import type { Monitor } from '../../store/monitors.js';
import {
  LOOKALIKE_GRADE_SEVERITY,
  type LookalikeState,
  type LookalikeStateChange,
  type RememberedLookalike,
  type RememberedLookalikeStore,
} from '../../store/remembered-lookalikes.js';
import { CONFIRMATIONS_NEEDED } from './monitor-changes.js';

/** Confirmed changes kept per name (the oldest go first). */
export const MAX_LOOKALIKE_HISTORY = 100;
/** Names one monitor remembers at most; a name past it is not added (those remembered stay). */
export const MAX_REMEMBERED_LOOKALIKES = 2_000;

/** Why a lookalike is alerted. */
export type LookalikeEventKind = 'registered' | 'mail' | 'grade-rose';

/** One lookalike worth an alert. */
export interface LookalikeEvent {
  domain: string;
  change: LookalikeEventKind;
  /** The grade before (null: not registered before). */
  before: string | null;
  after: string;
}

/**
 * The entry that records that a monitor's first search was made (its baseline), even when it found
 * no name: the empty name, never a lookalike, never listed.
 */
export const BASELINE_MARKER = '';

/** The state of a name no search sees resolving. */
export const UNREGISTERED: LookalikeState = Object.freeze({ registered: false, mx: false, spf: false, grade: 'none' }) as LookalikeState;

const sameState = (a: LookalikeState, b: LookalikeState): boolean => a.registered === b.registered && a.mx === b.mx && a.spf === b.spf && a.grade === b.grade;

/** What one search says of each name it judged (names whose lookups failed are left out). */
export function observedStates(report: LookalikeReport): Map<string, { state: LookalikeState; unicode: string }> {
  const out = new Map<string, { state: LookalikeState; unicode: string }>();
  for (const l of report.lookalikes) {
    if (l.grade === 'unknown') continue;
    out.set(l.domain, {
      unicode: l.unicode,
      state: {
        registered: l.grade !== 'none',
        // RFC 5321 §5.1: an address with no MX receives mail too.
        mx: l.mx.status === 'receives' || l.mx.status === 'implicit',
        spf: l.spf.status === 'authorises',
        grade: l.grade,
      },
    });
  }
  return out;
}

/** The confirmed changes between two states, for the history. */
export function stateChanges(before: LookalikeState, after: LookalikeState, at: string): LookalikeStateChange[] {
  const changes: LookalikeStateChange[] = [];
  const flag = (v: boolean) => (v ? 'yes' : 'no');
  if (before.registered !== after.registered) changes.push({ at, change: after.registered ? 'registered' : 'unregistered', before: before.grade, after: after.grade });
  if (before.mx !== after.mx) changes.push({ at, change: after.mx ? 'mx-published' : 'mx-removed', before: flag(before.mx), after: flag(after.mx) });
  if (before.spf !== after.spf) changes.push({ at, change: after.spf ? 'spf-published' : 'spf-removed', before: flag(before.spf), after: flag(after.spf) });
  const from = LOOKALIKE_GRADE_SEVERITY[before.grade];
  const to = LOOKALIKE_GRADE_SEVERITY[after.grade];
  if (before.grade !== after.grade && from !== undefined && to !== undefined && before.registered === after.registered) {
    changes.push({ at, change: to > from ? 'grade-up' : 'grade-down', before: before.grade, after: after.grade });
  }
  return changes;
}

/** The alert a confirmed change gives, if any: registered, else gaining mail, else a grade rise. */
export function eventOf(domain: string, before: LookalikeState, after: LookalikeState): LookalikeEvent | undefined {
  if (!before.registered && after.registered) return { domain, change: 'registered', before: null, after: after.grade };
  if (!after.registered) return undefined;
  if (!(before.mx || before.spf) && (after.mx || after.spf)) return { domain, change: 'mail', before: before.grade, after: after.grade };
  const from = LOOKALIKE_GRADE_SEVERITY[before.grade];
  const to = LOOKALIKE_GRADE_SEVERITY[after.grade];
  if (from !== undefined && to !== undefined && to > from) return { domain, change: 'grade-rose', before: before.grade, after: after.grade };
  return undefined;
}

/**
 * What one search changes in what a monitor remembers: the entries to write, and the events worth
 * an alert (names marked ours left out). Pure: the caller writes `changed` once the run is committed.
 */
export function rememberSearch(
  previous: readonly RememberedLookalike[],
  report: LookalikeReport,
  monitor: Pick<Monitor, 'id' | 'organizationId'>,
  at: string,
): { changed: RememberedLookalike[]; events: LookalikeEvent[] } {
  const baseline = previous.length === 0;
  const observed = observedStates(report);
  const known = new Map(previous.map((e) => [e.domain, e]));
  // A name remembered that this search does not list no longer resolves, unless the search was cut
  // short (capped): then its absence says nothing.
  if (!report.capped) {
    for (const entry of previous) if (entry.domain !== BASELINE_MARKER && !observed.has(entry.domain)) observed.set(entry.domain, { state: UNREGISTERED, unicode: entry.unicode });
  }
  const changed: RememberedLookalike[] = [];
  if (baseline) {
    changed.push({ monitorId: monitor.id, organizationId: monitor.organizationId, domain: BASELINE_MARKER, unicode: '', firstSeen: at, lastSeen: null, state: UNREGISTERED, pending: null, ours: true, history: [] });
  }
  const events: LookalikeEvent[] = [];
  let count = previous.length + (baseline ? 1 : 0);
  for (const [domain, seen] of [...observed].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const old = known.get(domain);
    if (!old) {
      if (!seen.state.registered || count >= MAX_REMEMBERED_LOOKALIKES) continue;
      count++;
    }
    const entry: RememberedLookalike = old
      ? structuredClone(old)
      : {
          monitorId: monitor.id,
          organizationId: monitor.organizationId,
          domain,
          unicode: seen.unicode,
          firstSeen: null,
          lastSeen: null,
          // The baseline is believed at once; a name that appears later starts as not registered,
          // and its registration is confirmed (and alerted) like any change.
          state: baseline ? seen.state : UNREGISTERED,
          pending: null,
          ours: false,
          history: [],
        };
    if (seen.state.registered) {
      entry.firstSeen ??= at;
      entry.lastSeen = at;
    }
    if (sameState(entry.state, seen.state)) {
      entry.pending = null;
    } else {
      const seenTimes = entry.pending !== null && sameState(entry.pending.state, seen.state) ? entry.pending.seen + 1 : 1;
      if (seenTimes >= CONFIRMATIONS_NEEDED) {
        entry.history = [...entry.history, ...stateChanges(entry.state, seen.state, at)].slice(-MAX_LOOKALIKE_HISTORY);
        const event = eventOf(domain, entry.state, seen.state);
        if (event && !entry.ours) events.push(event);
        entry.state = seen.state;
        entry.pending = null;
      } else {
        entry.pending = { state: seen.state, seen: seenTimes };
      }
    }
    if (!old || JSON.stringify(old) !== JSON.stringify(entry)) changed.push(entry);
  }
  return { changed, events };
}

/** A run's view of the memory: the events it found, and how to write what it saw once committed. */
export interface LookalikeObservation {
  events: LookalikeEvent[];
  save(): Promise<void>;
}

/** The lookalike memory a monitor run uses. */
export interface LookalikeMemorySource {
  observe(monitor: Pick<Monitor, 'id' | 'organizationId'>, report: LookalikeReport, at: string): Promise<LookalikeObservation>;
}

/** The memory over a store. */
export function lookalikeMemory(store: RememberedLookalikeStore): LookalikeMemorySource {
  return {
    async observe(monitor, report, at) {
      const { changed, events } = rememberSearch(await store.all(monitor.id), report, monitor, at);
      return { events, save: () => store.save(changed) };
    },
  };
}
