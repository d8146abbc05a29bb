/**
 * What counts as a change: the snapshot's digest ignores timestamps and order, and a change is
 * confirmed only by consecutive agreeing checks; "could not check" is its own state, alerted only
 * after it persists, and never read as a removed record.
 */
import type { SpoofCheckResult } from '../../packages/engine/src/result.js';
import { describe, expect, it } from 'vitest';
import { changesBetween, CONFIRMATIONS_NEEDED, COULD_NOT_CHECK_ALERT_AFTER, digestOf, INITIAL_MACHINE, snapshotOfResult, transition } from '../../src/jobs/monitors/monitor-changes.js';
import type { MonitorMachine, MonitorSnapshot } from '../../src/store/monitors.js';
import { checkOver, MutableResolver, REJECT, WATCHED } from './helpers.js';

const checked = (dmarc: string, extra: Partial<Extract<MonitorSnapshot, { kind: 'checked' }>> = {}): MonitorSnapshot => ({
  kind: 'checked',
  verdict: 'protected',
  inboxOutcome: 'rejected',
  dmarc: { status: 'found', record: dmarc },
  spf: { status: 'found', record: 'v=spf1 -all' },
  dkim: { status: 'not-found', keys: [] },
  mx: { status: 'found', hosts: ['10 mx.a.example'] },
  findings: ['a', 'b'],
  ...extra,
});
const A = checked('v=DMARC1; p=reject');
const B = checked('v=DMARC1; p=none', { verdict: 'spoofable', inboxOutcome: 'delivered' });
const FAIL: MonitorSnapshot = { kind: 'could-not-check', reason: 'SERVFAIL at _dmarc' };
const GONE: MonitorSnapshot = { kind: 'domain-not-found' };

/** Feeds snapshots one by one; returns, per check, whether it confirmed a change (and to what). */
function feed(snapshots: MonitorSnapshot[]): { changes: (string | null)[]; machine: MonitorMachine } {
  let machine = INITIAL_MACHINE;
  const changes: (string | null)[] = [];
  snapshots.forEach((s, i) => {
    const step = transition(machine, s, new Date(Date.UTC(2025, 0, 1, i)).toISOString());
    machine = step.machine;
    changes.push(step.change ? `${step.change.before.kind === 'checked' ? (step.change.before === A ? 'A' : 'B') : step.change.before.kind}->${step.change.after.kind === 'checked' ? (step.change.after === A ? 'A' : 'B') : step.change.after.kind}` : null);
  });
  return { changes, machine };
}

describe('confirmation', () => {
  it(`needs ${CONFIRMATIONS_NEEDED} agreeing checks for a change and ${COULD_NOT_CHECK_ALERT_AFTER} failures for "could not check"`, () => {
    expect(CONFIRMATIONS_NEEDED).toBe(2);
    expect(COULD_NOT_CHECK_ALERT_AFTER).toBeGreaterThan(CONFIRMATIONS_NEEDED);
  });

  it.each<[string, MonitorSnapshot[], (string | null)[]]>([
    ['the first check is the baseline, silently', [A], [null]],
    ['an unchanged domain never alerts', [A, A, A, A], [null, null, null, null]],
    ['a new state seen twice in a row is one change', [A, B, B, B], [null, null, 'A->B', null]],
    ['a one-off answer (propagation) does not alert', [A, B, A, B, A], [null, null, null, null, null]],
    ['a change back is a second change, confirmed the same way', [A, B, B, A, A], [null, null, 'A->B', null, 'B->A']],
    ['one DNS failure is not a change', [A, FAIL, A], [null, null, null]],
    ['two DNS failures are not yet an alert', [A, FAIL, FAIL, A], [null, null, null, null]],
    ['persistent DNS failures alert once, as "could not check"', [A, FAIL, FAIL, FAIL, FAIL], [null, null, null, 'A->could-not-check', null]],
    ['recovering from an alerted failure is confirmed like any change', [A, FAIL, FAIL, FAIL, A, A], [null, null, null, 'A->could-not-check', null, 'could-not-check->A']],
    ['failures before any baseline alert nothing; the first success is the baseline', [FAIL, FAIL, FAIL, FAIL, A, A], [null, null, null, null, null, null]],
    ['a failure between two new-state checks breaks "in a row"', [A, B, FAIL, B, B], [null, null, null, null, 'A->B']],
    ['a domain that stops existing is a state of its own', [A, GONE, GONE], [null, null, 'A->domain-not-found']],
  ])('%s', (_name, snapshots, expected) => {
    expect(feed(snapshots).changes).toEqual(expected);
  });

  it('counts consecutive failures and resets them on a successful check', () => {
    expect(feed([A, FAIL, FAIL]).machine.consecutiveFailures).toBe(2);
    expect(feed([A, FAIL, FAIL, A]).machine.consecutiveFailures).toBe(0);
  });
});

describe('digest and listed changes', () => {
  it('a DNS failure is never listed as a removed record: only the state changes', () => {
    expect(changesBetween(A, FAIL)).toEqual([{ field: 'state', before: 'checked', after: 'could-not-check' }]);
  });

  it('lists each field that differs, by dotted name', () => {
    expect(changesBetween(A, B)).toEqual([
      { field: 'verdict', before: 'protected', after: 'spoofable' },
      { field: 'inboxOutcome', before: 'rejected', after: 'delivered' },
      { field: 'dmarc.record', before: 'v=DMARC1; p=reject', after: 'v=DMARC1; p=none' },
    ]);
    expect(changesBetween(A, checked('v=DMARC1; p=reject', { transport: { verdict: 'enforced' } }))).toEqual([{ field: 'transport.verdict', before: null, after: 'enforced' }]);
  });

  it('ignores key order and failure reasons, not content', () => {
    const reordered = JSON.parse(JSON.stringify({ findings: ['a', 'b'], mx: A.kind === 'checked' ? A.mx : null, ...A })) as MonitorSnapshot;
    expect(digestOf(reordered)).toBe(digestOf(A));
    expect(digestOf({ kind: 'could-not-check', reason: 'x' })).toBe(digestOf({ kind: 'could-not-check', reason: 'y' }));
    expect(digestOf(A)).not.toBe(digestOf(B));
  });

  it('two results that differ only in timestamps and timings have one digest; the transport verdict counts only when asked', async () => {
    const result = await checkOver(new MutableResolver(REJECT))(WATCHED, { checks: [] });
    const later = { ...result, resolvedAt: '2030-01-01T00:00:00.000Z', responseTimeMs: 999, reasons: [...result.reasons].reverse() };
    expect(digestOf(snapshotOfResult(later, false))).toBe(digestOf(snapshotOfResult(result, false)));
    // Only the verdict of the transport half counts; the rest of it is left out here.
    const withTransport = { ...result, transport: { verdict: 'enforced' } } as unknown as SpoofCheckResult;
    expect(snapshotOfResult(withTransport, true)).toMatchObject({ transport: { verdict: 'enforced' } });
    expect(snapshotOfResult(withTransport, false)).not.toHaveProperty('transport');
  });
});
