/**
 * The alert channel routes through `app.inject` (real receivers on 127.0.0.1 for the tests sent):
 * create (a webhook's secret once; the target never shown again, only its host), list, read,
 * change, send a test, delete; refusals from the one error catalogue; another organisation's
 * channel is not found; the OpenAPI document has them.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AlertService } from '../../src/jobs/monitors/alerts.js';
import { MonitorService } from '../../src/jobs/monitors/monitors.js';
import { InProcessMonitorScheduler } from '../../src/jobs/monitors/monitors.js';
import { bearerA, bearerB, expectError, makeApp } from '../http/helpers.js';
import { checkOver, MutableResolver, REJECT } from '../monitors/helpers.js';
import { loopbackLookup, startReceiver } from './helpers.js';

const CHANNELS = '/api/tools/v1/spoof-checker/alert-channels';

describe('alert channel routes', () => {
  let app: FastifyInstance;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let monitors: MonitorService;

  beforeEach(async () => {
    receiver = await startReceiver();
    const made = await makeApp();
    await made.app.close();
    const serverKey = Buffer.alloc(32, 3);
    const alerts = new AlertService({ store: made.stores.alerts, serverKey, allowPrivateAddresses: true, lookup: loopbackLookup, publicOrigin: 'https://console.example', timeoutMs: 4_000 });
    const scheduler = new InProcessMonitorScheduler({ store: made.stores.monitors, check: checkOver(new MutableResolver(REJECT)), tickMs: 0 });
    monitors = new MonitorService({ store: made.stores.monitors, scheduler, serverKey, allowPrivateAddresses: true, alerts });
    ({ app } = await makeApp({ stores: made.stores, monitors }));
  });
  afterEach(async () => {
    await app.close();
    await monitors.close();
    await receiver.close();
  });

  const post = (url: string, payload?: Record<string, unknown>, headers = bearerA) => app.inject({ method: 'POST', url, headers, ...(payload !== undefined ? { payload } : {}) });
  const get = (url: string, headers = bearerA) => app.inject({ method: 'GET', url, headers });

  it('creates, lists, reads, changes, tests and deletes a channel; the target is shown only as its host', async () => {
    const created = await post(CHANNELS, { name: 'Security on Slack', kind: 'slack', url: `${receiver.url}?token=T0-secret-path`, events: ['authentication', 'lookalikes'] });
    expect(created.statusCode, created.body).toBe(201);
    const body = created.json();
    expect(body).toMatchObject({ object: 'alert_channel', kind: 'slack', name: 'Security on Slack', targetHost: new URL(receiver.url).host, recipients: [], rules: { events: ['authentication', 'lookalikes'], domains: [] }, enabled: true, lastTest: null, secret: null });
    expect(created.body).not.toContain('T0-secret-path');

    const hook = (await post(CHANNELS, { name: 'Our receiver', kind: 'webhook', url: receiver.url, domains: ['Example.COM'] })).json();
    expect(hook.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(hook.rules).toEqual({ events: ['authentication', 'availability', 'transport', 'bimi', 'dnssec', 'reports', 'lookalikes'], domains: ['example.com'] });

    const list = (await get(CHANNELS)).json();
    expect(list).toMatchObject({ total: 2, emailConfigured: false, event: 'alert_channel.list' });
    expect(list.channels.map((c: { id: string }) => c.id)).toEqual([body.id, hook.id]);
    expect(JSON.stringify(list)).not.toContain(hook.secret);
    expect(JSON.stringify(list)).not.toContain('T0-secret-path');

    const patched = await app.inject({ method: 'PATCH', url: `${CHANNELS}/${body.id}`, headers: bearerA, payload: { enabled: false, events: ['reports'] } });
    expect(patched.json()).toMatchObject({ enabled: false, rules: { events: ['reports'] } });

    const tested = await post(`${CHANNELS}/${body.id}/test`, { domain: 'example.com' });
    expect(tested.statusCode).toBe(200);
    expect(tested.json()).toMatchObject({ object: 'alert_test', channelId: body.id, delivered: true, attempt: { outcome: 'delivered', statusCode: 200 } });
    expect(receiver.received.at(-1)!.url).toContain('token=T0-secret-path');
    expect((await get(`${CHANNELS}/${body.id}`)).json().lastTest).toMatchObject({ outcome: 'delivered' });
    // A test sends at once, outside the queue: once every 10 s per channel.
    const again = expectError(await post(`${CHANNELS}/${body.id}/test`, {}), 429, 'RATE_LIMITED');
    expect(again['retryAfter']).toBeGreaterThan(0);
    expect(receiver.received).toHaveLength(1);

    expectError(await get(`${CHANNELS}/${body.id}`, bearerB), 404, 'NOT_FOUND');
    expectError(await post(`${CHANNELS}/${body.id}/test`, {}, bearerB), 404, 'NOT_FOUND');
    expectError(await app.inject({ method: 'DELETE', url: `${CHANNELS}/${body.id}`, headers: bearerB }), 404, 'NOT_FOUND');
    expect((await app.inject({ method: 'DELETE', url: `${CHANNELS}/${body.id}`, headers: bearerA })).json()).toMatchObject({ deleted: true, event: 'alert_channel.deleted' });
    expectError(await get(`${CHANNELS}/${body.id}`), 404, 'NOT_FOUND');
  });

  it('refuses what cannot work, with the catalogue\'s codes', async () => {
    expectError(await post(CHANNELS, { name: 'mail', kind: 'email', recipients: ['a@example.com'] }), 409, 'ALERT_EMAIL_NOT_CONFIGURED');
    expectError(await post(CHANNELS, { name: 'no url', kind: 'teams' }), 400, 'ALERT_CHANNEL_REFUSED');
    expectError(await post(CHANNELS, { name: 'ftp', kind: 'slack', url: 'ftp://files.example/x' }), 400, 'ALERT_CHANNEL_REFUSED');
    expectError(await post(CHANNELS, { name: 'creds', kind: 'slack', url: 'https://user:pw@hooks.example/x' }), 400, 'ALERT_CHANNEL_REFUSED');
    expectError(await post(CHANNELS, { name: 'bad domain', kind: 'slack', url: receiver.url, domains: ['not a domain'] }), 400, 'ALERT_CHANNEL_REFUSED');
    expectError(await post(CHANNELS, { name: 'bad event', kind: 'slack', url: receiver.url, events: ['everything'] }), 400, 'VALIDATION_FAILED');
    expectError(await post(CHANNELS, { name: 'x', kind: 'pager', url: receiver.url }), 400, 'VALIDATION_FAILED');
    for (let i = 0; i < 20; i++) expect((await post(CHANNELS, { name: `c${i}`, kind: 'slack', url: receiver.url })).statusCode).toBe(201);
    expectError(await post(CHANNELS, { name: 'one too many', kind: 'slack', url: receiver.url }), 409, 'ALERT_CHANNEL_LIMIT_REACHED');
  });

  it('is in the OpenAPI document under the alerts tag', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining([CHANNELS, `${CHANNELS}/{id}`, `${CHANNELS}/{id}/test`]));
    expect(doc.paths[CHANNELS].post.tags).toEqual(['alerts']);
  });
});
