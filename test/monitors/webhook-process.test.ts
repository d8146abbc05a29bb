/**
 * Issue 29, item 1, with the real binaries: a webhook host with no route (ENETUNREACH on connect(),
 * the error that used to arrive before the request had taken its socket and killed the process,
 * again after every restart once the delivery's lease ran out) leaves `serve` and `worker` running.
 * The delivery is planted in the SQLite store, the child started on it with zone files in which
 * `hooks.unroutable.test` has the address 224.0.0.1, one the kernel refuses at once (with `--zones`
 * webhook hosts are looked up in the zones, issue 42; the preload test/setup/unroutable-lookup.mjs
 * answers the same for the system's lookup); the test waits for the attempt to be recorded as a failed one, retried in 30 s,
 * and checks that the child is still alive and answering.
 *
 * Needs `npm run build` first (`npm test` does it), and the test Redis for the worker.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { newWebhookSecret, sealSecret } from '../../src/jobs/monitors/monitor-secrets.js';
import { serverKeyFor } from '../../src/jobs/monitors/monitors.js';
import { newDelivery, WEBHOOK_RETRY_BASE_MS } from '../../src/jobs/monitors/webhooks.js';
import type { WebhookDelivery } from '../../src/store/monitors.js';
import { openSqliteStores } from '../../src/store/sqlite.js';
import { requireRedis } from '../setup/require-services.js';
import { BIN, killAll, ROOT, startServeProcess } from '../setup/serve-process.js';

const PRELOAD = pathToFileURL(fileURLToPath(new URL('../setup/unroutable-lookup.mjs', import.meta.url))).href;
/** How long a child may take to start (two shared cores). */
const START_TIMEOUT_MS = 15_000;
/** Safety bound of the wait for the attempt (the pumps look every second): reached only when something is broken. */
const SAFETY_MS = 20_000;
/** How long the child must stay up after its failed attempt (more than one poll of its pump). */
const STAYS_UP_MS = 2_500;
const WEBHOOK_URL = 'http://hooks.unroutable.test:8080/hook';

const children = new Set<ChildProcess>();
const dirs: string[] = [];
afterEach(async () => {
  killAll(children);
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A zones directory in which the webhook host resolves to 224.0.0.1 (multicast: connect() fails with ENETUNREACH at once). */
async function unroutableZones(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'webhook-zones-'));
  dirs.push(dir);
  await writeFile(
    join(dir, 'unroutable.test.zone'),
    '$ORIGIN unroutable.test.\n$TTL 300\n@ IN SOA ns1 hostmaster 1 7200 900 1209600 300\n@ IN NS ns1\nns1 IN A 192.0.2.53\nhooks IN A 224.0.0.1\n',
  );
  return dir;
}

/** A data directory holding one monitor of org_hooks and one delivery to the unroutable host, due now. */
async function plantedStore(): Promise<{ data: string; delivery: WebhookDelivery }> {
  const data = await mkdtemp(join(tmpdir(), 'webhook-process-'));
  dirs.push(data);
  const opened = await openSqliteStores(data, { pruneAutomatically: false });
  try {
    const store = opened.stores.monitors;
    const key = await serverKeyFor(store, undefined);
    const now = new Date().toISOString();
    const monitorId = `mon_${randomUUID()}`;
    await store.create({
      id: monitorId, organizationId: 'org_hooks', domain: 'hooks.example', intervalMinutes: 1440, webhookUrl: WEBHOOK_URL, checks: [],
      sealedSecret: sealSecret(newWebhookSecret(), key), machine: { confirmed: null, candidate: null, consecutiveFailures: 0 },
      lastResult: null, nextRunAt: new Date(Date.now() + 86_400_000).toISOString(), leaseUntil: null, version: 0, createdAt: now, updatedAt: now,
    });
    const delivery = newDelivery({ monitorId, organizationId: 'org_hooks', eventId: `chg_${randomUUID()}`, url: WEBHOOK_URL, body: '{"type":"monitor.changed"}', at: now });
    await store.addDelivery(delivery);
    return { data, delivery };
  } finally {
    await opened.stores.close();
  }
}

/** Waits (reading the store from this process) for the delivery's first attempt. */
async function firstAttempt(data: string, delivery: WebhookDelivery, child: ChildProcess, stderr: () => string): Promise<WebhookDelivery> {
  const opened = await openSqliteStores(data, { pruneAutomatically: false });
  try {
    const deadline = Date.now() + SAFETY_MS;
    for (;;) {
      const current = await opened.stores.monitors.getDelivery(delivery.organizationId, delivery.monitorId, delivery.id);
      if (current && current.attempts.length > 0) return current;
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the child exited (${child.exitCode ?? child.signalCode}) before recording an attempt; stderr: ${stderr()}`);
      if (Date.now() > deadline) throw new Error(`no attempt recorded within ${SAFETY_MS} ms; stderr: ${stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await opened.stores.close();
  }
}

function expectFailedAndRetried(recorded: WebhookDelivery): void {
  expect(recorded.attempts).toHaveLength(1);
  const [attempt] = recorded.attempts;
  expect(attempt).toMatchObject({ outcome: 'network-error', statusCode: null, detail: 'ENETUNREACH' });
  expect(recorded.status).toBe('pending');
  expect(Date.parse(recorded.nextAttemptAt!)).toBe(Date.parse(attempt!.at) + attempt!.durationMs + WEBHOOK_RETRY_BASE_MS);
}

const env = { NODE_OPTIONS: `--import=${PRELOAD}`, SPOOF_CHECKER_RATE_LIMIT: 'off' };

describe('an unroutable webhook host', () => {
  it('serve records a failed attempt and keeps running', { timeout: 60_000 }, async () => {
    const { data, delivery } = await plantedStore();
    const served = await startServeProcess(['--data', data, '--zones', await unroutableZones(), '--port', '0', '--allow-private-addresses'], {
      env,
      startTimeoutMs: START_TIMEOUT_MS,
      children,
    });
    expectFailedAndRetried(await firstAttempt(data, delivery, served.child, served.stderr));
    await new Promise((resolve) => setTimeout(resolve, STAYS_UP_MS));
    expect(served.child.exitCode, served.stderr()).toBeNull();
    expect(served.child.signalCode).toBeNull();
    expect((await fetch(`${served.base}/healthz`)).status).toBe(200);
    expect(served.stderr()).not.toMatch(/Unhandled|ENETUNREACH/);
  });

  it('worker records a failed attempt and keeps running', { timeout: 60_000 }, async () => {
    const redisUrl = requireRedis();
    const { data, delivery } = await plantedStore();
    const child = spawn(process.execPath, [BIN, 'worker', '--redis', redisUrl, '--data', data, '--zones', await unroutableZones(), '--allow-private-addresses'], {
      cwd: ROOT,
      env: { PATH: process.env['PATH'], LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.add(child);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    expectFailedAndRetried(await firstAttempt(data, delivery, child, () => stderr));
    await new Promise((resolve) => setTimeout(resolve, STAYS_UP_MS));
    expect(child.exitCode, stderr).toBeNull();
    expect(child.signalCode).toBeNull();
    expect(stderr).toMatch(/worker: ready/);
    expect(stderr).not.toMatch(/Unhandled|ENETUNREACH/);
  });
});
