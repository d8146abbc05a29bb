/**
 * Monitors and DNSSEC: a result's DNSSEC status and "signatures expire within
 * SIGNATURE_EXPIRY_WARNING_DAYS" are part of the snapshot, so a zone about to expire its signatures
 * is a change worth an alert days before validating resolvers turn it bogus. A result that was not
 * validated leaves the snapshot (and its digest) as it was.
 */
import { describe, expect, it } from 'vitest';
import { checkDomain } from '../../packages/engine/src/check.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';
import { changesBetween, digestOf, SIGNATURE_EXPIRY_WARNING_DAYS, snapshotOfResult } from '../../src/jobs/monitors/monitor-changes.js';
import { FIXTURE_ZONES } from '../cli/helpers.js';

describe('DNSSEC in monitor snapshots', () => {
  it('alerts on signatures about to expire, and leaves unvalidated results alone', async () => {
    const resolver = new ZoneResolver(await loadZoneDirectory(FIXTURE_ZONES));
    const result = await checkDomain('p-reject.example', { resolver, now: () => new Date('2030-01-01T00:00:00Z') });
    const plain = snapshotOfResult(result, false);
    expect(plain.kind === 'checked' && plain.dnssec).toBe(undefined); // not-checked: nothing added
    const withExpiry = (days: number) => ({
      ...result,
      dnssec: { status: 'secure' as const, reason: { code: null, text: 'ok' }, rrsets: [], signaturesExpire: new Date(Date.parse('2030-01-01T00:00:00Z') + days * 86_400_000).toISOString() },
    });
    const far = snapshotOfResult(withExpiry(30), false);
    const near = snapshotOfResult(withExpiry(SIGNATURE_EXPIRY_WARNING_DAYS - 1), false);
    expect(far.kind === 'checked' && far.dnssec).toEqual({ status: 'secure', expiring: false });
    expect(near.kind === 'checked' && near.dnssec).toEqual({ status: 'secure', expiring: true });
    expect(digestOf(far)).not.toBe(digestOf(near));
    expect(changesBetween(far, near)).toEqual([{ field: 'dnssec.expiring', before: false, after: true }]);
    expect(changesBetween(plain, far).map((c) => c.field)).toEqual(['dnssec.status', 'dnssec.expiring']);
  });
});
