/**
 * A Redis outage under the rate limits: a Redis of this test's own (the shared one of the global
 * setup stays up for the other files) is stopped and started again on the same port. While it is
 * down every route answers: the API's limited routes 503 STORE_UNAVAILABLE (they fail closed), the
 * public page degrades to counting in this process (its limit still holds), everything else as
 * usual; never a 500. Once Redis is back the limited routes answer 200 again by themselves.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { REDIS_COUNTER_NAMESPACE, REDIS_RETRY_AFTER_MS } from '../../src/http/counters.js';
import { connectRateLimitRedis } from '../../src/http/rate-limits.js';
import { freePort } from '../setup/postgres.js';
import { requireRedis } from '../setup/require-services.js';
import { bearerA, expectError, makeApp } from './helpers.js';

/** Generous safety bound for Redis to start or for ioredis to reconnect (never a speed requirement). */
const SAFETY_TIMEOUT_MS = 20_000;

/** Starts redis-server on `port`; resolves once it accepts connections. */
async function startRedisOn(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'], { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${output}`)), SAFETY_TIMEOUT_MS);
    child.once('error', (error) => reject(new Error(`this test needs redis-server (apt-get install redis-server): ${error.message}`)));
    child.once('exit', (code) => reject(new Error(`redis-server exited ${code}: ${output}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  child.removeAllListeners('exit');
  child.stderr!.resume();
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + SAFETY_TIMEOUT_MS;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const children: ChildProcess[] = [];
let client: Redis | undefined;
afterAll(async () => {
  client?.disconnect();
  for (const child of children) await stop(child);
});

describe('a Redis outage', () => {
  it('every route answers 503 or degrades while Redis is down, and recovers when it is back', { timeout: 60_000 }, async () => {
    requireRedis();
    const port = await freePort();
    children.push(await startRedisOn(port));
    client = await connectRateLimitRedis(`redis://127.0.0.1:${port}`);
    const { app } = await makeApp({ rateLimits: { spoofCheck: { max: 3, windowMs: 60_000 } }, rateLimitRedis: client });

    const apiCheck = (remoteAddress: string) => app.inject({ method: 'GET', url: '/api/tools/v1/spoof-checker?domain=example.com', remoteAddress, headers: bearerA });
    const pageCheck = (remoteAddress: string) => app.inject({ method: 'GET', url: '/check/example.com', remoteAddress, headers: { accept: 'text/html' } });
    const others = () =>
      Promise.all([
        app.inject({ method: 'GET', url: '/healthz' }),
        app.inject({ method: 'GET', url: '/api/template/v1', headers: bearerA }),
        app.inject({ method: 'POST', url: '/api/template/v1/tpl_a/versions', headers: bearerA, payload: { content: ['x'] } }),
        app.inject({ method: 'GET', url: '/' }),
      ]);

    // Up: counted in Redis.
    expect((await apiCheck('198.51.100.1')).statusCode).toBe(200);
    expect((await pageCheck('198.51.100.1')).statusCode).toBe(200);
    expect(await client.keys(`${REDIS_COUNTER_NAMESPACE}web:198.51.100.1`)).toHaveLength(1);

    // Down.
    await stop(children.pop()!);
    await until(() => client!.status !== 'ready', 'ioredis to notice the outage');
    expectError(await apiCheck('198.51.100.2'), 503, 'STORE_UNAVAILABLE');
    const pageStatuses: number[] = [];
    for (let i = 0; i < 5; i++) pageStatuses.push((await pageCheck('198.51.100.3')).statusCode);
    // Degraded, not failed: the page still checks, and its limit still holds (counted in this process).
    expect(pageStatuses).toEqual([200, 200, 200, 429, 429]);
    for (const response of await others()) expect(response.statusCode, response.body).toBe(200);

    // Back on the same port: the limited routes recover by themselves.
    children.push(await startRedisOn(port));
    await until(() => client!.status === 'ready', 'ioredis to reconnect');
    expect((await apiCheck('198.51.100.4')).statusCode).toBe(200);
    // The page counts locally for REDIS_RETRY_AFTER_MS after its last failure, then in Redis again.
    let attempt = 0;
    for (;;) {
      attempt++;
      expect((await pageCheck(`198.51.101.${attempt}`)).statusCode).toBe(200);
      if ((await client.keys(`${REDIS_COUNTER_NAMESPACE}web:198.51.101.${attempt}`)).length === 1) break;
      if (attempt > 200) throw new Error('the page never counted in Redis again');
      await sleep(REDIS_RETRY_AFTER_MS / 4);
    }
    for (const response of await others()) expect(response.statusCode, response.body).toBe(200);
    await app.close();
  });
});
