/**
 * One contract for the batch store, run against memory, SQLite and PostgreSQL (the real server of
 * the test setup; missing → the PostgreSQL cases fail naming the package to install).
 */
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { BatchResultRow } from '../../src/jobs/batches/model.js';
import { MemoryBatchStore } from '../../src/store/batches-memory.js';
import { createBatchTables, SqlBatchStore } from '../../src/store/batches-sql.js';
import type { BatchStore } from '../../src/store/batches.js';
import { migrationContext } from '../../src/store/migrations.js';
import { openSqliteConnection } from '../../src/store/sqlite-driver.js';
import { createTestDatabase } from '../setup/require-services.js';

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function sqlite(): Promise<BatchStore> {
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: openSqliteConnection(':memory:', { busyTimeoutMs: 1000 }).database }) });
  await createBatchTables(migrationContext('sqlite')).up(db);
  cleanups.push(() => db.destroy());
  return new SqlBatchStore(db, 'sqlite');
}

async function postgres(): Promise<BatchStore> {
  const database = await createTestDatabase('batches');
  const pool = new pg.Pool({ connectionString: database.url, max: 4 });
  // DROP DATABASE … WITH (FORCE) may terminate a connection the ended pool is still closing.
  pool.on('error', () => {});
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
  cleanups.push(async () => {
    await db.destroy();
    await database.drop();
  });
  await createBatchTables(migrationContext('postgres')).up(db);
  return new SqlBatchStore(db, 'postgres');
}

const BACKENDS: [string, () => Promise<BatchStore>][] = [
  ['memory', async () => new MemoryBatchStore()],
  ['sqlite', sqlite],
  ['postgresql', postgres],
];

const T0 = '2026-02-01T10:00:00.000Z';
const T1 = '2026-02-01T10:00:05.000Z';
const names = (n: number) => Array.from({ length: n }, (_, seq) => ({ seq, name: `n${seq}.example` }));
const ok = (seq: number): BatchResultRow => ({ seq, line: JSON.stringify({ input: `n${seq}.example`, verdict: 'protected' }), failed: false });
const bad = (seq: number): BatchResultRow => ({ seq, line: JSON.stringify({ domain: `n${seq}.example`, error: { code: 'DNS_FAILURE', message: 'm' } }), failed: true });

describe.each(BACKENDS)('batch store: %s', (_name, open) => {
  it('takes the daily quota atomically: 30 concurrent 100-name batches against 1,000 names, exactly 10 accepted', async () => {
    const store = await open();
    const quota = { since: '2026-02-01T00:00:00.000Z', limit: 1000 };
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, (_, i) => store.createWithinQuota({ id: `q${i}`, organizationId: 'org_q', createdAt: T0, names: names(100), errorRows: [] }, quota)),
    );
    const accepted = outcomes.filter((outcome) => outcome.ok);
    expect(accepted).toHaveLength(10);
    // A refusal says how much was taken, and stored nothing.
    for (const outcome of outcomes) if (!outcome.ok) expect(outcome.used).toBe(1000);
    expect(await store.namesSubmittedSince('org_q', quota.since)).toBe(1000);
    // Another organisation has its own quota; yesterday's batches do not count.
    expect((await store.createWithinQuota({ id: 'other', organizationId: 'org_r', createdAt: T0, names: names(1000), errorRows: [] }, quota)).ok).toBe(true);
    expect((await store.createWithinQuota({ id: 'late', organizationId: 'org_q', createdAt: T0, names: names(1), errorRows: [] }, { ...quota, since: T1 })).ok).toBe(true);
  });

  it('stores a batch with its names and refused rows, scoped to its organisation', async () => {
    const store = await open();
    const batch = await store.create({ id: 'b1', organizationId: 'org_a', createdAt: T0, names: names(5), errorRows: [bad(2)] });
    expect(batch).toEqual({ id: 'b1', organizationId: 'org_a', status: 'queued', total: 5, done: 1, failed: 1, createdAt: T0, startedAt: null, finishedAt: null, enqueued: false });
    expect(await store.get('org_a', 'b1')).toEqual(batch);
    expect(await store.get('org_b', 'b1')).toBeUndefined();
    expect(await store.getById('b1')).toEqual(batch);
    expect(await store.getById('nope')).toBeUndefined();
    expect((await store.pendingNames('b1', 0, 5)).map((n) => n.seq)).toEqual([0, 1, 3, 4]);
    expect(await store.pendingNames('b1', 3, 4)).toEqual([{ seq: 3, name: 'n3.example' }]);
    expect(await store.readResults('org_b', 'b1', -1, 10)).toEqual([]);
  });

  it('a batch whose every name was refused is done at once', async () => {
    const store = await open();
    const batch = await store.create({ id: 'b2', organizationId: 'org_a', createdAt: T0, names: names(2), errorRows: [bad(0), bad(1)] });
    expect(batch).toMatchObject({ status: 'done', done: 2, failed: 2, finishedAt: T0 });
    expect(await store.unfinished(false, 10)).toEqual([]);
  });

  it('writes each row once however often it is written, counts only what was inserted, and finishes the batch', async () => {
    const store = await open();
    await store.create({ id: 'b3', organizationId: 'org_a', createdAt: T0, names: names(4), errorRows: [] });
    await store.markRunning('b3', T0);
    await store.markRunning('b3', T1); // no effect: already running
    await store.recordResults('b3', [ok(0), bad(1)], T1);
    await store.recordResults('b3', [ok(0), ok(1)], T1); // a retried chunk: nothing new
    expect(await store.getById('b3')).toMatchObject({ status: 'running', done: 2, failed: 1, startedAt: T0, finishedAt: null });
    // Two workers writing the same rows at once.
    await Promise.all([store.recordResults('b3', [ok(2), ok(3)], T1), store.recordResults('b3', [ok(3), ok(2)], T1)]);
    expect(await store.getById('b3')).toMatchObject({ status: 'done', done: 4, failed: 1, finishedAt: T1 });
    const rows = await store.readResults('org_a', 'b3', -1, 10);
    expect(rows.map((r) => [r.seq, r.failed])).toEqual([[0, false], [1, true], [2, false], [3, false]]);
    expect(rows[1]!.line).toBe(bad(1).line);
    expect((await store.readResults('org_a', 'b3', 1, 1)).map((r) => r.seq)).toEqual([2]);
    expect(await store.pendingNames('b3', 0, 4)).toEqual([]);
  });

  it('cancels only what is not final, and keeps rows written after the cancel', async () => {
    const store = await open();
    await store.create({ id: 'b4', organizationId: 'org_a', createdAt: T0, names: names(3), errorRows: [] });
    expect(await store.cancel('org_b', 'b4', T1)).toBeUndefined();
    expect(await store.cancel('org_a', 'b4', T1)).toMatchObject({ status: 'cancelled', finishedAt: T1 });
    await store.recordResults('b4', [ok(0), ok(1), ok(2)], T1);
    expect(await store.getById('b4')).toMatchObject({ status: 'cancelled', done: 3 });
    await store.create({ id: 'b5', organizationId: 'org_a', createdAt: T0, names: names(1), errorRows: [] });
    await store.recordResults('b5', [ok(0)], T1);
    expect(await store.cancel('org_a', 'b5', T1)).toMatchObject({ status: 'done' });
  });

  it('lists unfinished batches oldest first (all, or those not yet queued) and sums the day quota', async () => {
    const store = await open();
    await store.create({ id: 'late', organizationId: 'org_a', createdAt: T1, names: names(3), errorRows: [] });
    await store.create({ id: 'early', organizationId: 'org_a', createdAt: T0, names: names(2), errorRows: [] });
    await store.create({ id: 'other', organizationId: 'org_b', createdAt: T1, names: names(7), errorRows: [] });
    await store.markEnqueued('early');
    expect((await store.unfinished(false, 10)).map((b) => b.id)).toEqual(['early', 'late', 'other']);
    expect((await store.unfinished(true, 10)).map((b) => b.id)).toEqual(['late', 'other']);
    expect((await store.unfinished(true, 1)).map((b) => b.id)).toEqual(['late']);
    expect(await store.namesSubmittedSince('org_a', T0)).toBe(5);
    expect(await store.namesSubmittedSince('org_a', T1)).toBe(3);
    expect(await store.namesSubmittedSince('org_c', T0)).toBe(0);
  });

  it('stores 10,000 names in one batch and reads them back page by page', async () => {
    const store = await open();
    await store.create({ id: 'big', organizationId: 'org_a', createdAt: T0, names: names(10_000), errorRows: [] });
    expect((await store.pendingNames('big', 9_990, 10_000)).length).toBe(10);
    await store.recordResults('big', Array.from({ length: 2500 }, (_, i) => ok(i)), T1);
    expect(await store.getById('big')).toMatchObject({ done: 2500 });
    const page = await store.readResults('org_a', 'big', 999, 500);
    expect(page.map((r) => r.seq)).toEqual(Array.from({ length: 500 }, (_, i) => 1000 + i));
  });
});
