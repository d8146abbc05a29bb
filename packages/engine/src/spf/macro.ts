/**
 * SPF macros (RFC 7208 §7): parsing macro-strings, domain-specs and explain-strings, expanding them
 * for one check, and turning an expanded domain-spec into the name a query is sent for.
 */
import { MAX_LABEL_OCTETS, MAX_NAME_OCTETS, dnsNameProblem } from '../dns/name.js';
import type { ClientAddress } from './address.js';
import { describeCharacter, truncateForMessage } from './text.js';
import type { MacroLetter, MacroString, MacroToken } from './types.js';

/** Where a macro-string appears decides which letters it may use (RFC 7208 §7.1, §7.2). */
export type MacroSyntax =
  /** A domain-spec of a mechanism, `redirect` or `exp`: no "c", "r", "t"; no spaces. */
  | 'domain'
  /** The value of an unknown modifier: any macro-letter of the ABNF; no spaces. */
  | 'modifier'
  /** The explanation TXT text fetched for `exp`: every letter, and spaces. */
  | 'explain';

/** A macro-string that failed to parse: why, and the offset of the offending character. */
export interface MacroSyntaxError {
  message: string;
  offset: number;
}

/** Parse outcome for a macro-string. */
export type MacroParseResult = { ok: true; value: MacroString } | { ok: false; error: MacroSyntaxError };

/**
 * Largest DIGIT transformer kept as written. A bigger number keeps every part anyway (RFC 7208 §7.3:
 * "if the value specifies more parts than are available, all the available parts are used"), and a
 * domain name has at most 127 labels.
 */
export const MAX_MACRO_PARTS = 128;

const DOMAIN_LETTERS = 'slodiphv';
const ALL_LETTERS = 'slodiphvcrt';
const DELIMITERS = '.-+,/_=';

/**
 * Parses `text` as a macro-string (RFC 7208 §7.1) for the given context. Pure; never throws.
 */
export function parseMacroString(text: string, syntax: MacroSyntax): MacroParseResult {
  const scan = scanMacroString(text, syntax);
  return 'message' in scan ? { ok: false, error: scan } : { ok: true, value: scan.value };
}

interface Scan {
  value: MacroString;
  /** Offset just past the last macro-expand, 0 when there is none. */
  lastExpandEnd: number;
  /** True when the string ends with a macro-expand (RFC 7208 §7.1 `domain-end`). */
  endsWithExpand: boolean;
}

function scanMacroString(text: string, syntax: MacroSyntax): Scan | MacroSyntaxError {
  const letters = syntax === 'domain' ? DOMAIN_LETTERS : ALL_LETTERS;
  const tokens: MacroToken[] = [];
  const used: MacroLetter[] = [];
  let literal = '';
  let lastExpandEnd = 0;
  let index = 0;
  const length = text.length;
  while (index < length) {
    const code = text.charCodeAt(index);
    if (code !== 37) {
      // RFC 7208 §7.1 macro-literal = %x21-24 / %x26-7E; explain-string also allows SP. A run of
      // literal characters is checked, then copied in one slice.
      const runStart = index;
      while (index < length) {
        const runCode = text.charCodeAt(index);
        if (runCode === 37) break;
        if ((runCode < 0x21 || runCode > 0x7e) && !(runCode === 0x20 && syntax === 'explain')) {
          return { message: `${describeCharacter(runCode)} is not allowed here`, offset: index };
        }
        index++;
      }
      literal += text.slice(runStart, index);
      continue;
    }
    const next = text[index + 1];
    if (next === '%' || next === '_' || next === '-') {
      // RFC 7208 §7.1: "%%" is "%", "%_" a space, "%-" a URL-encoded space.
      literal += next === '%' ? '%' : next === '_' ? ' ' : '%20';
      index += 2;
      lastExpandEnd = index;
      continue;
    }
    if (next !== '{') {
      // RFC 7208 §7.1: a "%" not followed by "{", "%", "-" or "_" is a syntax error.
      return { message: `"%" must be followed by "{", "%", "_" or "-"`, offset: index };
    }
    const close = text.indexOf('}', index + 2);
    if (close === -1) return { message: 'the macro "%{" is not closed by "}"', offset: index };
    const parsed = parseExpand(text.slice(index + 2, close), letters);
    if (typeof parsed === 'string') return { message: parsed, offset: index };
    if (literal !== '') {
      tokens.push({ kind: 'literal', text: literal });
      literal = '';
    }
    tokens.push(parsed);
    if (!used.includes(parsed.letter)) used.push(parsed.letter);
    index = close + 1;
    lastExpandEnd = index;
  }
  if (literal !== '') tokens.push({ kind: 'literal', text: literal });
  return {
    value: { text, tokens, dynamic: used.length > 0, letters: used },
    lastExpandEnd,
    endsWithExpand: lastExpandEnd === length && length > 0,
  };
}

/** The inside of "%{…}": macro-letter transformers *delimiter (RFC 7208 §7.1). */
function parseExpand(body: string, letters: string): Extract<MacroToken, { kind: 'macro' }> | string {
  const letterChar = body[0];
  if (letterChar === undefined) return 'the macro "%{}" names no letter';
  const letter = letterChar.toLowerCase();
  if (!letters.includes(letter)) {
    return ALL_LETTERS.includes(letter)
      ? `the macro letter "${letterChar}" is only allowed in explanation text` // RFC 7208 §7.2
      : `"${letterChar}" is not a macro letter`;
  }
  let index = 1;
  let digits = '';
  while (index < body.length && body.charCodeAt(index) >= 48 && body.charCodeAt(index) <= 57) digits += body[index++];
  let keep: number | null = null;
  if (digits !== '') {
    const value = Number(digits);
    // RFC 7208 §7.3: "If a DIGIT is specified, the value MUST be nonzero."
    if (value === 0) return `the macro "%{${body}}" keeps zero parts; the number must be at least 1`;
    keep = value > MAX_MACRO_PARTS ? null : value;
  }
  let reverse = false;
  if (body[index] === 'r' || body[index] === 'R') {
    reverse = true;
    index++;
  }
  const delimiters = body.slice(index);
  for (const character of delimiters) {
    if (!DELIMITERS.includes(character)) return `"${character}" is not a macro delimiter (allowed: ${DELIMITERS})`;
  }
  return {
    kind: 'macro',
    letter: letter as MacroLetter,
    urlEscape: letterChar !== letter,
    keep,
    reverse,
    delimiters,
  };
}

/**
 * RFC 7208 §7.1 toplabel = ( *alphanum ALPHA *alphanum ) / ( 1*alphanum "-" *( alphanum / "-" ) alphanum ):
 * letters and digits with at least one letter, or letters, digits and dashes with a dash inside and
 * an alphanumeric first and last character. One pass: the regular expression this replaces
 * backtracked quadratically on a long label with a bad last character.
 */
export function isTopLabel(label: string): boolean {
  const length = label.length;
  if (length === 0) return false;
  let hasLetter = false;
  let hasDash = false;
  for (let index = 0; index < length; index++) {
    const code = label.charCodeAt(index);
    if ((code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)) hasLetter = true;
    else if (code === 0x2d) hasDash = true;
    else if (code < 0x30 || code > 0x39) return false;
  }
  if (!hasDash) return hasLetter;
  return label.charCodeAt(0) !== 0x2d && label.charCodeAt(length - 1) !== 0x2d;
}

/**
 * Parses a domain-spec (RFC 7208 §7.1): a macro-string that ends in a macro or in "." and a valid
 * top label (optionally followed by "."). `a:museum`, `a:abc.123` and `a:foo-bar` are errors;
 * `a:%{d}` and `a:mail.example.com.` are not.
 */
export function parseDomainSpec(text: string): MacroParseResult {
  if (text === '') return { ok: false, error: { message: 'the domain is empty', offset: 0 } };
  const scan = scanMacroString(text, 'domain');
  if ('message' in scan) return { ok: false, error: scan };
  if (scan.endsWithExpand) return { ok: true, value: scan.value };
  const end = text.endsWith('.') ? text.length - 1 : text.length;
  const dot = text.lastIndexOf('.', end - 1);
  const toplabel = text.slice(dot + 1, end);
  if (dot === -1 || dot < scan.lastExpandEnd || !isTopLabel(toplabel)) {
    const shown = toplabel === '' ? text : toplabel;
    return {
      ok: false,
      error: {
        message:
          dot === -1
            ? `"${truncateForMessage(text)}" is not a domain name: it needs a dot and a top-level label, or must end in a macro`
            : `"${truncateForMessage(shown)}" is not a valid top-level label (letters, digits and inner dashes, not all digits)`,
        offset: dot + 1,
      },
    };
  }
  return { ok: true, value: scan.value };
}

/** The value of a macro-string without `%{…}` expansions (its escapes already resolved). */
export function literalText(macro: MacroString): string {
  const first = macro.tokens[0];
  return first === undefined ? '' : first.kind === 'literal' && macro.tokens.length === 1 ? first.text : macro.tokens.map((token) => (token.kind === 'literal' ? token.text : '')).join('');
}

/** The facts a check expands macros from (RFC 7208 §7.2). */
export interface MacroContext {
  /** <sender>, with "postmaster" as local part when it had none (RFC 7208 §4.3). */
  sender: string;
  localPart: string;
  senderDomain: string;
  /** <domain>: the domain whose record is being evaluated. */
  domain: string;
  client: ClientAddress;
  helo: string;
  /** The validated domain name of the client ("unknown" when none), computed before expansion. */
  validatedName: string;
  /** The receiving host's name ("unknown" when not configured). */
  receiver: string;
  /** Seconds since the epoch. */
  timestamp: number;
}

/**
 * Expands a parsed macro-string. Pure: the "p" value must already be in `context.validatedName`
 * (it needs DNS lookups the caller counts).
 */
export function expandMacroString(macro: MacroString, context: MacroContext): string {
  if (macro.tokens.length === 1 && macro.tokens[0]!.kind === 'literal') return macro.tokens[0]!.text;
  let out = '';
  for (const token of macro.tokens) {
    if (token.kind === 'literal') {
      out += token.text;
      continue;
    }
    let value = letterValue(token.letter, context);
    if (token.keep !== null || token.reverse || token.delimiters !== '') value = transform(value, token);
    out += token.urlEscape ? urlEscape(value) : value;
  }
  return out;
}

function letterValue(letter: MacroLetter, context: MacroContext): string {
  switch (letter) {
    case 's':
      return context.sender;
    case 'l':
      return context.localPart;
    case 'o':
      return context.senderDomain;
    case 'd':
      return context.domain;
    case 'i':
      return context.client.dotted;
    case 'p':
      return context.validatedName;
    case 'v':
      return context.client.version === 4 ? 'in-addr' : 'ip6'; // RFC 7208 §7.3
    case 'h':
      return context.helo;
    case 'c':
      return context.client.readable;
    case 'r':
      return context.receiver;
    case 't':
      return String(context.timestamp);
  }
}

/**
 * RFC 7208 §7.3: split on the delimiters (default "."), reverse when asked, keep the right-most
 * parts, and join with ".".
 */
function transform(value: string, token: Extract<MacroToken, { kind: 'macro' }>): string {
  const delimiters = token.delimiters === '' ? '.' : token.delimiters;
  let parts: string[];
  if (delimiters.length === 1) {
    parts = value.split(delimiters);
  } else {
    parts = [];
    let current = '';
    for (const character of value) {
      if (delimiters.includes(character)) {
        parts.push(current);
        current = '';
      } else {
        current += character;
      }
    }
    parts.push(current);
  }
  if (token.reverse) parts.reverse();
  if (token.keep !== null && token.keep < parts.length) parts = parts.slice(parts.length - token.keep);
  return parts.join('.');
}

/** RFC 3986 §2.3 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~". */
function isUnreserved(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) || code === 0x2d || code === 0x2e || code === 0x5f || code === 0x7e;
}

/** "%00" to "%FF", by octet: built once, so escaping allocates no string per octet. */
const PERCENT_ENCODED: readonly string[] = Array.from({ length: 256 }, (_, octet) => `%${octet.toString(16).toUpperCase().padStart(2, '0')}`);

function percentOctet(octet: number): string {
  return PERCENT_ENCODED[octet]!;
}

/**
 * Percent-encodes every UTF-8 octet outside RFC 3986's unreserved set, as upper-case macros require
 * (RFC 7208 §7.3). A lone surrogate is encoded as U+FFFD, as TextEncoder would.
 */
export function urlEscape(value: string): string {
  let index = 0;
  while (index < value.length && isUnreserved(value.charCodeAt(index))) index++;
  if (index === value.length) return value;
  let out = value.slice(0, index);
  for (; index < value.length; index++) {
    let point = value.charCodeAt(index);
    if (isUnreserved(point)) {
      out += value[index];
      continue;
    }
    if (point >= 0xd800 && point <= 0xdfff) {
      const low = value.charCodeAt(index + 1);
      if (point <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) {
        point = 0x10000 + ((point - 0xd800) << 10) + (low - 0xdc00);
        index++;
      } else {
        point = 0xfffd;
      }
    }
    if (point < 0x80) out += percentOctet(point);
    else if (point < 0x800) out += percentOctet(0xc0 | (point >> 6)) + percentOctet(0x80 | (point & 63));
    else if (point < 0x10000) out += percentOctet(0xe0 | (point >> 12)) + percentOctet(0x80 | ((point >> 6) & 63)) + percentOctet(0x80 | (point & 63));
    else out += percentOctet(0xf0 | (point >> 18)) + percentOctet(0x80 | ((point >> 12) & 63)) + percentOctet(0x80 | ((point >> 6) & 63)) + percentOctet(0x80 | (point & 63));
  }
  return out;
}

/** The name to query for an expanded domain-spec, or why there is none. */
export type TargetName = { ok: true; name: string } | { ok: false; problem: string };

/**
 * Turns an expanded domain-spec into a query name: drops one trailing dot (RFC 7208 §7.3, the
 * suite's trailing-dot-domain), shortens an expansion longer than 253 octets by removing labels from
 * the left (RFC 7208 §7.3), and refuses a name no DNS query can carry (an empty label, a label over
 * 63 octets): RFC 7208 §4.8 and §5 treat such a target like a name that does not exist.
 */
export function toTargetName(expanded: string, fromMacro: boolean): TargetName {
  let name = expanded.endsWith('.') ? expanded.slice(0, -1) : expanded;
  if (fromMacro && name.length > MAX_NAME_OCTETS) {
    // RFC 7208 §7.3: remove successive labels (and their dots) from the left until it fits.
    while (name.length > MAX_NAME_OCTETS) {
      const dot = name.indexOf('.');
      if (dot === -1) {
        name = '';
        break;
      }
      name = name.slice(dot + 1);
    }
  }
  if (name === '') return { ok: false, problem: `"${truncateForMessage(expanded)}" leaves no name to look up` };
  // An expansion ending in a label no top-level domain can have (`…77.16` from %{i}; RFC 7208 §7.1
  // toplabel, RFC 3696 §2: no TLD is all-numeric) names nothing that exists: no match, and no query
  // that a server serving only the owner's zones would refuse.
  if (fromMacro && !isTopLabel(name.slice(name.lastIndexOf('.') + 1))) {
    return { ok: false, problem: `"${truncateForMessage(name)}" ends in "${truncateForMessage(name.slice(name.lastIndexOf('.') + 1))}", which is not a top-level label` };
  }
  return hasQueryableShape(name) ? { ok: true, name } : { ok: false, problem: dnsNameProblem(name) ?? 'not a valid domain name' };
}

/** A quick pass over RFC 1035 §2.3.4's limits: at most 253 octets, no empty label, none over 63. */
function hasQueryableShape(name: string): boolean {
  const length = name.length;
  if (length > MAX_NAME_OCTETS) return false;
  let labelStart = 0;
  for (let index = 0; index <= length; index++) {
    if (index < length && name.charCodeAt(index) !== 46) continue;
    const labelLength = index - labelStart;
    if (labelLength === 0 || labelLength > MAX_LABEL_OCTETS) return false;
    labelStart = index + 1;
  }
  return true;
}
