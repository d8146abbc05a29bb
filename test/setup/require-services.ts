/**
 * For test files that need the real PostgreSQL or Redis started by test/setup/services.ts.
 * Each function throws (the test fails, never skips) with what to install when the service is missing.
 */
import pg from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';

/** The test PostgreSQL's maintenance URL; throws naming the package when it is missing. */
export function requirePostgres(): string {
  const url = inject('postgresUrl');
  if (!url) {
    throw new Error(`this test needs PostgreSQL (apt-get install postgresql): ${inject('postgresError') ?? 'the global setup did not start it'}`);
  }
  return url;
}

/** The test Redis URL (`redis://127.0.0.1:PORT`); throws naming the package when it is missing. */
export function requireRedis(): string {
  const url = inject('redisUrl');
  if (!url) {
    throw new Error(`this test needs Redis (apt-get install redis-server): ${inject('redisError') ?? 'the global setup did not start it'}`);
  }
  return url;
}

let counter = 0;

/**
 * A new, empty database on the test PostgreSQL, so that parallel test files never share tables.
 * Returns its URL and a function that drops it.
 */
export async function createTestDatabase(prefix = 'test'): Promise<{ url: string; drop: () => Promise<void> }> {
  const adminUrl = requirePostgres();
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}_${counter++}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** A test database shared by the tests of one describe block. */
export interface SuiteDatabase {
  url: string;
  drop: () => Promise<void>;
}

/**
 * Creates a database for the enclosing describe block (in its beforeAll) and drops it afterwards.
 * The returned function gives it to a test, or throws why it could not be created (PostgreSQL
 * missing: the package to install), so that every test needing it FAILS with that reason rather
 * than being skipped.
 */
export function suiteDatabase(prefix: string): () => SuiteDatabase {
  let database: SuiteDatabase | undefined;
  let failure: unknown;
  beforeAll(async () => {
    try {
      database = await createTestDatabase(prefix);
    } catch (error) {
      failure = error;
    }
  });
  afterAll(async () => {
    await database?.drop();
  });
  return () => {
    if (database) return database;
    throw failure instanceof Error ? failure : new Error(`the test database was not created: ${String(failure)}`);
  };
}
