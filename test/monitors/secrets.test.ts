/**
 * Webhook secrets at rest: sealed with AES-256-GCM under the server key, opened only with that key;
 * the server key from SPOOF_CHECKER_SECRET_KEY or, without it, made once by the store. And the run
 * id of a BullMQ scheduler job, read from its id.
 */
import { describe, expect, it } from 'vitest';
import { slotOfJobId } from '../../src/jobs/monitors/monitor-queue.js';
import { keyFromText, newWebhookSecret, openSecret, sealSecret } from '../../src/jobs/monitors/monitor-secrets.js';
import { serverKeyFor } from '../../src/jobs/monitors/monitors.js';
import { MemoryMonitorStore } from '../../src/store/monitors-memory.js';

describe('webhook secrets', () => {
  it('are 256 random bits, sealed so that the stored form does not contain them, and open only with the same key', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(newWebhookSecret()).not.toBe(secret);
    const key = keyFromText('server key');
    const sealed = sealSecret(secret, key);
    expect(sealed).not.toContain(secret.slice(6));
    expect(sealSecret(secret, key)).not.toBe(sealed); // a fresh IV each time
    expect(openSecret(sealed, key)).toBe(secret);
    expect(openSecret(sealed, keyFromText('another key'))).toBeUndefined();
    expect(openSecret(`${sealed.slice(0, -2)}AA`, key)).toBeUndefined(); // tampered: the tag fails
    expect(openSecret('not sealed', key)).toBeUndefined();
  });

  it('the server key: from the variable when set, else made once by the store', async () => {
    const store = new MemoryMonitorStore();
    expect(await serverKeyFor(store, 'configured')).toEqual(keyFromText('configured'));
    const made = await serverKeyFor(store, undefined);
    expect(made).toHaveLength(32);
    expect(await serverKeyFor(store, '')).toEqual(made);
  });
});

describe('slotOfJobId', () => {
  it.each<[string | undefined, number | undefined]>([
    ['repeat:mon_1:1700000000000', 1700000000000],
    ['repeat:mon_a:b:42', 42],
    ['manual-123', undefined],
    ['repeat:mon_1:', undefined],
    [undefined, undefined],
  ])('%s → %s', (id, slot) => {
    expect(slotOfJobId(id)).toBe(slot);
  });
});
