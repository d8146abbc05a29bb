/**
 * The private-address guard (table-driven), webhook signing, and delivery to a real receiver on
 * 127.0.0.1: allowed with `allowPrivateAddresses`, refused without it before any connection, retried
 * with exponential backoff inside 24 h, each attempt recorded.
 */
import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { afterAttempt, DeliveryPump, newDelivery, postWebhook, retryDelayMs, signatureHeader, WEBHOOK_RETRY_BASE_MS, WEBHOOK_RETRY_MAX_DELAY_MS, WEBHOOK_RETRY_WINDOW_MS, WEBHOOK_TIMEOUT_MS } from '../../src/jobs/monitors/webhooks.js';
import { forbiddenReason, isForbiddenAddress, resolveAllowedAddress } from '../../packages/engine/src/net/address-guard.js';
import { MemoryMonitorStore } from '../../src/store/monitors-memory.js';
import { startReceiver, TestClock } from './helpers.js';

describe('isForbiddenAddress', () => {
  it.each<[string, boolean]>([
    ['127.0.0.1', true],
    ['127.255.255.254', true],
    ['10.1.2.3', true],
    ['172.16.0.1', true],
    ['172.31.255.255', true],
    ['172.32.0.1', false],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['100.127.255.255', true],
    ['100.128.0.1', false],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['239.255.255.250', true],
    ['255.255.255.255', true],
    ['240.0.0.1', true],
    ['192.0.2.1', true],
    ['198.18.0.1', true],
    ['8.8.8.8', false],
    ['93.184.216.34', false],
    ['::1', true],
    ['::', true],
    ['fe80::1', true],
    ['fc00::1', true],
    ['fd12:3456::1', true],
    ['ff02::1', true],
    ['2001:db8::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['::ffff:8.8.8.8', false],
    ['64:ff9b::10.0.0.1', true],
    ['2606:4700:4700::1111', false],
    ['2a00:1450:4001:81c::200e', false],
    ['not-an-ip', true],
  ])('%s → %s', (ip, forbidden) => {
    expect(isForbiddenAddress(ip)).toBe(forbidden);
    expect(forbiddenReason(ip) !== undefined).toBe(forbidden);
  });

  it('resolves a name and refuses it when any address is forbidden; connects to the checked address', async () => {
    const lookup = async (host: string) =>
      host === 'mixed.test' ? [{ address: '8.8.8.8', family: 4 }, { address: '10.0.0.1', family: 4 }] : [{ address: '2606:4700:4700::1111', family: 6 }];
    expect(await resolveAllowedAddress('mixed.test', false, lookup)).toMatchObject({ ok: false, kind: 'forbidden', address: '10.0.0.1' });
    expect(await resolveAllowedAddress('mixed.test', true, lookup)).toEqual({ ok: true, address: '8.8.8.8', family: 4 });
    expect(await resolveAllowedAddress('public.test', false, lookup)).toEqual({ ok: true, address: '2606:4700:4700::1111', family: 6 });
    expect(await resolveAllowedAddress('[::1]', false, lookup)).toMatchObject({ ok: false, kind: 'forbidden' });
    const failing = async () => {
      throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' });
    };
    expect(await resolveAllowedAddress('nowhere.test', false, failing)).toMatchObject({ ok: false, kind: 'unresolvable', reason: expect.stringMatching(/ENOTFOUND/) });
  });
});

describe('signing and backoff', () => {
  it('signs "<t>.<body>" with HMAC-SHA256 of the secret, as t=…,v1=<hex>', () => {
    const body = '{"type":"monitor.changed"}';
    expect(signatureHeader('whsec_x', 1700000000, body)).toBe(`t=1700000000,v1=${createHmac('sha256', 'whsec_x').update(`1700000000.${body}`).digest('hex')}`);
  });

  it('doubles the wait from the base up to the cap, and stops 24 h after creation', () => {
    expect(WEBHOOK_TIMEOUT_MS).toBe(10_000);
    expect(WEBHOOK_RETRY_WINDOW_MS).toBe(24 * 3600 * 1000);
    expect([1, 2, 3].map(retryDelayMs)).toEqual([WEBHOOK_RETRY_BASE_MS, 2 * WEBHOOK_RETRY_BASE_MS, 4 * WEBHOOK_RETRY_BASE_MS]);
    expect(retryDelayMs(40)).toBe(WEBHOOK_RETRY_MAX_DELAY_MS);
    const delivery = newDelivery({ monitorId: 'm', organizationId: 'o', eventId: 'e', url: 'https://x.example/', body: '{}', at: '2025-01-01T00:00:00.000Z' });
    const failed = { at: '2025-01-01T00:00:00.000Z', outcome: 'http-error' as const, statusCode: 500, durationMs: 10, detail: 'HTTP 500' };
    expect(afterAttempt(delivery, failed)).toEqual({ status: 'pending', nextAttemptAt: new Date(Date.parse(failed.at) + 10 + WEBHOOK_RETRY_BASE_MS).toISOString() });
    expect(afterAttempt(delivery, { ...failed, at: '2025-01-01T23:59:45.000Z' })).toEqual({ status: 'failed', nextAttemptAt: null });
    expect(afterAttempt(delivery, { ...failed, outcome: 'refused-address', statusCode: null })).toEqual({ status: 'failed', nextAttemptAt: null });
    expect(afterAttempt(delivery, { ...failed, outcome: 'delivered', statusCode: 204 })).toEqual({ status: 'delivered', nextAttemptAt: null });
  });
});

describe('delivery to a local receiver', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeEach(async () => {
    receiver = await startReceiver();
  });
  afterEach(() => receiver.close());

  it('with allowPrivateAddresses: POSTs the body once, signed, and records the attempt', async () => {
    const attempt = await postWebhook(receiver.url, '{"a":1}', 'whsec_test', { allowPrivateAddresses: true });
    expect(attempt).toMatchObject({ outcome: 'delivered', statusCode: 200 });
    expect(receiver.received).toHaveLength(1);
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]+)$/.exec(String(receiver.received[0]!.headers['spoof-checker-signature'])) ?? [];
    expect(v1).toBe(createHmac('sha256', 'whsec_test').update(`${t}.{"a":1}`).digest('hex'));
    expect(receiver.received[0]!.headers['content-type']).toBe('application/json');
  });

  it('without it: refused before any connection reaches the receiver', async () => {
    const attempt = await postWebhook(receiver.url, '{"a":1}', 'whsec_test', { allowPrivateAddresses: false });
    expect(attempt).toMatchObject({ outcome: 'refused-address', statusCode: null, detail: expect.stringMatching(/loopback/) });
    // A name that resolves to loopback is refused the same way (no DNS rebinding: the checked address is the one used).
    const named = receiver.url.replace('127.0.0.1', 'hooks.test');
    const viaName = await postWebhook(named, '{}', 's', { allowPrivateAddresses: false, lookup: async () => [{ address: '127.0.0.1', family: 4 }] });
    expect(viaName.outcome).toBe('refused-address');
    expect(receiver.connections()).toBe(0);
    expect(receiver.received).toHaveLength(0);
  });

  it('connects to the checked address, not to a second lookup of the name', async () => {
    let lookups = 0;
    const named = receiver.url.replace('127.0.0.1', 'hooks.test');
    const attempt = await postWebhook(named, '{}', 's', {
      allowPrivateAddresses: true,
      lookup: async () => {
        lookups++;
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    expect(attempt.outcome).toBe('delivered');
    expect(lookups).toBe(1);
    expect(receiver.received[0]!.headers['host']).toMatch(/^hooks\.test:/);
  });

  it('the pump retries a failing receiver with backoff, recording every attempt, until it answers 2xx', async () => {
    const store = new MemoryMonitorStore();
    const clock = new TestClock(Date.parse('2025-01-01T00:00:00.000Z'));
    const pump = new DeliveryPump({ store, secretFor: async () => 'whsec_test', allowPrivateAddresses: true, now: clock.now });
    await store.create({
      id: 'm1', organizationId: 'o1', domain: 'a.example', intervalMinutes: 5, webhookUrl: receiver.url, checks: [], sealedSecret: '', machine: { confirmed: null, candidate: null, consecutiveFailures: 0 },
      lastResult: null, nextRunAt: clock.now().toISOString(), leaseUntil: null, version: 0, createdAt: clock.now().toISOString(), updatedAt: clock.now().toISOString(),
    });
    await store.addDelivery(newDelivery({ monitorId: 'm1', organizationId: 'o1', eventId: 'e1', url: receiver.url, body: '{"n":1}', at: clock.now().toISOString() }));
    receiver.setStatus(503);
    expect(await pump.drain()).toBe(1);
    expect(await pump.drain()).toBe(0); // not due again yet
    clock.advance(WEBHOOK_RETRY_BASE_MS + 1000);
    expect(await pump.drain()).toBe(1);
    receiver.setStatus(204);
    clock.advance(2 * WEBHOOK_RETRY_BASE_MS + 1000);
    expect(await pump.drain()).toBe(1);
    const [delivery] = (await store.deliveries('o1', 'm1', { page: 1, limit: 10 }))!.items;
    expect(delivery).toMatchObject({ status: 'delivered', nextAttemptAt: null });
    expect(delivery!.attempts.map((a) => [a.outcome, a.statusCode])).toEqual([['http-error', 503], ['http-error', 503], ['delivered', 204]]);
    expect(receiver.received.map((r) => r.body)).toEqual(['{"n":1}', '{"n":1}', '{"n":1}']);
  });
});
