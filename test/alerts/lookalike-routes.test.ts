/**
 * `GET …/monitors/{id}/lookalikes` and `PATCH …/monitors/{id}/lookalikes/{domain}` through
 * `app.inject`: the remembered names with their history, worst first; "ours" set and cleared;
 * another organisation's monitor not found; the baseline marker never listed; the OpenAPI document.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InProcessMonitorScheduler, MonitorService } from '../../src/jobs/monitors/monitors.js';
import type { RememberedLookalike } from '../../src/store/remembered-lookalikes.js';
import { bearerA, bearerB, expectError, makeApp } from '../http/helpers.js';
import { checkOver, MutableResolver, REJECT } from '../monitors/helpers.js';

const MONITORS = '/api/tools/v1/spoof-checker/monitors';

const entry = (domain: string, grade: string, registered = true): RememberedLookalike => ({
  monitorId: '',
  organizationId: 'org_a',
  domain,
  unicode: domain,
  firstSeen: '2026-01-01T00:00:00.000Z',
  lastSeen: '2026-01-02T00:00:00.000Z',
  state: { registered, mx: grade === 'high', spf: false, grade },
  pending: null,
  ours: false,
  history: [{ at: '2026-01-02T00:00:00.000Z', change: 'registered', before: 'none', after: grade }],
});

describe('remembered lookalike routes', () => {
  let app: FastifyInstance;
  let monitors: MonitorService;
  let monitorId: string;

  beforeEach(async () => {
    const made = await makeApp();
    await made.app.close();
    const scheduler = new InProcessMonitorScheduler({ store: made.stores.monitors, check: checkOver(new MutableResolver(REJECT)), tickMs: 0 });
    monitors = new MonitorService({ store: made.stores.monitors, scheduler, serverKey: Buffer.alloc(32, 2), allowPrivateAddresses: true, lookalikes: made.stores.rememberedLookalikes });
    ({ app } = await makeApp({ stores: made.stores, monitors }));
    monitorId = (await app.inject({ method: 'POST', url: MONITORS, headers: bearerA, payload: { domain: 'brand.example', checks: ['lookalikes'] } })).json().id;
    await made.stores.rememberedLookalikes.save([
      { ...entry('', 'none', false), monitorId },
      { ...entry('brand1.example', 'medium'), monitorId },
      { ...entry('brand2.example', 'high'), monitorId },
      { ...entry('gone.example', 'none', false), monitorId },
    ]);
  });
  afterEach(async () => {
    await app.close();
    await monitors.close();
  });

  it('lists the names worst first, with their history; marks one ours and back', async () => {
    const listed = await app.inject({ method: 'GET', url: `${MONITORS}/${monitorId}/lookalikes`, headers: bearerA });
    expect(listed.statusCode).toBe(200);
    const body = listed.json();
    expect(body).toMatchObject({ total: 3, page: 1, event: 'monitor.lookalikes' });
    expect(body.lookalikes.map((l: { domain: string }) => l.domain)).toEqual(['brand2.example', 'brand1.example', 'gone.example']);
    expect(body.lookalikes[0]).toMatchObject({ object: 'lookalike', firstSeen: '2026-01-01T00:00:00.000Z', state: { registered: true, mx: true, grade: 'high' }, ours: false, history: [{ change: 'registered' }] });

    const marked = await app.inject({ method: 'PATCH', url: `${MONITORS}/${monitorId}/lookalikes/BRAND1.example`, headers: bearerA, payload: { ours: true } });
    expect(marked.statusCode, marked.body).toBe(200);
    expect(marked.json()).toMatchObject({ domain: 'brand1.example', ours: true });
    const again = (await app.inject({ method: 'GET', url: `${MONITORS}/${monitorId}/lookalikes`, headers: bearerA })).json();
    expect(again.lookalikes.find((l: { domain: string }) => l.domain === 'brand1.example').ours).toBe(true);
    expect((await app.inject({ method: 'PATCH', url: `${MONITORS}/${monitorId}/lookalikes/brand1.example`, headers: bearerA, payload: { ours: false } })).json().ours).toBe(false);
  });

  it('refuses another organisation, an unknown name and a bad one', async () => {
    expectError(await app.inject({ method: 'GET', url: `${MONITORS}/${monitorId}/lookalikes`, headers: bearerB }), 404, 'NOT_FOUND');
    expectError(await app.inject({ method: 'PATCH', url: `${MONITORS}/${monitorId}/lookalikes/brand1.example`, headers: bearerB, payload: { ours: true } }), 404, 'NOT_FOUND');
    expectError(await app.inject({ method: 'PATCH', url: `${MONITORS}/${monitorId}/lookalikes/other.example`, headers: bearerA, payload: { ours: true } }), 404, 'NOT_FOUND');
    expectError(await app.inject({ method: 'PATCH', url: `${MONITORS}/${monitorId}/lookalikes/not%20a%20name`, headers: bearerA, payload: { ours: true } }), 400, 'INVALID_DOMAIN');
    expectError(await app.inject({ method: 'PATCH', url: `${MONITORS}/${monitorId}/lookalikes/brand1.example`, headers: bearerA, payload: { ours: 'yes' } }), 400, 'VALIDATION_FAILED');
  });

  it('a deleted monitor forgets its lookalikes; the routes are in the OpenAPI document', async () => {
    await app.inject({ method: 'DELETE', url: `${MONITORS}/${monitorId}`, headers: bearerA });
    expect(await monitors.lookalikes!.all(monitorId)).toEqual([]);
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.paths[`${MONITORS}/{id}/lookalikes`].get.tags).toEqual(['monitors']);
    expect(doc.paths[`${MONITORS}/{id}/lookalikes/{domain}`].patch).toBeDefined();
  });
});
