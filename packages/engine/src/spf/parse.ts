/**
 * The SPF record parser (RFC 7208 §4.6, §12). Pure: text in, record or errors out; never throws.
 * Strict where the RFC is: an unknown mechanism, a bad CIDR length, a second `redirect` or `exp`, a
 * control or non-ASCII character anywhere makes the whole record a permerror, even in a term the
 * evaluation would never reach (RFC 7208 §4.6: "syntax errors anywhere in the record").
 */
import { IP4_BITS, IP6_BITS, parseIp4, parseIp6 } from './address.js';
import { parseDomainSpec, parseMacroString } from './macro.js';
import { describeCharacter, truncateForMessage } from './text.js';
import type { Directive, Mechanism, MacroString, Modifier, Qualifier, SpfParseResult, SpfSyntaxError, SpfTerm } from './types.js';

/** RFC 7208 §4.5: the version section every SPF record starts with. */
export const SPF_VERSION = 'v=spf1';

/** How many syntax errors one parse reports; a garbage record stops being described after this. */
export const MAX_REPORTED_SYNTAX_ERRORS = 10;

/**
 * RFC 7208 §4.5: true when `text` begins with "v=spf1" (any case) followed by a space or the end.
 * "v=spf10" and "v=spf1mx" are not SPF records.
 */
export function isSpfRecordText(text: string): boolean {
  if (text.length < SPF_VERSION.length) return false;
  if (text.length > SPF_VERSION.length && text.charCodeAt(SPF_VERSION.length) !== 0x20) return false;
  return text.slice(0, SPF_VERSION.length).toLowerCase() === SPF_VERSION;
}

/**
 * RFC 7208 §12 `name = ALPHA *( ALPHA / DIGIT / "-" / "_" / "." )` followed by "=": what makes a term
 * a modifier rather than a mechanism. Parsing is hand-written scans throughout: record text comes
 * from anyone's DNS, and no step may take more than linear time in it.
 */
function isModifierTerm(term: string): boolean {
  const first = term.charCodeAt(0);
  if (!isAlpha(first)) return false;
  for (let index = 1; index < term.length; index++) {
    const code = term.charCodeAt(index);
    if (code === 0x3d) return true; // "="
    if (!isAlpha(code) && !isDigit(code) && code !== 0x2d && code !== 0x5f && code !== 0x2e) return false;
  }
  return false;
}

function isAlpha(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/** Parses one SPF record (the joined text of a TXT record, RFC 7208 §3.3). */
export function parseSpfRecord(text: string): SpfParseResult {
  const errors: SpfSyntaxError[] = [];
  const terms: SpfTerm[] = [];
  if (!isSpfRecordText(text)) {
    return { ok: false, errors: [{ message: `the record does not start with "${SPF_VERSION}" followed by a space`, position: 0, term: '' }], terms };
  }
  let redirect: (Modifier & { name: 'redirect' }) | null = null;
  let exp: (Modifier & { name: 'exp' }) | null = null;
  const directives: Directive[] = [];
  let hasAll = false;
  let index = SPF_VERSION.length;
  const length = text.length;
  while (index < length && errors.length < MAX_REPORTED_SYNTAX_ERRORS) {
    // RFC 7208 §12: terms are separated by one or more SP; any other whitespace belongs to a term.
    if (text.charCodeAt(index) === 0x20) {
      index++;
      continue;
    }
    let end = text.indexOf(' ', index);
    if (end === -1) end = length;
    const parsed = parseTerm(text.slice(index, end), index);
    index = end;
    if ('message' in parsed) {
      errors.push(parsed);
      continue;
    }
    terms.push(parsed);
    if (parsed.type === 'directive') {
      directives.push(parsed);
      if (parsed.mechanism.name === 'all') hasAll = true;
    } else if (parsed.name === 'redirect' || parsed.name === 'exp') {
      // RFC 7208 §6: "redirect" and "exp" MUST NOT appear in a record more than once each.
      if ((parsed.name === 'redirect' ? redirect : exp) !== null) {
        errors.push({ message: `"${parsed.name}" appears more than once; a record may have only one`, position: parsed.position, term: parsed.text });
      } else if (parsed.name === 'redirect') {
        redirect = parsed as Modifier & { name: 'redirect' };
      } else {
        exp = parsed as Modifier & { name: 'exp' };
      }
    }
  }
  if (errors.length > 0) return { ok: false, errors, terms };
  return { ok: true, record: { text, terms, directives, redirect, exp, hasAll } };
}

function parseTerm(term: string, position: number): SpfTerm | SpfSyntaxError {
  // RFC 7208 §3.1: records are US-ASCII; §12: no control characters inside a term.
  for (let index = 0; index < term.length; index++) {
    const code = term.charCodeAt(index);
    if (code < 0x21 || code > 0x7e) {
      return { message: `${describeCharacter(code)} is not allowed in an SPF record`, position: position + index, term };
    }
  }
  if (isModifierTerm(term)) return parseModifier(term, position);
  return parseDirective(term, position);
}

function parseModifier(term: string, position: number): Modifier | SpfSyntaxError {
  const equals = term.indexOf('=');
  const key = term.slice(0, equals);
  const valueText = term.slice(equals + 1);
  const lower = key.toLowerCase();
  if (lower === 'redirect' || lower === 'exp') {
    // RFC 7208 §6.1, §6.2: both take a domain-spec; an empty or malformed one is a syntax error.
    const spec = parseDomainSpec(valueText);
    if (!spec.ok) return syntaxError(term, position, equals + 1 + spec.error.offset, `${lower}=: ${spec.error.message}`);
    return { type: 'modifier', name: lower, domainSpec: spec.value, text: term, position };
  }
  // RFC 7208 §6: unknown modifiers are ignored, but their value must still be a valid macro-string.
  const value = parseMacroString(valueText, 'modifier');
  if (!value.ok) return syntaxError(term, position, equals + 1 + value.error.offset, `the value of the modifier "${truncateForMessage(key)}" is invalid: ${value.error.message}`);
  return { type: 'modifier', name: 'unknown', key, value: value.value, text: term, position };
}

const QUALIFIERS = '+-~?';

function parseDirective(term: string, position: number): Directive | SpfSyntaxError {
  const first = term[0] ?? '';
  const qualified = QUALIFIERS.includes(first);
  const qualifier = (qualified ? first : '+') as Qualifier;
  const body = qualified ? term.slice(1) : term;
  const offset = qualified ? 1 : 0;
  let nameEnd = 0;
  while (nameEnd < body.length && body[nameEnd] !== ':' && body[nameEnd] !== '/') nameEnd++;
  const name = body.slice(0, nameEnd).toLowerCase();
  const args = body.slice(nameEnd);
  const argsAt = offset + nameEnd;
  const fail = (at: number, message: string): SpfSyntaxError => syntaxError(term, position, at, message);
  let mechanism: Mechanism;
  switch (name) {
    case 'all':
      // RFC 7208 §5.1: "all" takes no argument and no prefix length.
      if (args !== '') return fail(argsAt, '"all" takes no argument or prefix length');
      mechanism = { name: 'all' };
      break;
    case 'include':
    case 'exists': {
      // RFC 7208 §5.2, §5.7: a domain-spec is required and no prefix length is allowed.
      if (!args.startsWith(':')) return fail(argsAt, `"${name}" needs ":" and a domain`);
      const spec = parseDomainSpec(args.slice(1));
      if (!spec.ok) return fail(argsAt + 1 + spec.error.offset, spec.error.message);
      mechanism = { name, domainSpec: spec.value };
      break;
    }
    case 'ptr': {
      // RFC 7208 §5.5: an optional domain-spec, no prefix length.
      let domainSpec: MacroString | null = null;
      if (args !== '') {
        if (!args.startsWith(':')) return fail(argsAt, '"ptr" takes no prefix length');
        const spec = parseDomainSpec(args.slice(1));
        if (!spec.ok) return fail(argsAt + 1 + spec.error.offset, spec.error.message);
        domainSpec = spec.value;
      }
      mechanism = { name, domainSpec };
      break;
    }
    case 'a':
    case 'mx': {
      const parsed = parseHostArguments(args);
      if ('message' in parsed) return fail(argsAt + parsed.offset, parsed.message);
      mechanism = { name, ...parsed };
      break;
    }
    case 'ip4':
    case 'ip6': {
      const parsed = parseNetwork(name, args);
      if ('message' in parsed) return fail(argsAt + parsed.offset, parsed.message);
      mechanism = parsed;
      break;
    }
    default:
      if (name.includes('=')) {
        return fail(offset, `"${truncateForMessage(body.slice(0, body.indexOf('=')))}" is not a valid modifier name (it must start with a letter and hold only letters, digits, "-", "_" and ".")`);
      }
      return fail(offset, `"${truncateForMessage(body.slice(0, nameEnd) || term)}" is not an SPF mechanism`);
  }
  return { type: 'directive', qualifier, mechanism, text: term, position };
}

interface ArgumentError {
  message: string;
  offset: number;
}

/**
 * A prefix length at the end of `text`: `slashes` ("/" or "//") then one or more digits, then the end.
 * Returns where it starts and its digits, or null.
 */
function trailingCidr(text: string, slashes: '/' | '//'): { index: number; digits: string; written: string } | null {
  let digitsStart = text.length;
  while (digitsStart > 0 && isDigit(text.charCodeAt(digitsStart - 1))) digitsStart--;
  if (digitsStart === text.length) return null;
  const index = digitsStart - slashes.length;
  if (index < 0 || text.slice(index, digitsStart) !== slashes) return null;
  return { index, digits: text.slice(digitsStart), written: text.slice(index) };
}

/**
 * RFC 7208 §5.6 dual-cidr-length, one half: the prefix length (`slashes` then digits) at the end of
 * `text`, with the text before it; the family's full length and `text` itself when there is none.
 */
function takeTrailingPrefix(text: string, slashes: '/' | '//', bits: number): { rest: string; prefix: number } | ArgumentError {
  const match = trailingCidr(text, slashes);
  if (!match) return { rest: text, prefix: bits };
  const value = cidrValue(match.digits, bits);
  if (value === null) return { message: prefixLengthMessage(match.written, bits), offset: match.index };
  return { rest: text.slice(0, match.index), prefix: value };
}

/** Why `written` (the slash and digits) is not a prefix length of a family of `bits` bits. */
function prefixLengthMessage(written: string, bits: number): string {
  return `"${truncateForMessage(written)}" is not an ${bits === IP4_BITS ? 'IPv4' : 'IPv6'} prefix length (0-${bits}, no leading zeros)`;
}

/** `a` and `mx` (RFC 7208 §5.3, §5.4): [ ":" domain-spec ] [ dual-cidr-length ]. */
function parseHostArguments(args: string): { domainSpec: MacroString | null; ip4Prefix: number; ip6Prefix: number } | ArgumentError {
  // The domain-spec may itself hold "/", so the prefix lengths are taken from the end: "//" (IPv6) last.
  const ip6 = takeTrailingPrefix(args, '//', IP6_BITS);
  if ('message' in ip6) return ip6;
  const ip4 = takeTrailingPrefix(ip6.rest, '/', IP4_BITS);
  if ('message' in ip4) return ip4;
  const { rest, prefix: ip4Prefix } = ip4;
  const ip6Prefix = ip6.prefix;
  if (rest === '') return { domainSpec: null, ip4Prefix, ip6Prefix };
  if (!rest.startsWith(':')) return { message: `"${truncateForMessage(rest)}" is neither ":" and a domain nor a prefix length`, offset: 0 };
  const spec = parseDomainSpec(rest.slice(1));
  if (!spec.ok) return { message: spec.error.message, offset: 1 + spec.error.offset };
  return { domainSpec: spec.value, ip4Prefix, ip6Prefix };
}

/** `ip4` and `ip6` (RFC 7208 §5.6): ":" network [ "/" prefix ], and only the family's own prefix. */
function parseNetwork(name: 'ip4' | 'ip6', args: string): Mechanism | ArgumentError {
  if (!args.startsWith(':') || args.length === 1) return { message: `"${name}" needs ":" and a network`, offset: 0 };
  const slash = args.indexOf('/');
  const networkText = slash === -1 ? args.slice(1) : args.slice(1, slash);
  const bits = name === 'ip4' ? IP4_BITS : IP6_BITS;
  let prefix = bits;
  if (slash !== -1) {
    const value = cidrValue(args.slice(slash + 1), bits);
    if (value === null) return { message: prefixLengthMessage(args.slice(slash), bits), offset: slash };
    prefix = value;
  }
  if (name === 'ip4') {
    const value = parseIp4(networkText);
    // RFC 7208 §5.6: the full dotted quad is required; "1.2.3" is not a shorthand for a /24.
    if (value === null) return { message: `"${truncateForMessage(networkText)}" is not an IPv4 address (four numbers 0-255, no leading zeros)`, offset: 1 };
    return { name, network: { version: 4, value }, prefix };
  }
  const words = parseIp6(networkText);
  if (words === null) return { message: `"${truncateForMessage(networkText)}" is not an IPv6 address`, offset: 1 };
  return { name, network: { version: 6, words }, prefix };
}

/** RFC 7208 §12 ip4-cidr-length / ip6-cidr-length: "0" or digits without a leading zero, within range. */
function cidrValue(digits: string, max: number): number | null {
  if (digits === '' || digits.length > 3 || (digits.length > 1 && digits.charCodeAt(0) === 0x30)) return null;
  for (let index = 0; index < digits.length; index++) if (!isDigit(digits.charCodeAt(index))) return null;
  const value = Number(digits);
  return value <= max ? value : null;
}

function syntaxError(term: string, position: number, at: number, message: string): SpfSyntaxError {
  return { message, position: position + at, term };
}

/** One line describing a syntax error: where it is, which term, and what is wrong. */
export function describeSyntaxError(error: SpfSyntaxError): string {
  return error.term === ''
    ? `${error.message} (position ${error.position})`
    : `term "${truncateForMessage(error.term)}" at position ${error.position}: ${error.message}`;
}
