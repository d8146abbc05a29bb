/**
 * Several SPF records at one name (RFC 7208 §4.5): a permerror whose text, and the record shown, do not
 * depend on the order the DNS answer lists them in (an RRset has no order, RFC 2181 §5).
 */
import { describe, expect, it } from 'vitest';
import { analyzeSpf, checkHost, lookupSpfRecord, selectSpfRecords } from '../../src/spf/index.js';
import { TestResolver, txt } from './zones.js';

const FIRST = 'v=spf1 ip4:192.0.2.1 -all';
const SECOND = 'v=spf1 include:_spf.example.net ~all';
const THIRD = 'v=spf1 -all';

describe('several SPF records at one name come out in one order', () => {
  it('selectSpfRecords sorts the records by code point, whatever the answer order', () => {
    const sorted = [FIRST, SECOND, THIRD].sort();
    expect(selectSpfRecords([[THIRD], [SECOND], ['not spf'], [FIRST]])).toEqual(sorted);
    expect(selectSpfRecords([[FIRST], [THIRD], [SECOND]])).toEqual(sorted);
    // Split character-strings are joined before sorting (RFC 7208 §3.3).
    expect(selectSpfRecords([['v=spf1 ', '-all'], [FIRST]])).toEqual([FIRST, THIRD].sort());
  });

  for (const order of [[FIRST, SECOND], [SECOND, FIRST]]) {
    it(`lookupSpfRecord, checkHost and analyzeSpf agree for the answer order ${order.map((text) => text.slice(7, 15)).join(', ')}`, async () => {
      const resolver = new TestResolver(order.map((text) => txt('example.com', text)));
      expect(await lookupSpfRecord(resolver, 'example.com')).toEqual({ status: 'multiple', records: [FIRST, SECOND].sort() });
      const checked = await checkHost({ ip: '192.0.2.1', domain: 'example.com', sender: 'a@example.com' }, { resolver });
      expect(checked).toMatchObject({ result: 'permerror', problem: 'example.com publishes 2 SPF records; there must be exactly one' });
      const analysis = await analyzeSpf('example.com', resolver);
      expect(analysis.records).toEqual([FIRST, SECOND].sort());
    });
  }
});
