/**
 * Record logs are written by group commit (src/store/record-logs-sql.ts SqlRecordLogStore): appends made
 * together share one transaction, each append settles only once its group has committed, and
 * close() writes every append still waiting before the database closes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteStores } from '../../src/store/sqlite.js';
import type { RecordLog } from '../../src/store/types.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const record = (uuid: string): RecordLog => ({
  uuid,
  event: 'domain.listed',
  level: 'info',
  trace_id: '0'.repeat(31) + '1',
  metadata: null,
  status_code: 200,
  created_at: '2026-01-01T00:00:00.000Z',
  requestDetails: null,
  request_body: null,
  email: null,
  actor_type: 'api_key',
  actor_id: 'key_x',
  resource_type: 'domain',
  resource_id: '',
  service: 'domain',
  action: 'listed',
  ip_address: '127.0.0.1',
  user_agent: '',
  environment: 'test',
});

describe('record logs by group commit (SQLite)', () => {
  it('appends still waiting when the store closes are written before it closes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'record-group-'));
    dirs.push(dir);
    const first = await openSqliteStores(dir, { pruneAutomatically: false });
    const pending = Array.from({ length: 300 }, (_, i) => first.stores.recordLogs.append('o1', record(`c${i}`)));
    await first.stores.close();
    await Promise.all(pending);
    const second = await openSqliteStores(dir, { pruneAutomatically: false });
    const read = await Promise.all(Array.from({ length: 300 }, (_, i) => second.stores.recordLogs.get('o1', `c${i}`)));
    expect(read.every((found) => found !== undefined)).toBe(true);
    await second.stores.close();
  });

  it('appends made together are committed in far fewer transactions than appends', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'record-group-'));
    dirs.push(dir);
    const opened = await openSqliteStores(dir, { pruneAutomatically: false });
    const db = opened.stores.db;
    let transactions = 0;
    const original = db.transaction.bind(db);
    (db as { transaction: typeof db.transaction }).transaction = () => {
      transactions++;
      return original();
    };
    await Promise.all(Array.from({ length: 1000 }, (_, i) => opened.stores.recordLogs.append('o1', record(`t${i}`))));
    expect(transactions).toBeGreaterThan(0);
    expect(transactions).toBeLessThanOrEqual(10);
    await opened.stores.close();
  });
});
