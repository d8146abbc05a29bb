/**
 * The three store backends, opened fresh for a test: memory, SQLite in a temp dir, PostgreSQL in
 * a database of its own on the test server (test/setup/services.ts). The contract suite runs
 * unchanged against each.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createMemoryStores } from '../../src/store/memory.js';
import { MIGRATION_TABLE } from '../../src/store/migrations.js';
import { openPostgresStores } from '../../src/store/postgres.js';
import type { SqlStores, SqlStoresOptions } from '../../src/store/sql.js';
import { openSqliteStores } from '../../src/store/sqlite.js';
import type { Stores } from '../../src/store/types.js';
import { createTestDatabase } from '../setup/require-services.js';

/** A freshly opened, empty store and how to dispose of it. */
export interface OpenedBackend {
  stores: Stores;
  /** The SQL stores (for retention tests), undefined in memory. */
  sql: SqlStores | undefined;
  /** Closes the stores and removes what the backend created. */
  dispose(): Promise<void>;
}

/** A backend the contract suite runs against. */
export interface Backend {
  name: 'memory' | 'sqlite' | 'postgres';
  /** Called once per suite (creates the PostgreSQL database). */
  setup(): Promise<void>;
  /** An empty store for one test. */
  open(options?: SqlStoresOptions & { recordLogCapacity?: number }): Promise<OpenedBackend>;
  teardown(): Promise<void>;
}


export const memoryBackend: Backend = {
  name: 'memory',
  setup: async () => {},
  open: async (options = {}) => {
    const stores = createMemoryStores(options);
    return { stores, sql: undefined, dispose: () => stores.close() };
  },
  teardown: async () => {},
};

export const sqliteBackend: Backend = {
  name: 'sqlite',
  setup: async () => {},
  open: async (options = {}) => {
    const dir = await mkdtemp(join(tmpdir(), 'store-sqlite-'));
    const { stores } = await openSqliteStores(dir, { pruneAutomatically: false, ...options });
    return {
      stores,
      sql: stores,
      dispose: async () => {
        await stores.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
  teardown: async () => {},
};

/**
 * PostgreSQL: one database per suite, emptied before each test. When it cannot be created
 * (PostgreSQL missing), every test fails with the reason: open() throws it.
 */
export function postgresBackend(): Backend {
  let database: { url: string; drop: () => Promise<void> } | undefined;
  let failure: unknown = new Error('postgresBackend.setup() was not called');
  return {
    name: 'postgres',
    setup: async () => {
      try {
        database = await createTestDatabase('contract');
      } catch (error) {
        failure = error;
      }
    },
    open: async (options = {}) => {
      if (!database) throw failure;
      const { stores } = await openPostgresStores(database.url, { pruneAutomatically: false, poolSize: 4, ...options });
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        // Every table the migrations made (whoever added it), but not the migrations' own.
        const { rows } = await client.query<{ name: string }>(
          `SELECT quote_ident(table_name) AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name NOT LIKE $1`,
          [`${MIGRATION_TABLE}%`],
        );
        await client.query(`TRUNCATE ${rows.map((r) => r.name).join(', ')}`);
      } finally {
        await client.end();
      }
      return { stores, sql: stores, dispose: () => stores.close() };
    },
    teardown: async () => {
      await database?.drop();
    },
  };
}
