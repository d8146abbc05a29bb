/**
 * Limits: the cap on outstanding queries, and the per-check budget (query count, deadline,
 * cancellation, memoisation, cache-hit counting).
 */
import { describe, expect, it } from 'vitest';
import { CachingResolver } from '../../src/dns/cache.js';
import { FaultyResolver } from '../../src/dns/faults.js';
import { ConcurrencyLimitedResolver, CLOCK_READ_EVERY, createCheckResolver, DEFAULT_CHECK_DEADLINE_MS, DEFAULT_CHECK_MAX_QUERIES } from '../../src/dns/limits.js';
import type { CallbackResolver, Resolver } from '../../src/dns/types.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { InstrumentedResolver, ZONES } from './helpers.js';

const zoneResolver = new ZoneResolver(ZONES);

describe('ConcurrencyLimitedResolver', () => {
  it.each([1, 4, 16])('never has more than %i queries outstanding, and answers them all', async (cap) => {
    const slow = new InstrumentedResolver(zoneResolver, 5);
    const limited = new ConcurrencyLimitedResolver(slow, cap);
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => limited.resolve(`n${i}.example.com`, 'A')));
    expect(slow.maxInFlight).toBe(cap);
    expect(answers.every((a) => a.kind === 'nxdomain')).toBe(true);
    expect(slow.calls).toHaveLength(50);
  });

  it('reports how many are outstanding and waiting', async () => {
    const held = new InstrumentedResolver(zoneResolver);
    const release = held.hold();
    const limited = new ConcurrencyLimitedResolver(held, 2);
    const pending = Array.from({ length: 5 }, () => limited.resolve('example.com', 'MX'));
    await new Promise((r) => setTimeout(r, 10));
    expect([limited.outstanding, limited.waiting]).toEqual([2, 3]);
    release();
    await Promise.all(pending);
    expect([limited.outstanding, limited.waiting]).toEqual([0, 0]);
  });

  it('starts waiting queries in arrival order, past thousands of them (the queue drops its consumed front)', async () => {
    const upstream = new InstrumentedResolver(zoneResolver);
    const limited = new ConcurrencyLimitedResolver(upstream, 1);
    const names = Array.from({ length: 3000 }, (_, i) => `n${i}.example.com`);
    const answers = await Promise.all(names.map((name) => limited.resolve(name, 'A')));
    expect(upstream.calls).toEqual(names.map((name) => `A ${name}`));
    expect(answers.every((a) => a.kind === 'nxdomain')).toBe(true);
    expect([limited.outstanding, limited.waiting]).toEqual([0, 0]);
  });

  it('frees the slot of a resolver that throws or rejects, and passes the failure on', async () => {
    let calls = 0;
    const failing: Resolver = {
      resolve: (name, type) => {
        calls++;
        if (calls === 1) throw new Error('thrown');
        if (calls === 2) return Promise.reject(new Error('rejected'));
        return zoneResolver.resolve(name, type);
      },
    };
    const limited = new ConcurrencyLimitedResolver(failing, 1);
    const [thrown, rejected, answered] = await Promise.allSettled([
      limited.resolve('a.example.com', 'A'),
      limited.resolve('b.example.com', 'A'),
      limited.resolve('example.com', 'TXT'),
    ]);
    expect(thrown).toMatchObject({ status: 'rejected', reason: { message: 'thrown' } });
    expect(rejected).toMatchObject({ status: 'rejected', reason: { message: 'rejected' } });
    expect(answered).toMatchObject({ status: 'fulfilled', value: { kind: 'records' } });
    expect(limited.outstanding).toBe(0);
  });

  it('resolveThen: the same cap and answers by callback, over a callback resolver or a promise one; a failure frees the slot', async () => {
    // A callback resolver below (as NetworkResolver is): each answer comes 5 ms later, by callback.
    let inFlight = 0;
    let maxInFlight = 0;
    const callbacks: CallbackResolver = {
      resolve: (name, type) => zoneResolver.resolve(name, type),
      resolveThen: (name, type, done, failed) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        setTimeout(() => {
          inFlight--;
          if (name.startsWith('fail')) failed(new Error('failed'));
          else zoneResolver.resolve(name, type).then(done);
        }, 5);
      },
    };
    const promised = new InstrumentedResolver(zoneResolver, 5);
    for (const inner of [callbacks, promised]) {
      const limited = new ConcurrencyLimitedResolver(inner, 3);
      const names = ['fail.example.com', ...Array.from({ length: 9 }, (_, i) => `n${i}.example.com`), 'example.com'];
      const outcomes = await Promise.all(
        names.map((name) => new Promise((resolve) => limited.resolveThen(name, name === 'example.com' ? 'MX' : 'A', resolve, (error) => resolve(error)))),
      );
      if (inner === callbacks) expect(outcomes[0]).toMatchObject({ message: 'failed' });
      expect(outcomes.slice(1, -1).every((answer) => (answer as { kind: string }).kind === 'nxdomain')).toBe(true);
      expect(outcomes.at(-1)).toMatchObject({ kind: 'records' });
      expect(limited.outstanding).toBe(0);
    }
    expect(maxInFlight).toBe(3);
    expect(promised.maxInFlight).toBe(3);
  });

  it('the check resolver over a callback resolver: one answer per name, held as a value once known', async () => {
    const limited = new ConcurrencyLimitedResolver(new InstrumentedResolver(zoneResolver, 5), 2);
    const check = createCheckResolver(limited);
    const first = check.resolveNow('example.com', 'MX');
    const again = check.resolveNow('EXAMPLE.com', 'MX');
    expect(first).toBeInstanceOf(Promise);
    expect(again).toBe(first);
    const answer = await first;
    expect(answer).toMatchObject({ kind: 'records' });
    expect(check.resolveNow('example.com', 'MX')).toBe(answer);
    expect(check.stats()).toMatchObject({ queries: 1, memoHits: 2 });
  });

  it('refuses a cap below 1', () => {
    expect(() => new ConcurrencyLimitedResolver(zoneResolver, 0)).toThrow(TypeError);
    expect(() => new ConcurrencyLimitedResolver(zoneResolver, 1.5)).toThrow(TypeError);
  });
});

describe('createCheckResolver: query budget', () => {
  it(`allows ${DEFAULT_CHECK_MAX_QUERIES} lookups by default, over at most ${DEFAULT_CHECK_DEADLINE_MS} ms`, async () => {
    let now = 0;
    const check = createCheckResolver(zoneResolver, { now: () => now });
    for (let i = 0; i < DEFAULT_CHECK_MAX_QUERIES; i++) expect((await check.resolve(`n${i}.example.com`, 'A')).kind).toBe('nxdomain');
    expect(await check.resolve('one-more.example.com', 'A')).toMatchObject({ kind: 'error', reason: 'budget' });
    const late = createCheckResolver(zoneResolver, { now: () => now });
    now = DEFAULT_CHECK_DEADLINE_MS;
    expect(await late.resolve('example.com', 'A')).toMatchObject({ kind: 'error', reason: 'budget' });
  });

  it('answers budget once maxQueries distinct lookups are made, without asking', async () => {
    const upstream = new InstrumentedResolver(zoneResolver);
    const check = createCheckResolver(upstream, { maxQueries: 3 });
    const answers = [];
    for (const name of ['a', 'b', 'c', 'd', 'e']) answers.push(await check.resolve(`${name}.example.com`, 'TXT'));
    expect(answers.map((a) => a.kind)).toEqual(['nxdomain', 'nxdomain', 'nxdomain', 'error', 'error']);
    expect(answers[3]).toMatchObject({ kind: 'error', reason: 'budget' });
    expect(upstream.calls).toHaveLength(3);
    expect(check.stats()).toMatchObject({ queries: 3, refused: 2, cacheHits: 0, memoHits: 0 });
  });

  it('passes every answer kind through unchanged and counts each as a query', async () => {
    const faulty = new FaultyResolver(zoneResolver, [
      { name: 'fail.example.com', fault: { kind: 'servfail' } },
      { name: 'slow.example.com', fault: { kind: 'drop' } },
    ]);
    const check = createCheckResolver(faulty);
    expect(await check.resolve('mx1.example.com', 'A')).toMatchObject({ kind: 'records', records: ['192.0.2.1'] });
    expect(await check.resolve('example.com', 'A')).toMatchObject({ kind: 'nodata' });
    expect(await check.resolve('missing.example.com', 'A')).toMatchObject({ kind: 'nxdomain' });
    expect(await check.resolve('fail.example.com', 'A')).toMatchObject({ kind: 'error', reason: 'servfail' });
    expect(await check.resolve('slow.example.com', 'A')).toMatchObject({ kind: 'error', reason: 'timeout' });
    expect(check.stats()).toMatchObject({ queries: 5, refused: 0 });
  });

  it('asks the same name and type once per check, in any spelling, even concurrently', async () => {
    const upstream = new InstrumentedResolver(zoneResolver, 5);
    const check = createCheckResolver(upstream, { maxQueries: 2 });
    const answers = await Promise.all([
      check.resolve('example.com', 'TXT'),
      check.resolve('EXAMPLE.com.', 'TXT'),
      check.resolve('example.com', 'TXT'),
    ]);
    expect(await check.resolve('example.com', 'TXT')).toEqual(answers[0]);
    expect(answers[1]).toEqual(answers[0]);
    expect(upstream.calls).toEqual(['TXT example.com']);
    expect(check.stats()).toMatchObject({ queries: 1, memoHits: 3 });
    // A repeat does not spend the budget: one more distinct lookup still fits.
    expect((await check.resolve('example.com', 'MX')).kind).toBe('records');
  });

  it('refuses invalid names without spending the budget', async () => {
    const upstream = new InstrumentedResolver(zoneResolver);
    const check = createCheckResolver(upstream, { maxQueries: 1 });
    expect(await check.resolve('a..example.com', 'A')).toMatchObject({ kind: 'error', reason: 'invalid-name' });
    expect((await check.resolve('example.com', 'MX')).kind).toBe('records');
    expect(upstream.calls).toHaveLength(1);
  });

  it('counts the answers a shared cache gave', async () => {
    const upstream = new InstrumentedResolver(zoneResolver);
    const shared = new CachingResolver(upstream, { maxEntries: 100, defaultTtlSeconds: 60, maxTtlSeconds: 600 });
    const first = createCheckResolver(shared);
    await first.resolve('example.com', 'TXT');
    await first.resolve('example.com', 'MX');
    const second = createCheckResolver(shared);
    await second.resolve('example.com', 'TXT');
    await second.resolve('example.com', 'MX');
    await second.resolve('_dmarc.example.com', 'TXT');
    expect(first.stats()).toMatchObject({ queries: 2, cacheHits: 0 });
    expect(second.stats()).toMatchObject({ queries: 3, cacheHits: 2 });
    expect(upstream.calls).toHaveLength(3);
  });
});

describe('createCheckResolver: deadline and cancellation', () => {
  it('answers budget at the deadline for a lookup still in flight, and for every lookup after it', async () => {
    // The upstream answers after 3 s: an answer well before that can only be the deadline's.
    const slow = new InstrumentedResolver(zoneResolver, 3000);
    const check = createCheckResolver(slow, { deadlineMs: 60 });
    const started = Date.now();
    const answer = await check.resolve('example.com', 'TXT');
    const elapsed = Date.now() - started;
    expect(answer).toMatchObject({ kind: 'error', reason: 'budget' });
    expect(elapsed).toBeGreaterThanOrEqual(55);
    expect(elapsed).toBeLessThan(1500);
    expect(await check.resolve('example.com', 'MX')).toMatchObject({ kind: 'error', reason: 'budget' });
    expect(slow.calls).toEqual(['TXT example.com']);
    expect(check.stats()).toMatchObject({ queries: 1, refused: 2 });
  });

  it('uses the injected clock: a check past its deadline asks nothing', async () => {
    let now = 0;
    const upstream = new InstrumentedResolver(zoneResolver);
    const check = createCheckResolver(upstream, { deadlineMs: 1000, now: () => now });
    expect((await check.resolve('example.com', 'TXT')).kind).toBe('records');
    now = 1000;
    expect(await check.resolve('example.com', 'MX')).toMatchObject({ kind: 'error', reason: 'budget' });
    expect(upstream.calls).toHaveLength(1);
    expect(check.stats().elapsedMs).toBe(1000);
  });

  it(`stops answers held in memory within ${CLOCK_READ_EVERY} lookups of the deadline, and for good`, async () => {
    let now = 0;
    const check = createCheckResolver(zoneResolver, { deadlineMs: 1000, now: () => now });
    expect((await check.resolve('example.com', 'TXT')).kind).toBe('records');
    now = 1000;
    const kinds: string[] = [];
    for (let index = 0; index < CLOCK_READ_EVERY + 4; index++) kinds.push((await check.resolve(`n${index}.example.com`, 'A')).kind);
    const firstRefused = kinds.indexOf('error');
    expect(firstRefused).toBeGreaterThanOrEqual(0);
    expect(firstRefused).toBeLessThan(CLOCK_READ_EVERY);
    expect(kinds.slice(firstRefused).every((kind) => kind === 'error')).toBe(true);
  });

  it('keeps answers that came before the deadline', async () => {
    let now = 0;
    const check = createCheckResolver(zoneResolver, { deadlineMs: 1000, now: () => now });
    const before = await check.resolve('example.com', 'TXT');
    now = 5000;
    expect(await check.resolve('example.com', 'TXT')).toEqual(before);
  });

  it('stops when the signal aborts, in flight and after', async () => {
    const held = new InstrumentedResolver(zoneResolver);
    held.hold();
    const controller = new AbortController();
    const check = createCheckResolver(held, { signal: controller.signal });
    const pending = check.resolve('example.com', 'TXT');
    controller.abort();
    expect(await pending).toMatchObject({ kind: 'error', reason: 'budget', detail: 'the check was cancelled' });
    expect(await check.resolve('example.com', 'MX')).toMatchObject({ kind: 'error', reason: 'budget' });
    expect(held.calls).toHaveLength(1);
  });
});
