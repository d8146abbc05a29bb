/**
 * The alert channels as `serve` wires them (src/jobs/monitors/monitor-setup.ts `startMonitorService`): a
 * monitor run through the in-process scheduler confirms a change, the pump is poked, and the Slack
 * receiver has the alert within 5 s of the run that confirmed it; the lookalike memory and the
 * alert service are there for the routes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startMonitorService } from '../../src/jobs/monitors/monitor-setup.js';
import type { MonitorService } from '../../src/jobs/monitors/monitors.js';
import { MemoryAlertStore } from '../../src/store/alerts-memory.js';
import { MemoryMonitorStore } from '../../src/store/monitors-memory.js';
import { MemoryRememberedLookalikeStore } from '../../src/store/remembered-lookalikes-memory.js';
import { checkOver, MutableResolver, NONE, REJECT, WATCHED } from '../monitors/helpers.js';
import { loopbackLookup, startReceiver, waitFor } from './helpers.js';

describe('alert channels wired as serve wires them', () => {
  let service: MonitorService | undefined;
  let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
  afterEach(async () => {
    await service?.close();
    await receiver?.close();
  });

  it('a change confirmed by scheduled runs reaches a Slack receiver within 5 s', async () => {
    receiver = await startReceiver();
    const resolver = new MutableResolver(REJECT);
    service = await startMonitorService({
      store: new MemoryMonitorStore(),
      check: checkOver(resolver),
      allowPrivateAddresses: true,
      env: {},
      webhooks: { lookup: loopbackLookup, pollMs: 60_000 },
      alerts: { store: new MemoryAlertStore(), lookalikes: new MemoryRememberedLookalikeStore(), publicOrigin: 'https://console.example' },
    });
    expect(service.alerts).toBeDefined();
    expect(service.lookalikes).toBeDefined();
    const created = await service.alerts!.create('org_a', { name: 'slack', kind: 'slack', url: receiver.url });
    expect('channel' in created).toBe(true);
    const monitor = await service.create('org_a', { domain: WATCHED });
    if (!('monitor' in monitor)) throw new Error('monitor refused');
    const scheduler = service.scheduler as unknown as { idle(): Promise<void> };
    const run = async () => {
      await service!.runNow('org_a', monitor.monitor.id);
      await scheduler.idle();
    };
    await run();
    resolver.setDmarc(NONE);
    await run();
    await run();
    const confirmedAt = Date.now();
    // The pump polls once a minute here: only the poke after the commit can make it in time.
    await waitFor(() => receiver!.received.length > 0, 5_000, 'the Slack alert');
    expect(Date.now() - confirmedAt).toBeLessThan(5_000);
    expect(JSON.parse(receiver.received[0]!.body).text).toContain(WATCHED);
  });
});
