/**
 * The monitor routes end to end through `app.inject`, over the real check on a zone the test
 * rewrites, a real webhook receiver on 127.0.0.1 and the memory store: create (secret once, 409 for
 * a second monitor of the domain), read, change, run, history, deliveries, redelivery, delete, and
 * organisation isolation.
 */
import { createHmac } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SIGNATURE_HEADER } from '../../src/jobs/monitors/webhooks.js';
import { bearerA, bearerB, expectError, makeApp } from '../http/helpers.js';
import { checkOver, monitorService, MutableResolver, NONE, REJECT, startReceiver, TestClock, WATCHED } from './helpers.js';

const MONITORS = '/api/tools/v1/spoof-checker/monitors';

describe('monitor routes', () => {
  let app: FastifyInstance;
  let resolver: MutableResolver;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let setup: ReturnType<typeof monitorService>;
  const clock = new TestClock(Date.parse('2025-06-01T00:00:00.000Z'));

  beforeEach(async () => {
    resolver = new MutableResolver(REJECT);
    receiver = await startReceiver();
    const made = await makeApp();
    await made.app.close();
    setup = monitorService({ store: made.stores.monitors, check: checkOver(resolver), clock, allowPrivateAddresses: true });
    ({ app } = await makeApp({ stores: made.stores, monitors: setup.service }));
  });
  afterEach(async () => {
    await app.close();
    await setup.service.close();
    await receiver.close();
  });

  const post = (url: string, payload?: Record<string, unknown>, headers = bearerA) => app.inject({ method: "POST", url, headers, ...(payload !== undefined ? { payload } : {}) });
  const get = (url: string, headers = bearerA) => app.inject({ method: 'GET', url, headers });
  const runAndWait = async (id: string) => {
    const response = await post(`${MONITORS}/${id}/run`);
    expect(response.statusCode).toBe(202);
    await setup.scheduler.idle();
  };

  it('creates a monitor with its secret shown once; a second of the same domain is 409; other organisations see nothing', async () => {
    const created = await post(MONITORS, { domain: `https://${WATCHED.toUpperCase()}/x`, intervalMinutes: 60, webhookUrl: receiver.url });
    expect(created.statusCode).toBe(201);
    const body = created.json();
    expect(body).toMatchObject({ object: 'monitor', domain: WATCHED, intervalMinutes: 60, webhookUrl: receiver.url, checks: [], lastResult: null, state: { status: 'pending' } });
    expect(body.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    const read = await get(`${MONITORS}/${body.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.body).not.toContain(body.secret);
    expect(read.json()).not.toHaveProperty('secret');
    expectError(await post(MONITORS, { domain: WATCHED }), 409, 'MONITOR_EXISTS');
    expectError(await get(`${MONITORS}/${body.id}`, bearerB), 404, 'NOT_FOUND');
    expect((await get(MONITORS, bearerB)).json()).toMatchObject({ monitors: [], total: 0 });
    // Another organisation may watch the same domain.
    expect((await post(MONITORS, { domain: WATCHED }, bearerB)).statusCode).toBe(201);
    const list = (await get(`${MONITORS}?limit=1`)).json();
    expect(list).toMatchObject({ total: 1, page: 1, limit: 1, event: 'monitor.list' });
    expect(list.monitors[0].id).toBe(body.id);
  });

  it.each([
    [{ domain: WATCHED, intervalMinutes: 4 }, 'VALIDATION_FAILED'],
    [{ domain: WATCHED, intervalMinutes: 10_081 }, 'VALIDATION_FAILED'],
    [{ domain: WATCHED, checks: ['smtp'] }, 'VALIDATION_FAILED'],
    [{ domain: WATCHED, extra: 1 }, 'VALIDATION_FAILED'],
    [{ domain: 'not a domain' }, 'INVALID_DOMAIN'],
    [{ domain: WATCHED, webhookUrl: 'ftp://example.com/x' }, 'WEBHOOK_URL_REFUSED'],
  ])('refuses %j with %s', async (payload, code) => {
    expectError(await post(MONITORS, payload), 400, code);
  });

  it('runs, confirms a DMARC change on the second agreeing check, and sends one signed webhook', async () => {
    const { id, secret } = (await post(MONITORS, { domain: WATCHED, webhookUrl: receiver.url })).json();
    await runAndWait(id);
    resolver.setDmarc(NONE);
    await runAndWait(id);
    // One check of the new state is not yet a change.
    expect((await get(`${MONITORS}/${id}`)).json().state.status).toBe('confirming');
    await setup.pump.drain();
    expect(receiver.received).toHaveLength(0);
    await runAndWait(id);
    const history = (await get(`${MONITORS}/${id}/history`)).json();
    expect(history).toMatchObject({ total: 4, page: 1, event: 'monitor.history' });
    expect(history.history.map((e: { type: string }) => e.type)).toEqual(['change', 'check', 'check', 'check']);
    const change = history.history[0];
    expect(change.changes).toEqual(expect.arrayContaining([{ field: 'dmarc.record', before: REJECT, after: NONE }]));
    expect(history.history[1].check).toMatchObject({ outcome: 'checked', verdict: expect.any(String), digest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(history.history[1].check.digest).not.toBe(history.history[3].check.digest);
    // A check keeps its snapshot only when its digest is new (the history of an unchanged domain stays small).
    expect(history.history[1].snapshot).toBeUndefined();
    expect(history.history[2].snapshot).toMatchObject({ kind: 'checked', dmarc: { record: NONE } });
    expect(history.history[3].snapshot).toMatchObject({ kind: 'checked', dmarc: { record: REJECT } });

    await setup.pump.drain();
    expect(receiver.received).toHaveLength(1);
    const [hook] = receiver.received;
    const header = String(hook!.headers[SIGNATURE_HEADER.toLowerCase()]);
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header) ?? [];
    expect(v1).toBe(createHmac('sha256', secret).update(`${t}.${hook!.body}`).digest('hex'));
    const event = JSON.parse(hook!.body);
    expect(event).toMatchObject({ type: 'monitor.changed', monitorId: id, domain: WATCHED, before: { dmarc: { record: REJECT } }, after: { dmarc: { record: NONE } } });
    expect(event.changes).toEqual(expect.arrayContaining([{ field: 'dmarc.record', before: REJECT, after: NONE }]));

    const deliveries = (await get(`${MONITORS}/${id}/deliveries`)).json();
    expect(deliveries.total).toBe(1);
    expect(deliveries.deliveries[0]).toMatchObject({ status: 'delivered', eventId: change.id, attempts: [{ outcome: 'delivered', statusCode: 200 }] });

    const again = await post(`${MONITORS}/${id}/deliveries/${deliveries.deliveries[0].id}/redeliver`);
    expect(again.statusCode).toBe(202);
    expect(again.json()).toMatchObject({ status: 'pending', redeliveryOf: deliveries.deliveries[0].id });
    await setup.pump.drain();
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.body).toBe(hook!.body);
    expectError(await post(`${MONITORS}/${id}/deliveries/whd_nope/redeliver`), 404, 'NOT_FOUND');

    // The URL removed (webhookUrl: null): a redelivery is refused with a clear error, never sent to the old URL.
    expect((await app.inject({ method: 'PATCH', url: `${MONITORS}/${id}`, headers: bearerA, payload: { webhookUrl: null } })).json()).toMatchObject({ webhookUrl: null });
    const nowhere = expectError(await post(`${MONITORS}/${id}/deliveries/${deliveries.deliveries[0].id}/redeliver`), 409, 'NO_WEBHOOK_URL');
    expect(nowhere['message']).toMatch(/has no webhook URL: it was removed \(webhookUrl: null\)/);
    await setup.pump.drain();
    expect(receiver.received).toHaveLength(2);
    expect((await get(`${MONITORS}/${id}/deliveries`)).json().total).toBe(2);
  });

  it('a DNS failure is "could not check": no change until it persists, never "record removed"', async () => {
    const { id } = (await post(MONITORS, { domain: WATCHED, webhookUrl: receiver.url })).json();
    await runAndWait(id);
    resolver.failDmarc = true;
    await runAndWait(id);
    await runAndWait(id);
    let monitor = (await get(`${MONITORS}/${id}`)).json();
    expect(monitor.state).toMatchObject({ status: 'could-not-check', consecutiveFailures: 2 });
    expect(monitor.lastResult).toMatchObject({ outcome: 'could-not-check', verdict: null, reason: expect.stringMatching(/DMARC/) });
    let history = (await get(`${MONITORS}/${id}/history`)).json();
    expect(history.history.filter((e: { type: string }) => e.type === 'change')).toHaveLength(0);
    await runAndWait(id);
    history = (await get(`${MONITORS}/${id}/history`)).json();
    const changes = history.history.filter((e: { type: string }) => e.type === 'change');
    expect(changes).toHaveLength(1);
    expect(changes[0].changes[0]).toEqual({ field: 'state', before: 'checked', after: 'could-not-check' });
    expect(JSON.stringify(changes[0].changes)).not.toMatch(/dmarc\.record/);
    monitor = (await get(`${MONITORS}/${id}`)).json();
    expect(monitor.state.consecutiveFailures).toBe(3);
  });

  it('PATCH changes the interval (and the next slot) and refuses an unknown field; DELETE removes history too', async () => {
    const { id, nextRunAt } = (await post(MONITORS, { domain: WATCHED })).json();
    const patched = await app.inject({ method: 'PATCH', url: `${MONITORS}/${id}`, headers: bearerA, payload: { intervalMinutes: 5, checks: ['transport'] } });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ intervalMinutes: 5, checks: ['transport'] });
    expect(patched.json().nextRunAt).not.toBe(nextRunAt);
    expectError(await app.inject({ method: 'PATCH', url: `${MONITORS}/${id}`, headers: bearerA, payload: { domain: 'x.example' } }), 400, 'VALIDATION_FAILED');
    expectError(await app.inject({ method: 'PATCH', url: `${MONITORS}/${id}`, headers: bearerB, payload: { intervalMinutes: 6 } }), 404, 'NOT_FOUND');
    await runAndWait(id);
    const deleted = await app.inject({ method: 'DELETE', url: `${MONITORS}/${id}`, headers: bearerA });
    expect(deleted.json()).toEqual({ object: 'monitor', id, deleted: true, event: 'monitor.deleted' });
    expectError(await get(`${MONITORS}/${id}/history`), 404, 'NOT_FOUND');
    expectError(await app.inject({ method: 'DELETE', url: `${MONITORS}/${id}`, headers: bearerA }), 404, 'NOT_FOUND');
  });

  it('lists the monitor routes in the OpenAPI document with their schemas', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const path of [MONITORS, `${MONITORS}/{id}`, `${MONITORS}/{id}/run`, `${MONITORS}/{id}/history`, `${MONITORS}/{id}/deliveries`, `${MONITORS}/{id}/deliveries/{deliveryId}/redeliver`]) {
      expect(doc.paths[path], path).toBeDefined();
    }
    expect(JSON.stringify(doc.paths[MONITORS].post.responses['201'])).toMatch(/secret/);
    expect(Object.keys(doc.paths[MONITORS].post.responses)).toContain('409');
  });
});
