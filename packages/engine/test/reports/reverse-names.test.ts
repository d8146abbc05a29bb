/** Reverse names of report sources: found and forward-confirmed, found but not confirmed, none, a DNS failure (never "none"), the cap. */
import { describe, expect, it } from 'vitest';
import type { DnsAnswer, RecordType, Resolver } from '../../src/dns/types.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { lookupReverseNames } from '../../src/reports/reverse-names.js';
import { parseZone } from '../../src/zones/parse.js';

const reverse = `$ORIGIN 2.0.192.in-addr.arpa.
$TTL 300
@ IN SOA ns.test.example. hostmaster.test.example. 1 7200 900 1209600 300
@ IN NS ns.test.example.
1 IN PTR mail.test.example.
2 IN PTR liar.test.example.
`;
const forward = `$ORIGIN test.example.
$TTL 300
@ IN SOA ns hostmaster 1 7200 900 1209600 300
@ IN NS ns
mail IN A 192.0.2.1
liar IN A 198.51.100.7
`;

describe('lookupReverseNames', () => {
  const zones = new ZoneResolver([parseZone(reverse, { file: 'r.zone' }), parseZone(forward, { file: 'f.zone' })]);
  const failing: Resolver = {
    resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
      if (name.startsWith('3.2.0.192')) return Promise.resolve({ kind: 'error', reason: 'timeout' });
      return zones.resolve(name, type);
    },
  };

  it('names each address, and says which names are confirmed', async () => {
    const names = await lookupReverseNames(['192.0.2.1', '192.0.2.2', '192.0.2.9', '192.0.2.3', '192.0.2.1'], failing);
    expect(Object.fromEntries(names)).toEqual({
      '192.0.2.1': { status: 'found', name: 'mail.test.example', confirmed: true },
      '192.0.2.2': { status: 'found', name: 'liar.test.example', confirmed: false },
      '192.0.2.9': { status: 'none' },
      '192.0.2.3': { status: 'error', detail: 'the PTR lookup failed (timeout)' },
    });
  });

  it('looks up at most `max` addresses; the rest are skipped', async () => {
    const names = await lookupReverseNames(['192.0.2.1', '192.0.2.2', '192.0.2.9'], zones, { max: 1 });
    expect(names.size).toBe(3);
    expect(names.get('192.0.2.1')!.status).toBe('found');
    expect(names.get('192.0.2.2')!.status).toBe('skipped');
    expect(names.get('192.0.2.9')!.status).toBe('skipped');
  });
});
