/**
 * Migrations run at start: forward-only, recorded in spoof_checker_migrations, applied once (also
 * when replicas start together on one PostgreSQL database).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATION_TABLE, MIGRATIONS, migrationContext } from '../../src/store/migrations.js';
import { createReportRevisions, dropReportWriteIndexes, REPORT_INDEXES_DROPPED } from '../../src/store/reports-sql.js';
import { openPostgresStores } from '../../src/store/postgres.js';
import { applySeed, parseSeed } from '../../src/store/seed.js';
import { openSqliteStores } from '../../src/store/sqlite.js';
import { suiteDatabase } from '../setup/require-services.js';

const ALL = Object.keys(MIGRATIONS).sort();

describe('migrations on SQLite', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'migrations-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('a new file gets every migration, in name order; reopening applies none and keeps the data', async () => {
    const first = await openSqliteStores(dir, { pruneAutomatically: false });
    expect(first.migrations.applied).toEqual(ALL);
    await first.stores.apiKeys.addOrganization({ id: 'o1', name: 'One' });
    const recorded = await sql<{ name: string }>`select name from ${sql.table(MIGRATION_TABLE)} order by name`.execute(first.stores.db);
    expect(recorded.rows.map((r) => r.name)).toEqual(ALL);
    await first.stores.close();

    const second = await openSqliteStores(dir, { pruneAutomatically: false });
    expect(second.migrations.applied).toEqual([]);
    expect(await second.stores.apiKeys.getOrganization('o1')).toEqual({ id: 'o1', name: 'One' });
    await second.stores.close();
  });

  it('0015_report_revisions counts the reports stored before it: the revision reads what it read before, and moves on from there', async () => {
    const { stores } = await openSqliteStores(dir, { pruneAutomatically: false });
    const stored = (id: string, domain: string) =>
      stores.reports.add({
        id,
        organizationId: 'o1',
        kind: 'tls',
        identity: `tls|${id}`,
        domain,
        begin: 0,
        end: 86_399,
        reporter: 'r.example',
        orgName: null,
        reportId: id,
        origin: { channel: 'file', fileName: null, sender: null, messageId: null, authenticatedDomain: null, dkim: 'none', spf: 'none', dmarc: 'none', receivedAt: '2026-12-01T00:00:00.000Z' },
        document: '{}',
        records: [],
        trusted: true,
        digest: [],
      });
    for (const [id, domain] of [['m1', 'a.example'], ['m2', 'a.example'], ['m3', 'b.example']] as const) expect(await stored(id, domain)).toBe('stored');
    expect(await stores.reports.revision('o1')).toBe('3');
    // As a database of before the migration: no counters, the reports stored.
    await sql`drop table report_revisions`.execute(stores.db);
    await createReportRevisions(migrationContext('sqlite')).up(stores.db);
    expect(await stores.reports.revision('o1')).toBe('3');
    expect(await stores.reports.revision('o2')).toBe('0');
    expect(await stored('m4', 'b.example')).toBe('stored');
    expect(await stores.reports.revision('o1')).toBe('4');
    await stores.close();
  });

  it('0016_report_write_indexes drops the two indexes no read needs, and keeps the others of reports and report_records', async () => {
    const { stores } = await openSqliteStores(dir, { pruneAutomatically: false });
    const indexes = async () => (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name in ('reports', 'report_records') order by name`.execute(stores.db)).rows.map((r) => r.name);
    const kept = ['reports_by_begin', 'reports_by_domain_range', 'reports_by_identity_base', 'reports_by_received', 'reports_by_reporting_source'];
    expect((await indexes()).filter((n) => !n.startsWith('sqlite_autoindex'))).toEqual(kept);
    // As a database of before the migration: the two indexes there, then dropped.
    await sql`create index reports_by_domain on reports (organization_id, domain, kind, begin_at)`.execute(stores.db);
    await sql`create index report_records_by_domain on report_records (organization_id, domain, begin_at)`.execute(stores.db);
    expect(await indexes()).toEqual(expect.arrayContaining([...REPORT_INDEXES_DROPPED]));
    await dropReportWriteIndexes(migrationContext('sqlite')).up(stores.db);
    expect((await indexes()).filter((n) => !n.startsWith('sqlite_autoindex'))).toEqual(kept);
    await stores.close();
  });

  it('journal_mode WAL and synchronous NORMAL', async () => {
    const { stores } = await openSqliteStores(dir, { pruneAutomatically: false });
    const journal = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(stores.db);
    const synchronous = await sql<{ synchronous: number }>`pragma synchronous`.execute(stores.db);
    expect(journal.rows[0]?.journal_mode).toBe('wal');
    expect(synchronous.rows[0]?.synchronous).toBe(1); // 1 = NORMAL
    await stores.close();
  });
});

describe('migrations on PostgreSQL', () => {
  const database = suiteDatabase('migrations');

  it('replicas starting together on a new database: exactly one applies each migration, all start', async () => {
    const { url } = database();
    const opened = await Promise.all([1, 2, 3].map(() => openPostgresStores(url, { pruneAutomatically: false, poolSize: 2 })));
    try {
      const applied = opened.map((o) => o.migrations.applied);
      expect(applied.flat().sort()).toEqual(ALL);
      const recorded = await sql<{ name: string }>`select name from ${sql.table(MIGRATION_TABLE)} order by name`.execute(opened[0]!.stores.db);
      expect(recorded.rows.map((r) => r.name)).toEqual(ALL);
    } finally {
      await Promise.all(opened.map((o) => o.stores.close()));
    }
  });

  it('0016_report_write_indexes: neither dropped index is left on PostgreSQL, the index that serves their reads is', async () => {
    const { stores } = await openPostgresStores(database().url, { pruneAutomatically: false });
    try {
      const { rows } = await sql<{ indexname: string }>`select indexname from pg_indexes where tablename in ('reports', 'report_records')`.execute(stores.db);
      const names = rows.map((r) => r.indexname);
      for (const dropped of REPORT_INDEXES_DROPPED) expect(names).not.toContain(dropped);
      expect(names).toContain('reports_by_domain_range');
    } finally {
      await stores.close();
    }
  });

  it('stores key digests only: no column holds the key', async () => {
    const { stores } = await openPostgresStores(database().url, { pruneAutomatically: false });
    try {
      const key = 'sk_clear_text_key_5b70ffceb2646423c767a3e04b670932';
      await applySeed(stores, parseSeed({ organizations: [{ id: 'org_hash', name: 'H', apiKeys: [{ id: 'key_hash', key }] }] }));
      const row = await sql<Record<string, unknown>>`select * from api_keys where id = 'key_hash'`.execute(stores.db);
      expect(row.rows).toHaveLength(1);
      expect((row.rows[0]!['sha256'] as Buffer).length).toBe(32);
      expect(JSON.stringify(row.rows[0])).not.toContain(key);
      expect(Buffer.from(JSON.stringify(row.rows[0])).includes(Buffer.from(key))).toBe(false);
    } finally {
      await stores.close();
    }
  });
});
