/**
 * A check of a name that does not exist must not relay a burst of queries to the domain's servers
 * ("water torture"): RFC 8020 §2, nothing exists below an NXDOMAIN name, so no DKIM selector is
 * asked for under it. Queries are counted at the resolver the check is given.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkDomain } from '../../src/check.js';
import { KNOWN_SELECTORS } from '../../src/dkim/selectors.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import type { DnsAnswer, RecordType, Resolver } from '../../src/dns/types.js';
import { loadZoneDirectory } from '../../src/zones/load.js';

const zones = new ZoneResolver(await loadZoneDirectory(new URL('../../../../fixtures/zones', import.meta.url).pathname));

/** Every query the check sends, in order. */
class CountingResolver implements Resolver {
  readonly queries: string[] = [];
  async resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    this.queries.push(`${name} ${type}`);
    return zones.resolve(name, type);
  }
}

/** Most queries a check of a nonexistent subdomain may send (it used to send 47, 38 of them DKIM probes). */
const MAX_QUERIES_FOR_A_MISSING_NAME = 12;

describe('a name that does not exist', () => {
  it('a random nonexistent subdomain costs a handful of queries and no DKIM probe under it', async () => {
    const label = `r${randomBytes(6).toString('hex')}`;
    const resolver = new CountingResolver();
    const result = await checkDomain(`${label}.p-reject.example`, { resolver });
    expect(resolver.queries.length).toBeLessThanOrEqual(MAX_QUERIES_FOR_A_MISSING_NAME);
    expect(resolver.queries.filter((query) => query.includes('._domainkey.'))).toEqual([]);
    // Known absent (NXDOMAIN), not failed: the summary says "none", the details say nothing was probed.
    expect(result.dkim.published).toBe(false);
    expect(result.details.dkim.selectorsProbed).toEqual([]);
    expect(result.mx.published).toBe(false);
  });

  it('a name that exists is still probed with every built-in selector', async () => {
    const resolver = new CountingResolver();
    await checkDomain('p-reject.example', { resolver });
    const probes = resolver.queries.filter((query) => query.includes('._domainkey.'));
    expect(probes.length).toBeGreaterThanOrEqual(KNOWN_SELECTORS.length);
  });
});
