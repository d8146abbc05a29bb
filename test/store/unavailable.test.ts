/**
 * The database going away while the service runs: every store call fails with
 * StoreUnavailableError (the HTTP layer's 503 STORE_UNAVAILABLE), health says why, and service
 * resumes by itself once the database is back (the pool drops dead connections, none poisons it).
 * Uses a PostgreSQL of its own, since it stops it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/service/compose.js';
import { StoreUnavailableError, isStoreUnavailable } from '../../src/store/errors.js';
import { openPostgresStores } from '../../src/store/postgres.js';
import { openSqliteStores } from '../../src/store/sqlite.js';
import { startPostgres, type TestPostgres } from '../setup/postgres.js';
import { requirePostgres } from '../setup/require-services.js';

describe('PostgreSQL going away mid-run', () => {
  let started: TestPostgres | undefined;
  let failure: unknown;
  beforeAll(async () => {
    try {
      requirePostgres(); // names the package to install when PostgreSQL is missing
      started = await startPostgres();
    } catch (error) {
      failure = error;
    }
  }, 60_000);
  afterAll(() => started?.stop());
  /** The server of this file; every test fails with the reason when it could not start. */
  const need = (): TestPostgres => {
    if (!started) throw failure;
    return started;
  };

  it('StoreUnavailableError while it is down, health says why, and service resumes when it is back', { timeout: 60_000 }, async () => {
    const server = need();
    const { stores } = await openPostgresStores(server.url, { pruneAutomatically: false, poolSize: 3 });
    try {
      await stores.apiKeys.addOrganization({ id: 'o1', name: 'One' });
      // Fill the pool with connections that will all die.
      await Promise.all([1, 2, 3].map(() => stores.apiKeys.getOrganization('o1')));

      await server.pause();
      const failures = await Promise.all([1, 2, 3, 4].map(() => stores.apiKeys.getOrganization('o1').then(() => undefined, (error: unknown) => error)));
      for (const failure of failures) {
        expect(failure).toBeInstanceOf(StoreUnavailableError);
        expect(isStoreUnavailable(failure)).toBe(true);
        expect((failure as Error).message).toMatch(/^the database is unavailable: /);
      }
      await expect(stores.templates.createVersion('o1', 't1', { content: [], createdBy: { id: 'u', name: 'u', email: '', image: '' }, createdAt: new Date().toISOString() })).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
      const health = await stores.health();
      expect(health.ok).toBe(false);
      expect(health.ok === false && health.reason).toMatch(/ECONNREFUSED|terminat|shut/i);

      await server.resume();
      // The first call after the restart already succeeds: no connection from before is reused.
      expect(await stores.apiKeys.getOrganization('o1')).toEqual({ id: 'o1', name: 'One' });
      expect(await Promise.all([1, 2, 3, 4, 5].map(() => stores.apiKeys.getOrganization('o1')))).toEqual(Array(5).fill({ id: 'o1', name: 'One' }));
      expect(await stores.health()).toEqual({ ok: true });
    } finally {
      await stores.close();
    }
  });

  it('over HTTP: 503 STORE_UNAVAILABLE while it is down, 200 again once it is back', { timeout: 60_000 }, async () => {
    const server = need();
    const { stores } = await openPostgresStores(server.url, { pruneAutomatically: false });
    const app = await buildApp({
      stores,
      check: async () => {
        throw new Error('no spoof checks in this test');
      },
      apiKeys: [{ key: 'sk_outage_test_581588fdb70e55da42f78cc409ae5d9c', organizationId: 'org_outage' }],
      rateLimits: false,
    });
    const list = () => app.inject({ method: 'GET', url: '/api/domain/v1', headers: { authorization: 'Bearer sk_outage_test_581588fdb70e55da42f78cc409ae5d9c' } });
    try {
      expect((await list()).statusCode).toBe(200);
      await server.pause();
      const down = await list();
      expect(down.statusCode).toBe(503);
      expect(down.json()).toMatchObject({ code: 'STORE_UNAVAILABLE' });
      await server.resume();
      expect((await list()).statusCode).toBe(200);
    } finally {
      await app.close();
      await stores.close();
    }
  });

  it('a bad query is not an outage: the driver error passes through unchanged', async () => {
    const { stores } = await openPostgresStores(need().url, { pruneAutomatically: false });
    try {
      await stores.apiKeys.addKey({ id: 'k1', organizationId: 'o1', sha256: Buffer.alloc(32, 1), owner: { id: 'u', name: 'u', email: '', image: '' } });
      // The same digest under another id violates the unique digest constraint: a bug, not a 503.
      const error = await stores.apiKeys.addKey({ id: 'k2', organizationId: 'o1', sha256: Buffer.alloc(32, 1), owner: { id: 'u', name: 'u', email: '', image: '' } }).catch((e: unknown) => e);
      expect(error).not.toBeInstanceOf(StoreUnavailableError);
      expect(error).toMatchObject({ code: '23505' });
      expect(await stores.health()).toEqual({ ok: true });
    } finally {
      await stores.close();
    }
  });
});

describe('SQLite store closed or unusable', () => {
  it('a call after close is StoreUnavailableError; health says closed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'store-closed-'));
    try {
      const { stores } = await openSqliteStores(dir, { pruneAutomatically: false });
      await stores.close();
      await stores.close(); // idempotent
      await expect(stores.apiKeys.getOrganization('o1')).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(await stores.health()).toEqual({ ok: false, reason: 'the store is closed' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
