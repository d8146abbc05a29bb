/**
 * The DNS layer's fast paths (the speed work of the benchmark suite) keep every rule of the slow
 * ones: answers already held are taken at once, lookups that wait share one deadline timer, the
 * cache can be read without waiting, and the name rules still see the name as spelled.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CachingResolver } from '../../src/dns/cache.js';
import { createCheckResolver } from '../../src/dns/limits.js';
import { canonicalName, canonicalNameProblem, dnsNameProblem } from '../../src/dns/name.js';
import { allNow, thenNow, type DnsAnswer, type ImmediateResolver } from '../../src/dns/types.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { safeResolve } from '../../src/spf/resolve.js';
import type { Zone } from '../../src/zones/types.js';
import { InstrumentedResolver, ZONES } from './helpers.js';

const zoneResolver = new ZoneResolver(ZONES);
const OPTIONS = { maxEntries: 100, defaultTtlSeconds: 60, maxTtlSeconds: 600 };

afterEach(() => {
  vi.useRealTimers();
});

describe('name rules on the per-lookup path', () => {
  it.each([
    { name: 'example.com', reason: 'a plain name is fine' },
    { name: 'Example.COM.', reason: 'case and one trailing dot are fine' },
    { name: 'a..example.com', reason: 'two dots in a row: an empty label' },
    { name: 'a.example.com..', reason: 'two trailing dots: canonical form keeps one, an empty label' },
    { name: '.example.com', reason: 'a leading dot: an empty label' },
    { name: `${'x'.repeat(64)}.example.com`, reason: 'a label over 63 octets' },
    { name: `${'abcdefghi.'.repeat(26)}com`, reason: 'a name over 253 octets' },
    { name: '.', reason: 'the root' },
  ])('canonicalNameProblem agrees with dnsNameProblem: $reason', ({ name }) => {
    expect(canonicalNameProblem(canonicalName(name), name)).toBe(dnsNameProblem(name));
  });

  it('refuses a name with two trailing dots in the check resolver too, quoting it as spelled', async () => {
    const check = createCheckResolver(zoneResolver);
    const answer = await check.resolve('Example.com..', 'TXT');
    expect(answer).toMatchObject({ kind: 'error', reason: 'invalid-name', detail: expect.stringContaining('"Example.com.."') });
    expect(check.stats().queries).toBe(0);
  });
});

describe('createCheckResolver: answers held already', () => {
  it('takes zone answers without setting any timer, and still counts and memoises them', async () => {
    vi.useFakeTimers();
    const check = createCheckResolver(zoneResolver);
    const first = check.resolve('example.com', 'TXT');
    const again = check.resolve('EXAMPLE.com.', 'TXT');
    expect(vi.getTimerCount()).toBe(0);
    expect(await first).toEqual(await zoneResolver.resolve('example.com', 'TXT'));
    expect(await again).toEqual(await first);
    expect(check.stats()).toMatchObject({ queries: 1, memoHits: 1, cacheHits: 0 });
  });

  it('takes cache hits without a timer and counts them; a miss goes upstream with the deadline armed', async () => {
    const upstream = new InstrumentedResolver(zoneResolver);
    const cache = new CachingResolver(upstream, OPTIONS);
    await cache.resolve('example.com', 'MX');
    vi.useFakeTimers();
    const check = createCheckResolver(cache);
    const hit = check.resolve('example.com', 'MX');
    expect(vi.getTimerCount()).toBe(0);
    const miss = check.resolve('mx1.example.com', 'A');
    expect(vi.getTimerCount()).toBe(1);
    expect((await hit).kind).toBe('records');
    expect(await miss).toMatchObject({ kind: 'records', records: ['192.0.2.1'] });
    expect(vi.getTimerCount()).toBe(0);
    expect(check.stats()).toMatchObject({ queries: 2, cacheHits: 1 });
    expect(upstream.calls).toEqual(['MX example.com', 'A mx1.example.com']);
  });

  it('answers budget once the deadline has passed, even for an answer the cache holds', async () => {
    let now = 0;
    const cache = new CachingResolver(zoneResolver, OPTIONS);
    await cache.resolve('example.com', 'TXT');
    const check = createCheckResolver(cache, { deadlineMs: 100, now: () => now });
    now = 100;
    expect(await check.resolve('example.com', 'TXT')).toMatchObject({ kind: 'error', reason: 'budget' });
  });
});

describe('createCheckResolver: lookups that wait share one deadline timer', () => {
  it('arms one timer for many lookups in flight and clears it when the last one settles', async () => {
    vi.useFakeTimers();
    const held = new InstrumentedResolver(zoneResolver);
    const release = held.hold();
    const check = createCheckResolver(held);
    const pending = ['a', 'b', 'c', 'd'].map((label) => check.resolve(`${label}.example.com`, 'A'));
    expect(vi.getTimerCount()).toBe(1);
    release();
    const answers = await Promise.all(pending);
    expect(answers.map((answer) => answer.kind)).toEqual(['nxdomain', 'nxdomain', 'nxdomain', 'nxdomain']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('answers budget to every lookup in flight at the deadline, each counted as refused', async () => {
    vi.useFakeTimers();
    const held = new InstrumentedResolver(zoneResolver);
    held.hold();
    const check = createCheckResolver(held, { deadlineMs: 50 });
    const pending = Promise.all(['a', 'b', 'c'].map((label) => check.resolve(`${label}.example.com`, 'A')));
    await vi.advanceTimersByTimeAsync(50);
    const answers = await pending;
    expect(answers.every((answer) => answer.kind === 'error' && answer.reason === 'budget')).toBe(true);
    expect(check.stats()).toMatchObject({ queries: 3, refused: 3 });
  });

  it('re-arms for lookups made after an earlier wait has ended, with the time that is left', async () => {
    vi.useFakeTimers();
    const slow = new InstrumentedResolver(zoneResolver, 30);
    const check = createCheckResolver(slow, { deadlineMs: 100 });
    const first = check.resolve('example.com', 'TXT');
    await vi.advanceTimersByTimeAsync(30);
    expect((await first).kind).toBe('records');
    expect(vi.getTimerCount()).toBe(0);
    // 30 ms spent: the second lookup (30 ms more) fits, the third would end past 100 ms.
    const second = check.resolve('example.com', 'MX');
    await vi.advanceTimersByTimeAsync(30);
    expect((await second).kind).toBe('records');
    const third = check.resolve('_dmarc.example.com', 'TXT');
    const slower = new Promise((resolve) => setTimeout(resolve, 60));
    await vi.advanceTimersByTimeAsync(60);
    await slower;
    expect(await third).toMatchObject({ kind: 'nxdomain' });
  });
});

describe('CachingResolver.lookupCached', () => {
  it('answers a fresh entry as a hit with its remaining TTL, and nothing for a miss (not counted)', async () => {
    let now = 0;
    const cache = new CachingResolver(zoneResolver, { ...OPTIONS, now: () => now });
    expect(cache.lookupCached('mx1.example.com', 'A')).toBeUndefined();
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 0 });
    await cache.resolve('mx1.example.com', 'A'); // TTL 120 in the zone
    now = 30_500;
    expect(cache.lookupCached('MX1.example.com.', 'A')).toEqual({
      answer: { kind: 'records', records: ['192.0.2.1'], ttl: 90 },
      fromCache: true,
      source: 'cache',
    });
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 1 });
  });

  it('drops an expired entry instead of answering it', async () => {
    let now = 0;
    const cache = new CachingResolver(zoneResolver, { ...OPTIONS, now: () => now });
    await cache.resolve('mx1.example.com', 'A');
    now = 121_000;
    expect(cache.lookupCached('mx1.example.com', 'A')).toBeUndefined();
    expect(cache.stats().size).toBe(0);
  });

  it('keeps the aliases of a cached answer', async () => {
    const cache = new CachingResolver(zoneResolver, OPTIONS);
    await cache.resolve('alias.example.com', 'A');
    expect(cache.lookupCached('alias.example.com', 'A')?.answer).toMatchObject({
      kind: 'records',
      records: ['198.51.100.7'],
      cnames: ['target.example.org'],
    });
  });
});

describe('ZoneResolver: the searches it skips', () => {
  const zones: Zone[] = [
    {
      origin: 'example.net',
      records: [
        { name: 'example.net', type: 'TXT', ttl: 300, data: ['apex'] },
        { name: 'host.example.net', type: 'A', ttl: 300, data: '192.0.2.10' },
      ],
    },
    {
      origin: 'deep.child.example.net',
      records: [{ name: 'www.deep.child.example.net', type: 'A', ttl: 300, data: '192.0.2.20' }],
    },
    { origin: 'wild.test', records: [{ name: '*.wild.test', type: 'TXT', ttl: 300, data: ['covered'] }] },
  ];
  const resolver = new ZoneResolver(zones);

  it.each([
    { name: 'nothere.example.net', type: 'A' as const, kind: 'nxdomain', reason: 'a zone without wildcards: a missing name is NXDOMAIN' },
    { name: 'a.b.c.example.net', type: 'TXT' as const, kind: 'nxdomain', reason: 'deep below a zone without wildcards' },
    { name: 'host.example.net', type: 'TXT' as const, kind: 'nodata', reason: 'a name that exists without the type asked for: NODATA' },
    { name: 'www.deep.child.example.net', type: 'A' as const, kind: 'records', reason: 'a child zone with more labels than its parent is still found' },
    { name: 'x.y.www.deep.child.example.net', type: 'A' as const, kind: 'nxdomain', reason: 'a name longer than any origin finds its zone' },
    { name: 'a.b.wild.test', type: 'TXT' as const, kind: 'records', reason: 'a zone with a wildcard still synthesises (RFC 4592)' },
    { name: 'elsewhere.invalid', type: 'A' as const, kind: 'nxdomain', reason: 'outside every zone' },
  ])('$reason', ({ name, type, kind }) => {
    expect(resolver.resolveSync(name, type).kind).toBe(kind);
  });
});

describe('allNow and thenNow: values stay values, promises only where one waits', () => {
  it('gives the array itself when nothing waits, and calls on at once', () => {
    const values = [1, 2, 3];
    expect(allNow(values)).toBe(values);
    const seen: number[] = [];
    expect(thenNow(5, (known) => (seen.push(known), known * 2))).toBe(10);
    expect(seen).toEqual([5]);
  });

  it('gives one promise of every value, in order, when any waits', async () => {
    const mixed = allNow([1, Promise.resolve(2), 3]);
    expect(mixed).toBeInstanceOf(Promise);
    expect(await mixed).toEqual([1, 2, 3]);
    const later = thenNow(Promise.resolve(4), (known) => known + 1);
    expect(later).toBeInstanceOf(Promise);
    expect(await later).toBe(5);
  });

  it('passes a rejection on', async () => {
    await expect(allNow([1, Promise.reject(new Error('lost'))])).rejects.toThrow('lost');
  });
});

describe('CachingResolver: one copy of a held answer per second of remaining TTL', () => {
  it('hands out the same copy within a second, a new one when the TTL has counted down, and never changes what it stored', async () => {
    let now = 0;
    const cache = new CachingResolver(zoneResolver, { ...OPTIONS, now: () => now });
    const stored = await cache.resolve('mx1.example.com', 'A'); // TTL 120 in the zone
    now = 10_100;
    const first = cache.heldAnswer('mx1.example.com', 'A');
    now = 10_900;
    const again = cache.heldAnswer('mx1.example.com', 'A');
    expect(first).toEqual({ kind: 'records', records: ['192.0.2.1'], ttl: 110 });
    expect(again).toBe(first);
    now = 11_100;
    const later = cache.heldAnswer('mx1.example.com', 'A');
    expect(later).toEqual({ kind: 'records', records: ['192.0.2.1'], ttl: 109 });
    expect(later).not.toBe(first);
    expect(first).toEqual({ kind: 'records', records: ['192.0.2.1'], ttl: 110 });
    expect(stored).toEqual({ kind: 'records', records: ['192.0.2.1'], ttl: 120 });
    expect(cache.stats()).toMatchObject({ hits: 3, misses: 1 });
  });
});

describe('CachingResolver: the system clock is read once per synchronous stretch', () => {
  it('reads Date.now once for many hits in one stretch, again after a microtask, and still expires entries', async () => {
    let time = 1_000_000;
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => time);
    const cache = new CachingResolver(zoneResolver, OPTIONS); // no injected clock: the system one
    await cache.resolve('mx1.example.com', 'A'); // TTL 120 in the zone
    await Promise.resolve();
    clock.mockClear();
    for (let index = 0; index < 50; index++) expect(cache.heldAnswer('mx1.example.com', 'A')).toMatchObject({ kind: 'records' });
    expect(clock).toHaveBeenCalledTimes(1);
    time += 121_000; // past the TTL, but within the same stretch the reading stands
    expect(cache.heldAnswer('mx1.example.com', 'A')).toMatchObject({ kind: 'records' });
    await Promise.resolve();
    expect(cache.heldAnswer('mx1.example.com', 'A')).toBeUndefined();
    expect(clock).toHaveBeenCalledTimes(2);
  });

  it('reads an injected clock on every hit', async () => {
    let time = 0;
    let reads = 0;
    const cache = new CachingResolver(zoneResolver, { ...OPTIONS, now: () => (reads++, time) });
    await cache.resolve('mx1.example.com', 'A');
    reads = 0;
    cache.heldAnswer('mx1.example.com', 'A');
    time = 121_000;
    expect(cache.heldAnswer('mx1.example.com', 'A')).toBeUndefined();
    expect(reads).toBe(2);
  });
});

describe('createCheckResolver: resolveOnceNow, for names the caller built and asks once', () => {
  it('charges the budget and counts cache hits, but remembers nothing for a later ask', async () => {
    const upstream = new InstrumentedResolver(zoneResolver);
    const shared = new CachingResolver(upstream, OPTIONS);
    await shared.resolve('example.com', 'TXT');
    const check = createCheckResolver(shared, { maxQueries: 3 });
    expect(check.resolveOnceNow('example.com', 'TXT')).toMatchObject({ kind: 'records' }); // held: a value, not a promise
    expect(check.resolveOnceNow('example.com', 'TXT')).toMatchObject({ kind: 'records' });
    expect(check.stats()).toMatchObject({ queries: 2, cacheHits: 2, memoHits: 0 });
    // A miss waits like any lookup, and the budget still ends the check's lookups.
    await expect(check.resolveOnceNow('missing.example.com', 'TXT')).resolves.toMatchObject({ kind: 'nxdomain' });
    expect(check.resolveOnceNow('example.com', 'MX')).toMatchObject({ kind: 'error', reason: 'budget' });
    expect(upstream.calls).toEqual(['TXT example.com', 'TXT missing.example.com']);
  });

  it('answers what resolveNow answers for the same canonical name', async () => {
    const once = createCheckResolver(zoneResolver);
    const memoised = createCheckResolver(zoneResolver);
    for (const [name, type] of [['example.com', 'MX'], ['missing.example.com', 'TXT'], ['mx1.example.com', 'A']] as const) {
      expect(once.resolveOnceNow(name, type)).toEqual(memoised.resolveNow(name, type));
    }
  });
});

describe("SPF's safeResolve on the immediate path", () => {
  const immediate = (resolveNow: ImmediateResolver['resolveNow']): ImmediateResolver => ({
    resolveNow,
    resolve: async (name, type) => resolveNow(name, type),
  });

  it.each<[string, ImmediateResolver, DnsAnswer]>([
    ['a held answer comes back as a value', immediate(() => ({ kind: 'nodata', ttl: 60 })), { kind: 'nodata', ttl: 60 }],
    ['an invalid name reads as NXDOMAIN (RFC 7208 §4.8)', immediate(() => ({ kind: 'error', reason: 'invalid-name', detail: 'too long' })), { kind: 'nxdomain' }],
    [
      'a resolver that throws at once is a servfail answer, not an exception',
      immediate(() => {
        throw new Error('socket closed');
      }),
      { kind: 'error', reason: 'servfail', detail: 'the resolver failed: socket closed' },
    ],
  ])('%s', (_case, resolver, expected) => {
    const answer = safeResolve(resolver, 'example.com', 'TXT');
    expect(answer).not.toBeInstanceOf(Promise);
    expect(answer).toEqual(expected);
  });

  it('a lookup that waits and then rejects is a servfail answer', async () => {
    const answer = safeResolve(immediate(() => Promise.reject(new Error('boom'))), 'example.com', 'TXT');
    expect(answer).toBeInstanceOf(Promise);
    expect(await answer).toEqual({ kind: 'error', reason: 'servfail', detail: 'the resolver failed: boom' });
  });
});
