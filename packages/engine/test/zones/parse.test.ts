import { describe, expect, it } from 'vitest';
import type { RecordData, RecordType } from '../../src/dns/types.js';
import {
  canonicalIpv6,
  DEFAULT_ZONE_TTL,
  MAX_INCLUDE_DEPTH,
  parseTtl,
  parseZone,
  ZoneSyntaxError,
  type ParseZoneOptions,
} from '../../src/zones/parse.js';
import type { ResourceRecord } from '../../src/zones/types.js';

/** One expected record, in the order fields are read in a zone file. */
function rr<T extends RecordType>(name: string, type: T, ttl: number, data: RecordData<T>): ResourceRecord {
  return { name, type, ttl, data } as ResourceRecord;
}

const SOA_DATA = {
  mname: 'ns1.example.com',
  rname: 'hostmaster.example.com',
  serial: 2024060101,
  refresh: 7200,
  retry: 900,
  expire: 1209600,
  minimum: 300,
};
const S255 = 'x'.repeat(255);

/** Every row is parsed with `{ origin: 'example.com' }` unless it gives its own options. */
const GOOD: { reason: string; text: string; options?: ParseZoneOptions; records: ResourceRecord[] }[] = [
  // Owners
  { reason: 'absolute owner with its trailing dot', text: 'www.example.com. 300 IN A 192.0.2.1', records: [rr('www.example.com', 'A', 300, '192.0.2.1')] },
  { reason: 'relative owner is appended to the origin', text: 'www 300 IN A 192.0.2.1', records: [rr('www.example.com', 'A', 300, '192.0.2.1')] },
  { reason: '"@" owner is the origin', text: '@ 300 IN A 192.0.2.1', records: [rr('example.com', 'A', 300, '192.0.2.1')] },
  { reason: 'names are stored lower case', text: 'WWW.Example.COM. 300 IN A 192.0.2.1', records: [rr('www.example.com', 'A', 300, '192.0.2.1')] },
  { reason: 'wildcard and underscore labels are plain labels', text: '*.wild TXT "w"\n_dmarc._sub TXT "d"', records: [rr('*.wild.example.com', 'TXT', DEFAULT_ZONE_TTL, ['w']), rr('_dmarc._sub.example.com', 'TXT', DEFAULT_ZONE_TTL, ['d'])] },
  { reason: 'an escape other than \\. in a name is decoded (\\065 is "A", then lower-cased)', text: '\\065bc A 192.0.2.1', records: [rr('abc.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.1')] },
  // TTL and class, in either order, both optional (RFC 1035 §5.1)
  { reason: 'TTL then class', text: 'www 300 IN A 192.0.2.1', records: [rr('www.example.com', 'A', 300, '192.0.2.1')] },
  { reason: 'class then TTL', text: 'www IN 300 A 192.0.2.1', records: [rr('www.example.com', 'A', 300, '192.0.2.1')] },
  { reason: 'no TTL and no class: the fallback TTL', text: 'www A 192.0.2.1', records: [rr('www.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.1')] },
  { reason: 'class, type and directive names are case-insensitive', text: '$ttl 60\nwww in a 192.0.2.1', records: [rr('www.example.com', 'A', 60, '192.0.2.1')] },
  { reason: 'CLASS1 is IN in the RFC 3597 generic form', text: 'www CLASS1 A 192.0.2.1', records: [rr('www.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.1')] },
  { reason: 'defaultTtl option replaces the fallback', text: 'www A 192.0.2.1', options: { origin: 'example.com', defaultTtl: 42 }, records: [rr('www.example.com', 'A', 42, '192.0.2.1')] },
  // Blank owner: the previous owner (RFC 1035 §5.1)
  {
    reason: 'blank owner with neither TTL nor class',
    text: 'www A 192.0.2.1\n    A 192.0.2.2',
    records: [rr('www.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.1'), rr('www.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.2')],
  },
  {
    reason: 'blank owner with TTL then class',
    text: 'www A 192.0.2.1\n  600 IN TXT "t"',
    records: [rr('www.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.1'), rr('www.example.com', 'TXT', 600, ['t'])],
  },
  {
    reason: 'blank owner with class then TTL, indented by a tab',
    text: 'www A 192.0.2.1\n\tIN 600 TXT "t"',
    records: [rr('www.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.1'), rr('www.example.com', 'TXT', 600, ['t'])],
  },
  {
    reason: 'blank owner continues over blank and comment-only lines',
    text: 'www A 192.0.2.1\n\n   \n; a note\n  A 192.0.2.2',
    records: [rr('www.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.1'), rr('www.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.2')],
  },
  {
    reason: 'blank owner keeps the owner across an $ORIGIN change',
    text: 'www A 192.0.2.1\n$ORIGIN sub.example.com.\n  A 192.0.2.2\nhost A 192.0.2.3',
    records: [
      rr('www.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.1'),
      rr('www.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.2'),
      rr('host.sub.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.3'),
    ],
  },
  // TTL units (RFC 2308 §4, BIND and Knot) and defaults
  { reason: 'TTL in hours and minutes', text: 'www 1h30m A 192.0.2.1', records: [rr('www.example.com', 'A', 5400, '192.0.2.1')] },
  { reason: 'TTL in days', text: 'www 2d A 192.0.2.1', records: [rr('www.example.com', 'A', 172800, '192.0.2.1')] },
  { reason: 'TTL units are case-insensitive', text: 'www 1W2S A 192.0.2.1', records: [rr('www.example.com', 'A', 604802, '192.0.2.1')] },
  {
    reason: '$TTL applies to records without a TTL; an explicit TTL wins',
    text: '$TTL 2h\nwww A 192.0.2.1\nwww 60 A 192.0.2.2',
    records: [rr('www.example.com', 'A', 7200, '192.0.2.1'), rr('www.example.com', 'A', 60, '192.0.2.2')],
  },
  {
    reason: 'without $TTL, the SOA and the records after it take the SOA minimum (RFC 2308 §4)',
    text: 'before A 192.0.2.1\n@ SOA ns1 hostmaster 2024060101 7200 900 1209600 300\nafter A 192.0.2.2',
    records: [rr('before.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.1'), rr('example.com', 'SOA', 300, SOA_DATA), rr('after.example.com', 'A', 300, '192.0.2.2')],
  },
  // Parentheses and comments
  {
    reason: 'SOA over several lines with comments inside the parentheses, timers in units',
    text: '@ IN SOA ns1 hostmaster ( ; the primary and the mailbox\n  2024060101 ; serial\n  2h  ; refresh\n  15m ; retry\n  2w  ; expire\n  5m  ; minimum\n)\n',
    records: [rr('example.com', 'SOA', 300, SOA_DATA)],
  },
  {
    reason: 'an opening parenthesis glued to a word, and the record after the closing one',
    text: '@ SOA ns1 hostmaster (2024060101\n 7200 900 1209600 300)\nwww A 192.0.2.1',
    records: [rr('example.com', 'SOA', 300, SOA_DATA), rr('www.example.com', 'A', 300, '192.0.2.1')],
  },
  { reason: 'a comment right after the data, with no space', text: 'www A 192.0.2.1;note', records: [rr('www.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.1')] },
  // TXT character-strings (RFC 1035 §3.3.14)
  { reason: 'a TXT with three strings keeps them separate', text: '@ TXT "v=spf1 " "ip4:192.0.2.0/24 " "-all"', records: [rr('example.com', 'TXT', DEFAULT_ZONE_TTL, ['v=spf1 ', 'ip4:192.0.2.0/24 ', '-all'])] },
  { reason: 'unquoted words are one string each', text: '@ TXT hello world', records: [rr('example.com', 'TXT', DEFAULT_ZONE_TTL, ['hello', 'world'])] },
  { reason: 'quoted and unquoted strings mix', text: '@ TXT "a b" c', records: [rr('example.com', 'TXT', DEFAULT_ZONE_TTL, ['a b', 'c'])] },
  { reason: '\\" and \\\\ escapes', text: '@ TXT "say \\"hi\\" \\\\o/"', records: [rr('example.com', 'TXT', DEFAULT_ZONE_TTL, ['say "hi" \\o/'])] },
  { reason: '\\DDD decimal escapes, decoded as UTF-8 octets', text: '@ TXT "caf\\195\\169 \\059 \\034"', records: [rr('example.com', 'TXT', DEFAULT_ZONE_TTL, ['café ; "'])] },
  { reason: '\\X for a non-digit X is X itself', text: '@ TXT "\\a\\ b" c\\ d', records: [rr('example.com', 'TXT', DEFAULT_ZONE_TTL, ['a b', 'c d'])] },
  { reason: 'a semicolon inside quotes is text, not a comment', text: '_dmarc TXT "v=DMARC1; p=none" ; policy', records: [rr('_dmarc.example.com', 'TXT', DEFAULT_ZONE_TTL, ['v=DMARC1; p=none'])] },
  { reason: 'outside quotes a semicolon starts a comment, so unquoted DMARC records lose their tail', text: '_dmarc TXT v=DMARC1;p=none', records: [rr('_dmarc.example.com', 'TXT', DEFAULT_ZONE_TTL, ['v=DMARC1'])] },
  { reason: 'an empty string is a string', text: '@ TXT ""', records: [rr('example.com', 'TXT', DEFAULT_ZONE_TTL, [''])] },
  { reason: 'parentheses join a TXT over lines', text: '@ TXT ( "one"\n "two" ; second\n )', records: [rr('example.com', 'TXT', DEFAULT_ZONE_TTL, ['one', 'two'])] },
  { reason: 'a string of exactly 255 octets is allowed', text: `@ TXT "${S255}"`, records: [rr('example.com', 'TXT', DEFAULT_ZONE_TTL, [S255])] },
  // Names in data fields
  { reason: '"@" as the MX exchange', text: '@ MX 10 @', records: [rr('example.com', 'MX', DEFAULT_ZONE_TTL, { preference: 10, exchange: 'example.com' })] },
  { reason: 'relative MX exchange', text: '@ MX 10 mail', records: [rr('example.com', 'MX', DEFAULT_ZONE_TTL, { preference: 10, exchange: 'mail.example.com' })] },
  { reason: 'absolute MX exchange, upper case', text: '@ MX 65535 MX.Example.NET.', records: [rr('example.com', 'MX', DEFAULT_ZONE_TTL, { preference: 65535, exchange: 'mx.example.net' })] },
  { reason: 'null MX (RFC 7505): the exchange is the root', text: '@ MX 0 .', records: [rr('example.com', 'MX', DEFAULT_ZONE_TTL, { preference: 0, exchange: '' })] },
  { reason: 'relative CNAME target', text: 'www CNAME web', records: [rr('www.example.com', 'CNAME', DEFAULT_ZONE_TTL, 'web.example.com')] },
  { reason: 'absolute CNAME target', text: 'www CNAME web.example.net.', records: [rr('www.example.com', 'CNAME', DEFAULT_ZONE_TTL, 'web.example.net')] },
  { reason: 'relative and absolute NS', text: '@ NS ns1\n@ NS ns2.example.net.', records: [rr('example.com', 'NS', DEFAULT_ZONE_TTL, 'ns1.example.com'), rr('example.com', 'NS', DEFAULT_ZONE_TTL, 'ns2.example.net')] },
  { reason: 'relative PTR', text: 'ptr PTR host', records: [rr('ptr.example.com', 'PTR', DEFAULT_ZONE_TTL, 'host.example.com')] },
  {
    reason: 'relative SOA mname and rname',
    text: '@ 3600 SOA ns1 hostmaster 2024060101 7200 900 1209600 300',
    records: [rr('example.com', 'SOA', 3600, SOA_DATA)],
  },
  {
    reason: 'absolute SOA mname and rname',
    text: '@ 3600 SOA ns1.example.com. hostmaster.example.com. 2024060101 7200 900 1209600 300',
    records: [rr('example.com', 'SOA', 3600, SOA_DATA)],
  },
  // Addresses
  { reason: 'IPv4 dotted quad', text: 'www A 203.0.113.255', records: [rr('www.example.com', 'A', DEFAULT_ZONE_TTL, '203.0.113.255')] },
  { reason: 'IPv6 kept in its RFC 5952 form', text: 'www AAAA 2001:DB8:0:0:0:0:0:1', records: [rr('www.example.com', 'AAAA', DEFAULT_ZONE_TTL, '2001:db8::1')] },
  // $ORIGIN
  {
    reason: '$ORIGIN changes what relative names mean; a relative $ORIGIN is relative to the current one',
    text: '$ORIGIN sub.example.com.\nwww A 192.0.2.1\n$ORIGIN deeper\nwww A 192.0.2.2\n@ MX 1 @',
    records: [
      rr('www.sub.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.1'),
      rr('www.deeper.sub.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.2'),
      rr('deeper.sub.example.com', 'MX', DEFAULT_ZONE_TTL, { preference: 1, exchange: 'deeper.sub.example.com' }),
    ],
  },
  { reason: 'the zone origin taken from $ORIGIN', text: '$ORIGIN example.com.\nwww A 192.0.2.1', options: {}, records: [rr('www.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.1')] },
  {
    reason: 'the zone origin taken from a first SOA with an absolute owner, which then is the origin',
    text: 'example.com. 60 SOA ns1 hostmaster 2024060101 7200 900 1209600 300\nwww A 192.0.2.1',
    options: {},
    records: [rr('example.com', 'SOA', 60, SOA_DATA), rr('www.example.com', 'A', 300, '192.0.2.1')],
  },
  // Text-level details
  { reason: 'CRLF line ends', text: 'www A 192.0.2.1\r\n  A 192.0.2.2\r\n', records: [rr('www.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.1'), rr('www.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.2')] },
  { reason: 'a byte-order mark is not an owner', text: '\uFEFFwww A 192.0.2.1', records: [rr('www.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.1')] },
  { reason: 'no newline at the end of the file', text: 'www A 192.0.2.1', records: [rr('www.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.1')] },
  { reason: 'an exact duplicate is one record (RFC 2181 §5)', text: 'www A 192.0.2.1\nwww A 192.0.2.1', records: [rr('www.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.1')] },
  { reason: 'an empty zone with a known origin has no records', text: '; nothing here\n', records: [] },
];

describe('parseZone: good input', () => {
  it.each(GOOD)('$reason', ({ text, options, records }) => {
    const zone = parseZone(text, options ?? { origin: 'example.com' });
    expect(zone.records).toEqual(records);
    expect(zone.origin).toBe('example.com');
  });
});

const LONG_LABEL = 'a'.repeat(64);
/** 4 labels of 63 and the dots: 255 octets, over the 253 a presentation name may have. */
const LONG_NAME = `${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.${'e'.repeat(63)}.`;

/** Every row is parsed with `{ file: 'bad.zone', origin: 'example.com' }` unless it gives its own options. */
const BAD: { reason: string; text: string; options?: ParseZoneOptions; message: string }[] = [
  // Types and classes
  { reason: 'unknown type', text: 'www AX 192.0.2.1', message: 'bad.zone:1:5: expected a record type (A, AAAA, MX, TXT, …), found "AX"' },
  { reason: 'a known type without a reader here, not in the RFC 3597 form', text: '@ LOC 52 22 23.000 N 4 53 32.000 E -2.00m', message: 'bad.zone:1:7: expected the RFC 3597 generic form "\\# <length> <hex>" for a LOC record (this parser has no reader for its usual form), found "52"' },
  { reason: 'a type code over 65535', text: '@ TYPE65536 \\# 0', message: 'bad.zone:1:3: expected a type code from 0 to 65535 (RFC 3597 §5), found "TYPE65536"' },
  { reason: 'the retired SPF type', text: '@ SPF "v=spf1 -all"', message: 'bad.zone:1:3: expected a supported record type, found SPF (type 99), which RFC 7208 §3.1 retired: publish the policy as TXT' },
  { reason: 'a quoted type', text: 'www "A" 192.0.2.1', message: 'bad.zone:1:5: expected a record type (A, AAAA, MX, TXT, …), found the quoted string "A"' },
  { reason: 'a class other than IN', text: 'www CH A 192.0.2.1', message: 'bad.zone:1:5: expected the class IN (or no class), found "CH": only Internet records can be loaded' },
  { reason: 'two classes', text: 'www IN IN A 192.0.2.1', message: 'bad.zone:1:8: expected a record type, found a second class "IN"' },
  { reason: 'two TTLs', text: 'www 60 IN 70 A 192.0.2.1', message: 'bad.zone:1:11: expected a record type, found a second TTL "70"' },
  { reason: 'an owner and nothing else', text: 'www', message: 'bad.zone:1:4: expected a record type (A, AAAA, MX, TXT, …), found the end of the record' },
  { reason: 'an owner and a TTL only', text: 'www 300 ; comment', message: 'bad.zone:1:8: expected a record type (A, AAAA, MX, TXT, …), found the end of the record' },
  // TTLs
  { reason: 'a TTL with an unknown unit', text: 'www 1x A 192.0.2.1', message: 'bad.zone:1:5: expected a TTL (seconds up to 2147483647, or units like 1h30m, 2d), found "1x"' },
  { reason: 'a bare number after units is ambiguous', text: 'www 1h30 A 192.0.2.1', message: 'bad.zone:1:5: expected a TTL (seconds up to 2147483647, or units like 1h30m, 2d), found "1h30"' },
  { reason: 'a TTL over 2^31-1 (RFC 2181 §8)', text: 'www 2147483648 A 192.0.2.1', message: 'bad.zone:1:5: expected a TTL (seconds up to 2147483647, or units like 1h30m, 2d), found "2147483648"' },
  { reason: '$TTL without a value', text: '$TTL', message: 'bad.zone:1:5: expected a TTL after $TTL, found the end of the line' },
  { reason: '$TTL that is not a TTL', text: '$TTL forever', message: 'bad.zone:1:6: expected a TTL (seconds up to 2147483647, or units like 1h30m, 2d), found "forever"' },
  // Record data
  { reason: 'A without an address', text: 'www A', message: 'bad.zone:1:6: expected an IPv4 address, found the end of the record' },
  { reason: 'A with an octet over 255', text: 'www A 192.0.2.256', message: 'bad.zone:1:7: expected an IPv4 address (like 192.0.2.1), found "192.0.2.256"' },
  { reason: 'A with a leading zero (octal to some parsers)', text: 'www A 192.0.2.01', message: 'bad.zone:1:7: expected an IPv4 address (like 192.0.2.1), found "192.0.2.01"' },
  { reason: 'A with an IPv6 address', text: 'www A 2001:db8::1', message: 'bad.zone:1:7: expected an IPv4 address (like 192.0.2.1), found "2001:db8::1"' },
  { reason: 'AAAA that is not IPv6', text: 'www AAAA 2001:db8::g', message: 'bad.zone:1:10: expected an IPv6 address (like 2001:db8::1), found "2001:db8::g"' },
  { reason: 'AAAA with a zone index', text: 'www AAAA fe80::1%eth0', message: 'bad.zone:1:10: expected an IPv6 address (like 2001:db8::1), found "fe80::1%eth0"' },
  { reason: 'a second address on an A record', text: 'www A 192.0.2.1 192.0.2.2', message: 'bad.zone:1:17: expected the end of the record, found "192.0.2.2"' },
  { reason: 'MX preference over 65535', text: '@ MX 65536 mail', message: 'bad.zone:1:6: expected an MX preference (a number from 0 to 65535), found "65536"' },
  { reason: 'negative MX preference', text: '@ MX -1 mail', message: 'bad.zone:1:6: expected an MX preference (a number from 0 to 65535), found "-1"' },
  { reason: 'MX without an exchange', text: '@ MX 10', message: 'bad.zone:1:8: expected a mail exchange name, found the end of the record' },
  { reason: 'SOA serial over 2^32-1', text: '@ SOA ns1 hm 4294967296 1 1 1 1', message: 'bad.zone:1:14: expected an SOA serial (a number from 0 to 4294967295), found "4294967296"' },
  { reason: 'SOA timer that is not a number', text: '@ SOA ns1 hm 1 1 soon 1 1', message: 'bad.zone:1:18: expected the SOA RETRY (seconds, or units like 1h), found "soon"' },
  { reason: 'SOA with a field missing', text: '@ SOA ns1 hm ( 1 1 1 1\n)', message: 'bad.zone:1:23: expected the SOA MINIMUM, found the end of the record' },
  { reason: 'a second SOA', text: '@ SOA ns1 hm 1 1 1 1 1\n@ SOA ns2 hm 2 1 1 1 1', message: 'bad.zone:2:1: expected one SOA record, found a second (the first is at bad.zone:1)' },
  { reason: 'an SOA below the apex', text: 'sub SOA ns1 hm 1 1 1 1 1', message: 'bad.zone:1:1: expected the SOA record at the zone origin "example.com", found it at "sub.example.com"' },
  { reason: 'a CNAME beside other data (RFC 2181 §10.1)', text: 'www A 192.0.2.1\nwww CNAME web', message: 'bad.zone:2:1: expected either a CNAME or other records at "www.example.com", found both (RFC 2181 §10.1)' },
  { reason: 'other data beside a CNAME', text: 'www CNAME web\n  TXT "x"', message: 'bad.zone:2:3: expected either a CNAME or other records at "www.example.com", found both (RFC 2181 §10.1)' },
  { reason: 'two CNAMEs at one name', text: 'www CNAME web\nwww CNAME web2', message: 'bad.zone:2:1: expected one CNAME record at "www.example.com", found a second' },
  // TXT
  { reason: 'TXT with no string', text: '@ TXT ; nothing', message: 'bad.zone:1:6: expected one or more character-strings ("…"), found the end of the record' },
  {
    reason: 'a 300-octet string (RFC 1035 §3.3)',
    text: `@ TXT "${'y'.repeat(300)}"`,
    message: 'bad.zone:1:7: expected a character-string of at most 255 octets (RFC 1035 §3.3), found one of 300: split it into several quoted strings, "…" "…", which SPF and DKIM join',
  },
  {
    reason: 'octets, not characters, count: 128 two-octet characters are 256 octets',
    text: `@ TXT ${'é'.repeat(128)}`,
    message: 'bad.zone:1:7: expected a character-string of at most 255 octets (RFC 1035 §3.3), found one of 256: split it into several quoted strings, "…" "…", which SPF and DKIM join',
  },
  {
    reason: 'record data over 65535 octets (RFC 1035 §3.2.1): the 256th string of 255 octets',
    text: `@ TXT ${Array.from({ length: 257 }, () => `"${S255}"`).join(' ')}`,
    message: 'bad.zone:1:65797: expected at most 65535 octets of data in one record (RFC 1035 §3.2.1), found more',
  },
  // Quotes and escapes
  { reason: 'an unterminated quote', text: '@ TXT "abc\n', message: 'bad.zone:1:7: expected a closing quote for this string, found the end of the line' },
  { reason: 'an unterminated quote at the end of the file', text: '@ TXT "abc', message: 'bad.zone:1:7: expected a closing quote for this string, found the end of the file' },
  { reason: 'a quote inside a word', text: '@ TXT ab"c"', message: 'bad.zone:1:9: expected white space before the opening quote, found it inside the word "ab"' },
  { reason: 'a word glued to a closing quote', text: '@ TXT "a"b', message: 'bad.zone:1:10: expected white space after the closing quote, found "b"' },
  { reason: 'two quoted strings glued together', text: '@ TXT "a""b"', message: 'bad.zone:1:10: expected white space between two quoted strings, found a quote right after the closing one' },
  { reason: '\\DDD over 255', text: '@ TXT "a\\300"', message: 'bad.zone:1:9: expected an octet from \\000 to \\255, found "\\300"' },
  { reason: '\\DDD with fewer than three digits', text: '@ TXT "\\1a"', message: 'bad.zone:1:8: expected three decimal digits after "\\" (\\DDD), found "\\1a"' },
  { reason: 'a backslash at the end of a line', text: '@ TXT abc\\\nx', message: 'bad.zone:1:10: expected a character after "\\", found the end of the line' },
  { reason: 'octets that are not UTF-8', text: '@ TXT "\\200"', message: 'bad.zone:1:7: expected text that is valid UTF-8 once escapes are decoded, found the string "\\200"' },
  // Parentheses
  { reason: 'an unclosed parenthesis', text: '@ SOA ns1 hm ( 1 1 1 1 1\nwww A 192.0.2.1', message: 'bad.zone:1:14: expected ")" to close this "(", found the end of the file' },
  { reason: 'a closing parenthesis with no opening one', text: 'www A 192.0.2.1 )', message: 'bad.zone:1:17: expected a "(" before this ")", found none' },
  { reason: 'nested parentheses', text: '@ TXT ( "a" ( "b" ) )', message: 'bad.zone:1:13: expected ")" to close the "(" of line 1, found a second "("' },
  // Names
  { reason: 'a name over 253 octets', text: `${LONG_NAME} A 192.0.2.1`, options: { file: 'bad.zone' }, message: `bad.zone:1:1: expected a domain name (labels of 1 to 63 octets, 253 in all), found "${LONG_NAME.slice(0, 39)}…": the name is 255 octets long; DNS allows at most 253` },
  { reason: 'a label over 63 octets', text: `${LONG_LABEL} A 192.0.2.1`, message: `bad.zone:1:1: expected a domain name (labels of 1 to 63 octets, 253 in all), found "${LONG_LABEL.slice(0, 39)}…": the label "${LONG_LABEL.slice(0, 20)}…" is 64 octets long; DNS allows at most 63` },
  { reason: 'a relative name that grows over 253 octets with the origin', text: `@ CNAME ${LONG_NAME.slice(0, -1)}`, message: `bad.zone:1:9: expected a domain name (labels of 1 to 63 octets, 253 in all), found "${LONG_NAME.slice(0, 39)}…": the name is 267 octets long; DNS allows at most 253` },
  { reason: 'an empty label', text: 'a..b A 192.0.2.1', message: 'bad.zone:1:1: expected a domain name (labels of 1 to 63 octets, 253 in all), found "a..b": the name "a..b.example.com" has an empty label (two dots in a row, or a leading dot)' },
  { reason: 'two trailing dots', text: '@ CNAME a..', message: 'bad.zone:1:9: expected a domain name (labels of 1 to 63 octets, 253 in all), found "a..": the name "a." has an empty label (two dots in a row, or a leading dot)' },
  { reason: 'an escaped dot cannot be kept in the dotted form', text: 'a\\.b A 192.0.2.1', message: 'bad.zone:1:1: expected a domain name without an escaped dot ("\\."): a dot inside a label cannot be represented, found "a\\.b"' },
  { reason: 'an escaped dot in the SOA mailbox', text: '@ SOA ns1 john\\.doe 1 1 1 1 1', message: 'bad.zone:1:11: expected the mailbox of the person responsible (SOA RNAME) without an escaped dot ("\\."): a dot inside a label cannot be represented, found "john\\.doe"' },
  { reason: 'a name that is not ASCII', text: 'café A 192.0.2.1', message: 'bad.zone:1:1: expected a domain name in printable ASCII (write internationalized names in their xn-- form), found "café"' },
  { reason: 'a quoted name', text: '@ CNAME "web"', message: 'bad.zone:1:9: expected a domain name, found the quoted string "web"' },
  { reason: 'a blank owner before any record', text: '  A 192.0.2.1', message: 'bad.zone:1:3: expected an owner name: this line starts with white space, which repeats the previous owner, but there is none in this file yet' },
  { reason: 'a record outside the zone', text: 'www.example.org. A 192.0.2.1', message: 'bad.zone:1:1: expected a name at or below the zone origin "example.com", found "www.example.org"' },
  { reason: 'a name that only ends like the origin', text: 'notexample.com. A 192.0.2.1', message: 'bad.zone:1:1: expected a name at or below the zone origin "example.com", found "notexample.com"' },
  { reason: '"@" with no origin', text: '@ A 192.0.2.1', options: { file: 'bad.zone' }, message: 'bad.zone:1:1: expected an origin for "@": add "$ORIGIN <name>." above this line, found none' },
  { reason: 'a relative name with no origin', text: 'www A 192.0.2.1', options: { file: 'bad.zone' }, message: 'bad.zone:1:1: expected an absolute name (ending in ".") or "$ORIGIN <name>." above this line, found the relative name "www"' },
  { reason: 'a first record that is not an SOA, with no origin', text: 'www.example.com. A 192.0.2.1', options: { file: 'bad.zone' }, message: 'bad.zone:1:1: expected "$ORIGIN <name>." before the first record (or an SOA record first), found a record with no zone origin' },
  { reason: 'nothing to take an origin from', text: '; empty\n', options: { file: 'bad.zone' }, message: 'bad.zone:2:1: expected "$ORIGIN <name>." or records with absolute names, found the end of the file with neither' },
  // Directives
  { reason: 'an unknown directive', text: '$FOO bar', message: 'bad.zone:1:1: expected a directive ($ORIGIN, $TTL or $INCLUDE), found "$FOO"' },
  { reason: '$GENERATE is BIND-only', text: '$GENERATE 1-10 host$ A 192.0.2.$', message: 'bad.zone:1:1: expected $ORIGIN, $TTL or $INCLUDE, found "$GENERATE", which only BIND reads: write the records out' },
  { reason: '$ORIGIN with two names', text: '$ORIGIN a.example.com. b.example.com.', message: 'bad.zone:1:24: expected the end of the record, found "b.example.com."' },
  { reason: '$ORIGIN with no name', text: '$ORIGIN ; none', message: 'bad.zone:1:8: expected a domain name after $ORIGIN, found the end of the line' },
  { reason: '$INCLUDE with no reader', text: '$INCLUDE other.inc', message: 'bad.zone:1:1: expected a way to read the file named by $INCLUDE (use loadZoneFile, or pass readInclude to parseZone), found none' },
  // Whole-zone checks
  { reason: 'no SOA where one is required', text: '@ NS ns1', options: { file: 'bad.zone', origin: 'example.com', requireSoaAndNs: true }, message: 'bad.zone:1:9: expected an SOA record at the apex "example.com" (RFC 1035 §5.2), found the end of the file without one' },
  { reason: 'no NS at the apex where one is required', text: '@ SOA ns1 hm 1 1 1 1 1\nsub NS ns1\n', options: { file: 'bad.zone', origin: 'example.com', requireSoaAndNs: true }, message: 'bad.zone:3:1: expected an NS record at the apex "example.com" (RFC 1034 §4.2.1), found the end of the file without one' },
];

describe('parseZone: bad input', () => {
  it.each(BAD)('$reason', ({ text, options, message }) => {
    let caught: unknown;
    try {
      parseZone(text, options ?? { file: 'bad.zone', origin: 'example.com' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ZoneSyntaxError);
    expect((caught as ZoneSyntaxError).message).toBe(message);
  });

  it('keeps the parts of the location apart', () => {
    const error = (() => {
      try {
        parseZone('$ORIGIN example.com.\n\nwww   AX 1', { file: 'parts.zone' });
      } catch (caught) {
        return caught as ZoneSyntaxError;
      }
      return undefined;
    })();
    expect(error).toMatchObject({ name: 'ZoneSyntaxError', file: 'parts.zone', line: 3, column: 7, reason: 'expected a record type (A, AAAA, MX, TXT, …), found "AX"' });
  });

  it('names an unnamed text "<zone>"', () => {
    expect(() => parseZone('www AX 1', { origin: 'example.com' })).toThrow('<zone>:1:5: expected a record type');
  });

  it('refuses options it cannot use before reading any text', () => {
    expect(() => parseZone('', { origin: 'a..b' })).toThrow(RangeError);
    expect(() => parseZone('', { origin: 'example.com', defaultTtl: -1 })).toThrow(RangeError);
  });
});

describe('parseZone: $INCLUDE', () => {
  /** An in-memory file system; records which paths were read. */
  function files(contents: Record<string, string>): { read: (path: string) => string; reads: string[] } {
    const reads: string[] = [];
    return {
      reads,
      read: (path) => {
        reads.push(path);
        const text = contents[path];
        if (text === undefined) throw new Error(`ENOENT: no such file, open '${path}'`);
        return text;
      },
    };
  }

  it('reads the file relative to the including one, with the origin argument for that file only', () => {
    const fs = files({
      'zones/parts/keys.inc': '; keys\ns1 TXT "v=DKIM1; p=abc"\n@ TXT "o=~"\n',
    });
    const zone = parseZone(
      '$ORIGIN example.com.\n$TTL 300\nmail A 192.0.2.25\n$INCLUDE parts/keys.inc _domainkey ; keys live here\n  AAAA 2001:db8::25\nwww CNAME mail\n',
      { file: 'zones/main.zone', readInclude: fs.read },
    );
    expect(fs.reads).toEqual(['zones/parts/keys.inc']);
    expect(zone.records).toEqual([
      rr('mail.example.com', 'A', 300, '192.0.2.25'),
      rr('s1._domainkey.example.com', 'TXT', 300, ['v=DKIM1; p=abc']),
      rr('_domainkey.example.com', 'TXT', 300, ['o=~']),
      // After the included file, the origin and the previous owner are the includer's again.
      rr('mail.example.com', 'AAAA', 300, '2001:db8::25'),
      rr('www.example.com', 'CNAME', 300, 'mail.example.com'),
    ]);
  });

  it('takes a quoted file name and an absolute origin; a $TTL inside stays in effect', () => {
    const fs = files({ '/etc/zones/with space.inc': '$TTL 60\nhost A 192.0.2.1\n' });
    const zone = parseZone('$INCLUDE "/etc/zones/with space.inc" sub.example.com.\nafter A 192.0.2.2\n', { origin: 'example.com', file: 'main.zone', readInclude: fs.read });
    expect(zone.records).toEqual([rr('host.sub.example.com', 'A', 60, '192.0.2.1'), rr('after.example.com', 'A', 60, '192.0.2.2')]);
  });

  it('names the included file and its line in an error inside it', () => {
    const fs = files({ 'part.inc': 'ok A 192.0.2.1\nbad A 192.0.2.999\n' });
    expect(() => parseZone('$INCLUDE part.inc\n', { origin: 'example.com', file: 'main.zone', readInclude: fs.read })).toThrow(
      'part.inc:2:7: expected an IPv4 address (like 192.0.2.1), found "192.0.2.999"',
    );
  });

  it('does not let an included file start with a blank owner', () => {
    const fs = files({ 'part.inc': '  A 192.0.2.2\n' });
    expect(() => parseZone('www A 192.0.2.1\n$INCLUDE part.inc\n', { origin: 'example.com', file: 'main.zone', readInclude: fs.read })).toThrow(
      'part.inc:1:3: expected an owner name: this line starts with white space, which repeats the previous owner, but there is none in this file yet',
    );
  });

  it('reads the same file twice in a row: a repeat is not a loop', () => {
    const fs = files({ 'host.inc': '@ A 192.0.2.1\n' });
    const zone = parseZone('$INCLUDE host.inc a\n$INCLUDE host.inc b\n', { origin: 'example.com', file: 'main.zone', readInclude: fs.read });
    expect(zone.records).toEqual([rr('a.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.1'), rr('b.example.com', 'A', DEFAULT_ZONE_TTL, '192.0.2.1')]);
  });

  it('refuses a file that includes itself through another', () => {
    const fs = files({ 'b.inc': 'x A 192.0.2.1\n$INCLUDE a.zone\n' });
    expect(() => parseZone('$INCLUDE b.inc\n', { origin: 'example.com', file: 'a.zone', readInclude: fs.read })).toThrow(
      'b.inc:2:10: expected $INCLUDE to name a file not already being read, found a loop: "a.zone" includes itself through this line',
    );
  });

  it('refuses a file that includes itself', () => {
    const fs = files({ 'self.inc': '$INCLUDE self.inc\n' });
    expect(() => parseZone('$INCLUDE self.inc\n', { origin: 'example.com', file: 'a.zone', readInclude: fs.read })).toThrow(
      'self.inc:1:10: expected $INCLUDE to name a file not already being read, found a loop: "self.inc" includes itself through this line',
    );
  });

  /** level1.inc includes level2.inc … up to levelN.inc, which holds one record. */
  function chain(levels: number): Record<string, string> {
    const contents: Record<string, string> = {};
    for (let level = 1; level <= levels; level++) {
      contents[`level${level}.inc`] = level === levels ? `deep A 192.0.2.${level}\n` : `$INCLUDE level${level + 1}.inc\n`;
    }
    return contents;
  }

  it(`reads includes nested ${MAX_INCLUDE_DEPTH} deep`, () => {
    const fs = files(chain(MAX_INCLUDE_DEPTH));
    const zone = parseZone('$INCLUDE level1.inc\n', { origin: 'example.com', file: 'main.zone', readInclude: fs.read });
    expect(zone.records).toEqual([rr('deep.example.com', 'A', DEFAULT_ZONE_TTL, `192.0.2.${MAX_INCLUDE_DEPTH}`)]);
  });

  it(`refuses includes nested ${MAX_INCLUDE_DEPTH + 1} deep`, () => {
    const fs = files(chain(MAX_INCLUDE_DEPTH + 1));
    expect(() => parseZone('$INCLUDE level1.inc\n', { origin: 'example.com', file: 'main.zone', readInclude: fs.read })).toThrow(
      `level${MAX_INCLUDE_DEPTH}.inc:1:1: expected $INCLUDE to nest at most ${MAX_INCLUDE_DEPTH} deep, found one more level`,
    );
  });

  it('honours a smaller maxIncludeDepth', () => {
    const fs = files(chain(2));
    expect(() => parseZone('$INCLUDE level1.inc\n', { origin: 'example.com', file: 'main.zone', readInclude: fs.read, maxIncludeDepth: 1 })).toThrow(
      'level1.inc:1:1: expected $INCLUDE to nest at most 1 deep, found one more level',
    );
  });

  it('names the $INCLUDE line when the file cannot be read', () => {
    const fs = files({});
    expect(() => parseZone('\n$INCLUDE missing.inc\n', { origin: 'example.com', file: 'dir/main.zone', readInclude: fs.read })).toThrow(
      `dir/main.zone:2:10: expected a readable file, found that "dir/missing.inc" cannot be read: ENOENT: no such file, open 'dir/missing.inc'`,
    );
  });

  it('refuses $INCLUDE without a file name', () => {
    const fs = files({});
    expect(() => parseZone('$INCLUDE ; nothing\n', { origin: 'example.com', file: 'main.zone', readInclude: fs.read })).toThrow(
      'main.zone:1:9: expected a file name after $INCLUDE, found the end of the line',
    );
  });
});

describe('parseTtl', () => {
  it.each<[string, number | undefined, string]>([
    ['0', 0, 'zero is a TTL'],
    ['3600', 3600, 'plain seconds'],
    ['1h30m', 5400, 'units add up'],
    ['30m1h', 5400, 'in any order'],
    ['2D', 172800, 'upper-case unit'],
    ['1w1d1h1m1s', 694861, 'every unit'],
    ['2147483647', 2147483647, 'the largest TTL (RFC 2181 §8)'],
    ['2147483648', undefined, 'one more than the largest TTL'],
    ['68y', undefined, 'no year unit'],
    ['h', undefined, 'a unit with no number'],
    ['1h30', undefined, 'a bare number after a unit'],
    ['', undefined, 'empty'],
    ['-5', undefined, 'negative'],
    ['99999999999999999999', undefined, 'far too large, without losing precision first'],
  ])('%s → %s (%s)', (text, expected) => {
    expect(parseTtl(text)).toBe(expected);
  });

  it('takes a larger limit for SOA timers', () => {
    expect(parseTtl('4294967295', 4294967295)).toBe(4294967295);
  });
});

describe('canonicalIpv6 (RFC 5952)', () => {
  it.each([
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1', 'lower case, longest zero run shortened'],
    ['2001:0db8:0000:0000:0001:0000:0000:0001', '2001:db8::1:0:0:1', 'the first of two equal runs'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1', 'a single zero group is not shortened'],
    ['2001:db8:0:0:1:0:0:0', '2001:db8:0:0:1::', 'the longer run wins, even at the end'],
    ['::', '::', 'all zeros'],
    ['::1', '::1', 'loopback'],
    ['::ffff:192.0.2.1', '::ffff:c000:201', 'an embedded IPv4 address becomes two groups'],
    ['fe80::', 'fe80::', 'trailing run'],
  ])('%s → %s (%s)', (input, expected) => {
    expect(canonicalIpv6(input)).toBe(expected);
  });
});
