import { isIP } from 'node:net';
import { domainToASCII, domainToUnicode } from 'node:url';
import { dnsNameProblem } from './dns/name.js';

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
const LDH_LABEL = /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$/;

/**
 * Turns what a user typed (a domain, a URL or an email address) into the domain to check.
 * Trim; an address keeps what follows its last `@`; a URL loses scheme, credentials, port, path,
 * query and fragment; lower case; one trailing dot dropped; IDN converted to A-labels.
 * Refusals say what was wrong and what to send instead.
 */
export function normaliseDomainInput(raw: string, options: NormaliseOptions = {}): NormalisedInput {
  const input = raw.trim();
  if (input === '') return refuse('The domain is empty.', 'Send a domain name such as example.com, a URL, or an email address.');
  if (raw.length > MAX_INPUT_LENGTH) {
    return refuse(
      `The input is ${raw.length} characters long; at most ${MAX_INPUT_LENGTH} are accepted.`,
      'Send only the domain name (for example example.com), not a whole page address or text.',
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

  // WHATWG's domain-to-ASCII does IDNA (UTS #46) mapping and Punycode; '' means it refused the name.
  const ascii = domainToASCII(name);
  if (ascii === '') {
    return refuse(
      `"${clip(host)}" is not a valid domain name.`,
      'Use only letters, digits and hyphens between dots, for example mail.example.com.',
    );
  }
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
  const specialUse = options.specialUseSuffixes ?? DEFAULT_SPECIAL_USE_SUFFIXES;
  const suffix = specialUse.find((s) => ascii === s || ascii.endsWith(`.${s}`));
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

function refuse(message: string, fix: string): NormalisedInput {
  return { ok: false, message, fix };
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}
