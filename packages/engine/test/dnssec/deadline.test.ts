/**
 * DNSSEC validation shares the check's DNS deadline (issue 38 item 4): DO answers that come slowly,
 * or never, cannot hold a check past `deadlineMs`; what could not be asked in time makes validation
 * `indeterminate`, naming the deadline. Asserted with a fake clock (each answer comes 1.9 s of it
 * after its question, as in the issue) and with a resolver that never answers, counting questions,
 * not timing them.
 */
import { describe, expect, it } from 'vitest';
import { checkDomain } from '../../src/check.js';
import { NetworkResolver } from '../../src/dns/network-resolver.js';
import { startDnssec } from '../../src/dnssec/check.js';
import { EDE, type RawQuery } from '../../src/dnssec/types.js';
import { FIXED_NOW, fixtureAnchors, signedServerPerFile } from './helpers.js';

const signed = signedServerPerFile();
const query = signed.query;

/** Seconds of the fake clock each DO answer costs (the delayed server). */
const ANSWER_COST_MS = 1900;

describe('validation within the check\'s DNS deadline', () => {
  /**
   * A resolver whose every answer comes `ANSWER_COST_MS` of the fake clock after its question:
   * questions asked together are answered together, as on the network.
   */
  function delayed(asked: string[]): { query: RawQuery; now: () => number } {
    let clock = 0;
    const slow: RawQuery = async (name, type) => {
      asked.push(`${name}/${type}`);
      const askedAt = clock;
      const response = await query(name, type);
      clock = Math.max(clock, askedAt + ANSWER_COST_MS);
      return response;
    };
    return { query: slow, now: () => clock };
  }

  it('slow answers (1.9 s each on a fake clock): no question is asked after the deadline, and the state is indeterminate naming it', async () => {
    // Without a deadline the same validation asks every question of the three chains.
    const unbounded: string[] = [];
    const counting: RawQuery = async (name, type) => {
      unbounded.push(`${name}/${type}`);
      return query(name, type);
    };
    await startDnssec('secure-nsec.test', { query: counting, anchors: fixtureAnchors(), now: () => FIXED_NOW }).finish('_dmarc.secure-nsec.test');

    // The anchor's keys (1.9 s), the three answers (3.8 s), then the chain: asked past a 3 s deadline.
    const asked: string[] = [];
    const slow = delayed(asked);
    const result = await startDnssec('secure-nsec.test', { query: slow.query, anchors: fixtureAnchors(), now: () => FIXED_NOW }, { deadlineMs: 3000, now: slow.now }).finish('_dmarc.secure-nsec.test');
    expect(result.status).toBe('indeterminate');
    expect(result.rrsets.some((r) => r.reason.text.includes("the check's 3000 ms DNS deadline has passed"))).toBe(true);
    // Asked only while the fake clock was before the deadline: the anchor's DNSKEY, then the three answers.
    expect(asked).toHaveLength(4);
    expect(asked.length).toBeLessThan(unbounded.length);
  });

  it('the same answers within a 10 s deadline: the chain is asked in one round, so the state is secure (7 rounds, 13.3 s, one question after another)', async () => {
    const asked: string[] = [];
    const slow = delayed(asked);
    const result = await startDnssec('secure-nsec.test', { query: slow.query, anchors: fixtureAnchors(), now: () => FIXED_NOW }, { deadlineMs: 10_000, now: slow.now }).finish('_dmarc.secure-nsec.test');
    expect(result.status).toBe('secure');
    expect(slow.now()).toBe(3 * ANSWER_COST_MS); // the anchor's keys, the answers, the chain
  });

  it('a resolver that never answers: the validation ends at the deadline, indeterminate (no hang)', async () => {
    const silent: RawQuery = () => new Promise(() => undefined);
    const result = await startDnssec('secure-nsec.test', { query: silent, anchors: fixtureAnchors(), now: () => FIXED_NOW }, { deadlineMs: 300 }).finish('_dmarc.secure-nsec.test');
    expect(result.status).toBe('indeterminate');
    expect(result.rrsets.map((r) => r.reason.code)).toEqual([EDE.NO_REACHABLE_AUTHORITY, EDE.NO_REACHABLE_AUTHORITY, EDE.NO_REACHABLE_AUTHORITY]);
    expect(result.reason.text).toContain('deadline');
  });

  it('cancelling the check (its signal) ends validation too', async () => {
    const silent: RawQuery = () => new Promise(() => undefined);
    const controller = new AbortController();
    const work = startDnssec('secure-nsec.test', { query: silent, anchors: fixtureAnchors(), now: () => FIXED_NOW }, { deadlineMs: 3_600_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const result = await work.finish('_dmarc.secure-nsec.test');
    expect(result.status).toBe('indeterminate');
    expect(result.reason.text).toContain('cancelled');
  });

  it('checkDomain: DO answers that never come do not hold the check past its deadlineMs; the verdict stands', async () => {
    const network = new NetworkResolver({ servers: [`127.0.0.1:${signed.server().address.port}`] });
    const silent: RawQuery = () => new Promise(() => undefined);
    try {
      const result = await checkDomain('secure-nsec.test', { resolver: network, deadlineMs: 1500, dnssec: { query: silent, anchors: fixtureAnchors(), now: () => FIXED_NOW } });
      expect(result.dnssec?.status).toBe('indeterminate');
      expect(result.dnssec?.reason.text).toContain("the check's 1500 ms DNS deadline has passed");
      const plain = await checkDomain('secure-nsec.test', { resolver: network });
      expect(result.verdict).toBe(plain.verdict);
    } finally {
      network.close();
    }
  });
});
