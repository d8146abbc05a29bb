/**
 * The lookalikes each monitor remembers (issue 41): for every name its lookalike searches have
 * found, when it was first and last seen registered, its confirmed state (registered, MX, SPF,
 * grade), a state seen once and waiting for a second look, every confirmed change of state, and
 * whether a person marked it as "ours" (kept out of alerts). One interface, a memory implementation
 * and SQL ones (table `monitor_lookalikes` of migration `0011_alerts`, dropped with its monitor).
 */
import type { Page, PageRequest, Timestamp } from './page-types.js';

/** What is remembered of a lookalike's state (a `grade` of `none`: it does not resolve). */
export interface LookalikeState {
  registered: boolean;
  /** It receives mail: MX hosts, or an address with no MX (RFC 5321 §5.1). */
  mx: boolean;
  /** Its SPF record authorises senders. */
  spf: boolean;
  grade: string;
}

/** Kinds of confirmed change of a lookalike's state. */
export type LookalikeChangeKind = 'registered' | 'unregistered' | 'mx-published' | 'mx-removed' | 'spf-published' | 'spf-removed' | 'grade-up' | 'grade-down';

/** One confirmed change of state. */
export interface LookalikeStateChange {
  at: Timestamp;
  change: LookalikeChangeKind;
  /** The grade (or the flag, for MX and SPF) before and after. */
  before: string;
  after: string;
}

/** One remembered lookalike of one monitor. */
export interface RememberedLookalike {
  monitorId: string;
  organizationId: string;
  /** The lookalike (A-labels). */
  domain: string;
  /** Its Unicode form. */
  unicode: string;
  /** When a search first saw it registered (null: never yet). */
  firstSeen: Timestamp | null;
  /** When a search last saw it registered (null: never yet). */
  lastSeen: Timestamp | null;
  /** The state confirmed (seen in two searches in a row). */
  state: LookalikeState;
  /** A different state seen, and how many searches in a row saw it; null when none. */
  pending: { state: LookalikeState; seen: number } | null;
  /** Marked by a person as the organisation's own: remembered, never alerted. */
  ours: boolean;
  /** Confirmed changes, oldest first (the newest MAX_LOOKALIKE_HISTORY kept). */
  history: LookalikeStateChange[];
}

/** Storage of remembered lookalikes. */
export interface RememberedLookalikeStore {
  /** Every remembered lookalike of a monitor (the run reads them all: a search has a few hundred names). */
  all(monitorId: string): Promise<RememberedLookalike[]>;
  /** Writes these (insert or replace, by monitor and domain); a stored entry keeps its `ours` (only {@link setOurs} changes it). */
  save(entries: RememberedLookalike[]): Promise<void>;
  /** A monitor's lookalikes for people (not the baseline marker, the empty name): registered first, worst grade first, then by name. */
  list(organizationId: string, monitorId: string, page: PageRequest): Promise<Page<RememberedLookalike>>;
  /** Marks a name as ours (or not); undefined when the monitor does not remember it. */
  setOurs(organizationId: string, monitorId: string, domain: string, ours: boolean): Promise<RememberedLookalike | undefined>;
  /** Forgets a monitor's lookalikes (its deletion). */
  forget(monitorId: string): Promise<void>;
}

/** How bad a grade is, for ordering and for "a grade rise" (`unknown` is not comparable). */
export const LOOKALIKE_GRADE_SEVERITY: Readonly<Record<string, number>> = { none: 0, protected: 1, medium: 2, high: 3, critical: 4 };

/** Registered first, worst grade first, then by name. */
export function compareRemembered(a: RememberedLookalike, b: RememberedLookalike): number {
  if (a.state.registered !== b.state.registered) return a.state.registered ? -1 : 1;
  const severity = (LOOKALIKE_GRADE_SEVERITY[b.state.grade] ?? -1) - (LOOKALIKE_GRADE_SEVERITY[a.state.grade] ?? -1);
  if (severity !== 0) return severity;
  return a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0;
}
