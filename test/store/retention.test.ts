/** The record log stays bounded: SQL stores prune at start by age, the memory store is a ring. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMemoryStores, MEMORY_RECORD_LOG_CAPACITY } from '../../src/store/memory.js';
import { openSqliteStores } from '../../src/store/sqlite.js';
import type { RecordLog } from '../../src/store/types.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const record = (uuid: string, createdAt: Date) => ({ uuid, created_at: createdAt.toISOString(), event: 'x' }) as RecordLog;

describe('record-log retention', () => {
  it('SQLite prunes at start: a restart with --retention-days 7 removes the older records and keeps the rest', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'retention-'));
    try {
      const first = await openSqliteStores(dir, { pruneAutomatically: false });
      await first.stores.recordLogs.append('o1', record('ten-days', new Date(Date.now() - 10 * DAY_MS)));
      await first.stores.recordLogs.append('o1', record('two-days', new Date(Date.now() - 2 * DAY_MS)));
      await first.stores.close();

      const second = await openSqliteStores(dir, { retentionDays: 7 });
      try {
        // The start-up prune runs in the background: wait for it, bounded.
        for (let i = 0; i < 100 && (await second.stores.recordLogs.get('o1', 'ten-days')) !== undefined; i++) await new Promise((r) => setTimeout(r, 20));
        expect(await second.stores.recordLogs.get('o1', 'ten-days')).toBeUndefined();
        expect((await second.stores.recordLogs.get('o1', 'two-days'))?.uuid).toBe('two-days');
      } finally {
        await second.stores.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a retention that is not a positive number of days is refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'retention-'));
    try {
      await expect(openSqliteStores(dir, { retentionDays: 0 })).rejects.toThrow(/retention must be a positive number of days, got 0/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it(`memory keeps the newest ${MEMORY_RECORD_LOG_CAPACITY} records by default`, async () => {
    const { recordLogs } = createMemoryStores();
    const at = new Date();
    for (let i = 0; i <= MEMORY_RECORD_LOG_CAPACITY; i++) await recordLogs.append('o1', record(`r${i}`, at));
    expect(await recordLogs.get('o1', 'r0')).toBeUndefined();
    expect((await recordLogs.get('o1', 'r1'))?.uuid).toBe('r1');
    expect((await recordLogs.get('o1', `r${MEMORY_RECORD_LOG_CAPACITY}`))?.uuid).toBe(`r${MEMORY_RECORD_LOG_CAPACITY}`);
  });
});
