/**
 * Monitors with "checks": ["bimi"]: the snapshot carries the BIMI grade, whether the logo
 * validates and whether the mark certificate is weeks from its end, so that a certificate coming
 * within BIMI_EXPIRY_WARNING_DAYS, or a logo that stops validating, is a confirmed change (and a
 * webhook), while the BIMI check changes nothing for monitors that did not ask for it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDomain } from '../../packages/engine/src/check.js';
import type { MonitorCheck } from '../../src/jobs/monitors/monitor-run.js';
import { startBimiLab, LOGO_A, type BimiLab } from '../../packages/engine/test/bimi/lab.js';
import { bearerA, makeApp } from '../http/helpers.js';
import type { BimiResult } from '../../packages/engine/src/bimi/types.js';
import type { SpoofCheckResult } from '../../packages/engine/src/result.js';
import { changesBetween, digestOf, INITIAL_MACHINE, snapshotOfResult, transition } from '../../src/jobs/monitors/monitor-changes.js';
import type { MonitorMachine, MonitorSnapshot } from '../../src/store/monitors.js';
import { checkOver, monitorService, MutableResolver, REJECT, startReceiver, TestClock, WATCHED } from './helpers.js';

function withBimi(result: SpoofCheckResult, daysLeft: number, violations: number): SpoofCheckResult {
  const bimi = {
    grade: violations > 0 ? 'not-ready' : 'ready-vmc',
    logo: { fetch: null, violations: Array.from({ length: violations }, (_, i) => ({ rule: 'script', line: i + 1, detail: 'x' })) },
    certificate: { daysLeft },
  } as unknown as BimiResult;
  return { ...result, bimi };
}

describe('monitors and BIMI', () => {
  it('the snapshot holds the BIMI state only when the monitor asked for it', async () => {
    const result = withBimi(await checkOver(new MutableResolver(REJECT))(WATCHED, { checks: [] }), 200, 0);
    expect(snapshotOfResult(result, false, true)).toMatchObject({ bimi: { grade: 'ready-vmc', logoValid: true, certificateExpiring: false } });
    expect(snapshotOfResult(result, false)).not.toHaveProperty('bimi');
    expect(digestOf(snapshotOfResult(result, false))).toBe(digestOf(snapshotOfResult({ ...result, bimi: undefined } as SpoofCheckResult, false)));
  });

  it('a certificate coming within 30 days of its end, and a logo that stops validating, are confirmed changes', async () => {
    const base = await checkOver(new MutableResolver(REJECT))(WATCHED, { checks: [] });
    const fine = snapshotOfResult(withBimi(base, 90, 0), false, true);
    const expiring = snapshotOfResult(withBimi(base, 21, 0), false, true);
    const broken = snapshotOfResult(withBimi(base, 90, 1), false, true);
    expect(changesBetween(fine, expiring)).toEqual([{ field: 'bimi.certificateExpiring', before: false, after: true }]);
    expect(changesBetween(fine, broken).map((c) => c.field)).toEqual(['bimi.grade', 'bimi.logoValid']);
    // Through the confirmation machine: the baseline, then two agreeing checks confirm the change.
    let machine: MonitorMachine = INITIAL_MACHINE;
    const changes: (string[] | null)[] = [];
    for (const [i, snapshot] of ([fine, expiring, expiring] as MonitorSnapshot[]).entries()) {
      const step = transition(machine, snapshot, `2026-11-27T00:0${i}:00.000Z`);
      machine = step.machine;
      changes.push(step.change ? step.change.changes.map((c) => c.field) : null);
    }
    expect(changes).toEqual([null, null, ['bimi.certificateExpiring']]);
  });
});

describe('a monitor with "checks": ["bimi"] over the BIMI lab', () => {
  let lab: BimiLab;
  beforeAll(async () => {
    lab = await startBimiLab();
  }, 60_000);
  afterAll(async () => {
    await lab?.close();
  });

  it('alerts by webhook when the logo stops validating, after two agreeing checks', async () => {
    const MONITORS = '/api/tools/v1/spoof-checker/monitors';
    const receiver = await startReceiver();
    const bimi = { tlsCa: lab.tlsCaPem, connectPorts: { https: lab.httpsPort }, allowPrivateAddresses: true, extraRoots: lab.mvaRootPem };
    const check: MonitorCheck = (domain, options) => checkDomain(domain, { resolver: lab.resolver, ...(options.checks.includes('bimi') ? { bimi } : {}) });
    const made = await makeApp();
    await made.app.close();
    const setup = monitorService({ store: made.stores.monitors, check, clock: new TestClock(Date.parse('2026-11-27T00:00:00.000Z')), allowPrivateAddresses: true });
    const { app } = await makeApp({ stores: made.stores, monitors: setup.service });
    try {
      const created = await app.inject({ method: 'POST', url: MONITORS, headers: bearerA, payload: { domain: 'watched.example', webhookUrl: receiver.url, checks: ['bimi'] } });
      expect(created.statusCode, created.body).toBe(201);
      const { id } = created.json();
      const runAndWait = async () => {
        expect((await app.inject({ method: 'POST', url: `${MONITORS}/${id}/run`, headers: bearerA })).statusCode).toBe(202);
        await setup.scheduler.idle();
      };
      await runAndWait();
      lab.setFile('/watched.svg', LOGO_A.replace('<rect', '<script>alert(1)</script>\n<rect'));
      await runAndWait();
      await runAndWait();
      await setup.pump.drain();
      expect(receiver.received).toHaveLength(1);
      const event = JSON.parse(receiver.received[0]!.body);
      expect(event).toMatchObject({ type: 'monitor.changed', domain: 'watched.example', before: { bimi: { grade: 'ready-self-asserted', logoValid: true } }, after: { bimi: { grade: 'not-ready', logoValid: false } } });
      expect(event.changes).toEqual(expect.arrayContaining([{ field: 'bimi.logoValid', before: true, after: false }]));
    } finally {
      lab.setFile('/watched.svg', LOGO_A);
      await app.close();
      await setup.service.close();
      await receiver.close();
    }
  }, 60_000);
});
