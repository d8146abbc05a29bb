import { describe, expect, it } from 'vitest';
import { FaultyResolver } from '../../src/dns/faults.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { checkHost } from '../../src/spf/index.js';

const zones = new ZoneResolver([
  {
    origin: 'example.com',
    records: [
      { name: 'example.com', type: 'TXT', ttl: 300, data: ['v=spf1 include:esp.example.com -all'] },
      { name: 'esp.example.com', type: 'TXT', ttl: 300, data: ['v=spf1 a:mail.example.com -all'] },
      { name: 'mail.example.com', type: 'A', ttl: 300, data: '198.51.100.1' },
    ],
  },
]);

// Each row: which lookup fails, and the query a temperror must name, as a value (not only in words).
describe('checkHost names the failed query of a temperror', () => {
  it.each([
    ['the record of the domain itself', 'example.com', 'TXT', 'servfail'],
    ['an include target, through the include', 'esp.example.com', 'TXT', 'timeout'],
    ['an a: mechanism two levels down', 'mail.example.com', 'A', 'refused'],
  ] as const)('%s', async (_why, name, type, kind) => {
    const fault = kind === 'timeout' ? { kind: 'drop' as const } : { kind };
    const resolver = new FaultyResolver(zones, [{ name, type, fault }], { dropAfterMs: 1 });
    const result = await checkHost({ ip: '192.0.2.1', domain: 'example.com', sender: 'a@example.com' }, { resolver });
    expect(result.result).toBe('temperror');
    expect(result.failedQuery).toMatchObject({ name, type, reason: kind });
  });
});
