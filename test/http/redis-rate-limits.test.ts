/**
 * Rate limits shared through Redis: two app instances (two replicas) over one Redis count against
 * one limit; each limiter keeps its own counters there; an unreachable Redis fails closed (503).
 * Redis is the throw-away server of the vitest global setup (test/setup/services.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { connectRateLimitRedis, REDIS_RATE_LIMIT_NAMESPACE } from '../../src/http/rate-limits.js';
import { requireRedis } from '../setup/require-services.js';
import { bearerA, expectError, makeApp } from './helpers.js';

let redis: Redis;
beforeAll(async () => {
  redis = await connectRateLimitRedis(requireRedis());
});
afterAll(async () => {
  await redis?.quit();
});

const LIMITS = {
  spoofCheck: { max: 3, windowMs: 60_000 },
  domainUpdate: { max: 2, windowMs: 60_000 },
  domainDelete: { max: 2, windowMs: 60_000 },
  contactList: { max: 100, windowMs: 60_000 },
};

describe('rate limits in Redis', () => {
  it('two app instances over one Redis share one limit per client', async () => {
    const [{ app: first }, { app: second }] = await Promise.all([makeApp({ rateLimits: LIMITS, rateLimitRedis: redis }), makeApp({ rateLimits: LIMITS, rateLimitRedis: redis })]);
    const check = (app: typeof first, remoteAddress: string) =>
      app.inject({ method: 'GET', url: '/api/tools/v1/spoof-checker?domain=example.com', remoteAddress, headers: bearerA });
    const statuses = [];
    for (const app of [first, second, first, second]) statuses.push((await check(app, '198.51.100.21')).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await check(first, '198.51.100.21');
    const body = expectError(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(body['retryAfter']).toBeGreaterThan(0);
    // Another client has its own counter; the counters are in Redis under our namespace.
    expect((await check(second, '198.51.100.22')).statusCode).toBe(200);
    expect(await redis.keys(`${REDIS_RATE_LIMIT_NAMESPACE}*spoofCheck:ip:198.51.100.21`)).toHaveLength(1);
    await Promise.all([first.close(), second.close()]);
  });

  it('domain updates and deletes of one organisation are counted apart in the one Redis', async () => {
    const { app } = await makeApp({ rateLimits: LIMITS, rateLimitRedis: redis });
    const patch = () => app.inject({ method: 'PATCH', url: '/api/domain/v1/dom_a2', headers: bearerA, payload: {} });
    expect((await patch()).statusCode).toBe(200);
    expect((await patch()).statusCode).toBe(200);
    expect((await patch()).statusCode).toBe(429);
    // Deletes have their own counter: the two updates above do not count against it.
    expect((await app.inject({ method: 'DELETE', url: '/api/domain/v1/dom_a2', headers: bearerA })).statusCode).toBe(200);
    await app.close();
  });

  it('an unreachable Redis fails closed: 503 STORE_UNAVAILABLE on limited routes, other routes unaffected', async () => {
    const broken = await connectRateLimitRedis(requireRedis());
    const { app } = await makeApp({ rateLimits: LIMITS, rateLimitRedis: broken });
    broken.disconnect();
    const response = await app.inject({ method: 'GET', url: '/api/tools/v1/spoof-checker?domain=example.com', remoteAddress: '198.51.100.30', headers: bearerA });
    const body = expectError(response, 503, 'STORE_UNAVAILABLE');
    expect(body['message']).toMatch(/rate-limit store cannot be reached/);
    expect((await app.inject({ method: 'GET', url: '/api/template/v1', headers: bearerA })).statusCode).toBe(200);
    await app.close();
  });

  it('connecting to a Redis that does not answer fails fast, naming the URL without its password', async () => {
    const started = Date.now();
    await expect(connectRateLimitRedis('redis://:hunter2@127.0.0.1:1')).rejects.toThrow(/cannot reach Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
