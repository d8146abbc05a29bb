import { describe, expect, it } from 'vitest';
import { discoverDmarc, effectivePolicy } from '../../src/dmarc/index.js';
import { TestResolver, a, txt } from '../spf/zones.js';

async function policyOf(name: string, record: string) {
  const resolver = new TestResolver([txt('_dmarc.example.com', record), a('example.com', '198.51.100.1'), a('www.example.com', '198.51.100.1')]);
  return effectivePolicy(name, await discoverDmarc(name, resolver), resolver);
}

describe('effectivePolicy: where each policy value was read from (RFC 9989 §4.7 defaults)', () => {
  it.each([
    ['example.com', 'v=DMARC1; p=reject', { applied: 'p', subdomain: 'p', nonExistent: 'p' }, 'reject'],
    ['ghost.example.com', 'v=DMARC1; p=reject', { applied: 'p', subdomain: 'p', nonExistent: 'p' }, 'reject'],
    ['ghost.example.com', 'v=DMARC1; p=reject; sp=none', { applied: 'sp', subdomain: 'sp', nonExistent: 'sp' }, 'none'],
    ['ghost.example.com', 'v=DMARC1; p=none; np=reject', { applied: 'np', subdomain: 'p', nonExistent: 'np' }, 'reject'],
    ['www.example.com', 'v=DMARC1; p=quarantine; np=reject', { applied: 'p', subdomain: 'p', nonExistent: 'np' }, 'quarantine'],
  ] as const)('%s under %s', async (name, record, sources, policy) => {
    const result = await policyOf(name, record);
    expect(result.sources).toEqual(sources);
    expect(result.policy).toBe(policy);
  });

  it('reads aspf, relaxed by default', async () => {
    expect((await policyOf('example.com', 'v=DMARC1; p=reject')).spfAlignment).toBe('r');
    expect((await policyOf('example.com', 'v=DMARC1; p=reject; aspf=s')).spfAlignment).toBe('s');
  });
});
