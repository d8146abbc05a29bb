/**
 * Opens the store `serve` was asked for: memory, SQLite in a data directory (the default) or
 * PostgreSQL. The routes get a `Stores` and never know which.
 */
import { sql } from 'kysely';
import { createMemoryStores } from './memory.js';
import { openPostgresStores, type PostgresStoresOptions } from './postgres.js';
import { applySeed, type Seed } from './seed.js';
import type { SqlStores } from './sql.js';
import { openSqliteStores } from './sqlite.js';
import type { Stores } from './types.js';

/** `--data` value that keeps everything in memory (lost at exit). */
export const MEMORY_DATA_DIR = ':memory:';
/** The data directory without `--data` / SPOOF_CHECKER_DATA (relative to the working directory). */
export const DEFAULT_DATA_DIR = './data';

/** Where the stores live. */
export type StorageChoice = { kind: 'memory' } | { kind: 'sqlite'; dir: string } | { kind: 'postgres'; url: string };

/** Opened stores and a one-line description for the start-up message. */
export interface OpenedStores {
  stores: Stores;
  /** The same stores when they are SQL (their `db` and `dialect`), undefined in memory. */
  sql: SqlStores | undefined;
  /** e.g. `SQLite /srv/data/spoof-checker.sqlite (WAL, synchronous=NORMAL)`. */
  description: string;
  /** Migrations applied by this start (empty when the schema was up to date, or in memory). */
  migrationsApplied: string[];
}

/**
 * Opens `choice`, creating the data directory and applying pending migrations. Throws
 * StoreUnavailableError with a one-line message when the database cannot be opened or reached.
 */
export async function openStores(choice: StorageChoice, options: PostgresStoresOptions = {}): Promise<OpenedStores> {
  switch (choice.kind) {
    case 'memory':
      return { stores: createMemoryStores(), sql: undefined, description: 'memory (everything is lost when the process stops)', migrationsApplied: [] };
    case 'sqlite': {
      const opened = await openSqliteStores(choice.dir, options);
      return { stores: opened.stores, sql: opened.stores, description: `SQLite ${opened.file} (WAL, synchronous=NORMAL)`, migrationsApplied: opened.migrations.applied };
    }
    case 'postgres': {
      const opened = await openPostgresStores(choice.url, options);
      return { stores: opened.stores, sql: opened.stores, description: `PostgreSQL ${opened.location}`, migrationsApplied: opened.migrations.applied };
    }
  }
}

/** The PostgreSQL advisory lock key under which replicas decide, one at a time, whether to seed. */
export const SEED_LOCK_KEY = 0x5eed_c4ec;

/**
 * Applies `seed` if the store is empty (no organisation), and says which happened. On PostgreSQL
 * the check and the load run under an advisory lock (on a connection of their own), so replicas
 * starting together on a new database seed it once: the others wait, then find it full.
 */
export async function seedIfEmpty(opened: Pick<OpenedStores, 'stores' | 'sql'>, seed: Seed): Promise<'loaded' | 'skipped'> {
  const apply = async (): Promise<'loaded' | 'skipped'> => {
    if (!(await opened.stores.isEmpty())) return 'skipped';
    await applySeed(opened.stores, seed);
    return 'loaded';
  };
  const db = opened.sql?.dialect === 'postgres' ? opened.sql.db : undefined;
  if (!db) return apply();
  return db.connection().execute(async (connection) => {
    await sql`select pg_advisory_lock(${SEED_LOCK_KEY})`.execute(connection);
    try {
      return await apply();
    } finally {
      await sql`select pg_advisory_unlock(${SEED_LOCK_KEY})`.execute(connection);
    }
  });
}
