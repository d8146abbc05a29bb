/**
 * End to end on the built binary: a DNS server on 127.0.0.1 answering the watched zone with 1-second
 * TTLs, `serve --resolver … --data DIR --allow-private-addresses`, a local webhook receiver. Create a
 * monitor, run it, change the DMARC record, run it twice more: exactly one signed webhook naming the
 * change, a history of three checks and one change; the same after `kill -9` and a restart.
 */
import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { requireRedis } from '../setup/require-services.js';
import { BIN, ROOT } from '../setup/serve-process.js';
import { startDnsServer, type RunningDnsServer } from '../../packages/engine/src/zones/server.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { parseZone } from '../../packages/engine/src/zones/parse.js';
import { killAll, startServeProcess } from '../setup/serve-process.js';
import { NONE, REJECT, startReceiver, WATCHED, watchedZone } from './helpers.js';

const KEY = 'sk_test_monitor_e2e_8c41f0a95d2b7e36a1c4';
const MONITORS = '/api/tools/v1/spoof-checker/monitors';
const SAFETY_MS = 15_000;

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + SAFETY_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('monitoring through the real server', () => {
  const children = new Set<ChildProcess>();
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    killAll(children);
    for (const fn of cleanup.splice(0).reverse()) await fn().catch(() => {});
  });

  /** Starts `spoof-checker worker …args` and waits for its "ready" line. */
  async function startWorker(args: string[], env: NodeJS.ProcessEnv): Promise<ChildProcess> {
    const child = spawn(process.execPath, [BIN, 'worker', ...args], { cwd: ROOT, env: { PATH: process.env['PATH'], ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    children.add(child);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    await until(`the worker (${stderr})`, async () => (stderr.includes('ready') ? true : undefined));
    return child;
  }

  it.each(['in-process', 'redis'] as const)('%s: one signed webhook for one DMARC change; history of three checks and one change; the same after kill -9', { timeout: 60_000 }, async (mode) => {
    const dir = await mkdtemp(join(tmpdir(), 'monitor-e2e-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const zoneServer = async (dmarc: string, port = 0): Promise<RunningDnsServer> =>
      startDnsServer({ resolver: new ZoneResolver([parseZone(watchedZone(dmarc))]), port, outsideZones: 'nxdomain' });
    let dns = await zoneServer(REJECT);
    cleanup.push(() => dns.close());
    const receiver = await startReceiver();
    cleanup.push(() => receiver.close());
    const common = ['--resolver', `127.0.0.1:${dns.address.port}`, '--data', dir, '--allow-private-addresses'];
    const redis = mode === 'redis' ? ['--redis', requireRedis()] : [];
    const args = [...common, ...redis, '--port', '0'];
    const env = { SPOOF_CHECKER_API_KEYS: `${KEY}:org_e2e`, SPOOF_CHECKER_RATE_LIMIT: 'off' };
    // With Redis, two workers share the runs (and the webhook pump) with the API.
    if (mode === 'redis') for (let i = 0; i < 2; i++) await startWorker([...common, ...redis, '--lock-duration', '2000'], {});
    let served = await startServeProcess(args, { env, startTimeoutMs: SAFETY_MS, children });
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${served.base}${path}`, {
        method,
        headers: { authorization: `Bearer ${KEY}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return { status: response.status, body: (await response.json()) as Record<string, any> };
    };
    const historyWith = (checks: number) =>
      until(`${checks} checks`, async () => {
        const { body } = await call('GET', `${MONITORS}/${id}/history`);
        return body['history'].filter((e: { type: string }) => e.type === 'check').length >= checks ? body : undefined;
      });

    const created = await call('POST', MONITORS, { domain: WATCHED, webhookUrl: receiver.url });
    expect(created.status).toBe(201);
    const { id, secret } = created.body;
    expect((await call('POST', `${MONITORS}/${id}/run`)).status).toBe(202);
    await historyWith(1);

    // The DMARC record changes; the resolver's cached answer lives 1 s (the zone's TTL).
    await dns.close();
    dns = await zoneServer(NONE, dns.address.port);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    await call('POST', `${MONITORS}/${id}/run`);
    await historyWith(2);
    await call('POST', `${MONITORS}/${id}/run`);
    const history = await historyWith(3);
    expect(history['history'].map((e: { type: string }) => e.type)).toEqual(['change', 'check', 'check', 'check']);
    expect(history['history'][0].changes).toEqual(expect.arrayContaining([{ field: 'dmarc.record', before: REJECT, after: NONE }]));

    await until('the webhook', async () => (receiver.received.length > 0 ? true : undefined));
    const hook = receiver.received[0]!;
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(hook.headers['spoof-checker-signature'])) ?? [];
    expect(v1).toBe(createHmac('sha256', secret).update(`${t}.${hook.body}`).digest('hex'));
    expect(JSON.parse(hook.body)).toMatchObject({ type: 'monitor.changed', monitorId: id, domain: WATCHED });
    await until('the delivery recorded', async () => ((await call('GET', `${MONITORS}/${id}/deliveries`)).body['deliveries'][0]?.status === 'delivered' ? true : undefined));

    served.child.kill('SIGKILL');
    await served.exit;
    served = await startServeProcess(args, { env, startTimeoutMs: SAFETY_MS, children });
    const after = await call('GET', `${MONITORS}/${id}/history`);
    expect(after.body['history'].map((e: { id: string }) => e.id)).toEqual(history['history'].map((e: { id: string }) => e.id));
    const monitor = await call('GET', `${MONITORS}/${id}`);
    expect(monitor.body).not.toHaveProperty('secret');
    expect(monitor.body['state'].status).toBe('ok');
    // Give a restarted pump the chance to (wrongly) send again: the delivery is done, nothing more goes out.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(receiver.received).toHaveLength(1);
    expect(served.stderr()).not.toContain(secret);
  });
});
