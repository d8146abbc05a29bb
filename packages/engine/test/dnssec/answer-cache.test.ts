/**
 * Validated answers kept in a `DnssecCache` (issue 43 item 1, as unbound keeps secure RRsets): a
 * warm validated check asks nothing and verifies no signature it verified before, and gets the same
 * result; an answer is kept until the earliest of its TTL, its signatures' expiry and
 * `DNSSEC_CACHE_SECONDS` (bogus: `DNSSEC_BOGUS_CACHE_SECONDS`); indeterminate answers are not kept.
 * Counted in queries and verifications; the cache's clock is moved with `Date.now`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunningDnsServer } from '../../src/zones/server.js';
import { startDnssec } from '../../src/dnssec/check.js';
import { createRawQuery } from '../../src/dnssec/query.js';
import type { RawQuery } from '../../src/dnssec/types.js';
import { DNSSEC_BOGUS_CACHE_SECONDS, DNSSEC_CACHE_SECONDS, DnssecCache } from '../../src/dnssec/validate.js';
import { verifyCounter } from '../../src/dnssec/verify.js';
import { FIXED_NOW, fixtureAnchors, startSignedServer } from './helpers.js';

let server: RunningDnsServer;
let upstream: RawQuery;
beforeAll(async () => {
  server = await startSignedServer();
  upstream = createRawQuery([server.address]);
});
afterAll(async () => {
  await server?.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** A query that counts, and gives every record `ttl` when told (the TTL a resolver counts down). */
function counting(ttl?: number): { query: RawQuery; asked: () => number } {
  let asked = 0;
  const query: RawQuery = async (name, type) => {
    asked++;
    const response = await upstream(name, type);
    if (response.kind !== 'response' || ttl === undefined) return response;
    const shorten = <T extends { ttl: number }>(records: T[]): T[] => records.map((r) => ({ ...r, ttl: Math.min(r.ttl, ttl) }));
    return { kind: 'response', message: { ...response.message, answer: shorten(response.message.answer), authority: shorten(response.message.authority) } };
  };
  return { query, asked: () => asked };
}

/** One check's validation of `domain`: the result, and what it cost. */
async function check(domain: string, query: RawQuery, cache: DnssecCache) {
  const before = verifyCounter.count;
  const result = await startDnssec(domain, { query, anchors: fixtureAnchors(), now: () => FIXED_NOW, cache }).finish(`_dmarc.${domain}`);
  return { result, verifications: verifyCounter.count - before };
}

/** Moves the cache's clock `seconds` ahead. */
function later(seconds: number): void {
  const real = Date.now.bind(Date);
  vi.spyOn(Date, 'now').mockImplementation(() => real() + seconds * 1000);
}

describe('a DnssecCache keeps validated answers', () => {
  it.each(['secure-nsec.test', 'secure-nsec3.test', 'cname.test', 'unsigned.test'])('%s: the warm check asks nothing, verifies nothing, and says the same', async (domain) => {
    const cache = new DnssecCache();
    const { query, asked } = counting();
    const cold = await check(domain, query, cache);
    const coldQueries = asked();
    expect(coldQueries).toBeGreaterThan(0);
    const warm = await check(domain, query, cache);
    expect(asked() - coldQueries).toBe(0);
    expect(warm.verifications).toBe(0);
    expect(warm.result).toEqual(cold.result);
  });

  it(`an answer is kept no longer than its TTL (10 s here), nor than ${DNSSEC_CACHE_SECONDS} s`, async () => {
    const cache = new DnssecCache();
    const { query, asked } = counting(10);
    const cold = await check('secure-nsec.test', query, cache);
    expect(cold.result.status).toBe('secure');
    later(9);
    const atNine = asked();
    expect((await check('secure-nsec.test', query, cache)).verifications).toBe(0);
    expect(asked()).toBe(atNine);
    vi.restoreAllMocks();
    later(11);
    const again = await check('secure-nsec.test', query, cache);
    expect(again.verifications).toBeGreaterThan(0); // the answers' own signatures, again
    expect(again.result.status).toBe('secure');
    vi.restoreAllMocks();
    const long = new DnssecCache();
    const full = counting();
    await check('secure-nsec.test', full.query, long);
    later(DNSSEC_CACHE_SECONDS + 1);
    expect((await check('secure-nsec.test', full.query, long)).verifications).toBeGreaterThan(0);
  });

  it(`a bogus answer is kept ${DNSSEC_BOGUS_CACHE_SECONDS} s at most`, async () => {
    const cache = new DnssecCache();
    const { query, asked } = counting();
    expect((await check('tampered.test', query, cache)).result.status).toBe('bogus');
    const held = asked();
    later(DNSSEC_BOGUS_CACHE_SECONDS - 1);
    await check('tampered.test', query, cache);
    expect(asked()).toBe(held);
    vi.restoreAllMocks();
    later(DNSSEC_BOGUS_CACHE_SECONDS + 1);
    await check('tampered.test', query, cache);
    expect(asked()).toBeGreaterThan(held);
  });

  it('an indeterminate answer is not kept: the next check asks again', async () => {
    const cache = new DnssecCache();
    let down = true;
    let asked = 0;
    const flaky: RawQuery = async (name, type) => {
      asked++;
      return down ? { kind: 'error', detail: 'no answer' } : upstream(name, type);
    };
    expect((await check('secure-nsec.test', flaky, cache)).result.status).toBe('indeterminate');
    down = false;
    const before = asked;
    expect((await check('secure-nsec.test', flaky, cache)).result.status).toBe('secure');
    expect(asked).toBeGreaterThan(before);
  });
});
