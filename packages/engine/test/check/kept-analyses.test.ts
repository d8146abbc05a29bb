/**
 * Re-checking gives the same answer: every fixture domain (and a name under it) checked a first,
 * second and third time over one warm cache, so that the third check replays the SPF analysis kept
 * at the second (packages/engine/src/spf/analyze.ts) and reuses its shared-infrastructure report
 * (packages/engine/src/check.ts), gives the result a fresh check gives (a `ZoneResolver` of its own,
 * where nothing is kept: a resolver that only waits, which a replay never compares), field for field
 * apart from the clock, and asks the same DNS questions.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkDomain } from '../../src/check.js';
import { CachingResolver } from '../../src/dns/cache.js';
import type { DnsAnswer, RecordType, Resolver } from '../../src/dns/types.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { isSpoofCheckError } from '../../src/errors.js';
import { loadZoneDirectory } from '../../src/zones/load.js';

const DIR = new URL('../../../../fixtures/zones', import.meta.url).pathname;
const zones = new ZoneResolver(await loadZoneDirectory(DIR));
const DOMAINS = readdirSync(DIR)
  .filter((file) => file.endsWith('.zone'))
  .map((file) => file.slice(0, -'.zone'.length));

/** The zones, answering only through promises: nothing is replayed over it, so each check is fresh. */
const waiting: Resolver = { resolve: <T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> => zones.resolve(name, type) };

/** Whether the last check's SPF analysis was a kept one (frozen: see KeptAnalysis), when it gave a verdict. */
let lastSpfKept: boolean | null = null;

/** What a check says, without what depends on the clock or on how warm the cache was. */
async function outcome(name: string, resolver: Resolver): Promise<unknown> {
  lastSpfKept = null;
  try {
    const result = await checkDomain(name, { resolver, source: 'fixture-zones', now: () => new Date('2026-11-27T00:00:00Z') });
    lastSpfKept = Object.isFrozen(result.details.spf.records);
    const { responseTimeMs: _time, ...rest } = result as typeof result & { responseTimeMs?: number };
    const details = { ...rest.details, dns: { ...rest.details.dns, cacheHits: 0, memoHits: 0, elapsedMs: 0 } };
    return JSON.parse(JSON.stringify({ ...rest, details }));
  } catch (error) {
    if (isSpoofCheckError(error)) return { error: error.code, message: error.message };
    throw error;
  }
}

describe('a domain checked again over a warm cache gets the answer a fresh check gives', () => {
  it.each(DOMAINS.flatMap((domain) => [domain, `mail.${domain}`]))('%s', async (name) => {
    const cache = new CachingResolver(zones);
    const fresh = await outcome(name, waiting);
    for (let time = 1; time <= 3; time++) expect(await outcome(name, cache), `check ${time}`).toEqual(fresh);
    // The third check did replay a kept analysis (when the name got a verdict at all).
    if (lastSpfKept !== null) expect(lastSpfKept, 'the third check replayed the kept SPF analysis').toBe(true);
  });
});
