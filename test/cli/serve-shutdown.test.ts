/**
 * "Nothing accepted is lost" across a graceful stop, with the real bin: `spoof-checker serve` on its
 * default durable store (SQLite in `--data DIR`) is sent SIGTERM (or SIGINT) while dozens of
 * requests are in flight. It must exit 0, and every response that came back with an `x-log-id` must
 * have its record log in the store: read back through a second `serve` on the same directory (the
 * API's record-log route, the 503s refused while closing included) and straight from the database
 * file. The log holds no record of a request whose client got no response: the drain cut no request
 * it had started. (That a request sent just before the signal gets a response rather than a reset,
 * the shutdown grace, is pinned down in test/http/shutdown-grace.test.ts.)
 *
 * Needs `npm run build` first (`npm test` does it); a missing build fails, loudly.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_DOMAIN, DEMO_ZONES_DIR } from '../../src/cli/serve.js';
import { STRONG_DEMO_KEY as DEMO_API_KEY, strongDemoSeedFile } from '../setup/strong-seed.js';

// Without --demo the published demo keys are refused: a copy of the demo seed with strong keys.
const DEMO_SEED_FILE = strongDemoSeedFile();
import { openSqliteStores } from '../../src/store/sqlite.js';
import { killAll, startServeProcess, type Exit, type Served } from '../setup/serve-process.js';

/** A stack trace line, as Node prints one (as in process.test.ts). */
const STACK_LINE = /^\s+at .+[:(]/m;
/** Requests kept in flight at once: each worker sends its next request as soon as the last one ends. */
const CONCURRENCY = 64;
/** Responses the load must have had answered before the signal is sent (the server is warm, the loop is running). */
const ANSWERED_BEFORE_SIGNAL = 150;
/** How long a child may take to print its address (the two cores are shared with the other tests). */
const START_TIMEOUT_MS = 15_000;
/** How long the drain may take after the signal before the test calls it a hang. */
const STOP_TIMEOUT_MS = 10_000;
/** One request's budget: longer is a hang, reported as one. */
const REQUEST_TIMEOUT_MS = 10_000;
/** Record-log reads sent at once to the second server. */
const VERIFY_CONCURRENCY = 16;
/** Budget of one case: two server starts, the load, the drain and the read-back. */
const CASE_TIMEOUT_MS = 60_000;
/** Spoof checks (the slow route, fixture domains that answer at once) and cheap authenticated reads, in turn. */
const REQUESTS: readonly { method: 'GET' | 'POST'; path: string; body?: unknown }[] = [
  { method: 'POST', path: '/api/tools/v1/spoof-checker', body: { domain: DEMO_DOMAIN } },
  { method: 'GET', path: '/api/domain/v1' },
  { method: 'POST', path: '/api/tools/v1/spoof-checker', body: { domain: 'p-reject.example' } },
  { method: 'GET', path: '/api/template/v1?limit=5' },
  { method: 'POST', path: '/api/tools/v1/spoof-checker', body: { domain: 'p-quarantine.example' } },
  { method: 'GET', path: '/api/contacts/list?limit=10' },
];


/** A response that came back with a status and an `x-log-id`: the service accepted the request. */
interface Accepted {
  logId: string;
  status: number;
  /** The catalogue's code of an error response. */
  code: string | undefined;
  request: string;
  /** Whether the response arrived after the signal was sent (it was drained, not answered before). */
  afterSignal: boolean;
}

const children = new Set<ChildProcess>();

afterEach(() => {
  // A test that failed midway leaves no process behind.
  killAll(children);
});

/** Starts `serve` on the SQLite store in `data` and waits for "listening on URL". */
function startServe(data: string): Promise<Served> {
  // Rate limits off, so that every spoof check runs (a 429 would answer before the slow part).
  return startServeProcess(['--data', data, '--seed', DEMO_SEED_FILE, '--zones', DEMO_ZONES_DIR, '--port', '0'], {
    env: { SPOOF_CHECKER_RATE_LIMIT: 'off' },
    startTimeoutMs: START_TIMEOUT_MS,
    children,
  });
}

/** Sends `signal` and waits for the exit, failing (not hanging) when the drain takes too long. */
async function stop(served: Served, signal: NodeJS.Signals): Promise<Exit & { ms: number }> {
  const sent = Date.now();
  served.child.kill(signal);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`serve did not exit within ${STOP_TIMEOUT_MS} ms of ${signal}; stderr: ${served.stderr()}`)), STOP_TIMEOUT_MS);
  });
  try {
    return { ...(await Promise.race([served.exit, timeout])), ms: Date.now() - sent };
  } finally {
    clearTimeout(timer);
  }
}

/** A response as the load reads it. */
interface Answer {
  status: number;
  logId: string | null;
  text: string;
}

/**
 * Sends request `index` over `agent` (kept-alive connections, as a client library keeps them).
 * `written` is called when the whole request has been handed to the kernel: on loopback its bytes are
 * then in the server's socket, whatever either process does next. That, not the call of this
 * function, is what "sent before the signal" means: a loaded test process may call it long before
 * the bytes leave.
 */
function send(base: string, index: number, agent: Agent, written: () => void): Promise<Answer> {
  const request = REQUESTS[index % REQUESTS.length]!;
  const body = request.body !== undefined ? JSON.stringify(request.body) : undefined;
  return new Promise<Answer>((resolve, reject) => {
    const outgoing = httpRequest(
      new URL(request.path, base),
      {
        method: request.method,
        agent,
        headers: { authorization: `Bearer ${DEMO_API_KEY}`, ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}) },
        timeout: REQUEST_TIMEOUT_MS,
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, logId: (response.headers['x-log-id'] as string | undefined) ?? null, text }));
        response.on('error', reject);
      },
    );
    outgoing.on('finish', written);
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no response within ${REQUEST_TIMEOUT_MS} ms`)));
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/**
 * Keeps CONCURRENCY requests in flight against `base` until each worker's request fails after the
 * signal (the server no longer takes connections). `signalSent()` says whether the signal is out.
 * A failure before the signal, or a response without `x-log-id`, is collected as unexpected.
 */
function load(base: string, signalSent: () => boolean) {
  const accepted: Accepted[] = [];
  const unexpected: string[] = [];
  /** Why the requests after the signal failed (the cause's code, e.g. ECONNREFUSED), with counts. */
  const refusedAfterSignal = new Map<string, number>();
  let inFlight = 0;
  let next = 0;
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const worker = async () => {
    for (;;) {
      const index = next++;
      const request = `${REQUESTS[index % REQUESTS.length]!.method} ${REQUESTS[index % REQUESTS.length]!.path}`;
      inFlight++;
      let sentBeforeSignal = false;
      try {
        const response = await send(base, index, agent, () => (sentBeforeSignal = !signalSent()));
        const { logId, text } = response;
        if (logId === null) {
          unexpected.push(`${request}: ${response.status} without x-log-id: ${text.slice(0, 200)}`);
        } else {
          accepted.push({ logId, status: response.status, code: response.status >= 200 && response.status < 300 ? undefined : errorCode(text), request, afterSignal: signalSent() });
        }
      } catch (error) {
        // After the signal, a request the server no longer took was not accepted: fine, and this worker is done.
        const cause = error instanceof Error ? error : undefined;
        if (signalSent()) {
          const reason = `${(cause as NodeJS.ErrnoException | undefined)?.code ?? cause?.message ?? String(error)}, sent ${sentBeforeSignal ? 'before' : 'after'}`;
          refusedAfterSignal.set(reason, (refusedAfterSignal.get(reason) ?? 0) + 1);
          return;
        }
        unexpected.push(`${request} before the signal: ${error instanceof Error ? error.message : String(error)}`);
        return;
      } finally {
        inFlight--;
      }
    }
  };
  const done = Promise.all(Array.from({ length: CONCURRENCY }, worker)).finally(() => agent.destroy());
  return { accepted, unexpected, done, inFlight: () => inFlight, refusedAfterSignal };
}

/** The catalogue's `code` of an error body, or a note saying what the body was instead. */
function errorCode(body: string): string {
  try {
    const parsed = JSON.parse(body) as { code?: unknown };
    return typeof parsed.code === 'string' ? parsed.code : `(no code in ${body.slice(0, 100)})`;
  } catch {
    return `(not JSON: ${body.slice(0, 100)})`;
  }
}

/** Resolves once `predicate` holds (polled), or rejects naming `what`. */
async function until(predicate: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Runs `task` over `items`, `concurrency` at a time. */
async function eachLimited<T>(items: readonly T[], concurrency: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await task(items[next++]!);
    }),
  );
}

describe('serve on SQLite stops on a signal and loses nothing it accepted', () => {
  it.each<NodeJS.Signals>(['SIGTERM', 'SIGINT'])(
    '%s with requests in flight: exit 0, and every x-log-id answered is in the record log',
    { timeout: CASE_TIMEOUT_MS },
    async (signal) => {
      const data = await mkdtemp(join(tmpdir(), 'serve-shutdown-'));
      try {
        // 1. A fresh store, seeded, under load.
        const first = await startServe(data);
        expect(first.stderr()).toContain('loaded into the empty store');
        let sentAt = 0;
        const traffic = load(first.base, () => sentAt !== 0);
        await until(() => traffic.accepted.length >= ANSWERED_BEFORE_SIGNAL || traffic.unexpected.length > 0, `${ANSWERED_BEFORE_SIGNAL} answered requests`, START_TIMEOUT_MS);
        expect(traffic.unexpected).toEqual([]);

        // 2. The signal, while the workers have their requests out.
        const inFlightAtSignal = traffic.inFlight();
        sentAt = Date.now();
        const stopped = await stop(first, signal);
        await traffic.done;

        // 3. A clean stop: exit 0 (not killed by the signal), said so, no stack trace.
        expect(stopped, `stderr: ${first.stderr()}`).toMatchObject({ code: 0, signal: null });
        expect(first.stderr()).toContain(`spoof-checker serve: ${signal}: finishing requests in flight, then stopping\n`);
        expect(first.stderr()).not.toMatch(STACK_LINE);
        expect(first.stderr()).not.toMatch(/record log not written|Error/);
        expect(traffic.unexpected).toEqual([]);
        // Requests sent before the signal are answered (a result, or 503 if still unread when the server
        // began closing) thanks to the shutdown grace, which test/http/shutdown-grace.test.ts pins down
        // in one process. Here the count is only reported: on a starved machine the server may not be
        // scheduled within the grace at all, and a test must not judge the machine's speed. What must
        // hold whatever the speed is below: a request that got no response left no record behind.
        const cutBeforeSignal = [...traffic.refusedAfterSignal].filter(([reason]) => reason.endsWith(', sent before')).reduce((sum, [, count]) => sum + count, 0);
        const drained = traffic.accepted.filter((a) => a.afterSignal);
        // The test means something only if requests were in flight and the drain answered some of them.
        expect(inFlightAtSignal, 'requests in flight when the signal was sent').toBeGreaterThan(CONCURRENCY / 2);
        expect(drained.length, 'responses that arrived after the signal').toBeGreaterThan(0);
        // Only success, or the catalogue's 503 for a request that came in on a kept-alive connection while closing.
        const outcomes = new Set(traffic.accepted.map((a) => (a.status === 200 ? '200' : `${a.status} ${a.code}`)));
        expect([...outcomes].filter((o) => o !== '200' && o !== '503 SERVICE_UNAVAILABLE')).toEqual([]);

        // 4. The same directory, opened again by the service: every accepted record is there.
        const second = await startServe(data);
        expect(second.stderr()).toContain(`the store already holds data: seed ${DEMO_SEED_FILE} skipped`);
        // Every accepted request carried the demo key, the 503s refused while closing included: all readable by it.
        const refusedWhileClosing = traffic.accepted.filter((a) => a.status === 503);
        const missing: string[] = [];
        /** The record logs the second server writes for these reads. */
        const readIds = new Set<string>();
        await eachLimited(traffic.accepted, VERIFY_CONCURRENCY, async (a) => {
          const response = await fetch(`${second.base}/api/logs/v1/${a.logId}`, { headers: { authorization: `Bearer ${DEMO_API_KEY}` }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
          readIds.add(response.headers.get('x-log-id') ?? '');
          const record = (await response.json()) as { uuid?: string; status_code?: number };
          if (response.status !== 200 || record.uuid !== a.logId || record.status_code !== a.status) {
            missing.push(`${a.logId} (${a.request} answered ${a.status}${a.afterSignal ? ' after the signal' : ''}): GET answered ${response.status} ${JSON.stringify(record).slice(0, 200)}`);
          }
        });
        expect(missing, `${missing.length} of ${traffic.accepted.length} accepted records (${drained.length} drained after ${signal}) not found through the API`).toEqual([]);
        const stoppedAgain = await stop(second, 'SIGTERM');
        expect(stoppedAgain, `stderr: ${second.stderr()}`).toMatchObject({ code: 0, signal: null });

        // 5. Every accepted id, straight from the database file, under the demo organisation.
        const opened = await openSqliteStores(data, { pruneAutomatically: false });
        try {
          const ids = traffic.accepted.map((a) => a.logId);
          const rows = await opened.stores.db.selectFrom('record_logs').select(['uuid', 'organization_id']).where('uuid', 'in', ids).execute();
          const found = new Map(rows.map((row) => [row.uuid, row.organization_id]));
          const absent = ids.filter((id) => !found.has(id));
          expect(absent, `${absent.length} of ${ids.length} accepted ids (${drained.length} drained after ${signal}) absent from the database`).toEqual([]);
          expect(ids.filter((id) => found.get(id) !== 'org_demo')).toEqual([]);
          // The other way round: the first server recorded no request it did not answer (the drain cut none mid-way).
          const acceptedIds = new Set(ids);
          const all = await opened.stores.db.selectFrom('record_logs').select(['uuid', 'document']).execute();
          const unanswered = all.filter((row) => !acceptedIds.has(row.uuid) && !readIds.has(row.uuid));
          expect(unanswered.map((row) => String(row.document).slice(0, 300)), `records of requests whose client got no response`).toEqual([]);
        } finally {
          await opened.stores.close();
        }
        console.info(
          `serve-shutdown ${signal}: ${traffic.accepted.length} accepted (${drained.length} answered after the signal, ${refusedWhileClosing.length} of them 503 while closing), ` +
            `${inFlightAtSignal} in flight at the signal, not accepted after it: ${JSON.stringify(Object.fromEntries(traffic.refusedAfterSignal))} (${cutBeforeSignal} sent before the signal), exit ${stopped.ms} ms after the signal; all found`,
        );
      } finally {
        await rm(data, { recursive: true, force: true });
      }
    },
  );
});
