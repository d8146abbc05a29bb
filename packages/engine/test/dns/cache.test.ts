/**
 * CachingResolver: what is kept and for how long (with an injected clock, no sleeps), negative
 * caching, no caching of failures, single-flight, counters and the size bound.
 */
import { describe, expect, it } from 'vitest';
import { CachingResolver, DEFAULT_CACHE_TTL_SECONDS, DEFAULT_MAX_TTL_SECONDS, DEFAULT_NEGATIVE_TTL_SECONDS, type CacheOptions } from '../../src/dns/cache.js';
import { FaultyResolver } from '../../src/dns/faults.js';
import type { DnsAnswer } from '../../src/dns/types.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { FixedResolver, InstrumentedResolver, ZONES } from './helpers.js';

const OPTIONS: CacheOptions = { maxEntries: 100, defaultTtlSeconds: 30, negativeTtlSeconds: 10, maxTtlSeconds: 600 };

/** A clock the test moves by hand. */
function fakeClock(start = 1_000_000): { now: () => number; advance: (seconds: number) => void } {
  let time = start;
  return { now: () => time, advance: (seconds) => void (time += seconds * 1000) };
}

/** Zones, with a counter of what reaches them. */
function zones(): InstrumentedResolver {
  return new InstrumentedResolver(new ZoneResolver(ZONES));
}

describe('CachingResolver: hits and misses', () => {
  it('asks upstream once, then answers from the cache and says so', async () => {
    const upstream = zones();
    const cache = new CachingResolver(upstream, OPTIONS);
    const first = await cache.lookup('mx1.example.com', 'A');
    const second = await cache.lookup('MX1.example.COM.', 'A');
    expect(first).toMatchObject({ fromCache: false, source: 'upstream', answer: { kind: 'records', records: ['192.0.2.1'] } });
    expect(second).toMatchObject({ fromCache: true, source: 'cache', answer: { kind: 'records', records: ['192.0.2.1'] } });
    expect(upstream.calls).toEqual(['A mx1.example.com']);
    expect(cache.stats()).toEqual({ hits: 1, misses: 1, inflightJoins: 0, size: 1 });
  });

  it('keeps names and types apart', async () => {
    const upstream = zones();
    const cache = new CachingResolver(upstream, OPTIONS);
    await cache.resolve('mx1.example.com', 'A');
    await cache.resolve('mx1.example.com', 'AAAA');
    await cache.resolve('example.com', 'A');
    expect(upstream.calls).toHaveLength(3);
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 3, size: 3 });
  });
});

describe('CachingResolver: TTLs', () => {
  it("keeps records for the answer's TTL, and reports the TTL left", async () => {
    const clock = fakeClock();
    const upstream = zones();
    const cache = new CachingResolver(upstream, { ...OPTIONS, now: clock.now });
    await cache.resolve('mx1.example.com', 'A'); // TTL 120 in the zone
    clock.advance(100);
    expect(await cache.lookup('mx1.example.com', 'A')).toMatchObject({ fromCache: true, answer: { ttl: 20 } });
    clock.advance(19.5);
    expect(await cache.lookup('mx1.example.com', 'A')).toMatchObject({ fromCache: true, answer: { ttl: 1 } });
    clock.advance(0.5);
    expect(await cache.lookup('mx1.example.com', 'A')).toMatchObject({ fromCache: false, answer: { ttl: 120 } });
    expect(upstream.calls).toHaveLength(2);
  });

  it.each([
    ['records without a TTL: the default', { kind: 'records', records: ['192.0.2.1'] }, 30],
    ['records with a TTL over the cap: the cap', { kind: 'records', records: ['192.0.2.1'], ttl: 86_400 }, 600],
    ['NXDOMAIN with the SOA minimum (RFC 2308 §5)', { kind: 'nxdomain', ttl: 45 }, 45],
    ['NXDOMAIN without a TTL: the negative default', { kind: 'nxdomain' }, 10],
    ['NODATA with a TTL', { kind: 'nodata', ttl: 5 }, 5],
    ['NODATA without a TTL: the negative default', { kind: 'nodata' }, 10],
    ['NODATA with a TTL over the cap: the cap', { kind: 'nodata', ttl: 10_000 }, 600],
  ] as [string, DnsAnswer, number][])('%s: kept %i s', async (_label, answer, seconds) => {
    const clock = fakeClock();
    const upstream = new FixedResolver(answer);
    const cache = new CachingResolver(upstream, { ...OPTIONS, now: clock.now });
    await cache.resolve('example.com', 'A');
    clock.advance(seconds - 0.001);
    expect((await cache.lookup('example.com', 'A')).fromCache).toBe(true);
    clock.advance(0.001);
    expect((await cache.lookup('example.com', 'A')).fromCache).toBe(false);
    expect(upstream.calls).toBe(2);
  });

  // Only maxEntries given (or nothing at all): the named defaults apply to the rest.
  it.each([
    ['records without a TTL: DEFAULT_CACHE_TTL_SECONDS', { kind: 'records', records: ['192.0.2.1'] }, DEFAULT_CACHE_TTL_SECONDS],
    ['records over the cap: DEFAULT_MAX_TTL_SECONDS', { kind: 'records', records: ['192.0.2.1'], ttl: 86_400 }, DEFAULT_MAX_TTL_SECONDS],
    ['NXDOMAIN without a TTL: DEFAULT_NEGATIVE_TTL_SECONDS', { kind: 'nxdomain' }, DEFAULT_NEGATIVE_TTL_SECONDS],
  ] as [string, DnsAnswer, number][])('with { maxEntries } alone, %s (%i s)', async (_label, answer, seconds) => {
    for (const options of [{ maxEntries: 10 }, {}]) {
      const clock = fakeClock();
      const upstream = new FixedResolver(answer);
      const cache = new CachingResolver(upstream, { ...options, now: clock.now });
      await cache.resolve('example.com', 'A');
      clock.advance(seconds - 0.001);
      expect((await cache.lookup('example.com', 'A')).fromCache).toBe(true);
      clock.advance(0.001);
      expect((await cache.lookup('example.com', 'A')).fromCache).toBe(false);
    }
    expect(new CachingResolver(new FixedResolver(answer)).stats().size).toBe(0);
  });

  it('does not keep an answer whose TTL is 0 (RFC 1035 §3.2.1)', async () => {
    const upstream = new FixedResolver({ kind: 'records', records: ['192.0.2.1'], ttl: 0 });
    const cache = new CachingResolver(upstream, OPTIONS);
    await cache.resolve('example.com', 'A');
    await cache.resolve('example.com', 'A');
    expect(upstream.calls).toBe(2);
    expect(cache.stats().size).toBe(0);
  });
});

describe('CachingResolver: negative answers and failures', () => {
  it('caches NXDOMAIN and NODATA from the zones (negative caching)', async () => {
    const upstream = zones();
    const cache = new CachingResolver(upstream, OPTIONS);
    for (let i = 0; i < 3; i++) {
      expect((await cache.resolve('missing.example.com', 'TXT')).kind).toBe('nxdomain');
      expect((await cache.resolve('example.com', 'A')).kind).toBe('nodata');
    }
    expect(upstream.calls).toHaveLength(2);
    expect(cache.stats()).toMatchObject({ hits: 4, misses: 2 });
  });

  it.each([
    ['servfail', { kind: 'servfail' }],
    ['refused', { kind: 'refused' }],
    ['timeout', { kind: 'drop' }],
    ['malformed', { kind: 'malformed' }],
  ] as const)('never caches a failure: %s is asked again', async (reason, fault) => {
    const upstream = new InstrumentedResolver(new FaultyResolver(new ZoneResolver(ZONES), [{ name: 'example.com', fault }]));
    const cache = new CachingResolver(upstream, OPTIONS);
    expect(await cache.resolve('example.com', 'TXT')).toMatchObject({ kind: 'error', reason });
    expect(await cache.resolve('example.com', 'TXT')).toMatchObject({ kind: 'error', reason });
    expect(upstream.calls).toHaveLength(2);
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 2, size: 0 });
  });

  it('answers from upstream once the failure has cleared', async () => {
    const faulty = new FaultyResolver(new ZoneResolver(ZONES), [{ name: 'example.com', fault: { kind: 'servfail' } }]);
    const cache = new CachingResolver(faulty, OPTIONS);
    expect((await cache.resolve('example.com', 'TXT')).kind).toBe('error');
    faulty.setFaults([]);
    expect((await cache.resolve('example.com', 'TXT')).kind).toBe('records');
  });
});

describe('CachingResolver: single-flight', () => {
  it('sends 10 concurrent identical queries upstream once', async () => {
    const upstream = zones();
    const release = upstream.hold();
    const cache = new CachingResolver(upstream, OPTIONS);
    const pending = Array.from({ length: 10 }, () => cache.lookup('example.com', 'MX'));
    await new Promise((r) => setTimeout(r, 10));
    expect(upstream.calls).toHaveLength(1);
    release();
    const results = await Promise.all(pending);
    expect(results.filter((r) => r.source === 'upstream')).toHaveLength(1);
    expect(results.filter((r) => r.source === 'inflight')).toHaveLength(9);
    for (const result of results) expect(result.answer).toEqual(results[0]?.answer);
    expect(cache.stats()).toEqual({ hits: 0, misses: 1, inflightJoins: 9, size: 1 });
  });

  it('shares a failure among the joined queries but does not keep it', async () => {
    const upstream = new InstrumentedResolver(new FaultyResolver(new ZoneResolver(ZONES), [{ name: 'example.com', fault: { kind: 'servfail' } }]));
    const release = upstream.hold();
    const cache = new CachingResolver(upstream, OPTIONS);
    const pending = Array.from({ length: 5 }, () => cache.resolve('example.com', 'TXT'));
    release();
    for (const answer of await Promise.all(pending)) expect(answer).toMatchObject({ kind: 'error', reason: 'servfail' });
    await cache.resolve('example.com', 'TXT');
    expect(upstream.calls).toHaveLength(2);
  });

  it('lets a later query through when the upstream rejects (a bug below must not wedge the key)', async () => {
    let calls = 0;
    const cache = new CachingResolver(
      {
        resolve: async () => {
          calls++;
          if (calls === 1) throw new Error('bug');
          return { kind: 'nodata' };
        },
      },
      OPTIONS,
    );
    await expect(cache.resolve('example.com', 'A')).rejects.toThrow('bug');
    expect(await cache.resolve('example.com', 'A')).toEqual({ kind: 'nodata' });
  });
});

describe('CachingResolver: bounded size', () => {
  it('keeps at most maxEntries, dropping the least recently used', async () => {
    const upstream = zones();
    const cache = new CachingResolver(upstream, { ...OPTIONS, maxEntries: 3 });
    for (const name of ['a.example.com', 'b.example.com', 'c.example.com']) await cache.resolve(name, 'A');
    await cache.resolve('a.example.com', 'A'); // a is now the most recently used
    await cache.resolve('d.example.com', 'A'); // evicts b
    expect(cache.stats().size).toBe(3);
    expect((await cache.lookup('a.example.com', 'A')).fromCache).toBe(true);
    expect((await cache.lookup('b.example.com', 'A')).fromCache).toBe(false);
  });

  it('refuses a configuration without room or with a negative TTL', () => {
    const upstream = zones();
    expect(() => new CachingResolver(upstream, { ...OPTIONS, maxEntries: 0 })).toThrow(TypeError);
    expect(() => new CachingResolver(upstream, { ...OPTIONS, defaultTtlSeconds: -1 })).toThrow(TypeError);
    expect(() => new CachingResolver(upstream, { ...OPTIONS, maxTtlSeconds: Number.NaN })).toThrow(TypeError);
  });

  it('forgets everything on clear()', async () => {
    const upstream = zones();
    const cache = new CachingResolver(upstream, OPTIONS);
    await cache.resolve('example.com', 'MX');
    cache.clear();
    expect((await cache.lookup('example.com', 'MX')).fromCache).toBe(false);
  });
});
