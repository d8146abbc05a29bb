/**
 * The public history page (`--public-history`) and the demo's monitor: without the flag there is
 * neither link nor page (monitors stay private); with it the result page links to
 * `/history/<domain>`, which shows checks and changes and nothing about who watches.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { seedDemoMonitor } from '../../src/jobs/monitors/monitor-setup.js';
import { serveConfig } from '../../src/cli/serve.js';
import { bearerA, makeApp } from '../http/helpers.js';
import { checkOver, monitorService, MutableResolver, NONE, REJECT, TestClock, WATCHED } from './helpers.js';

describe('public history page', () => {
  const apps: FastifyInstance[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
  });

  async function appWith(publicHistory: boolean) {
    const resolver = new MutableResolver(REJECT);
    const made = await makeApp();
    await made.app.close();
    const clock = new TestClock(Date.parse('2025-06-01T00:00:00.000Z'));
    const setup = monitorService({ store: made.stores.monitors, check: checkOver(resolver), clock });
    const { app } = await makeApp({ stores: made.stores, monitors: setup.service, publicHistory, check: (domain) => checkOver(resolver)(domain, { checks: [] }) });
    apps.push(app);
    const created = (await app.inject({ method: 'POST', url: '/api/tools/v1/spoof-checker/monitors', headers: bearerA, payload: { domain: WATCHED, webhookUrl: 'http://127.0.0.1:9/hook' } })).json();
    for (const dmarc of [REJECT, NONE, NONE]) {
      resolver.setDmarc(dmarc);
      await app.inject({ method: 'POST', url: `/api/tools/v1/spoof-checker/monitors/${created.id}/run`, headers: bearerA });
      await setup.scheduler.idle();
    }
    return app;
  }

  it('is off by default: no link on the result page, no page', async () => {
    const app = await appWith(false);
    const result = await app.inject({ method: 'GET', url: `/check/${WATCHED}` });
    expect(result.statusCode).toBe(200);
    expect(result.body).not.toContain('/history/');
    expect((await app.inject({ method: 'GET', url: `/history/${WATCHED}` })).statusCode).toBe(404);
  });

  it('with --public-history: the result page links to it; it lists checks and the change, not the webhook or organisation', async () => {
    const app = await appWith(true);
    const result = await app.inject({ method: 'GET', url: `/check/${WATCHED}` });
    expect(result.body).toContain(`href="/history/${WATCHED}"`);
    const page = await app.inject({ method: 'GET', url: `/history/${WATCHED}` });
    expect(page.statusCode).toBe(200);
    expect(page.body.match(/class="history-check"/g)).toHaveLength(3);
    expect(page.body.match(/class="history-change"/g)).toHaveLength(1);
    expect(page.body).toContain('dmarc.record');
    expect(page.body).not.toContain('127.0.0.1:9');
    expect(page.body).not.toContain('org_a');
    expect((await app.inject({ method: 'GET', url: '/history/unwatched.example' })).statusCode).toBe(404);
  });

  it('serve reads --public-history and --allow-private-addresses (both off by default)', () => {
    expect(serveConfig([], {})).toMatchObject({ publicHistory: false, allowPrivateAddresses: false });
    expect(serveConfig(['--public-history', '--allow-private-addresses'], {})).toMatchObject({ publicHistory: true, allowPrivateAddresses: true });
  });
});

describe('the demo monitor', () => {
  it('has three checks and one confirmed change, and is created once', async () => {
    const made = await makeApp();
    await made.app.close();
    const clock = new TestClock(Date.parse('2025-06-01T00:00:00.000Z'));
    const check = checkOver(new MutableResolver(NONE));
    const { service } = monitorService({ store: made.stores.monitors, check, clock });
    await seedDemoMonitor(service, 'org_a', WATCHED, check, clock.now());
    await seedDemoMonitor(service, 'org_a', WATCHED, check, clock.now());
    const list = await made.stores.monitors.list('org_a', { page: 1, limit: 10 });
    expect(list.total).toBe(1);
    const history = await made.stores.monitors.history('org_a', list.items[0]!.id, { page: 1, limit: 10 });
    expect(history!.items.map((e) => e.type)).toEqual(['change', 'check', 'check', 'check']);
    expect(list.items[0]!.lastResult?.outcome).toBe('checked');
  });
});
