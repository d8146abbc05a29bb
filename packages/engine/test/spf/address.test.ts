import { describe, expect, it } from 'vitest';
import { formatIp6, inNetwork, parseClientAddress, parseIp4, parseIp6, reverseName } from '../../src/spf/index.js';

describe('parseIp4 (RFC 7208 §12 ip4-network)', () => {
  it.each([
    ['192.0.2.1', 0xc0000201, 'ordinary'],
    ['0.0.0.0', 0, 'zeros'],
    ['255.255.255.255', 0xffffffff, 'all ones, as an unsigned value'],
    ['1.2.3', null, 'three parts'],
    ['1.2.3.4.5', null, 'five parts'],
    ['01.2.3.4', null, 'leading zero'],
    ['1.2.3.256', null, 'octet over 255'],
    ['1.2.3.', null, 'empty part'],
    ['1.2.3.a', null, 'not a digit'],
    ['1.2.3.4 ', null, 'trailing space'],
    ['', null, 'empty'],
  ])('%j → %s (%s)', (text, expected, _reason) => {
    expect(parseIp4(text)).toBe(expected);
  });
});

describe('parseIp6 (RFC 4291 §2.2)', () => {
  it.each([
    ['2001:db8::1', [0x20010db8, 0, 0, 1], 'compressed'],
    ['2001:DB8:0:0:0:0:0:1', [0x20010db8, 0, 0, 1], 'full, upper case'],
    ['::', [0, 0, 0, 0], 'all zeros'],
    ['::1', [0, 0, 0, 1], 'loopback'],
    ['1::', [0x00010000, 0, 0, 0], 'trailing gap'],
    ['::ffff:1.2.3.4', [0, 0, 0xffff, 0x01020304], 'embedded IPv4'],
    ['::1.1.1.1', [0, 0, 0, 0x01010101], 'IPv4-compatible form'],
    ['1:2:3:4:5:6:7::', [0x00010002, 0x00030004, 0x00050006, 0x00070000], 'a gap of one group (allowed by RFC 4291)'],
    [':CAFE::BABE', null, 'a single leading colon'],
    ['1::2::3', null, 'two gaps'],
    [':::', null, 'three colons'],
    ['1:2:3:4:5:6:7:8:9', null, 'nine groups'],
    ['1:2:3:4:5:6:7', null, 'seven groups without a gap'],
    ['12345::', null, 'a group of five digits'],
    ['g::', null, 'not hex'],
    ['::1.2.3', null, 'a short embedded IPv4'],
    ['1.2.3.4::', null, 'IPv4 must come last'],
  ])('%j → %j (%s)', (text, expected, _reason) => {
    expect(parseIp6(text)).toEqual(expected);
  });
});

describe('parseClientAddress', () => {
  it('treats an IPv4-mapped IPv6 address as IPv4 (RFC 7208 §5)', () => {
    expect(parseClientAddress('::FFFF:1.2.3.4')).toMatchObject({ version: 4, value: 0x01020304, readable: '1.2.3.4' });
  });

  it('keeps other IPv6 addresses and their text forms', () => {
    expect(parseClientAddress('CAFE:BABE::1')).toMatchObject({ version: 6, readable: 'cafe:babe::1' });
  });

  it('refuses text that is not an address', () => {
    expect(parseClientAddress('example.com')).toBeNull();
    expect(parseClientAddress('')).toBeNull();
  });
});

describe('formatIp6 (RFC 5952 §4)', () => {
  it.each([
    ['2001:db8:0:0:0:0:2:1', '2001:db8::2:1', 'longest zero run'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1', 'a single zero group is not shortened'],
    ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1', 'the longer run wins'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1', 'the first of two equal runs'],
    ['0:0:0:0:0:0:0:0', '::', 'all zeros'],
    ['2001:DB8::ABCD', '2001:db8::abcd', 'lower case'],
  ])('%s → %s (%s)', (text, expected, _reason) => {
    const words = parseIp6(text);
    if (words === null) throw new Error('bad test address');
    expect(formatIp6(words)).toBe(expected);
  });
});

describe('inNetwork', () => {
  const v4 = (text: string) => ({ version: 4 as const, value: parseIp4(text)! });
  const v6 = (text: string) => ({ version: 6 as const, words: parseIp6(text)! });
  it.each([
    [v4('192.0.2.200'), v4('192.0.2.0'), 24, true, 'inside a /24'],
    [v4('192.0.3.1'), v4('192.0.2.0'), 24, false, 'outside a /24'],
    [v4('10.0.0.1'), v4('192.0.2.0'), 0, true, '/0 matches every IPv4 address'],
    [v4('192.0.2.1'), v4('192.0.2.1'), 32, true, '/32 is one address'],
    [v4('192.0.2.2'), v4('192.0.2.1'), 32, false, '/32 is only that address'],
    [v4('255.255.255.255'), v4('128.0.0.0'), 1, true, 'top bit, unsigned arithmetic'],
    [v6('2001:db8::1'), v6('2001:db8::'), 32, true, 'inside a /32'],
    [v6('2001:db9::1'), v6('2001:db8::'), 32, false, 'outside a /32'],
    [v6('cafe:babe:8000::'), v6('cafe:babe:8000::'), 33, true, 'a prefix that is not on a word boundary'],
    [v6('cafe:babe:0::1'), v6('cafe:babe:8000::'), 33, false, 'the 33rd bit differs'],
    [v6('::1'), v6('::'), 0, true, '/0 matches every IPv6 address'],
    [v6('::2'), v6('::1'), 128, false, '/128 is one address'],
    [v4('1.1.1.1'), v6('::1.1.1.1'), 0, false, 'an IPv4 address never matches ip6, even /0'],
    [v6('::1'), v4('0.0.0.0'), 0, false, 'an IPv6 address never matches ip4, even /0'],
  ])('%#: %s', (address, network, prefix, expected, _reason) => {
    expect(inNetwork(address, network, prefix)).toBe(expected);
  });
});

describe('reverseName', () => {
  it('names the in-addr.arpa and ip6.arpa owners (RFC 1035 §3.5, RFC 3596 §2.5)', () => {
    expect(reverseName(parseClientAddress('192.0.2.3')!)).toBe('3.2.0.192.in-addr.arpa');
    expect(reverseName(parseClientAddress('2001:db8::cb01')!)).toBe('1.0.b.c.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa');
  });
});
