/**
 * Issue 29, items 2 and 3: the monitor routes are limited like every write, and a run of a
 * transport monitor spends the transport budget.
 * - create, PATCH, DELETE, `/run` and redeliver count against the organisation's write limit: past
 *   it, 429 RATE_LIMITED with Retry-After, and nothing done (no monitor made, no run queued, no
 *   delivery added); under it, the same monitor may be changed or run again at once (no cooldown);
 * - at most `maxMonitorsPerOrganization` monitors per organisation (MONITOR_LIMIT_REACHED), another
 *   organisation unaffected, and room again after a delete;
 * - `/run` of a monitor with the transport check counts against the transport check's limit, the
 *   same counter as POST /api/tools/v1/spoof-checker with "checks": ["transport"]; a run without it does not.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_MONITORS_PER_ORGANIZATION } from '../../src/jobs/monitors/monitors.js';
import { newDelivery } from '../../src/jobs/monitors/webhooks.js';
import { DEFAULT_RATE_LIMITS, type RateLimits } from '../../src/http/rate-limits.js';
import type { Stores } from '../../src/store/types.js';
import { bearerA, bearerB, expectError, makeApp } from '../http/helpers.js';
import { checkOver, monitorService, MutableResolver, REJECT, TestClock, WATCHED } from './helpers.js';

const MONITORS = '/api/tools/v1/spoof-checker/monitors';
const CHECK = '/api/tools/v1/spoof-checker';
/** The write limit of these tests: small, so that a burst passes it. */
const WRITES = 4;

describe('monitor routes under the limits', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });

  /** An app with monitors, the given limits, and a count of the checks the scheduler ran. */
  async function setup(limits: Partial<RateLimits>, maxMonitorsPerOrganization?: number) {
    const made = await makeApp();
    await made.app.close();
    const stores: Stores = made.stores;
    const clock = new TestClock(Date.now());
    let checks = 0;
    const inner = checkOver(new MutableResolver(REJECT));
    const monitors = monitorService({
      store: stores.monitors,
      check: (domain, options) => {
        checks++;
        return inner(domain, options);
      },
      clock,
      ...(maxMonitorsPerOrganization !== undefined ? { maxMonitorsPerOrganization } : {}),
    });
    const { app } = await makeApp({ stores, monitors: monitors.service, rateLimits: { ...DEFAULT_RATE_LIMITS, ...limits } });
    cleanup.push(() => monitors.service.close(), () => app.close());
    return { app, stores, monitors, checks: () => checks };
  }

  /** A monitor of org_a made through the store (no write counted), with one past delivery. */
  async function planted(stores: Stores, checks: string[] = []) {
    const now = new Date().toISOString();
    const id = `mon_${Math.random().toString(36).slice(2)}`;
    await stores.monitors.create({
      id, organizationId: 'org_a', domain: `${id}.example`, intervalMinutes: 1440, webhookUrl: 'http://127.0.0.1:9/hook', checks: checks as never,
      sealedSecret: '', machine: { confirmed: null, candidate: null, consecutiveFailures: 0 }, lastResult: null,
      nextRunAt: new Date(Date.now() + 86_400_000).toISOString(), leaseUntil: null, version: 0, createdAt: now, updatedAt: now,
    });
    const delivery = newDelivery({ monitorId: id, organizationId: 'org_a', eventId: 'chg_1', url: 'http://127.0.0.1:9/hook', body: '{}', at: now });
    await stores.monitors.addDelivery(delivery);
    return { id, deliveryId: delivery.id };
  }

  const send = (app: FastifyInstance, method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>, headers: Record<string, string> = bearerA) =>
    app.inject({ method, url, headers, ...(payload !== undefined ? { payload } : {}) });

  function expectRateLimited(response: Awaited<ReturnType<FastifyInstance['inject']>>): void {
    expectError(response, 429, 'RATE_LIMITED');
    expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
  }

  type RouteCase = [name: string, request: (app: FastifyInstance, target: { id: string; deliveryId: string }, i: number) => ReturnType<typeof send>, ok: number];
  const ROUTES: RouteCase[] = [
    ['create', (app, _t, i) => send(app, 'POST', MONITORS, { domain: `burst${i}.example` }), 201],
    ['PATCH', (app, t, i) => send(app, 'PATCH', `${MONITORS}/${t.id}`, { intervalMinutes: 60 + i }), 200],
    ['DELETE', (app, t, i) => send(app, 'DELETE', `${MONITORS}/${i === 0 ? t.id : `mon_missing_${i}`}`), 0],
    ['run', (app, t) => send(app, 'POST', `${MONITORS}/${t.id}/run`), 202],
    ['redeliver', (app, t) => send(app, 'POST', `${MONITORS}/${t.id}/deliveries/${t.deliveryId}/redeliver`), 202],
  ];

  it.each(ROUTES)('%s counts against the organisation write limit: 429 with Retry-After past it, no cooldown before', async (name, request, ok) => {
    const { app, stores } = await setup({ organizationWrites: { max: WRITES, windowMs: 60_000 } });
    const target = await planted(stores);
    const monitorsBefore = (await stores.monitors.list('org_a', { page: 1, limit: 1 })).total;
    const deliveriesBefore = (await stores.monitors.deliveries('org_a', target.id, { page: 1, limit: 1 }))!.total;
    for (let i = 0; i < WRITES; i++) {
      const response = await request(app, target, i);
      // DELETE: the first removes the monitor, the others are 404s (a write that still counts).
      const expected = ok === 0 ? (i === 0 ? 200 : 404) : ok;
      expect(response.statusCode, `${name} #${i + 1}: ${response.body}`).toBe(expected);
    }
    const refused = await request(app, target, WRITES);
    expectRateLimited(refused);
    if (name === 'create') expect((await stores.monitors.list('org_a', { page: 1, limit: 1 })).total).toBe(monitorsBefore + WRITES);
    if (name === 'redeliver') expect((await stores.monitors.deliveries('org_a', target.id, { page: 1, limit: 1 }))!.total).toBe(deliveriesBefore + WRITES);
    // Another organisation has its own allowance.
    expect((await send(app, 'POST', MONITORS, { domain: WATCHED }, bearerB)).statusCode).toBe(201);
  });

  it('caps the monitors of an organisation (MONITOR_LIMIT_REACHED), per organisation, with room again after a delete', async () => {
    expect(MAX_MONITORS_PER_ORGANIZATION).toBe(1_000);
    const { app } = await setup({}, 3);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await send(app, 'POST', MONITORS, { domain: `cap${i}.example` });
      expect(created.statusCode).toBe(201);
      ids.push(created.json().id);
    }
    const refused = await send(app, 'POST', MONITORS, { domain: 'cap3.example' });
    expectError(refused, 409, 'MONITOR_LIMIT_REACHED');
    expect(refused.json().message).toMatch(/3 monitor/);
    expect((await send(app, 'POST', MONITORS, { domain: 'cap3.example' }, bearerB)).statusCode).toBe(201);
    expect((await send(app, 'DELETE', `${MONITORS}/${ids[0]}`)).statusCode).toBe(200);
    expect((await send(app, 'POST', MONITORS, { domain: 'cap3.example' })).statusCode).toBe(201);
  });

  it('holds the cap when creations arrive all at once', async () => {
    const { app, stores } = await setup({}, 5);
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => send(app, 'POST', MONITORS, { domain: `many${i}.example` })));
    expect(responses.filter((r) => r.statusCode === 201)).toHaveLength(5);
    expect(responses.filter((r) => r.statusCode === 409 && r.json().code === 'MONITOR_LIMIT_REACHED')).toHaveLength(15);
    expect((await stores.monitors.list('org_a', { page: 1, limit: 1 })).total).toBe(5);
  });

  it('a run of a transport monitor spends the transport budget, shared with the transport check; other runs do not', async () => {
    const { app, stores, monitors, checks } = await setup({ transportCheck: { max: 2, windowMs: 60_000 } });
    const transport = await planted(stores, ['transport']);
    const plain = await planted(stores);
    expect((await send(app, 'POST', `${MONITORS}/${transport.id}/run`)).statusCode).toBe(202);
    expect((await send(app, 'POST', `${MONITORS}/${transport.id}/run`)).statusCode).toBe(202);
    await monitors.scheduler.idle();
    expect(checks()).toBe(2);
    // The budget is spent: the next run and the transport check are refused before anything is probed.
    expectRateLimited(await send(app, 'POST', `${MONITORS}/${transport.id}/run`));
    expectRateLimited(await send(app, 'POST', CHECK, { domain: WATCHED, checks: ['transport'] }));
    await monitors.scheduler.idle();
    expect(checks()).toBe(2);
    // A monitor without the transport check runs as before (only the write limit applies).
    for (let i = 0; i < 3; i++) expect((await send(app, 'POST', `${MONITORS}/${plain.id}/run`)).statusCode).toBe(202);
    await monitors.scheduler.idle();
    expect(checks()).toBe(5);
  });

  it('the page\'s transport checks spend the same budget (one counter per client network)', async () => {
    const { app, stores, monitors, checks } = await setup({ transportCheck: { max: 2, windowMs: 60_000 } });
    const transport = await planted(stores, ['transport']);
    expect((await app.inject({ method: 'GET', url: `/transport/${WATCHED}?fragment=1` })).statusCode).toBe(200);
    expect((await send(app, 'POST', `${MONITORS}/${transport.id}/run`)).statusCode).toBe(202);
    expectRateLimited(await send(app, 'POST', CHECK, { domain: WATCHED, checks: ['transport'] }));
    expect((await app.inject({ method: 'GET', url: `/transport/${WATCHED}?fragment=1` })).statusCode).toBe(429);
    expectRateLimited(await send(app, 'POST', `${MONITORS}/${transport.id}/run`));
    await monitors.scheduler.idle();
    expect(checks()).toBe(1);
  });

  it('the transport check spends the budget a run then finds empty', async () => {
    const { app, stores, monitors, checks } = await setup({ transportCheck: { max: 1, windowMs: 60_000 } });
    const transport = await planted(stores, ['transport']);
    // A check whose domain does not validate is still counted (the limit runs after validation, before the check).
    const check = await send(app, 'POST', CHECK, { domain: 'not a domain', checks: ['transport'] });
    expect(check.statusCode).not.toBe(429);
    expectRateLimited(await send(app, 'POST', `${MONITORS}/${transport.id}/run`));
    await monitors.scheduler.idle();
    expect(checks()).toBe(0);
  });
});
