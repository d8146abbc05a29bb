/**
 * Huge RRsets (issue 38 item 3): grouping records into RRsets drops duplicates in linear time (a
 * hash set, counted in octet comparisons, not timed), and the validator looks at no RRset of more
 * than `MAX_RRSET_RECORDS` records: beyond it the RRset is `indeterminate`, with no signature tried.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EDE, type RawQuery } from '../../src/dnssec/types.js';
import { MAX_RRSET_RECORDS, Validator } from '../../src/dnssec/validate.js';
import { groupRRsets, nameToWire, TYPE, type RawRecord } from '../../src/dns/canonical.js';
import { FIXED_NOW, fixtureAnchors, signedServerPerFile } from './helpers.js';

const signed = signedServerPerFile();
const query = signed.query;
afterEach(() => {
  vi.restoreAllMocks();
});

function txt(index: number): Buffer {
  const text = `v=spf1 ip4:192.0.2.${index % 256} ~all ${index}`;
  return Buffer.concat([Buffer.from([text.length]), Buffer.from(text)]);
}

describe('groupRRsets: duplicates dropped in linear time', () => {
  it('2,700 records and 300 duplicates: one RRset of 2,700, with no pairwise comparison', () => {
    const records: RawRecord[] = [];
    for (let i = 0; i < 2700; i++) records.push({ name: 'big.example', type: TYPE.TXT, class: 1, ttl: 300, rdata: txt(i) });
    for (let i = 0; i < 300; i++) records.push({ name: 'big.example', type: TYPE.TXT, class: 1, ttl: 60, rdata: Buffer.from(txt(i * 7)) });
    const equals = vi.spyOn(Buffer.prototype, 'equals');
    const compare = vi.spyOn(Buffer, 'compare');
    const sets = groupRRsets(records);
    // Pairwise, this was 2,700 × 2,699 / 2 + 300 × 2,700 ≈ 4.5 million comparisons; now at most one per record.
    expect(equals.mock.calls.length + compare.mock.calls.length).toBeLessThanOrEqual(records.length);
    expect(sets).toHaveLength(1);
    expect(sets[0]?.rdatas).toHaveLength(2700);
    expect(sets[0]?.ttl).toBe(60);
    // First appearance order is kept.
    expect(sets[0]?.rdatas[5]?.equals(txt(5))).toBe(true);
  });

  it('the same RDATA under two owners or two types stays in each RRset', () => {
    const rdata = txt(1);
    const sets = groupRRsets([
      { name: 'a.example', type: TYPE.TXT, class: 1, ttl: 300, rdata },
      { name: 'b.example', type: TYPE.TXT, class: 1, ttl: 300, rdata },
      { name: 'a.example', type: TYPE.MX, class: 1, ttl: 300, rdata },
      { name: 'a.example', type: TYPE.TXT, class: 1, ttl: 300, rdata },
    ]);
    expect(sets.map((s) => [s.name, s.type, s.rdatas.length])).toEqual([
      ['a.example', TYPE.TXT, 1],
      ['b.example', TYPE.TXT, 1],
      ['a.example', TYPE.MX, 1],
    ]);
  });
});

describe(`the validator looks at RRsets of at most ${MAX_RRSET_RECORDS} records`, () => {
  /** The signed MX of secure-nsec.test with `extra` more MX records added on the way. */
  function padded(extra: number): RawQuery {
    return async (name, type) => {
      const response = await query(name, type);
      if (response.kind !== 'response' || name !== 'secure-nsec.test' || type !== TYPE.MX) return response;
      const added: RawRecord[] = Array.from({ length: extra }, (_, i) => ({
        name: 'secure-nsec.test',
        type: TYPE.MX,
        class: 1,
        ttl: 300,
        rdata: Buffer.concat([Buffer.from([0, 20]), nameToWire(`mx${i}.padding.secure-nsec.test`)]),
      }));
      return { kind: 'response', message: { ...response.message, answer: [...response.message.answer, ...added] } };
    };
  }

  it.each([
    // The signed MX RRset holds one record: 999 more make 1,000, still looked at (and no longer matching its signature).
    [MAX_RRSET_RECORDS - 1, 'bogus'],
    [MAX_RRSET_RECORDS, 'indeterminate'],
    [2700, 'indeterminate'],
  ] as const)('the MX RRset with %i records added: %s', async (extra, status) => {
    const validator = new Validator({ query: padded(extra), anchors: fixtureAnchors(), now: () => FIXED_NOW });
    const clean = new Validator({ query, anchors: fixtureAnchors(), now: () => FIXED_NOW });
    const result = await validator.validate('secure-nsec.test', TYPE.MX);
    await clean.validate('secure-nsec.test', TYPE.MX);
    expect(result.status).toBe(status);
    if (status === 'indeterminate') {
      expect(result.reason).toMatchObject({ code: EDE.DNSSEC_INDETERMINATE, text: expect.stringContaining('MAX_RRSET_RECORDS') });
      // The chain down to the zone was verified as for the clean answer; the MX RRset itself was not tried.
      expect(validator.verificationsMade()).toBe(clean.verificationsMade() - 1);
    }
  });
});
