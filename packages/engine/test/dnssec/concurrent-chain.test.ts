/**
 * The chain of trust asked at once (issue 43 item 1): once an answer's signer is known, the DS and
 * DNSKEY of every level from the anchor down to it are asked together, and the walk reads them in
 * its own order. Asserted in rounds, not time: a resolver (`lockstep`) holds every answer until no
 * question is still on its way, then gives them all at once; a round is one wait of the validation.
 * The states are those of the walk one question at a time, whatever order the answers come in.
 */
import { describe, expect, it } from 'vitest';
import { startDnssec } from '../../src/dnssec/check.js';
import type { RawQuery, RawResponse } from '../../src/dnssec/types.js';
import { DnssecCache, MAX_CHAIN_LEVELS_AT_ONCE, MAX_VALIDATION_QUERIES_IN_FLIGHT, Validator } from '../../src/dnssec/validate.js';
import { TYPE, typeName } from '../../src/dns/canonical.js';
import { CASES, FIXED_NOW, fixtureAnchors, signedServerPerFile } from './helpers.js';

const signed = signedServerPerFile();
const query = signed.query;

/**
 * `inner`'s answers held back until every question asked is answered and held, then given at once
 * (in the order asked, or reversed): `rounds` counts the waits, `widest` the most questions of one.
 */
function lockstep(inner: RawQuery, order: 'asked' | 'reversed' = 'asked') {
  const held: (() => void)[] = [];
  const asked: string[] = [];
  let outstanding = 0;
  let rounds = 0;
  let widest = 0;
  let scheduled = false;
  const release = (): void => {
    if (scheduled) return;
    scheduled = true;
    // After the I/O and microtasks of the round: nothing can be asked until an answer is given.
    setImmediate(() => {
      scheduled = false;
      if (outstanding > 0 || held.length === 0) return;
      rounds++;
      widest = Math.max(widest, held.length);
      const batch = held.splice(0);
      for (const give of order === 'asked' ? batch : batch.reverse()) give();
    });
  };
  const query: RawQuery = async (name, type) => {
    asked.push(`${name || '.'} ${typeName(type)}`);
    outstanding++;
    const response = await inner(name, type);
    outstanding--;
    return new Promise<RawResponse>((resolve) => {
      held.push(() => resolve(response));
      release();
    });
  };
  return { query, asked, rounds: () => rounds, widest: () => widest };
}

/** `inner` one question at a time, in the order asked: the walk as it was, one wait per question. */
function oneAtATime(inner: RawQuery): RawQuery {
  let tail: Promise<unknown> = Promise.resolve();
  return (name, type) => {
    const answer = tail.then(() => inner(name, type));
    tail = answer;
    return answer;
  };
}

function validator(q: RawQuery, cache?: DnssecCache): Validator {
  return new Validator({ query: q, anchors: fixtureAnchors(), now: () => FIXED_NOW, cache });
}

describe('the levels of a chain are asked together', () => {
  it('a signed answer, then its whole chain (the root\'s keys, the DS and DNSKEY of test. and of the zone) in one round', async () => {
    const resolver = lockstep(query);
    const result = await validator(resolver.query).validate('secure-nsec.test', TYPE.MX);
    expect(result.status).toBe('secure');
    expect(resolver.rounds()).toBe(2); // one question after another: 6
    expect(resolver.widest()).toBe(5);
    expect(resolver.asked[0]).toBe('secure-nsec.test MX');
    expect(resolver.asked.slice(1).sort()).toEqual(['. DNSKEY', 'secure-nsec.test DNSKEY', 'secure-nsec.test DS', 'test DNSKEY', 'test DS']);
  });

  it('a name deep in its zone: the chain goes down to the signer only', async () => {
    const resolver = lockstep(query);
    const result = await validator(resolver.query).validate('_25._tcp.mx1.secure-nsec.test', TYPE.TLSA);
    expect(result.status).toBe('secure');
    expect(resolver.rounds()).toBe(2);
    expect(resolver.asked.filter((q) => q.includes('mx1'))).toEqual(['_25._tcp.mx1.secure-nsec.test TLSA']);
  });

  it('a whole check: the anchor\'s keys, the three answers, the chain: three rounds, no question twice', async () => {
    const resolver = lockstep(query);
    const result = await startDnssec('secure-nsec.test', { query: resolver.query, anchors: fixtureAnchors(), now: () => FIXED_NOW, cache: new DnssecCache() }).finish('_dmarc.secure-nsec.test');
    expect(result.status).toBe('secure');
    expect(resolver.rounds()).toBe(3); // one question after another: 7
    expect(new Set(resolver.asked).size).toBe(resolver.asked.length);
  });

  it('an unsigned answer under an insecure delegation: the DS proof at the cut ends the walk; insecure as before', async () => {
    const resolver = lockstep(query);
    const result = await validator(resolver.query).validate('x.deleg.secure-nsec.test', TYPE.A);
    expect([result.status, result.reason.code]).toEqual(['insecure', null]);
    expect(resolver.rounds()).toBe(2);
    // Its own DS was asked ahead, but the walk stopped at deleg.secure-nsec.test (no DS, proven): not read.
    expect(result.reason.text).toContain('deleg.secure-nsec.test');
  });

  it(`at most ${MAX_CHAIN_LEVELS_AT_ONCE} levels at once, and ${MAX_VALIDATION_QUERIES_IN_FLIGHT} questions in flight`, async () => {
    // Every question answered empty: a deep name whose signer is unknown walks every label from the root.
    const empty: RawQuery = async () => ({ kind: 'response', message: { id: 0, flags: 0, rcode: 0, question: undefined, answer: [], authority: [], additional: [], opt: undefined } });
    const resolver = lockstep(empty);
    const deep = (tld: string): string => `${Array.from({ length: 20 }, (_, i) => `l${i}`).join('.')}.${tld}`;
    const v = validator(resolver.query);
    const results = await Promise.all(['a', 'b', 'c'].map((tld) => v.validate(deep(tld), TYPE.TXT)));
    for (const result of results) expect(result.status).toBe('bogus'); // the root answers without keys
    expect(resolver.widest()).toBe(MAX_VALIDATION_QUERIES_IN_FLIGHT);
    // Each walk asked at most MAX_CHAIN_LEVELS_AT_ONCE labels ahead (below the root its own), and
    // none of the 21-label names' deeper labels.
    for (const tld of ['a', 'b', 'c']) {
      const ds = resolver.asked.filter((q) => q.endsWith(` ${tld} DS`) || q.endsWith(`.${tld} DS`) || q === `${tld} DS`);
      expect(ds.length).toBeGreaterThan(0);
      expect(ds.length).toBeLessThanOrEqual(MAX_CHAIN_LEVELS_AT_ONCE);
    }
    expect(resolver.asked.some((q) => q.startsWith('l0.') && !q.endsWith(' TXT'))).toBe(false);
  });
});

describe('the same states as the walk one question at a time, whatever order the answers come in', () => {
  it.each(CASES.map((c) => [`${c.name} ${c.type}`, c] as const))('%s', async (_label, c) => {
    const sequential = await validator(oneAtATime(query)).validate(c.name, TYPE[c.type]);
    const inOrder = await validator(lockstep(query).query).validate(c.name, TYPE[c.type]);
    const reversed = await validator(lockstep(query, 'reversed').query).validate(c.name, TYPE[c.type]);
    expect({ status: sequential.status, code: sequential.reason.code }).toEqual({ status: c.status, code: c.code });
    expect(inOrder).toEqual(sequential);
    expect(reversed).toEqual(sequential);
  });
});

describe('questions shared between checks (DnssecCache)', () => {
  it('share: an identical question in flight gets the same answer from one query; once answered, the next is asked anew', async () => {
    const asked: string[] = [];
    const answers: ((response: RawResponse) => void)[] = [];
    const slow: RawQuery = (name, type) => {
      asked.push(`${name} ${type}`);
      return new Promise((resolve) => answers.push(resolve));
    };
    const cache = new DnssecCache();
    const a = cache.share(slow);
    const b = cache.share(slow);
    const first = a('test', TYPE.DNSKEY);
    const second = b('TEST', TYPE.DNSKEY);
    expect(asked).toEqual([`test ${TYPE.DNSKEY}`]);
    const other = a('test', TYPE.DS);
    expect(asked).toHaveLength(2);
    for (const answer of answers) answer({ kind: 'error', detail: 'no answer' });
    await other;
    expect(await second).toBe(await first);
    void a('test', TYPE.DNSKEY);
    expect(asked).toEqual([`test ${TYPE.DNSKEY}`, `test ${TYPE.DS}`, `test ${TYPE.DNSKEY}`]);
  });

  it('three checks at once over one cache: no question reaches the resolver twice (the root\'s keys: once)', async () => {
    const asked: string[] = [];
    const counting: RawQuery = (name, type) => {
      asked.push(`${name || '.'} ${typeName(type)}`);
      return query(name, type);
    };
    const cache = new DnssecCache();
    const domains = ['secure-nsec.test', 'secure-nsec3.test', 'alg13.test'];
    const results = await Promise.all(domains.map((d) => startDnssec(d, { query: counting, anchors: fixtureAnchors(), now: () => FIXED_NOW, cache }).finish(`_dmarc.${d}`)));
    expect(results.map((r) => r.status)).toEqual(['secure', 'secure', 'secure']);
    expect(asked.filter((q) => q === '. DNSKEY')).toHaveLength(1);
    expect(asked.length - new Set(asked).size).toBe(0);
  });

  it('another check\'s failed question for the anchor\'s keys is not this one\'s: it asks again', async () => {
    const cache = new DnssecCache();
    // The first validator's question for the root's keys fails (its deadline, say), once the second waits on it.
    let fail!: () => void;
    const failing: RawQuery = (name, type) => (type === TYPE.DNSKEY && name === '' ? new Promise((resolve) => (fail = () => resolve({ kind: 'error', detail: 'the check was cancelled' }))) : query(name, type));
    const asked: string[] = [];
    const own: RawQuery = (name, type) => {
      asked.push(`${name || '.'} ${typeName(type)}`);
      if (name === 'test' && type === TYPE.DS) setImmediate(() => fail()); // the chain is asked: the root's keys are awaited
      return query(name, type);
    };
    const first = validator(failing, cache);
    const second = validator(own, cache);
    const material = first.anchorHasMaterial('');
    const result = await second.validate('secure-nsec.test', TYPE.MX);
    expect(await material).toBe(true); // a failure is the validation's to report
    expect(result.status).toBe('secure');
    expect(asked).toContain('. DNSKEY'); // asked anew, after the other's failure
  });
});
