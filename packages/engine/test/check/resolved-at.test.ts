/**
 * `resolvedAt` without an injected clock: the time of the check in ISO 8601, the date formatted once
 * per second and the milliseconds added (check.ts `isoTimestampNow`). Across a second, a day and a
 * year boundary, it must equal `new Date().toISOString()` for the same instant.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkDomain } from '../../src/check.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { loadZoneDirectory } from '../../src/zones/load.js';

const zones = new ZoneResolver(await loadZoneDirectory(new URL('../../../../fixtures/zones', import.meta.url).pathname));

describe('checkDomain resolvedAt', () => {
  afterEach(() => vi.useRealTimers());

  it.each([
    '2026-12-31T23:59:59.998Z',
    '2026-12-31T23:59:59.999Z',
    '2027-01-01T00:00:00.000Z',
    '2027-01-01T00:00:00.007Z',
    '2027-01-01T00:00:01.050Z',
  ])('is %s when the clock says so', async (instant) => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date(instant));
    const result = await checkDomain('p-reject.example', { resolver: zones });
    expect(result.resolvedAt).toBe(instant);
  });
});
