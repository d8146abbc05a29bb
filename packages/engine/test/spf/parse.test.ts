import { describe, expect, it } from 'vitest';
import { formatIp4 } from '../../src/spf/address.js';
import { formatIp6, isSpfRecordText, parseSpfRecord } from '../../src/spf/index.js';
import type { SpfTerm } from '../../src/spf/index.js';

/** A compact, complete description of a parsed term, so each table row states the whole outcome. */
function describeTerm(term: SpfTerm): string {
  if (term.type === 'modifier') {
    return term.name === 'unknown' ? `?${term.key}=${term.value.text}` : `${term.name}=${term.domainSpec.text}`;
  }
  const mechanism = term.mechanism;
  let out = `${term.qualifier}${mechanism.name}`;
  switch (mechanism.name) {
    case 'include':
    case 'exists':
      out += `:${mechanism.domainSpec.text}`;
      break;
    case 'ptr':
      if (mechanism.domainSpec) out += `:${mechanism.domainSpec.text}`;
      break;
    case 'a':
    case 'mx':
      if (mechanism.domainSpec) out += `:${mechanism.domainSpec.text}`;
      if (mechanism.ip4Prefix !== 32) out += `/${mechanism.ip4Prefix}`;
      if (mechanism.ip6Prefix !== 128) out += `//${mechanism.ip6Prefix}`;
      break;
    case 'ip4':
      out += `:${formatIp4(mechanism.network.value)}/${mechanism.prefix}`;
      break;
    case 'ip6':
      out += `:${formatIp6(mechanism.network.words)}/${mechanism.prefix}`;
      break;
    case 'all':
      break;
  }
  return out;
}

describe('isSpfRecordText (RFC 7208 §4.5)', () => {
  it.each([
    ['v=spf1', true, 'the version alone is an (empty) record'],
    ['v=spf1 -all', true, 'version then a space'],
    ['V=SpF1 ~all', true, 'the version is case-insensitive'],
    ['v=spf10', false, 'the version must end at a space or the end'],
    ['v=spf1mx', false, 'joined strings without a space do not make a version'],
    ['v=spf1\t-all', false, 'only a space ends the version'],
    [' v=spf1 -all', false, 'leading space'],
    ['spf2.0/pra -all', false, 'Sender ID records are not SPF'],
    ['', false, 'empty text'],
  ])('%j → %s (%s)', (text, expected, _reason) => {
    expect(isSpfRecordText(text)).toBe(expected);
  });
});

describe('parseSpfRecord: records that parse', () => {
  it.each([
    ['v=spf1', [], 'an empty record is valid and neutral'],
    ['v=spf1 -all', ['-all'], 'qualifier and all'],
    ['v=spf1 all', ['+all'], 'a missing qualifier is "+"'],
    ['v=spf1  a   -all  ', ['+a', '-all'], 'runs of spaces and trailing spaces are separators'],
    ['v=spf1 ?include:_spf.example.com ~all', ['?include:_spf.example.com', '~all'], 'include with a qualifier'],
    ['v=spf1 INCLUDE:Example.COM -ALL', ['+include:Example.COM', '-all'], 'mechanism names are case-insensitive'],
    ['v=spf1 a mx ptr', ['+a', '+mx', '+ptr'], 'a, mx, ptr default to the current domain'],
    ['v=spf1 a:mail.example.com/24//64', ['+a:mail.example.com/24//64'], 'dual-cidr-length on a'],
    ['v=spf1 mx//0', ['+mx//0'], 'an IPv6 prefix alone'],
    ['v=spf1 a/0', ['+a/0'], 'an IPv4 prefix alone'],
    ['v=spf1 mx:a.example.com/0//0', ['+mx:a.example.com/0//0'], 'both prefixes 0, taken from the end'],
    ['v=spf1 a:x/1.example.com/24', ['+a:x/1.example.com/24'], 'a "/" and digits inside the domain-spec are not a prefix'],
    ['v=spf1 a:foo:bar/baz.example.com', ['+a:foo:bar/baz.example.com'], 'a domain-spec may hold ":" and "/"'],
    ['v=spf1 a:foo.example.xn--zckzah', ['+a:foo.example.xn--zckzah'], 'a top label with dashes (greedy toplabel)'],
    ['v=spf1 a:mail.example.com.', ['+a:mail.example.com.'], 'a trailing dot is allowed after the top label'],
    ['v=spf1 ptr:example.com', ['+ptr:example.com'], 'ptr with a domain'],
    ['v=spf1 ip4:192.0.2.0/24 ip4:198.51.100.7', ['+ip4:192.0.2.0/24', '+ip4:198.51.100.7/32'], 'ip4 with and without a prefix'],
    ['v=spf1 ip4:0.0.0.0/0', ['+ip4:0.0.0.0/0'], 'prefix 0'],
    ['v=spf1 ip6:2001:DB8::/32 ip6:::1', ['+ip6:2001:db8::/32', '+ip6:::1/128'], 'ip6 in any case; "ip6:::1" is ip6 and ::1'],
    ['v=spf1 ip6:::FFFF:1.2.3.4', ['+ip6:::ffff:102:304/128'], 'an IPv6 network with an embedded IPv4 address'],
    ['v=spf1 exists:%{i}._spf.%{d}', ['+exists:%{i}._spf.%{d}'], 'a domain-spec may end in a macro'],
    ['v=spf1 exists:%{ir}.%{l1r+-}._spf.%{d2}', ['+exists:%{ir}.%{l1r+-}._spf.%{d2}'], 'transformers and delimiters'],
    ['v=spf1 redirect=_spf.example.com', ['redirect=_spf.example.com'], 'redirect'],
    ['v=spf1 -all exp=explain.%{d}', ['-all', 'exp=explain.%{d}'], 'exp after all'],
    ['v=spf1 Redirect=a.example.com EXP=b.example.com', ['redirect=a.example.com', 'exp=b.example.com'], 'modifier names are case-insensitive'],
    ['v=spf1 moo.cow-far_out=man:dog/cat -all', ['?moo.cow-far_out=man:dog/cat', '-all'], 'an unknown modifier with a valid name is kept and ignored'],
    ['v=spf1 default=+ v=spf1', ['?default=+', '?v=spf1'], 'unknown modifiers, even "v" again'],
    ['v=spf1 foo=%{c}%{r}%{t}', ['?foo=%{c}%{r}%{t}'], 'an unknown modifier may use every macro letter'],
    ['v=spf1 a:macro%%percent%_%_space%-url-space.example.com', ['+a:macro%%percent%_%_space%-url-space.example.com'], 'escapes %% %_ %-'],
  ])('%j → %j (%s)', (text, expected, _reason) => {
    const parsed = parseSpfRecord(text);
    if (!parsed.ok) throw new Error(`unexpected errors: ${JSON.stringify(parsed.errors)}`);
    expect(parsed.record.terms.map(describeTerm)).toEqual(expected);
    expect(parsed.record.text).toBe(text);
  });

  it('records where each term is and separates directives from modifiers', () => {
    const parsed = parseSpfRecord('v=spf1 ip4:192.0.2.1  redirect=b.example -all exp=e.example');
    if (!parsed.ok) throw new Error('should parse');
    expect(parsed.record.terms.map((term) => [term.text, term.position])).toEqual([
      ['ip4:192.0.2.1', 7],
      ['redirect=b.example', 22],
      ['-all', 41],
      ['exp=e.example', 46],
    ]);
    expect(parsed.record.directives.map((directive) => directive.text)).toEqual(['ip4:192.0.2.1', '-all']);
    expect(parsed.record.redirect?.text).toBe('redirect=b.example');
    expect(parsed.record.exp?.text).toBe('exp=e.example');
    expect(parsed.record.hasAll).toBe(true);
  });
});

describe('parseSpfRecord: records that are permerrors', () => {
  it.each([
    ['v=spf10 -all', '', 0, 'does not start with "v=spf1"', 'wrong version'],
    ['v=spf1 -all moo', 'moo', 12, 'not an SPF mechanism', 'unknown mechanism anywhere, even after all (RFC 7208 §4.6)'],
    ['v=spf1 redirect:t2.example.com', 'redirect:t2.example.com', 7, 'not an SPF mechanism', 'redirect is a modifier, not a mechanism'],
    ['v=spf1 moo.cow/far_out=man:dog/cat', 'moo.cow/far_out=man:dog/cat', 7, 'not an SPF mechanism', '"/" before "=" means it is not a modifier'],
    ['v=spf1 1up=foo', '1up=foo', 7, 'not a valid modifier name', 'a modifier name starts with a letter'],
    ['v=spf1 =all', '=all', 7, 'not a valid modifier name', 'an empty modifier name'],
    ['v=spf1 foo=%abc', 'foo=%abc', 11, 'must be followed by', 'an unknown modifier needs a valid macro-string'],
    ['v=spf1 -all.', '-all.', 8, 'not an SPF mechanism', '"all." is not "all"'],
    ['v=spf1 -all:foobar', '-all:foobar', 11, 'takes no argument', 'all takes no domain'],
    ['v=spf1 -all/8', '-all/8', 11, 'takes no argument', 'all takes no prefix'],
    ['v=spf1 include', 'include', 14, 'needs ":" and a domain', 'include needs a domain'],
    ['v=spf1 include:', 'include:', 15, 'the domain is empty', 'empty include domain'],
    ['v=spf1 include:ip5.example.com/24', 'include:ip5.example.com/24', 27, 'not a valid top-level label', 'include takes no prefix'],
    ['v=spf1 exists', 'exists', 13, 'needs ":" and a domain', 'exists needs a domain'],
    ['v=spf1 exists:mail.example.com/24', 'exists:mail.example.com/24', 27, 'not a valid top-level label', 'exists takes no prefix'],
    ['v=spf1 ptr/0', 'ptr/0', 10, 'takes no prefix length', 'ptr takes no prefix'],
    ['v=spf1 ptr:', 'ptr:', 11, 'the domain is empty', 'empty ptr domain'],
    ['v=spf1 a:', 'a:', 9, 'the domain is empty', 'empty a domain'],
    ['v=spf1 a/33', 'a/33', 8, 'not an IPv4 prefix length', 'IPv4 prefix over 32'],
    ['v=spf1 a//129', 'a//129', 8, 'not an IPv6 prefix length', 'IPv6 prefix over 128'],
    ['v=spf1 a/24/64', 'a/24/64', 11, 'not an IPv4 prefix length', 'the IPv6 prefix needs "//"'],
    ['v=spf1 a/024', 'a/024', 8, 'not an IPv4 prefix length', 'leading zero in a prefix'],
    ['v=spf1 a:foo-bar', 'a:foo-bar', 9, 'not a domain name', 'a domain-spec needs a dot and a top label'],
    ['v=spf1 a:museum', 'a:museum', 9, 'not a domain name', 'a top label alone is not enough'],
    ['v=spf1 a:museum.', 'a:museum.', 9, 'not a domain name', 'nor with a trailing dot'],
    ['v=spf1 a:abc.123', 'a:abc.123', 13, 'not a valid top-level label', 'an all-numeric top label'],
    ['v=spf1 a:111.222.33.44', 'a:111.222.33.44', 20, 'not a valid top-level label', 'an IP address is not a domain'],
    ['v=spf1 a:example.-com', 'a:example.-com', 17, 'not a valid top-level label', 'a top label cannot start with a dash'],
    ['v=spf1 a:example.com:8080', 'a:example.com:8080', 17, 'not a valid top-level label', 'no port numbers'],
    ['v=spf1 a:%{d}.', 'a:%{d}.', 9, 'not a domain name', 'a trailing dot after a macro leaves no top label'],
    ['v=spf1 ip4', 'ip4', 10, 'needs ":" and a network', 'ip4 needs a network'],
    ['v=spf1 ip4:1.2.3', 'ip4:1.2.3', 11, 'not an IPv4 address', 'a short address is not a network (RFC 7208 §5.6)'],
    ['v=spf1 ip4:1.2.3.4:8080', 'ip4:1.2.3.4:8080', 11, 'not an IPv4 address', 'no port numbers'],
    ['v=spf1 ip4:01.2.3.4', 'ip4:01.2.3.4', 11, 'not an IPv4 address', 'leading zeros in a qnum'],
    ['v=spf1 ip4:256.2.3.4', 'ip4:256.2.3.4', 11, 'not an IPv4 address', 'octet over 255'],
    ['v=spf1 ip4:1.2.3.4/33', 'ip4:1.2.3.4/33', 18, 'not an IPv4 prefix length', 'ip4 prefix over 32'],
    ['v=spf1 ip4:1.2.3.4/032', 'ip4:1.2.3.4/032', 18, 'not an IPv4 prefix length', 'leading zero in the prefix'],
    ['v=spf1 ip4:1.2.3.4//32', 'ip4:1.2.3.4//32', 18, 'not an IPv4 prefix length', 'dual-cidr is not for ip4'],
    ['v=spf1 a:example.com/33', 'a:example.com/33', 20, 'not an IPv4 prefix length', 'a prefix over 32 on a'],
    ['v=spf1 a:example.com//129', 'a:example.com//129', 20, 'not an IPv6 prefix length', 'a prefix over 128 on a'],
    ['v=spf1 a:example.com//064', 'a:example.com//064', 20, 'not an IPv6 prefix length', 'a leading zero in the IPv6 prefix'],
    ['v=spf1 a:example.com/24/64', 'a:example.com/24/64', 23, 'not an IPv4 prefix length', 'two single slashes: the last is read as the IPv4 prefix'],
    ['v=spf1 ip6::CAFE::BABE', 'ip6::CAFE::BABE', 11, 'not an IPv6 address', 'a leading single colon'],
    ['v=spf1 ip6:::1.1.1.1/129', 'ip6:::1.1.1.1/129', 20, 'not an IPv6 prefix length', 'ip6 prefix over 128'],
    ['v=spf1 ip6:::1.1.1.1//33', 'ip6:::1.1.1.1//33', 20, 'not an IPv6 prefix length', 'dual-cidr is not for ip6'],
    ['v=spf1 ip6:1:2:3:4:5:6:7:8:9', 'ip6:1:2:3:4:5:6:7:8:9', 11, 'not an IPv6 address', 'nine groups'],
    ['v=spf1 redirect=a.example redirect=b.example', 'redirect=b.example', 26, 'appears more than once', 'two redirects (RFC 7208 §6)'],
    ['v=spf1 exp=a.example -all exp=b.example', 'exp=b.example', 26, 'appears more than once', 'two exps (RFC 7208 §6)'],
    ['v=spf1 redirect=', 'redirect=', 16, 'the domain is empty', 'redirect needs a domain'],
    ['v=spf1 exp=', 'exp=', 11, 'the domain is empty', 'exp needs a domain'],
    ['v=spf1 exp=-all', 'exp=-all', 11, 'not a domain name', 'exp= is not greedy: "-all" is not a domain'],
    ['v=spf1 -all exp=%{r}.example.com', 'exp=%{r}.example.com', 16, 'only allowed in explanation text', 'c, r, t only in explanation text (RFC 7208 §7.2)'],
    ['v=spf1 a:%{a}.example.com', 'a:%{a}.example.com', 9, 'is not a macro letter', 'undefined macro letter'],
    ['v=spf1 exists:%(ir).sbl.example.com', 'exists:%(ir).sbl.example.com', 14, 'must be followed by', '"%(" is not a macro'],
    ['v=spf1 exists:foo%.sbl.example.com', 'exists:foo%.sbl.example.com', 17, 'must be followed by', 'a lone "%"'],
    ['v=spf1 exists:%{d0}.example.com', 'exists:%{d0}.example.com', 14, 'keeps zero parts', 'a zero DIGIT transformer (RFC 7208 §7.3)'],
    ['v=spf1 exists:%{d', 'exists:%{d', 14, 'not closed', 'an unclosed macro'],
    ['v=spf1 exists:%{d*}.example.com', 'exists:%{d*}.example.com', 14, 'not a macro delimiter', 'an invalid delimiter'],
    ['v=spf1 a:ctrl.example.com\rptr -all', 'a:ctrl.example.com\rptr', 25, 'control character U+000D', 'only SP separates terms (RFC 7208 §12)'],
    ['v=spf1 ip4:192.0.2.5\n include:x.example ~all', 'ip4:192.0.2.5\n', 20, 'control character U+000A', 'a newline is not a separator'],
    ['v=spf1 a:\u00EF\u00BB\u00BFgarbage.example.net -all', 'a:\u00EF\u00BB\u00BFgarbage.example.net', 9, 'non-ASCII character U+00EF', 'records are US-ASCII (RFC 7208 §3.1)'],
    ['v=spf1 a:example.net \u0096all', '\u0096all', 21, 'non-ASCII character U+0096', 'non-ASCII before a mechanism'],
    ['v=spf1 a:foo.example.com\0', 'a:foo.example.com\0', 24, 'control character U+0000', 'a NUL in the top label'],
  ])('%j → error in %j at %i (%s; %s)', (text, term, position, message, _reason) => {
    const parsed = parseSpfRecord(text);
    if (parsed.ok) throw new Error('should not parse');
    expect(parsed.errors[0]).toMatchObject({ term, position });
    expect(parsed.errors[0]!.message).toContain(message);
  });

  it('reports every bad term and still lists the good ones', () => {
    const parsed = parseSpfRecord('v=spf1 a moo ip4:1.2.3 include:_spf.example.com cow -all');
    if (parsed.ok) throw new Error('should not parse');
    expect(parsed.errors.map((error) => error.term)).toEqual(['moo', 'ip4:1.2.3', 'cow']);
    expect(parsed.terms.map(describeTerm)).toEqual(['+a', '+include:_spf.example.com', '-all']);
  });

  it('stops describing a garbage record after MAX_REPORTED_SYNTAX_ERRORS errors and stays fast', () => {
    const garbage = `v=spf1 ${'x '.repeat(5_000)}`;
    const started = performance.now();
    const parsed = parseSpfRecord(garbage);
    expect(performance.now() - started).toBeLessThan(200);
    if (parsed.ok) throw new Error('should not parse');
    expect(parsed.errors).toHaveLength(10);
  });

  it('cuts a 10,000-character term in its message', () => {
    const parsed = parseSpfRecord(`v=spf1 ${'a'.repeat(10_000)}`);
    if (parsed.ok) throw new Error('should not parse');
    expect(parsed.errors[0]!.message.length).toBeLessThan(200);
    expect(parsed.errors[0]!.term).toHaveLength(10_000);
  });
});
