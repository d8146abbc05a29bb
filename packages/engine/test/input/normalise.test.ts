import { describe, expect, it } from 'vitest';
import { checkDomain } from '../../src/check.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { SpoofCheckError } from '../../src/errors.js';
import { normaliseDomainInput } from '../../src/input.js';

// Each row: what a user typed → the domain checked (and the form shown), with the reason.
const accepted: [input: string, domain: string, display: string, why: string][] = [
  ['example.com', 'example.com', 'example.com', 'a plain domain'],
  ['  Example.COM  ', 'example.com', 'example.com', 'trimmed and lower-cased'],
  ['example.com.', 'example.com', 'example.com', 'one trailing dot dropped'],
  ['ceo@example.com', 'example.com', 'example.com', 'an address keeps its domain'],
  ['"a@b"@mail.example.com', 'mail.example.com', 'mail.example.com', 'the last @ wins'],
  ['mailto:ceo@example.org', 'example.org', 'example.org', 'a mailto URI'],
  ['https://www.example.com/path?q=1#frag', 'www.example.com', 'www.example.com', 'a URL loses path, query, fragment'],
  ['http://user:secret@example.net:8080/x', 'example.net', 'example.net', 'a URL loses credentials and port'],
  ['https://example.com/contact?email=a@evil.test', 'example.com', 'example.com', 'an @ inside a URL query is not an address'],
  ['example.com:25', 'example.com', 'example.com', 'a bare name loses its port'],
  ['example.com/dmarc', 'example.com', 'example.com', 'a bare name loses its path'],
  ['bücher.example', 'xn--bcher-kva.example', 'bücher.example', 'IDN to A-labels, Unicode kept for display'],
  ['BÜCHER.example', 'xn--bcher-kva.example', 'bücher.example', 'IDN is case-folded'],
  ['xn--bcher-kva.example', 'xn--bcher-kva.example', 'bücher.example', 'A-labels shown as Unicode'],
  ['a-b.example.co.uk', 'a-b.example.co.uk', 'a-b.example.co.uk', 'hyphens inside labels'],
  ['_spf.example.com', '_spf.example.com', '_spf.example.com', 'underscore labels are DNS names too'],
  ['example.com\n', 'example.com', 'example.com', 'white space around the name is trimmed, not refused'],
  ['1e100.net', '1e100.net', '1e100.net', 'digits in labels other than the last are fine'],
  ['0x.com', '0x.com', '0x.com', 'a hex-looking label that is not the last'],
  ['a.0xg', 'a.0xg', 'a.0xg', 'a last label that is not a hex number'],
];

// Each row: input → the start of the refusal message, with the reason.
const refused: [input: string, message: RegExp, why: string][] = [
  ['', /empty/, 'nothing typed'],
  ['   ', /empty/, 'only spaces'],
  ['a'.repeat(256), /256 characters long; at most 255/, 'over the 255-character bound'],
  ['192.0.2.1', /IP address/, 'an IPv4 literal'],
  ['[2001:db8::1]', /IP address/, 'an IPv6 literal in brackets'],
  ['2001:db8::1', /IP address/, 'an IPv6 literal without brackets'],
  ['user@[192.0.2.1]', /IP address/, 'an address with an IP literal'],
  ['http://192.0.2.1/', /IP address/, 'a URL with an IP host'],
  ['localhost', /single label|special-use/, 'a single label'],
  ['intranet', /single label/, 'a single label'],
  ['mail.localhost', /special-use name \(\.localhost\)/, 'RFC 6761 localhost'],
  ['printer.local', /special-use name \(\.local\)/, 'mDNS'],
  ['corp.internal', /special-use name \(\.internal\)/, 'private use'],
  ['1.2.0.192.in-addr.arpa', /special-use name \(\.arpa\)/, 'infrastructure'],
  ['x.invalid', /special-use name \(\.invalid\)/, 'RFC 6761 invalid'],
  [`${'a'.repeat(64)}.example`, /63/, 'a label over 63 octets'],
  [`${'abcdefghi.'.repeat(25)}abcd`, /254 octets long; DNS allows at most 253/, 'a name over 253 octets'],
  ['exa mple.com', /not a valid domain name|not allowed/, 'a space inside'],
  ['a..example.com', /empty label|not a valid/, 'an empty label'],
  ['-bad.example.com', /not allowed in a host name/, 'a leading hyphen'],
  ['ceo@', /no domain name/, 'an address without a domain'],
  ['https://', /no domain name|not a valid/, 'a URL without a host'],
  // RFC 1123 §2.1, RFC 3696 §2: a name ending in a number is what URL parsers read as an IPv4 address.
  ['9', /last label "9" is a number, which URL parsers read as the IP address 0\.0\.0\.9/, 'one number'],
  ['127.1', /last label "1" is a number, which URL parsers read as the IP address 127\.0\.0\.1/, 'a short dotted IPv4'],
  ['0x7f.1', /last label "1" is a number, which URL parsers read as the IP address 127\.0\.0\.1/, 'a hex IPv4 part'],
  ['2130706433', /last label "2130706433" is a number, which URL parsers read as the IP address 127\.0\.0\.1/, 'IPv4 as one decimal number'],
  ['0x7f000001', /last label "0x7f000001" is a number, which URL parsers read as the IP address 127\.0\.0\.1/, 'IPv4 as one hex number'],
  ['ceo@127.1', /is a number, which URL parsers read as the IP address 127\.0\.0\.1/, 'an address at a numeric host'],
  ['example.123', /last label "123" is a number\./, 'an all-numeric top-level label'],
  ['example.0x1f', /last label "0x1f" is a number\./, 'a hex top-level label'],
  ['１２７．０．０．１', /is a number, which URL parsers read as the IP address 127\.0\.0\.1/, 'full-width digits and dots'],
  ['example.１２３', /last label "123" is a number/, 'full-width digits in the top-level label'],
  // Control and invisible characters are refused, never dropped (the URL parser drops tabs and newlines).
  ['exa\u0000mple.com', /"exa\\u0000mple\.com" contains a control character \(U\+0000\) at position 4/, 'NUL inside'],
  ['exa\tmple.com', /contains a control character \(U\+0009\) at position 4/, 'a tab inside'],
  ['https://exa\nmple.com/', /contains a control character \(U\+000A\) at position 12/, 'a newline inside a URL'],
  ['example.com\u0085', /contains a control character \(U\+0085\)/, 'a C1 control'],
  ['example.com\u007f', /contains a control character \(U\+007F\)/, 'DEL'],
  ['ex\u00adample.com', /contains an invisible character \(U\+00AD\) at position 3/, 'a soft hyphen IDNA would drop'],
  ['exa\u200bmple.com', /contains an invisible character \(U\+200B\)/, 'a zero width space'],
];

describe('normaliseDomainInput', () => {
  it.each(accepted)('%s → %s (%s / %s)', (input, domain, display) => {
    expect(normaliseDomainInput(input)).toEqual({ ok: true, domain, displayDomain: display });
  });

  it.each(refused)('refuses %j: %s (%s)', (input, message) => {
    const result = normaliseDomainInput(input);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.message).toMatch(message);
      expect(result.fix.length).toBeGreaterThan(10);
    }
  });

  it('allows special-use names when configured to', () => {
    expect(normaliseDomainInput('printer.local', { specialUseSuffixes: [] })).toEqual({
      ok: true,
      domain: 'printer.local',
      displayDomain: 'printer.local',
    });
  });

  // Before the normaliser refused them these reached DNS as 127.0.0.1 (and got a verdict).
  it.each(['9', '127.1', '0x7f.1', '2130706433', 'exa\u0000mple.com'])('checkDomain refuses %j with invalid_domain before any DNS query', async (input) => {
    const queried: string[] = [];
    const zones = new ZoneResolver([]);
    const resolver = { resolve: ((name: string, type: never) => (queried.push(name), zones.resolve(name, type))) as ZoneResolver['resolve'] };
    const refusal = await checkDomain(input, { resolver }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(SpoofCheckError);
    expect(refusal).toMatchObject({ code: 'invalid_domain' });
    expect((refusal as SpoofCheckError).fix.length).toBeGreaterThan(10);
    expect(queried).toEqual([]);
  });
});

// A name already in its final form takes a short path (no IDNA, no URL parsing). These pairs hold
// one name that takes it and one spelling of the same input that cannot, so both paths must agree.
describe('the short path for names already in their final form', () => {
  const pairs: [plain: string, spelled: string][] = [
    ['example.com', 'EXAMPLE.com.'],
    ['a-b.example.co.uk', ' A-B.Example.CO.UK '],
    ['1e100.net', 'https://1E100.net/'],
    ['0x.com', 'ceo@0X.com'],
    ['a.0xg', 'A.0XG'],
    ['ab--cd.example', 'AB--CD.example'],
  ];
  it.each(pairs)('%s gives what %j gives', (plain, spelled) => {
    expect(normaliseDomainInput(plain)).toEqual(normaliseDomainInput(spelled));
    expect(normaliseDomainInput(plain)).toEqual({ ok: true, domain: plain, displayDomain: plain });
  });

  // Lower-case and dotted like a plain name, but each must still be refused (or converted) as before.
  const refusedOrConverted: [input: string, expected: Partial<ReturnType<typeof normaliseDomainInput>>][] = [
    ['printer.local', { ok: false }],
    ['localhost', { ok: false }],
    [`${'a'.repeat(64)}.example`, { ok: false }],
    [`${'abcdefghi.'.repeat(25)}example`, { ok: false }],
    ['-ab.example', { ok: false }],
    ['xn--bcher-kva.example', { ok: true, domain: 'xn--bcher-kva.example', displayDomain: 'bücher.example' }],
  ];
  it.each(refusedOrConverted)('%s takes the full path', (input, expected) => {
    expect(normaliseDomainInput(input)).toMatchObject(expected);
  });
});
