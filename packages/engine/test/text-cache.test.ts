/**
 * memoByText: the memo behind the parsed-record caches (SPF, DMARC, DKIM key records).
 */
import { describe, expect, it } from 'vitest';
import { parseDkimKeyRecord, parseDkimKeyRecordCached } from '../src/dkim/parse.js';
import { parseDmarcRecord, parseDmarcRecordCached } from '../src/dmarc/parse.js';
import { memoByText } from '../src/text-cache.js';

describe('memoByText', () => {
  it('keeps a text from its second reading, hands out the same frozen result, and parses long texts every time', () => {
    let calls = 0;
    const parse = memoByText((text: string) => (calls++, { text, parts: [{ length: text.length }] }), { entries: 2, maxText: 10 });
    const once = parse('abc');
    const first = parse('abc');
    expect(first).not.toBe(once);
    expect(first).toEqual(once);
    expect(parse('abc')).toBe(first);
    expect(calls).toBe(2);
    expect(Object.isFrozen(first) && Object.isFrozen(first.parts) && Object.isFrozen(first.parts[0])).toBe(true);
    expect(() => {
      (first.parts as { length: number }[]).push({ length: 0 });
    }).toThrow(TypeError);
    expect(Object.isFrozen(once)).toBe(true);
    const long = 'x'.repeat(11);
    expect(parse(long)).not.toBe(parse(long));
    expect(parse(long)).not.toBe(parse(long));
    expect(Object.isFrozen(parse(long))).toBe(true);
    expect(calls).toBe(7);
  });

  it('forgets the least recently used text past its size, and keeps nothing for texts read once', () => {
    let calls = 0;
    const parse = memoByText((text: string) => (calls++, { text }), { entries: 2, maxText: 10 });
    for (const text of ['a', 'a', 'b', 'b']) parse(text); // both kept from their second reading
    expect(calls).toBe(4);
    parse('a');
    for (const text of ['c', 'c']) parse(text); // kept: drops b, the least recently used
    expect(calls).toBe(6);
    parse('a');
    expect(calls).toBe(6);
    parse('b');
    expect(calls).toBe(7);
    for (const text of ['d', 'e', 'f', 'd']) parse(text); // d is forgotten when the set of texts read once fills up
    expect(calls).toBe(11);
    parse('d');
    expect(calls).toBe(12);
  });
});

describe('the cached parsers give what the parsers give', () => {
  it.each(['v=DMARC1; p=reject; rua=mailto:d@example.com', 'v=DMARC1; p=bogus', 'not dmarc'])('DMARC %j', (text) => {
    expect(parseDmarcRecordCached(text)).toEqual(parseDmarcRecord(text));
    expect(parseDmarcRecordCached([text.slice(0, 5), text.slice(5)])).toBe(parseDmarcRecordCached(text));
  });

  it.each(['v=DKIM1; p=', 'v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=', 'v=DKIM1; h=SHA256; p='])('DKIM %j', (text) => {
    expect(parseDkimKeyRecordCached(text)).toEqual(parseDkimKeyRecord(text));
    // Options other than the default are not cached (the memo is keyed by text alone).
    expect(parseDkimKeyRecordCached(text, { hashNameCase: 'ignore-case' })).toEqual(parseDkimKeyRecord(text, { hashNameCase: 'ignore-case' }));
  });
});
