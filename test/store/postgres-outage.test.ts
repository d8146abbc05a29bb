/**
 * PostgreSQL failing under load (issue 21, item 1): `serve --database` with 16 writes in flight
 * while the database kills its backends, restarts (`pg_ctl restart -m fast`) and crashes
 * (`stop -m immediate`). serve must never exit; every request gets an answer (200, or 503
 * STORE_UNAVAILABLE while the database is away); writes are taken again within seconds of the
 * database's return; and every write acknowledged with 200 is in the database afterwards, with its
 * record log. A real serve process, a real PostgreSQL of this file's own (durable: fsync on, since
 * a crash is part of the test).
 */
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type TestPostgres } from '../setup/postgres.js';
import { requirePostgres } from '../setup/require-services.js';
import { killAll, startServeProcess, type Served } from '../setup/serve-process.js';
import { STRONG_DEMO_KEY, strongDemoSeedFile } from '../setup/strong-seed.js';

// Without --demo the published demo keys are refused: a copy of the demo seed with strong keys.
const DEMO_SEED = strongDemoSeedFile();
const DEMO_KEY = STRONG_DEMO_KEY;
const TEMPLATE = 'tpl_demo_welcome';
/** Writers in flight at any time (the 16). */
const WRITERS = 16;
/** How long each phase of the outage lasts before the database comes back. */
const OUTAGE_MS = 1_500;
/** How soon writes must succeed again after the database is back. */
const RECOVERY_MS = 15_000;
/** Budget of the whole test (three outages and a durable PostgreSQL on a shared two-core machine). */
const TEST_MS = 150_000;

const children = new Set<ChildProcess>();
afterEach(() => killAll(children));

/** One request's outcome: an HTTP answer, or none at all (the connection failed). */
type Outcome = { answered: true; status: number; version?: number; code?: string; logId: string | null } | { answered: false; error: string };

async function postVersion(base: string, index: number): Promise<Outcome> {
  try {
    const response = await fetch(`${base}/api/template/v1/${TEMPLATE}/versions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEMO_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: [{ index }] }),
      signal: AbortSignal.timeout(30_000),
    });
    const json = (await response.json()) as { version?: number; code?: string };
    return { answered: true, status: response.status, version: json.version, code: json.code, logId: response.headers.get('x-log-id') };
  } catch (error) {
    return { answered: false, error: (error as Error).message };
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('serve --database while PostgreSQL fails under load', () => {
  let server: TestPostgres | undefined;
  let failure: unknown;
  beforeAll(async () => {
    try {
      requirePostgres(); // names the package to install when PostgreSQL is missing
      server = await startPostgres({ durable: true });
    } catch (error) {
      failure = error;
    }
  }, 60_000);
  afterAll(() => server?.stop());

  it('answers every request (200 or 503), never exits, recovers within seconds, loses no acknowledged write', { timeout: TEST_MS }, async () => {
    if (!server) throw failure;
    const database = server;
    const served: Served = await startServeProcess(['--port', '0', '--resolver', '127.0.0.1:1', '--database', database.url, '--seed', DEMO_SEED], {
      env: { SPOOF_CHECKER_RATE_LIMIT: 'off' },
      startTimeoutMs: 30_000,
      children,
    });
    let exited = false;
    void served.exit.then(() => (exited = true));

    const outcomes: Outcome[] = [];
    let running = true;
    let next = 0;
    const writers = Array.from({ length: WRITERS }, async () => {
      while (running) outcomes.push(await postVersion(served.base, next++));
    });
    /** Waits until a write made after now is acknowledged; returns how long that took. */
    const recovery = async (): Promise<number> => {
      const from = outcomes.length;
      const started = Date.now();
      while (Date.now() - started < RECOVERY_MS) {
        if (outcomes.slice(from).some((outcome) => outcome.answered && outcome.status === 200)) return Date.now() - started;
        await sleep(50);
      }
      return Number.POSITIVE_INFINITY;
    };

    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      await recovery();
      // 1. Every backend of serve killed, three times (pg_terminate_backend), with writes in flight.
      for (let round = 0; round < 3; round++) {
        await sleep(300);
        await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()");
        expect(await recovery(), `writes resumed after pg_terminate_backend round ${round + 1}`).toBeLessThan(RECOVERY_MS);
      }
    } finally {
      await admin.end().catch(() => undefined);
    }
    // 2. A clean restart, then 3. a crash, each with the database away for OUTAGE_MS.
    for (const mode of ['fast', 'immediate'] as const) {
      await database.pause(mode);
      const during = outcomes.length;
      await sleep(OUTAGE_MS);
      const unavailable = outcomes.slice(during).filter((outcome) => outcome.answered && outcome.status === 503);
      expect(unavailable.length, `503s while PostgreSQL was stopped (${mode})`).toBeGreaterThan(0);
      expect(unavailable.every((outcome) => outcome.answered && outcome.code === 'STORE_UNAVAILABLE')).toBe(true);
      await database.resume();
      expect(await recovery(), `writes resumed after stop -m ${mode} and start`).toBeLessThan(RECOVERY_MS);
    }
    running = false;
    await Promise.all(writers);

    expect(exited, `serve exited; stderr: ${served.stderr()}`).toBe(false);
    const unanswered = outcomes.filter((outcome) => !outcome.answered);
    expect(unanswered, 'requests that got no answer').toEqual([]);
    const statuses = new Set(outcomes.map((outcome) => (outcome.answered ? outcome.status : 0)));
    expect([...statuses].sort()).toEqual([200, 503]);

    // Nothing acknowledged is lost: every version answered 200 is in the database, with its record log.
    const acknowledged = outcomes.filter((outcome): outcome is Extract<Outcome, { answered: true }> => outcome.answered && outcome.status === 200);
    const reader = new pg.Client({ connectionString: database.url });
    await reader.connect();
    try {
      const stored = await reader.query<{ version: number }>('SELECT version FROM template_versions WHERE template_id = $1', [TEMPLATE]);
      const versions = new Set(stored.rows.map((row) => Number(row.version)));
      const missing = acknowledged.filter((outcome) => !versions.has(outcome.version!));
      expect(missing.map((outcome) => outcome.version), 'acknowledged versions missing from the database').toEqual([]);
      // A response names its record log (x-log-id) only once that log is stored.
      const logged = acknowledged.map((outcome) => outcome.logId).filter((id): id is string => id !== null);
      const logs = await reader.query<{ uuid: string }>('SELECT uuid FROM record_logs WHERE uuid = ANY($1)', [logged]);
      expect(logs.rows.length, 'record logs named by x-log-id').toBe(logged.length);
    } finally {
      await reader.end().catch(() => undefined);
    }
    served.child.kill('SIGTERM');
    expect(await served.exit).toMatchObject({ code: 0, signal: null });
  });
});
