/**
 * IP addresses as SPF needs them: strict parsing of the record's `ip4-network` / `ip6-network`
 * (RFC 7208 §5.6), the client address (IPv4-mapped IPv6 treated as IPv4, RFC 7208 §5), prefix
 * matching, and the text forms the macros and the PTR lookup use.
 */
import type { IpAddress } from './types.js';

/** The client address of a check, with the text forms the macros need. */
export type ClientAddress = IpAddress & {
  /** RFC 7208 §7.3 "c": dotted quad, or RFC 5952 text for IPv6. */
  readable: string;
  /** RFC 7208 §7.3 "i": dotted quad, or 32 dot-separated lower-case nibbles for IPv6. */
  dotted: string;
};

/** Widest prefix for each family (RFC 7208 §5.6: 32 for ip4, 128 for ip6). */
export const IP4_BITS = 32;
/** Widest IPv6 prefix. */
export const IP6_BITS = 128;

/** RFC 7208 §12 `ip4-network`: four `qnum`s, no leading zeros, each 0-255. Null when not one. */
export function parseIp4(text: string): number | null {
  let value = 0;
  let octets = 0;
  let start = 0;
  const length = text.length;
  for (let index = 0; index <= length; index++) {
    const code = index < length ? text.charCodeAt(index) : 46; // treat the end as a final "."
    if (code === 46) {
      const digits = index - start;
      if (digits === 0 || digits > 3) return null;
      // RFC 7208 §12 qnum: "0" alone, or no leading zero.
      if (digits > 1 && text.charCodeAt(start) === 48) return null;
      let octet = 0;
      for (let at = start; at < index; at++) octet = octet * 10 + (text.charCodeAt(at) - 48);
      if (octet > 255) return null;
      value = value * 256 + octet;
      octets++;
      start = index + 1;
    } else if (code < 48 || code > 57) {
      return null;
    }
  }
  return octets === 4 ? value : null;
}

/**
 * RFC 4291 §2.2 text forms: eight groups of 1-4 hex digits, one "::" for a run of zero groups, and
 * an optional dotted IPv4 address in place of the last two groups. Null when the text is not one.
 */
export function parseIp6(text: string): [number, number, number, number] | null {
  if (text.length < 2 || text.length > 45) return null;
  const gap = text.indexOf('::');
  if (gap !== -1 && text.indexOf('::', gap + 1) !== -1) return null;
  const head = gap === -1 ? text : text.slice(0, gap);
  const tail = gap === -1 ? '' : text.slice(gap + 2);
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === '' ? [] : tail.split(':');
  const groups: number[] = [];
  const lastSide = tailGroups.length > 0 || gap !== -1 ? tailGroups : headGroups;
  // An embedded IPv4 address may only be the last piece.
  let ip4Tail: number | null = null;
  const last = lastSide[lastSide.length - 1];
  if (last !== undefined && last.includes('.')) {
    ip4Tail = parseIp4(last);
    if (ip4Tail === null) return null;
    lastSide.pop();
  }
  const explicit = headGroups.length + tailGroups.length + (ip4Tail === null ? 0 : 2);
  if (gap === -1 ? explicit !== 8 : explicit > 7) return null;
  for (const group of headGroups) {
    const value = hexGroup(group);
    if (value === null) return null;
    groups.push(value);
  }
  for (let fill = 8 - explicit; gap !== -1 && fill > 0; fill--) groups.push(0);
  for (const group of tailGroups) {
    const value = hexGroup(group);
    if (value === null) return null;
    groups.push(value);
  }
  if (ip4Tail !== null) groups.push(Math.floor(ip4Tail / 65536), ip4Tail % 65536);
  if (groups.length !== 8) return null;
  return [
    ((groups[0]! << 16) | groups[1]!) >>> 0,
    ((groups[2]! << 16) | groups[3]!) >>> 0,
    ((groups[4]! << 16) | groups[5]!) >>> 0,
    ((groups[6]! << 16) | groups[7]!) >>> 0,
  ];
}

function hexGroup(group: string): number | null {
  if (group.length === 0 || group.length > 4) return null;
  let value = 0;
  for (let index = 0; index < group.length; index++) {
    const code = group.charCodeAt(index);
    let digit: number;
    if (code >= 48 && code <= 57) digit = code - 48;
    else if (code >= 97 && code <= 102) digit = code - 87;
    else if (code >= 65 && code <= 70) digit = code - 55;
    else return null;
    value = value * 16 + digit;
  }
  return value;
}

/**
 * The connecting client's address. An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is the IPv4 address
 * it carries (RFC 7208 §5: "MUST still be considered an IPv4 address"). Null when `text` is not an
 * IP address.
 */
export function parseClientAddress(text: string): ClientAddress | null {
  const trimmed = text.trim();
  const v4 = parseIp4(trimmed);
  if (v4 !== null) return new Ip4Client(v4);
  const words = parseIp6(trimmed);
  if (words === null) return null;
  if (words[0] === 0 && words[1] === 0 && words[2] === 0xffff) return new Ip4Client(words[3]);
  return new Ip6Client(words);
}

/** The text forms are only needed when a macro asks for them, so they are made on first use. */
class Ip4Client {
  readonly version = 4 as const;
  private text: string | undefined;
  constructor(readonly value: number) {}
  get readable(): string {
    return (this.text ??= formatIp4(this.value));
  }
  get dotted(): string {
    return this.readable;
  }
}

class Ip6Client {
  readonly version = 6 as const;
  private text: string | undefined;
  private nibbles: string | undefined;
  constructor(readonly words: readonly [number, number, number, number]) {}
  get readable(): string {
    return (this.text ??= formatIp6(this.words));
  }
  get dotted(): string {
    return (this.nibbles ??= ip6Nibbles(this.words).join('.'));
  }
}

/** Dotted-quad text of a 32-bit value. */
export function formatIp4(value: number): string {
  return `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
}

/** RFC 5952 §4 text: lower case, no leading zeros, the longest run of two or more zero groups as "::". */
export function formatIp6(words: readonly [number, number, number, number]): string {
  const groups: number[] = [];
  for (const word of words) groups.push(word >>> 16, word & 0xffff);
  let bestStart = -1;
  let bestLength = 1; // RFC 5952 §4.2.2: a single zero group is not shortened
  for (let index = 0; index < 8; ) {
    if (groups[index] !== 0) {
      index++;
      continue;
    }
    let end = index;
    while (end < 8 && groups[end] === 0) end++;
    if (end - index > bestLength) {
      bestStart = index;
      bestLength = end - index;
    }
    index = end;
  }
  const hex = groups.map((group) => group.toString(16));
  if (bestStart === -1) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

/** The 32 hex nibbles of an IPv6 address, most significant first, lower case. */
function ip6Nibbles(words: readonly [number, number, number, number]): string[] {
  const nibbles: string[] = [];
  for (const word of words) {
    for (let shift = 28; shift >= 0; shift -= 4) nibbles.push(((word >>> shift) & 15).toString(16));
  }
  return nibbles;
}

/** The name a PTR lookup for `address` asks for (RFC 1035 §3.5, RFC 3596 §2.5). */
export function reverseName(address: ClientAddress): string {
  if (address.version === 4) {
    const value = address.value;
    return `${value & 255}.${(value >>> 8) & 255}.${(value >>> 16) & 255}.${value >>> 24}.in-addr.arpa`;
  }
  return `${ip6Nibbles(address.words).reverse().join('.')}.ip6.arpa`;
}

/** True when `address` lies in `network`/`prefix`. Addresses of different families never match. */
export function inNetwork(address: IpAddress, network: IpAddress, prefix: number): boolean {
  if (address.version === 4) {
    if (network.version !== 4) return false;
    if (prefix <= 0) return true;
    // JavaScript shifts count modulo 32, so a /32 compares the whole value instead of shifting.
    return prefix >= IP4_BITS ? address.value === network.value : (address.value ^ network.value) >>> (IP4_BITS - prefix) === 0;
  }
  if (network.version !== 6) return false;
  let remaining = prefix;
  for (let index = 0; index < 4 && remaining > 0; index++) {
    const difference = (address.words[index]! ^ network.words[index]!) >>> 0;
    if (remaining >= 32) {
      if (difference !== 0) return false;
    } else if (difference >>> (32 - remaining) !== 0) {
      return false;
    }
    remaining -= 32;
  }
  return true;
}

/**
 * True when the address record text `text` lies in the client's network at the family's prefix.
 * Unparseable record data never matches.
 */
export function addressTextMatches(text: string, client: IpAddress, ip4Prefix: number, ip6Prefix: number): boolean {
  if (client.version === 4) {
    const value = parseIp4(text);
    return value !== null && inNetwork(client, { version: 4, value }, ip4Prefix);
  }
  const words = parseIp6(text);
  return words !== null && inNetwork(client, { version: 6, words }, ip6Prefix);
}
