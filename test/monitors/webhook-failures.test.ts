/**
 * Issue 29, item 1: a webhook delivery never takes the process down. Each way the network fails
 * (unreachable, refused, reset, timeout, an untrusted certificate) is tried against the two pumps
 * that send webhooks: `serve`'s (startMonitorService, monitors in this process) and the `worker`'s
 * (startMonitorWorkerWithPump, on the test Redis). Every failure must end as a recorded failed
 * attempt (`network-error` or `timeout`), the delivery still pending, its next attempt due 30 s
 * (WEBHOOK_RETRY_BASE_MS) after the attempt ended, and no error left unhandled: an uncaught
 * exception or unhandled rejection in this process would fail the run.
 *
 * Only loopback and injected connectors: refused is a closed port on 127.0.0.1, reset a server that
 * destroys each socket, timeout a server that never answers (with a short timeout), TLS a server
 * whose self-signed certificate the client does not trust; unreachable is a connector that fails
 * as the kernel does when there is no route (ENETUNREACH), both on the same tick (the case that
 * crashed `serve`: the error came before the request had taken the socket) and on a later one.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, Socket, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { Duplex } from 'node:stream';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MonitorCheck } from '../../src/jobs/monitors/monitor-run.js';
import { startMonitorService, startMonitorWorkerWithPump, type WebhookSendOptions } from '../../src/jobs/monitors/monitor-setup.js';
import { newWebhookSecret, sealSecret } from '../../src/jobs/monitors/monitor-secrets.js';
import { serverKeyFor } from '../../src/jobs/monitors/monitors.js';
import { newDelivery, WEBHOOK_RETRY_BASE_MS, type WebhookConnector } from '../../src/jobs/monitors/webhooks.js';
import type { MonitorStore, WebhookDelivery } from '../../src/store/monitors.js';
import { MemoryMonitorStore } from '../../src/store/monitors-memory.js';
import { requireRedis } from '../setup/require-services.js';
import { makeCertificates } from '../transport/lab.js';

/** The injected timeout of one attempt (the "never answers" server is cut after this). */
const SHORT_TIMEOUT_MS = 400;
/** How often the pumps look for due deliveries in these tests. */
const POLL_MS = 25;
/** Safety bound of a wait: reached only when something is broken, never a measure of speed. */
const SAFETY_MS = 15_000;

/** A monitor check that is never called here (no monitor is due). */
const noCheck: MonitorCheck = () => Promise.reject(new Error('no check in these tests'));

/** An error as the kernel reports a connection to an address without a route. */
function unreachableError(): NodeJS.ErrnoException {
  return Object.assign(new Error('connect ENETUNREACH 2001:db8::1:443 - Local (:::0)'), { code: 'ENETUNREACH', errno: -101, syscall: 'connect' });
}

/** A connector whose socket fails on the tick it is made (destroy() emits on the next tick, before the request takes the socket). */
const unreachableNow: WebhookConnector = () => new Socket().destroy(unreachableError());
/** A connector whose connection takes the request, then fails a little later, as a connect() still under way does. */
const unreachableLater: WebhookConnector = () => {
  // Takes what is written, answers nothing, then fails.
  const stream = new Duplex({ read: () => undefined, write: (_chunk, _encoding, callback) => callback() });
  setTimeout(() => stream.destroy(unreachableError()), 5);
  return stream;
};

const listenOn = (server: Server): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
const closeServer = (server: Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()));

/** The loopback targets, shared by the cases. */
interface Targets {
  refusedPort: number;
  resetPort: number;
  silentPort: number;
  tlsPort: number;
  connections: { reset: number; silent: number; tls: number };
  close(): Promise<void>;
}

async function startTargets(): Promise<Targets> {
  const connections = { reset: 0, silent: 0, tls: 0 };
  // Refused: a port that was bound then closed (nothing listens on it).
  const closed = createTcpServer();
  const refusedPort = await listenOn(closed);
  await closeServer(closed);
  // Reset: every connection destroyed at once.
  const reset = createTcpServer((socket) => {
    connections.reset++;
    socket.resetAndDestroy();
  });
  const resetPort = await listenOn(reset);
  // Never answers: takes the request and says nothing.
  const silentSockets = new Set<import('node:net').Socket>();
  const silent = createHttpServer(() => undefined);
  silent.on('connection', (socket) => {
    connections.silent++;
    silentSockets.add(socket);
  });
  const silentPort = await listenOn(silent);
  // TLS with a self-signed certificate the client does not trust.
  const dir = mkdtempSync(join(tmpdir(), 'webhook-tls-'));
  const { self } = makeCertificates(dir);
  const tls = createHttpsServer({ key: self.key, cert: self.cert }, (_req, res) => res.writeHead(200).end('ok'));
  tls.on('connection', () => connections.tls++);
  tls.on('tlsClientError', () => undefined);
  const tlsPort = await listenOn(tls);
  return {
    refusedPort,
    resetPort,
    silentPort,
    tlsPort,
    connections,
    close: async () => {
      for (const socket of silentSockets) socket.destroy();
      await Promise.all([closeServer(reset), closeServer(silent), closeServer(tls)]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One kind of failure: the URL, what is injected, and the attempt expected. */
interface Case {
  kind: string;
  url: (t: Targets) => string;
  webhooks?: WebhookSendOptions;
  outcome: 'network-error' | 'timeout';
  detail: RegExp;
}

/** Every name resolves to 127.0.0.1 (the attempt connects to the checked address, never a second lookup). */
const loopbackLookup = async () => [{ address: '127.0.0.1', family: 4 }];

const CASES: Case[] = [
  { kind: 'unreachable (fails on the same tick)', url: () => 'https://hooks.unreachable.test/hook', webhooks: { connect: unreachableNow }, outcome: 'network-error', detail: /^ENETUNREACH$/ },
  { kind: 'unreachable (fails later)', url: () => 'http://hooks.unreachable.test/hook', webhooks: { connect: unreachableLater }, outcome: 'network-error', detail: /^ENETUNREACH$/ },
  { kind: 'refused', url: (t) => `http://hooks.test:${t.refusedPort}/hook`, outcome: 'network-error', detail: /^ECONNREFUSED$/ },
  { kind: 'reset', url: (t) => `http://hooks.test:${t.resetPort}/hook`, outcome: 'network-error', detail: /^(ECONNRESET|EPIPE)$/ },
  { kind: 'timeout', url: (t) => `http://hooks.test:${t.silentPort}/hook`, outcome: 'timeout', detail: /no answer within 0.4 s/ },
  { kind: 'TLS (untrusted certificate)', url: (t) => `https://hooks.test:${t.tlsPort}/hook`, outcome: 'network-error', detail: /SELF_SIGNED|UNABLE_TO_VERIFY|CERT/ },
];

/** A monitor (its secret sealed with the store's key) and one delivery to `url`, due now. */
async function plant(store: MonitorStore, url: string): Promise<WebhookDelivery> {
  const key = await serverKeyFor(store, undefined);
  const now = new Date().toISOString();
  const monitorId = `mon_${randomUUID()}`;
  await store.create({
    id: monitorId, organizationId: 'org_hooks', domain: `d${randomUUID().slice(0, 8)}.example`, intervalMinutes: 1440, webhookUrl: url, checks: [],
    sealedSecret: sealSecret(newWebhookSecret(), key), machine: { confirmed: null, candidate: null, consecutiveFailures: 0 },
    lastResult: null, nextRunAt: new Date(Date.now() + 86_400_000).toISOString(), leaseUntil: null, version: 0, createdAt: now, updatedAt: now,
  });
  const delivery = newDelivery({ monitorId, organizationId: 'org_hooks', eventId: `chg_${randomUUID()}`, url, body: '{"type":"monitor.changed"}', at: now });
  await store.addDelivery(delivery);
  return delivery;
}

/** Waits until the delivery has its first attempt recorded. */
async function firstAttempt(store: MonitorStore, delivery: WebhookDelivery): Promise<WebhookDelivery> {
  const deadline = Date.now() + SAFETY_MS;
  for (;;) {
    const current = await store.getDelivery(delivery.organizationId, delivery.monitorId, delivery.id);
    if (current && current.attempts.length > 0) return current;
    if (Date.now() > deadline) throw new Error(`no attempt recorded for ${delivery.url} within ${SAFETY_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function expectRetriedIn30s(recorded: WebhookDelivery, expected: Case): void {
  expect(recorded.attempts).toHaveLength(1);
  const [attempt] = recorded.attempts;
  expect(attempt).toMatchObject({ outcome: expected.outcome, statusCode: null });
  expect(attempt!.detail).toMatch(expected.detail);
  // Still pending, retried on the existing schedule: the first retry 30 s after the attempt ended.
  expect(recorded.status).toBe('pending');
  expect(WEBHOOK_RETRY_BASE_MS).toBe(30_000);
  expect(Date.parse(recorded.nextAttemptAt!)).toBe(Date.parse(attempt!.at) + attempt!.durationMs + WEBHOOK_RETRY_BASE_MS);
}

let targets: Targets;
const unhandled: unknown[] = [];
const onUnhandled = (error: unknown) => unhandled.push(error);

beforeAll(async () => {
  targets = await startTargets();
  process.on('uncaughtException', onUnhandled);
  process.on('unhandledRejection', onUnhandled);
});
afterAll(async () => {
  process.off('uncaughtException', onUnhandled);
  process.off('unhandledRejection', onUnhandled);
  await targets.close();
});
afterEach(() => {
  expect(unhandled, 'an error escaped a webhook delivery').toEqual([]);
});

describe("serve's pump (monitors in this process)", () => {
  it.each(CASES)('$kind: a recorded failed attempt, retried in 30 s', async (expected) => {
    const store = new MemoryMonitorStore();
    const service = await startMonitorService({
      store,
      check: noCheck,
      allowPrivateAddresses: true,
      env: {},
      webhooks: { lookup: loopbackLookup, timeoutMs: SHORT_TIMEOUT_MS, pollMs: POLL_MS, ...expected.webhooks },
    });
    try {
      const delivery = await plant(store, expected.url(targets));
      expectRetriedIn30s(await firstAttempt(store, delivery), expected);
    } finally {
      await service.close();
    }
  });

  it('every kind at once, twice over: the pump keeps going and records each one', async () => {
    const store = new MemoryMonitorStore();
    const byUrl = new Map<string, WebhookConnector>([
      ['http://now.unreachable.test/hook', unreachableNow],
      ['http://later.unreachable.test/hook', unreachableLater],
    ]);
    const service = await startMonitorService({
      store,
      check: noCheck,
      allowPrivateAddresses: true,
      env: {},
      webhooks: {
        lookup: loopbackLookup,
        timeoutMs: SHORT_TIMEOUT_MS,
        pollMs: POLL_MS,
        connect: (target) => {
          const injected = target.servername !== undefined ? byUrl.get(`http://${target.servername}/hook`) : undefined;
          return injected ? injected(target) : new Socket().connect({ host: target.address, port: target.port });
        },
      },
    });
    try {
      const urls = [...byUrl.keys(), ...CASES.slice(2, 5).map((c) => c.url(targets))];
      const planted = await Promise.all([...urls, ...urls].map((url) => plant(store, url)));
      const recorded = await Promise.all(planted.map((delivery) => firstAttempt(store, delivery)));
      for (const delivery of recorded) expect(delivery).toMatchObject({ status: 'pending', attempts: [{ outcome: expect.stringMatching(/^(network-error|timeout)$/) }] });
    } finally {
      await service.close();
    }
  });
});

describe("the worker's pump (monitors on the Redis queue)", () => {
  it.each(CASES)('$kind: a recorded failed attempt, retried in 30 s', async (expected) => {
    const redisUrl = requireRedis();
    const store = new MemoryMonitorStore();
    const worker = await startMonitorWorkerWithPump({
      store,
      check: noCheck,
      redisUrl,
      prefix: `hooks${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`,
      allowPrivateAddresses: true,
      env: {},
      webhooks: { lookup: loopbackLookup, timeoutMs: SHORT_TIMEOUT_MS, pollMs: POLL_MS, ...expected.webhooks },
    });
    try {
      await worker.ready();
      const delivery = await plant(store, expected.url(targets));
      expectRetriedIn30s(await firstAttempt(store, delivery), expected);
    } finally {
      await worker.close(true);
    }
  });
});
