/**
 * What counts as a change of a watched domain, and when a change is believed.
 *
 * A check is reduced to a normalised snapshot (verdict, inbox outcome, each protocol's record text
 * and status, finding ids, the transport verdict when asked): no timestamps or timings, lists
 * sorted, so that two checks of an unchanged domain give the same digest. A DNS failure is its own
 * state, `could-not-check`, never "record removed".
 *
 * Confirmation: a new state is believed once CONFIRMATIONS_NEEDED consecutive checks agree on it
 * (DNS propagation and one-off answers do not alert); `could-not-check` only after
 * COULD_NOT_CHECK_ALERT_AFTER consecutive failed checks. The first successful check of a monitor
 * sets its baseline without an alert (there is nothing before it).
 */
import { createHash } from 'node:crypto';
import type { LookalikeReport, SpoofCheckResult } from '@spoof-checker/engine';
import { BIMI_EXPIRY_WARNING_DAYS } from '@spoof-checker/engine';
import type { MonitorChange, MonitorCheckSummary, MonitorMachine, MonitorSnapshot } from '../../store/monitors.js';

/** Consecutive checks that must agree on a new state before it is a change. */
export const CONFIRMATIONS_NEEDED = 2;
/** Consecutive failed checks (DNS failure) before "could not check" is alerted. */
export const COULD_NOT_CHECK_ALERT_AFTER = 3;

/**
 * Days ahead a DNSSEC signature expiry is a change worth an alert: a zone that is not re-signed by
 * then turns bogus, and validating resolvers and DANE senders stop accepting its answers.
 */
export const SIGNATURE_EXPIRY_WARNING_DAYS = 7;

/** A monitor with no check yet. */
export const INITIAL_MACHINE: MonitorMachine = Object.freeze({ confirmed: null, candidate: null, consecutiveFailures: 0 }) as MonitorMachine;

const sortedUnique = (values: Iterable<string>): string[] => [...new Set(values)].sort();

/** The transport verdict a result carries, if any (the transport check is an opt-in extension of the result). */
function transportVerdictOf(result: SpoofCheckResult): string | undefined {
  return result.transport?.verdict;
}

/** `domain grade` of every lookalike a search graded above none, sorted (the monitor's snapshot of it). */
export function lookalikeEntries(report: LookalikeReport): string[] {
  return report.lookalikes.map((l) => `${l.domain} ${l.grade}`).sort();
}

/**
 * What a monitor compares of a BIMI result: the grade, whether the logo validates, and whether the
 * certificate is weeks from its end (so that a webhook fires when it comes within
 * BIMI_EXPIRY_WARNING_DAYS, and when the logo stops validating).
 */
function bimiStateOf(result: SpoofCheckResult): { grade: string; logoValid: boolean | null; certificateExpiring: boolean } | undefined {
  const bimi = result.bimi;
  if (!bimi) return undefined;
  const logo = bimi.logo;
  const logoValid = logo === null || logo.fetch !== null ? null : logo.violations.length === 0;
  const daysLeft = bimi.certificate?.daysLeft ?? null;
  return { grade: bimi.grade, logoValid, certificateExpiring: daysLeft !== null && daysLeft <= BIMI_EXPIRY_WARNING_DAYS };
}

/**
 * The normalised snapshot of a result. `withTransport`, `withBimi`: the monitor asked for the
 * transport or the BIMI check; `result.lookalikes`: the lookalike search it asked for.
 */
export function snapshotOfResult(result: SpoofCheckResult & { lookalikes?: LookalikeReport }, withTransport: boolean, withBimi = false): MonitorSnapshot {
  const d = result.details;
  const transport = withTransport ? transportVerdictOf(result) : undefined;
  const bimi = withBimi ? bimiStateOf(result) : undefined;
  return {
    kind: 'checked',
    verdict: result.verdict,
    inboxOutcome: result.inboxOutcome,
    dmarc: { status: d.dmarc.status, record: result.dmarc.rawRecord },
    spf: { status: d.spf.status, record: result.spf.rawRecord },
    dkim: { status: d.dkim.status, keys: sortedUnique(d.dkim.found.map((k) => `${k.selector}:${k.outcome}`)) },
    mx: { status: d.mx.status, hosts: sortedUnique(d.mx.hosts.map((h) => `${h.preference} ${h.exchange.toLowerCase()}`)) },
    findings: sortedUnique(result.reasons.map((r) => r.id)),
    ...(transport !== undefined ? { transport: { verdict: transport } } : {}),
    ...(result.lookalikes ? { lookalikes: lookalikeEntries(result.lookalikes) } : {}),
    ...(bimi !== undefined ? { bimi } : {}),
    ...(result.dnssec && result.dnssec.status !== 'not-checked' ? { dnssec: dnssecSnapshot(result.dnssec, result.resolvedAt) } : {}),
  };
}

/** How bad a lookalike grade is, for "a grade rise"; `unknown` is not comparable (a failed lookup). */
const GRADE_SEVERITY: Readonly<Record<string, number>> = { protected: 1, medium: 2, high: 3, critical: 4 };

/** A lookalike that appeared or whose grade rose between two snapshots. */
export interface LookalikeAlert {
  domain: string;
  /** null: a new lookalike. */
  before: string | null;
  after: string;
  /** Why (from the lookalike memory): newly registered, gaining mail, or a grade rise. */
  change?: 'registered' | 'mail' | 'grade-rose';
}

/**
 * The lookalikes worth an alert: new ones (graded, not `unknown`), and those whose grade rose from a
 * known grade (`unknown` before says nothing about a rise: the lookup had failed).
 */
export function lookalikeAlerts(before: MonitorSnapshot, after: MonitorSnapshot): LookalikeAlert[] {
  if (after.kind !== 'checked' || after.lookalikes === undefined) return [];
  const earlier = new Map<string, string>();
  if (before.kind === 'checked') for (const entry of before.lookalikes ?? []) earlier.set(entry.slice(0, entry.lastIndexOf(' ')), entry.slice(entry.lastIndexOf(' ') + 1));
  // Before the monitor asked for lookalikes there is nothing to compare with: no alert for every name at once.
  if (before.kind !== 'checked' || before.lookalikes === undefined) return [];
  const alerts: LookalikeAlert[] = [];
  for (const entry of after.lookalikes) {
    const domain = entry.slice(0, entry.lastIndexOf(' '));
    const grade = entry.slice(entry.lastIndexOf(' ') + 1);
    const severity = GRADE_SEVERITY[grade];
    if (severity === undefined) continue;
    const was = earlier.get(domain);
    if (was === undefined) alerts.push({ domain, before: null, after: grade });
    else if (GRADE_SEVERITY[was] !== undefined && severity > GRADE_SEVERITY[was]!) alerts.push({ domain, before: was, after: grade });
  }
  return alerts;
}

/** The DNSSEC part of a snapshot: the status, and whether a relied-on signature expires within the warning days. */
function dnssecSnapshot(dnssec: NonNullable<SpoofCheckResult['dnssec']>, resolvedAt: string): { status: string; expiring: boolean } {
  const expires = dnssec.signaturesExpire === null ? Number.POSITIVE_INFINITY : Date.parse(dnssec.signaturesExpire);
  return { status: dnssec.status, expiring: expires - Date.parse(resolvedAt) < SIGNATURE_EXPIRY_WARNING_DAYS * 86_400_000 };
}

/**
 * Whether a result rests on a DNS failure (a protocol whose lookup failed): such a check says
 * nothing about the records, so it is `could-not-check` rather than a state to compare. The reason
 * names the protocols.
 */
export function dnsFailureOf(result: SpoofCheckResult): string | undefined {
  const d = result.details;
  const failed: string[] = [];
  if (d.dmarc.status === 'temperror') failed.push('DMARC');
  if (d.spf.status === 'temperror') failed.push('SPF');
  if (d.mx.status === 'temperror') failed.push('MX');
  // A DKIM probe that found nothing because lookups failed cannot tell "no key" from "no answer".
  if (d.dkim.status === 'incomplete' && d.dkim.found.length === 0) failed.push('DKIM');
  return failed.length > 0 ? `DNS lookups failed for ${failed.join(', ')}` : undefined;
}

/** Canonical JSON: keys sorted at every level. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** SHA-256 (hex) of the snapshot's canonical form; a failure's reason is left out (every failure is one state). */
export function digestOf(snapshot: MonitorSnapshot): string {
  const basis = snapshot.kind === 'could-not-check' ? { kind: snapshot.kind } : snapshot;
  return createHash('sha256').update(canonical(basis)).digest('hex');
}

/** The summary shown in the history and as `lastResult`. */
export function summaryOf(snapshot: MonitorSnapshot, checkedAt: string): MonitorCheckSummary {
  return {
    checkedAt,
    outcome: snapshot.kind,
    verdict: snapshot.kind === 'checked' ? snapshot.verdict : null,
    inboxOutcome: snapshot.kind === 'checked' ? snapshot.inboxOutcome : null,
    transportVerdict: snapshot.kind === 'checked' ? (snapshot.transport?.verdict ?? null) : null,
    digest: digestOf(snapshot),
    reason: snapshot.kind === 'could-not-check' ? snapshot.reason : null,
  };
}

/** Flattens a snapshot to dotted fields (the unit of a listed change). */
function fields(snapshot: MonitorSnapshot): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (snapshot.kind !== 'checked') {
    out.set('state', snapshot.kind);
    return out;
  }
  out.set('state', 'checked');
  out.set('verdict', snapshot.verdict);
  out.set('inboxOutcome', snapshot.inboxOutcome);
  for (const protocol of ['dmarc', 'spf'] as const) {
    out.set(`${protocol}.status`, snapshot[protocol].status);
    out.set(`${protocol}.record`, snapshot[protocol].record);
  }
  out.set('dkim.status', snapshot.dkim.status);
  out.set('dkim.keys', snapshot.dkim.keys);
  out.set('mx.status', snapshot.mx.status);
  out.set('mx.hosts', snapshot.mx.hosts);
  out.set('findings', snapshot.findings);
  out.set('transport.verdict', snapshot.transport?.verdict ?? null);
  out.set('lookalikes', snapshot.lookalikes ?? null);
  if (snapshot.bimi) {
    out.set('bimi.grade', snapshot.bimi.grade);
    out.set('bimi.logoValid', snapshot.bimi.logoValid);
    out.set('bimi.certificateExpiring', snapshot.bimi.certificateExpiring);
  }
  out.set('reports.unauthorised', snapshot.reports?.unauthorised ?? []);
  if (snapshot.reports?.unauthorisedLeftOut !== undefined) out.set('reports.unauthorisedLeftOut', snapshot.reports.unauthorisedLeftOut);
  out.set('reports.passRateDropped', snapshot.reports?.passRateDropped ?? false);
  if (snapshot.dnssec) {
    out.set('dnssec.status', snapshot.dnssec.status);
    out.set('dnssec.expiring', snapshot.dnssec.expiring);
  }
  return out;
}

/** The fields that differ between two snapshots, in a fixed order (`state` first). */
export function changesBetween(before: MonitorSnapshot, after: MonitorSnapshot): MonitorChange[] {
  // Into or out of "could not check" (or "does not exist"), the records were not seen on one side:
  // only the state changed. Listing each record as null would read as "record removed".
  if (before.kind !== 'checked' || after.kind !== 'checked') return [{ field: 'state', before: before.kind, after: after.kind }];
  const a = fields(before);
  const b = fields(after);
  const names = [...new Set([...a.keys(), ...b.keys()])];
  const changes: MonitorChange[] = [];
  for (const name of names) {
    const x = a.has(name) ? a.get(name) : null;
    const y = b.has(name) ? b.get(name) : null;
    if (canonical(x) !== canonical(y)) changes.push({ field: name, before: x, after: y });
  }
  return changes;
}

/** A change confirmed by a check. */
export interface ConfirmedChange {
  before: MonitorSnapshot;
  after: MonitorSnapshot;
  changes: MonitorChange[];
}

/** The machine after one check, and the change it confirmed (if any). */
export interface Transition {
  machine: MonitorMachine;
  change: ConfirmedChange | undefined;
}

/** How many agreeing checks in a row make `snapshot` believed. */
function confirmationsFor(snapshot: MonitorSnapshot): number {
  return snapshot.kind === 'could-not-check' ? COULD_NOT_CHECK_ALERT_AFTER : CONFIRMATIONS_NEEDED;
}

/** Applies one check's snapshot to the machine. Pure. */
export function transition(machine: MonitorMachine, snapshot: MonitorSnapshot, at: string): Transition {
  const digest = digestOf(snapshot);
  const failures = snapshot.kind === 'could-not-check' ? machine.consecutiveFailures + 1 : 0;
  // No baseline yet: the first successful check is it, silently; failures wait for one.
  if (machine.confirmed === null) {
    if (snapshot.kind === 'could-not-check') return { machine: { confirmed: null, candidate: null, consecutiveFailures: failures }, change: undefined };
    return { machine: { confirmed: { digest, snapshot, since: at }, candidate: null, consecutiveFailures: 0 }, change: undefined };
  }
  if (digest === machine.confirmed.digest) {
    return { machine: { confirmed: machine.confirmed, candidate: null, consecutiveFailures: failures }, change: undefined };
  }
  const seen = machine.candidate?.digest === digest ? machine.candidate.seen + 1 : 1;
  if (seen >= confirmationsFor(snapshot)) {
    const before = machine.confirmed.snapshot;
    return {
      machine: { confirmed: { digest, snapshot, since: at }, candidate: null, consecutiveFailures: failures },
      change: { before, after: snapshot, changes: changesBetween(before, snapshot) },
    };
  }
  return { machine: { confirmed: machine.confirmed, candidate: { digest, snapshot, seen }, consecutiveFailures: failures }, change: undefined };
}
