import { isIP } from 'node:net';
import { domainToASCII, domainToUnicode } from 'node:url';
import { dnsNameProblem, MAX_NAME_OCTETS } from './dns/name.js';

/** The spec's bound on the `domain` field (1 to 255 characters), applied before anything else. */
export const MAX_INPUT_LENGTH = 255;

/**
 * Special-use names (RFC 6761, RFC 6762 `.local`, RFC 8375 `home.arpa`, RFC 7686 `.onion`,
 * RFC 9476 `.alt`, ICANN's `.internal`) that can never carry a public sending domain. Matched on label
 * boundaries. `example`, `test` and the `example.*` second-level names stay allowed: they are the
 * names fixture zones and documentation use.
 */
export const DEFAULT_SPECIAL_USE_SUFFIXES: readonly string[] = ['localhost', 'local', 'internal', 'arpa', 'invalid', 'onion', 'alt'];

export interface NormaliseOptions {
  /** Suffixes refused as special-use; pass [] to allow every name. */
  specialUseSuffixes?: readonly string[];
}

/** A name ready to query (`domain`, A-labels) and the form to show people (`displayDomain`, Unicode). */
export type NormalisedInput =
  | { ok: true; domain: string; displayDomain: string }
  | { ok: false; message: string; fix: string };

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
// Linear (one class under one quantifier, anchored), and only ever run on at most MAX_INPUT_LENGTH characters.
const LDH_LABEL = /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$/;

/**
 * Turns what a user typed (a domain, a URL or an email address) into the domain to check.
 * Trim; an address keeps what follows its last `@`; a URL loses scheme, credentials, port, path,
 * query and fragment; lower case; one trailing dot dropped; IDN converted to A-labels.
 * Refusals say what was wrong and what to send instead.
 */
export function normaliseDomainInput(raw: string, options: NormaliseOptions = {}): NormalisedInput {
  return plainHostname(raw, options) ?? normaliseAnyInput(raw, options);
}

// Two or more lower-case LDH labels, the last starting with a letter (so never a number or an IP
// address): what a service or a scan list usually sends. Linear: classes under anchored quantifiers.
const PLAIN_HOSTNAME = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z](?:[a-z0-9-]*[a-z0-9])?$/;

/**
 * The result for a name that is already in its final form, or null to take the full path. For such
 * a name every step of the full path (trim, host extraction, case folding, IDNA, Unicode display)
 * gives the name back unchanged, so only the checks that can still refuse it run. Names with an
 * `xn--` label take the full path, which validates the Punycode and gives the Unicode display form.
 */
function plainHostname(raw: string, options: NormaliseOptions): NormalisedInput | null {
  if (raw.length > MAX_NAME_OCTETS || !PLAIN_HOSTNAME.test(raw) || raw.includes('xn--')) return null;
  if (dnsNameProblem(raw) !== null || specialUseSuffix(raw, options) !== undefined) return null; // the full path says why
  return { ok: true, domain: raw, displayDomain: raw };
}

function specialUseSuffix(ascii: string, options: NormaliseOptions): string | undefined {
  const specialUse = options.specialUseSuffixes ?? DEFAULT_SPECIAL_USE_SUFFIXES;
  return specialUse.find((s) => ascii === s || ascii.endsWith(`.${s}`));
}

function normaliseAnyInput(raw: string, options: NormaliseOptions): NormalisedInput {
  const input = raw.trim();
  if (input === '') return refuse('The domain is empty.', 'Send a domain name such as example.com, a URL, or an email address.');
  if (raw.length > MAX_INPUT_LENGTH) {
    return refuse(
      `The input is ${raw.length} characters long; at most ${MAX_INPUT_LENGTH} are accepted.`,
      'Send only the domain name (for example example.com), not a whole page address or text.',
    );
  }

  // Control characters are never part of a name, and the URL parser would drop tabs and newlines
  // silently: refuse them rather than check a different name than the one typed.
  const hidden = findHiddenCharacter(input);
  if (hidden !== null) {
    return refuse(
      `"${clip(escapeHidden(input))}" contains ${hidden.what} (U+${hex4(hidden.code)}) at position ${hidden.index + 1}.`,
      'Remove it and send the domain name alone, for example example.com; retype the name if it was pasted.',
    );
  }

  const host = extractHost(input);
  if (host === null) {
    return refuse(`"${clip(input)}" has no domain name in it.`, 'Send a domain name such as example.com.');
  }
  let name = host.toLowerCase();
  if (name.endsWith('.')) name = name.slice(0, -1);
  const bare = name.startsWith('[') && name.endsWith(']') ? name.slice(1, -1) : name;
  if (isIP(bare)) {
    return refuse(
      `"${clip(input)}" is an IP address, not a domain name.`,
      'Enter a domain name (e.g. example.com). An IP address cannot be spoofed as a From domain.',
    );
  }
  if (name === '') return refuse(`"${clip(input)}" has no domain name in it.`, 'Send a domain name such as example.com.');
  // RFC 1123 §2.1, RFC 3696 §2: a top-level label is never all-numeric. The WHATWG URL parser (and
  // domainToASCII below) reads a name ending in a number as an IPv4 address: "127.1", "0x7f.1" and
  // "2130706433" all become 127.0.0.1, which the IP check above has already let through.
  const numeric = numericLastLabel(name.normalize('NFKC'));
  if (numeric !== null) return refuseNumeric(input, numeric, domainToASCII(name));

  // WHATWG's domain-to-ASCII does IDNA (UTS #46) mapping and Punycode; '' means it refused the name.
  const ascii = domainToASCII(name);
  if (ascii === '') {
    return refuse(
      `"${clip(host)}" is not a valid domain name.`,
      'Use only letters, digits and hyphens between dots, for example mail.example.com.',
    );
  }
  // A Unicode spelling of a number (full-width digits) is an IPv4 address once mapped.
  if (isIP(ascii)) return refuseNumeric(input, ascii.slice(ascii.lastIndexOf('.') + 1), ascii);
  const sizeProblem = dnsNameProblem(ascii);
  if (sizeProblem) return refuse(`"${clip(host)}" cannot be a domain name: ${sizeProblem}.`, 'Check the name for typos.');
  const labels = ascii.split('.');
  const badLabel = labels.find((label) => !LDH_LABEL.test(label));
  if (badLabel !== undefined) {
    return refuse(
      `"${clip(host)}" has the label "${clip(badLabel)}", which is not allowed in a host name.`,
      'Use only letters, digits and hyphens between dots (a label cannot start or end with a hyphen).',
    );
  }
  if (labels.length < 2) {
    return refuse(
      `"${ascii}" is a single label, not a full domain name.`,
      `Send the full domain, for example ${ascii}.com.`,
    );
  }
  const suffix = specialUseSuffix(ascii, options);
  if (suffix !== undefined) {
    return refuse(
      `"${ascii}" is a special-use name (.${suffix}) that never sends public mail.`,
      'Send the public domain your mail comes from, for example example.com.',
    );
  }
  return { ok: true, domain: ascii, displayDomain: domainToUnicode(ascii) || ascii };
}

/** The host part of a URL, an address or a bare name; null when there is none. */
function extractHost(input: string): string | null {
  if (SCHEME.test(input)) {
    try {
      return new URL(input).hostname || null;
    } catch {
      // Not a URL the WHATWG parser accepts (e.g. a Unicode name with spaces): cut it by hand below.
      return cutHost(input.replace(SCHEME, ''));
    }
  }
  if (/^mailto:/i.test(input)) input = input.slice('mailto:'.length);
  const at = input.lastIndexOf('@');
  if (at !== -1) input = input.slice(at + 1);
  return cutHost(input);
}

/** A bare `host[:port][/path][?query][#fragment]` cut to the host. */
function cutHost(text: string): string | null {
  let host = text.split(/[/?#]/, 1)[0] ?? '';
  const at = host.lastIndexOf('@');
  if (at !== -1) host = host.slice(at + 1); // credentials
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    return close === -1 ? host : host.slice(0, close + 1);
  }
  // host:port, but not an IPv6 address written without brackets.
  if ((host.match(/:/g) ?? []).length === 1) host = host.slice(0, host.indexOf(':'));
  return host.trim() === '' ? null : host.trim();
}

/** Dots IDNA (UTS #46) maps to ".": full stop, ideographic, full-width and half-width ideographic. */
const LABEL_SEPARATORS = /[.\u3002\uff0e\uff61]/;

/**
 * The last label when it is a number as the WHATWG URL parser's "ends in a number" check reads one
 * (all decimal digits, or "0x" and hex digits), else null.
 */
function numericLastLabel(name: string): string | null {
  const labels = name.split(LABEL_SEPARATORS);
  const last = labels[labels.length - 1] ?? '';
  if (last === '') return null;
  const hex = last.length >= 2 && last[0] === '0' && (last[1] === 'x' || last[1] === 'X');
  for (let index = hex ? 2 : 0; index < last.length; index++) {
    const code = last.charCodeAt(index);
    const digit = code >= 0x30 && code <= 0x39;
    if (!digit && !(hex && ((code >= 0x61 && code <= 0x66) || (code >= 0x41 && code <= 0x46)))) return null;
  }
  return last;
}

function refuseNumeric(input: string, lastLabel: string, asAddress: string): NormalisedInput {
  const reading = isIP(asAddress) ? `, which URL parsers read as the IP address ${asAddress}` : '';
  return refuse(
    `"${clip(input)}" is not a domain name: its last label "${clip(lastLabel)}" is a number${reading}.`,
    'Enter a domain name whose last label has letters, for example example.com (RFC 1123 §2.1: a top-level domain is never all-numeric).',
  );
}

/** C0 and C1 controls and DEL, and the invisible format characters IDNA would drop without a trace. */
function findHiddenCharacter(text: string): { index: number; code: number; what: string } | null {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return { index, code, what: 'a control character' };
    // Soft hyphen, zero width space, word joiner, byte-order mark: UTS #46 maps them to nothing.
    if (code === 0xad || code === 0x200b || code === 0x2060 || code === 0xfeff) return { index, code, what: 'an invisible character' };
  }
  return null;
}

function hex4(code: number): string {
  return code.toString(16).toUpperCase().padStart(4, '0');
}

/** `text` with the characters `findHiddenCharacter` looks for written as \uXXXX, safe to quote. */
function escapeHidden(text: string): string {
  let out = '';
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    out += code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0xad || code === 0x200b || code === 0x2060 || code === 0xfeff ? `\\u${hex4(code)}` : text[index];
  }
  return out;
}

function refuse(message: string, fix: string): NormalisedInput {
  return { ok: false, message, fix };
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}
