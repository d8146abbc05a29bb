/**
 * The lookalike job store's contract, run unchanged against memory, SQLite and PostgreSQL: a job's
 * life (queued → running → completed | failed), tenancy, progress only while running, final jobs
 * never move again, the run count (claims, and a release that does not count), recovery lists and
 * the stale sweep.
 */
import { expect, it } from 'vitest';
import type { LookalikeReport } from '../../packages/engine/src/lookalikes/types.js';
import { describeStoreContract } from './contract-stores.js';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:00:01.000Z';
const T2 = '2026-01-01T00:00:02.000Z';
const T3 = '2026-01-01T00:10:00.000Z';

const REPORT: LookalikeReport = {
  domain: 'acmebank.example',
  unicode: 'acmebank.example',
  deep: true,
  generated: 12,
  probed: 12,
  queries: 20,
  candidatesBeforeCap: 12,
  capped: false,
  counts: { critical: 1, high: 0, medium: 0, unknown: 0, protected: 0, none: 11 },
  lookalikes: [
    {
      domain: 'xn--acmebnk-6fg.example',
      unicode: 'acmeb\u0430nk.example',
      fuzzers: ['homoglyph'],
      distance: 1,
      grade: 'critical',
      mx: { status: 'receives', hosts: ['mx.xn--acmebnk-6fg.example'] },
      spf: { status: 'authorises', record: 'v=spf1 mx -all' },
      dmarc: { status: 'absent', record: null },
      sharedWithOriginal: false,
      note: 'It can send and receive mail.',
    },
  ],
  looksLike: null,
  wildcardSuffixes: [],
  nextSteps: [{ title: 'Register and park', body: 'Park it.', records: ['x. MX 0 .'] }],
};

describeStoreContract('lookalike job store contract', ({ stores }) => {
  const create = (id: string, organizationId = 'o1', createdAt = T0) => stores.lookalikeJobs.create({ id, organizationId, domain: 'acmebank.example', createdAt });

  it('a new job is queued with no progress, readable by its organisation only', async () => {
    const job = await create('j1');
    const expected = {
      id: 'j1',
      organizationId: 'o1',
      domain: 'acmebank.example',
      status: 'queued',
      done: 0,
      total: 0,
      runs: 0,
      createdAt: T0,
      updatedAt: T0,
      startedAt: null,
      finishedAt: null,
      enqueued: false,
      report: null,
      error: null,
    };
    expect(job).toEqual(expected);
    expect(await stores.lookalikeJobs.get('o1', 'j1')).toEqual(expected);
    expect(await stores.lookalikeJobs.get('o2', 'j1')).toBeUndefined();
    expect(await stores.lookalikeJobs.get('o1', 'nope')).toBeUndefined();
    expect(await stores.lookalikeJobs.getById('j1')).toEqual(expected);
    await stores.lookalikeJobs.markEnqueued('j1');
    expect((await stores.lookalikeJobs.getById('j1'))?.enqueued).toBe(true);
  });

  it('claimed, it runs and writes progress; completed, it holds the report whole and moves no more', async () => {
    await create('j1');
    await stores.lookalikeJobs.progress('j1', 3, 12, T1);
    expect((await stores.lookalikeJobs.getById('j1'))?.done, 'no progress while queued').toBe(0);
    const claimed = await stores.lookalikeJobs.claim('j1', T1);
    expect(claimed).toMatchObject({ status: 'running', runs: 1, startedAt: T1, updatedAt: T1 });
    await stores.lookalikeJobs.progress('j1', 5, 12, T2);
    expect(await stores.lookalikeJobs.getById('j1')).toMatchObject({ done: 5, total: 12, updatedAt: T2 });
    await stores.lookalikeJobs.complete('j1', REPORT, T3);
    const done = await stores.lookalikeJobs.get('o1', 'j1');
    expect(done).toMatchObject({ status: 'completed', done: 12, total: 12, startedAt: T1, finishedAt: T3, updatedAt: T3, error: null });
    expect(done?.report).toEqual(REPORT);
    // Final: nothing moves it again, whoever writes late.
    await stores.lookalikeJobs.progress('j1', 1, 12, T3);
    await stores.lookalikeJobs.fail('j1', { code: 'INTERNAL', message: 'late' }, T3);
    await stores.lookalikeJobs.release('j1', T3);
    expect(await stores.lookalikeJobs.claim('j1', T3)).toMatchObject({ status: 'completed', runs: 1, done: 12 });
    expect(await stores.lookalikeJobs.getById('j1')).toEqual(done);
    expect(await stores.lookalikeJobs.claim('nope', T3)).toBeUndefined();
  });

  it('fails with its error; a released run goes back to queued without counting; a re-claim counts', async () => {
    await create('j1');
    await stores.lookalikeJobs.claim('j1', T1);
    await stores.lookalikeJobs.release('j1', T2);
    expect(await stores.lookalikeJobs.getById('j1')).toMatchObject({ status: 'queued', runs: 0, startedAt: T1, updatedAt: T2 });
    await stores.lookalikeJobs.claim('j1', T2);
    // A runner died: the job is still running when the next one takes it.
    expect(await stores.lookalikeJobs.claim('j1', T3)).toMatchObject({ status: 'running', runs: 2, startedAt: T1 });
    await stores.lookalikeJobs.fail('j1', { code: 'INTERRUPTED', message: 'Its process stopped.' }, T3);
    expect(await stores.lookalikeJobs.get('o1', 'j1')).toMatchObject({ status: 'failed', finishedAt: T3, report: null, error: { code: 'INTERRUPTED', message: 'Its process stopped.' } });
    await stores.lookalikeJobs.complete('j1', REPORT, T3);
    expect((await stores.lookalikeJobs.getById('j1'))?.status).toBe('failed');
  });

  it('lists unfinished jobs oldest first (all, or those never queued) and fails only stale running ones', async () => {
    await create('j3', 'o1', T2);
    await create('j1', 'o2', T0);
    await create('j2', 'o1', T1);
    await create('j4', 'o1', T1);
    await stores.lookalikeJobs.markEnqueued('j2');
    await stores.lookalikeJobs.claim('j4', T1);
    await stores.lookalikeJobs.complete('j4', REPORT, T2);
    expect((await stores.lookalikeJobs.unfinished(false, 10)).map((j) => j.id)).toEqual(['j1', 'j2', 'j3']);
    expect((await stores.lookalikeJobs.unfinished(true, 10)).map((j) => j.id)).toEqual(['j1', 'j3']);
    expect((await stores.lookalikeJobs.unfinished(false, 2)).map((j) => j.id)).toEqual(['j1', 'j2']);

    await stores.lookalikeJobs.claim('j1', T1);
    await stores.lookalikeJobs.claim('j2', T2);
    const error = { code: 'INTERRUPTED', message: 'No sign of life.' };
    // Before T2: j1 (last written T1) is stale; j2 (T2) is not; queued j3 is never stale.
    expect(await stores.lookalikeJobs.failStale(T2, error, T3)).toBe(1);
    expect(await stores.lookalikeJobs.getById('j1')).toMatchObject({ status: 'failed', error });
    expect((await stores.lookalikeJobs.getById('j2'))?.status).toBe('running');
    expect((await stores.lookalikeJobs.getById('j3'))?.status).toBe('queued');
    expect(await stores.lookalikeJobs.failStale(T2, error, T3)).toBe(0);
  });

  it('prunes finished jobs older than the cutoff, never an unfinished one', async () => {
    await create('old-done');
    await create('old-failed');
    await create('old-running');
    await create('new-done');
    await stores.lookalikeJobs.claim('old-done', T0);
    await stores.lookalikeJobs.complete('old-done', REPORT, T1);
    await stores.lookalikeJobs.fail('old-failed', { code: 'INTERNAL', message: 'x' }, T1);
    await stores.lookalikeJobs.claim('old-running', T0);
    await stores.lookalikeJobs.complete('new-done', REPORT, T3);
    expect(await stores.lookalikeJobs.prune(T2)).toBe(2);
    expect(await stores.lookalikeJobs.getById('old-done')).toBeUndefined();
    expect(await stores.lookalikeJobs.getById('old-failed')).toBeUndefined();
    expect((await stores.lookalikeJobs.getById('old-running'))?.status).toBe('running');
    expect((await stores.lookalikeJobs.getById('new-done'))?.status).toBe('completed');
    expect(await stores.lookalikeJobs.prune(T2)).toBe(0);
  });

  it('refuses a second job with the same id', async () => {
    await create('j1');
    await expect(create('j1')).rejects.toThrow();
  });
});
