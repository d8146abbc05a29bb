import { describe, expect, it } from 'vitest';
import { parseClientAddress } from '../../src/spf/address.js';
import { expandMacroString, parseDomainSpec, parseMacroString, toTargetName, urlEscape } from '../../src/spf/index.js';
import type { MacroContext, MacroSyntax } from '../../src/spf/index.js';

/** The context of RFC 7208 §7.4's examples: sender strong-bad@email.example.com, <domain> email.example.com. */
function context(ip: string, overrides: Partial<MacroContext> = {}): MacroContext {
  const client = parseClientAddress(ip);
  if (client === null) throw new Error(`bad test address ${ip}`);
  return {
    sender: 'strong-bad@email.example.com',
    localPart: 'strong-bad',
    senderDomain: 'email.example.com',
    domain: 'email.example.com',
    client,
    helo: 'mx.example.org',
    validatedName: 'mx.example.org',
    receiver: 'receiver.example',
    timestamp: 1_700_000_000,
    ...overrides,
  };
}

function expand(text: string, ip: string, syntax: MacroSyntax = 'modifier', overrides: Partial<MacroContext> = {}): string {
  const parsed = parseMacroString(text, syntax);
  if (!parsed.ok) throw new Error(`does not parse: ${parsed.error.message}`);
  return expandMacroString(parsed.value, context(ip, overrides));
}

describe('expandMacroString: RFC 7208 §7.4 examples', () => {
  it.each([
    ['%{s}', 'strong-bad@email.example.com', 'sender'],
    ['%{o}', 'email.example.com', 'sender domain'],
    ['%{d}', 'email.example.com', 'current domain'],
    ['%{d4}', 'email.example.com', 'more parts than exist keeps all'],
    ['%{d3}', 'email.example.com', 'exactly the parts that exist'],
    ['%{d2}', 'example.com', 'right-most two parts'],
    ['%{d1}', 'com', 'right-most part'],
    ['%{dr}', 'com.example.email', 'reversed'],
    ['%{d2r}', 'example.email', 'reversed, then right-most two'],
    ['%{l}', 'strong-bad', 'local part'],
    ['%{l-}', 'strong.bad', 'split on "-", joined with "."'],
    ['%{lr}', 'strong-bad', 'reversed on "." (no dots to reverse)'],
    ['%{lr-}', 'bad.strong', 'split on "-" and reversed'],
    ['%{l1r-}', 'strong', 'split, reversed, right-most one'],
    ['%{ir}.%{v}._spf.%{d2}', '3.2.0.192.in-addr._spf.example.com', 'reverse IP and version'],
    ['%{lr-}.lp._spf.%{d2}', 'bad.strong.lp._spf.example.com', 'combined'],
    ['%{lr-}.lp.%{ir}.%{v}._spf.%{d2}', 'bad.strong.lp.3.2.0.192.in-addr._spf.example.com', 'combined'],
    ['%{ir}.%{v}.%{l1r-}.lp._spf.%{d2}', '3.2.0.192.in-addr.strong.lp._spf.example.com', 'combined'],
    ['%{d2}.trusted-domains.example.net', 'example.com.trusted-domains.example.net', 'a literal after a macro'],
  ])('%s → %s (%s)', (text, expected, _reason) => {
    expect(expand(text, '192.0.2.3')).toBe(expected);
  });

  it('expands %{ir} and %{v} of an IPv6 client to nibbles (RFC 7208 §7.4)', () => {
    expect(expand('%{ir}.%{v}._spf.%{d2}', '2001:db8::cb01')).toBe('1.0.b.c.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6._spf.example.com');
  });
});

describe('expandMacroString: letters, transformers and escapes', () => {
  it.each([
    ['%{i}', '192.0.2.3', '192.0.2.3', 'IPv4 "i" is the dotted quad'],
    ['%{c}', '192.0.2.3', '192.0.2.3', 'IPv4 "c" is the dotted quad'],
    ['%{i}', '2001:DB8::CB01', '2.0.0.1.0.d.b.8.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.c.b.0.1', 'IPv6 "i" is 32 nibbles'],
    ['%{c}', '2001:DB8:0:0:0:0:0:CB01', '2001:db8::cb01', 'IPv6 "c" is RFC 5952 text'],
    ['%{v}', '::ffff:192.0.2.3', 'in-addr', 'an IPv4-mapped client is IPv4'],
    ['%{i}', '::ffff:192.0.2.3', '192.0.2.3', 'an IPv4-mapped client expands as IPv4'],
    ['%{h}', '192.0.2.3', 'mx.example.org', 'HELO name'],
    ['%{p}', '192.0.2.3', 'mx.example.org', 'the validated name, computed beforehand'],
    ['%{r}', '192.0.2.3', 'receiver.example', 'receiver'],
    ['%{t}', '192.0.2.3', '1700000000', 'timestamp'],
    ['%{D}', '192.0.2.3', 'email.example.com', 'upper case: nothing to escape in a domain'],
    ['%{S}', '192.0.2.3', 'strong-bad%40email.example.com', 'upper case escapes "@"'],
    ['%{d.}', '192.0.2.3', 'email.example.com', 'an explicit "." delimiter changes nothing'],
    ['%{s-.}', '192.0.2.3', 'strong.bad@email.example.com', 'split on any of several delimiters'],
    ['%{l2-}', '192.0.2.3', 'strong.bad', 'the DIGIT counts parts after splitting on "-"'],
    ['%{d999999999999}', '192.0.2.3', 'email.example.com', 'a huge DIGIT keeps every part'],
    ['%%%_%-', '192.0.2.3', '% %20', 'the three escapes'],
    ['a%{o}b', '192.0.2.3', 'aemail.example.comb', 'literals around a macro'],
  ])('%s with %s → %s (%s)', (text, ip, expected, _reason) => {
    expect(expand(text, ip)).toBe(expected);
  });

  it('URL-escapes every character outside RFC 3986 unreserved, as UTF-8 (RFC 7208 §7.3)', () => {
    expect(urlEscape('~jack&jill=up-a_b3.c')).toBe('~jack%26jill%3Dup-a_b3.c');
    expect(urlEscape("JUMPIN' JUPITER")).toBe('JUMPIN%27%20JUPITER');
    expect(urlEscape('é!*')).toBe('%C3%A9%21%2A');
    expect(expand('%{L}', '192.0.2.3', 'modifier', { localPart: '~jack&jill=up-a_b3.c' })).toBe('~jack%26jill%3Dup-a_b3.c');
  });

  it('allows spaces and c, r, t only in explanation text', () => {
    expect(expand('Mail from %{c} to %{r} is not allowed', '192.0.2.3', 'explain')).toBe('Mail from 192.0.2.3 to receiver.example is not allowed');
    expect(parseMacroString('a b', 'modifier').ok).toBe(false);
    expect(parseMacroString('%{c}', 'domain').ok).toBe(false);
  });
});

describe('parseMacroString / parseDomainSpec: syntax errors', () => {
  it.each([
    ['%', 'domain', 0, 'must be followed by', 'a lone "%" at the end'],
    ['a%xb', 'domain', 1, 'must be followed by', '"%x" is not a macro'],
    ['%{}', 'domain', 0, 'names no letter', 'no letter'],
    ['%{q}', 'domain', 0, 'is not a macro letter', 'undefined letter'],
    ['%{t}', 'domain', 0, 'only allowed in explanation text', '"t" outside explanations'],
    ['%{d0}', 'domain', 0, 'keeps zero parts', 'zero DIGIT'],
    ['%{d2x}', 'domain', 0, 'not a macro delimiter', '"x" is not a delimiter'],
    ['%{d', 'domain', 0, 'not closed', 'unclosed'],
    ['tab\there', 'explain', 3, 'control character U+0009', 'a tab is not SP'],
    ['\u00EFx', 'explain', 0, 'non-ASCII character U+00EF', 'non-ASCII explanation text (RFC 7208 §6.2)'],
  ] as const)('%j as %s → error at %i (%s; %s)', (text, syntax, offset, message, _reason) => {
    const parsed = parseMacroString(text, syntax);
    if (parsed.ok) throw new Error('should not parse');
    expect(parsed.error.offset).toBe(offset);
    expect(parsed.error.message).toContain(message);
  });

  it.each([
    ['example.com', true, 'a plain domain'],
    ['example.com.', true, 'a trailing dot'],
    ['%{d}', true, 'ends in a macro'],
    ['%{d}.com', true, 'literal top label after a macro'],
    ['foo%%', true, '"%%" is a macro-expand, so a valid domain-end'],
    ['.com', true, 'the ABNF allows an empty macro-string before "." toplabel'],
    ['com', false, 'no dot'],
    ['%{d}com', false, 'the top label must follow a literal dot'],
    ['%{d.}com', false, 'a dot inside the macro does not count'],
    ['example.123', false, 'numeric top label'],
    ['example.c_m', false, 'underscore in the top label'],
    ['', false, 'empty'],
    // RFC 7208 §7.1 toplabel, each branch of the hand-written scan that replaced a backtracking pattern.
    ['example.1a2', true, 'digits around one letter'],
    ['example.1-2', true, 'all digits but with an inner dash (the second alternative)'],
    ['example.a--b', true, 'several inner dashes'],
    ['example.-ab', false, 'a leading dash'],
    ['example.ab-', false, 'a trailing dash'],
    ['example.-', false, 'a dash alone'],
    ['example.ab!', false, 'a bad last character'],
    [`x.${'a'.repeat(10_000)}!`, false, 'a long top label with a bad last character (once quadratic)'],
    [`x.${'a'.repeat(10_000)}`, true, 'a long top label'],
  ])('domain-spec %j valid: %s (%s)', (text, valid, _reason) => {
    expect(parseDomainSpec(text).ok).toBe(valid);
  });
});

describe('toTargetName (RFC 7208 §7.3, §4.8)', () => {
  const label63 = 'a'.repeat(63);
  it.each([
    ['mail.example.com', true, 'mail.example.com', 'as is'],
    ['mail.example.com.', false, 'mail.example.com', 'one trailing dot is dropped'],
    [`${label63}.${label63}.${label63}.${label63}.example.com`, true, `${label63}.${label63}.${label63}.example.com`, 'a 267-octet expansion loses its left-most label'],
    [`x.${'b'.repeat(300)}`, true, null, 'truncation cannot save a single huge label'],
    [`${label63}.${label63}.${label63}.${label63}.example.com`, false, null, 'a literal name is not truncated; it is invalid'],
    ['mail..example.com', false, null, 'an empty label'],
    [`${'a'.repeat(64)}.example.com`, false, null, 'a label over 63 octets'],
    ['.', false, null, 'nothing left to look up'],
    ['77.77.77.16.77.77.77.16', true, null, 'an expansion ending in an all-numeric label: no TLD is numeric, nothing to ask'],
    ['16.77.77.77.in-addr.example', true, '16.77.77.77.in-addr.example', 'numbers below a real top label are asked for'],
  ])('%#: %s (from a macro: %s) → %s (%s)', (expanded, fromMacro, expected, _reason) => {
    const target = toTargetName(expanded, fromMacro);
    if (expected === null) expect(target.ok).toBe(false);
    else expect(target).toEqual({ ok: true, name: expected });
  });

  it('truncates the suite example to 253 octets or fewer', () => {
    const part = 'somewhat.long.exp.example.com';
    const target = toTargetName(`foobar.${`${part}.`.repeat(8)}example.com`, true);
    expect(target).toEqual({ ok: true, name: `${`${part}.`.repeat(8)}example.com` });
  });
});
