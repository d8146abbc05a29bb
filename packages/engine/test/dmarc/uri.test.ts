import { describe, expect, it } from 'vitest';
import { isHostName, parseReportUri, splitUriList } from '../../src/dmarc/uri.js';

describe('parseReportUri', () => {
  it.each<[string, object, string]>([
    ['mailto:d@example.com', { ok: true, uri: { uri: 'mailto:d@example.com', scheme: 'mailto', address: 'd@example.com', domain: 'example.com', sizeLimit: null } }, 'plain mailto'],
    ['MAILTO:D@Example.COM', { ok: true, uri: { uri: 'MAILTO:D@Example.COM', scheme: 'mailto', address: 'D@Example.COM', domain: 'example.com', sizeLimit: null } }, 'scheme and domain compare case-insensitively'],
    ['mailto:user%20x@example.com', { ok: true, uri: { address: 'user x@example.com', domain: 'example.com' } }, 'percent-decoded address'],
    ['mailto:d@example.com?subject=dmarc', { ok: true, uri: { address: 'd@example.com', domain: 'example.com' } }, 'hfields are not part of the address'],
    ['mailto:d@example.com!10m', { ok: true, uri: { uri: 'mailto:d@example.com', sizeLimit: { digits: '10', unit: 'm', bytes: 10 * 2 ** 20 } } }, 'size suffix split off'],
    ['mailto:d@example.com!500', { ok: true, uri: { sizeLimit: { digits: '500', unit: null, bytes: 500 } } }, 'size in bytes without a unit'],
    ['mailto:d@example.com!1T', { ok: true, uri: { sizeLimit: { unit: 't', bytes: 2 ** 40 } } }, 'unit letters are case-insensitive'],
    ['mailto:d@example.com!18446744073709551616', { ok: true, uri: { sizeLimit: { bytes: null } } }, '2^64 does not fit: kept as a URI (RFC 9989), bytes unknown'],
    ['https://r.example.net:8443/in', { ok: true, uri: { scheme: 'https', address: null, domain: 'r.example.net' } }, 'host of a non-mailto URI'],
    ['', { ok: false, problem: 'empty' }, 'empty entry'],
    ['d@example.com', { ok: false, problem: 'no-scheme' }, 'an address is not a URI'],
    ['1mailto:d@example.com', { ok: false, problem: 'no-scheme' }, 'a scheme starts with a letter'],
    ['mailto:d@example.com!', { ok: false, problem: 'bad-size-suffix' }, 'bare "!"'],
    ['mailto:d!x@example.com', { ok: false, problem: 'bad-size-suffix' }, '"!" must be percent-encoded'],
    ['mailto:d@example.com!10 k', { ok: false, problem: 'bad-character' }, 'space inside the size suffix'],
    ['mailto:d x@example.com', { ok: false, problem: 'bad-character' }, 'an unencoded space'],
    ['mailto:d%2@example.com', { ok: false, problem: 'bad-percent-encoding' }, 'a "%" needs two hex digits'],
    ['mailto:d@', { ok: false, problem: 'bad-mailto-address' }, 'no domain'],
    ['mailto:@example.com', { ok: false, problem: 'bad-mailto-address' }, 'no local part'],
    ['mailto:d@exa_mple.com', { ok: false, problem: 'bad-mailto-address' }, 'an underscore is not a host name character'],
  ])('%s (%s)', (entry, expected) => {
    expect(parseReportUri(entry)).toMatchObject(expected);
  });
});

describe('splitUriList', () => {
  it('splits on commas with whitespace around them and keeps empty entries', () => {
    expect(splitUriList('mailto:a@x.example , \tmailto:b@y.example,,')).toEqual(['mailto:a@x.example', 'mailto:b@y.example', '', '']);
  });
});

describe('isHostName', () => {
  it.each<[string, boolean]>([
    ['example.com', true],
    ['xn--bcher-kva.de', true],
    ['example', true],
    ['-bad.example', false],
    ['a..b', false],
    ['', false],
    [`${'a'.repeat(64)}.example`, false],
  ])('%s → %s', (name, expected) => {
    expect(isHostName(name)).toBe(expected);
  });
});
