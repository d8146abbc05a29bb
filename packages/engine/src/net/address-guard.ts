/**
 * The address guard: may a public service open a connection to this IP address? A checker that
 * connects where a stranger's DNS points (an MX host, an `mta-sts` host, a webhook URL) must not be
 * turned against the operator's own network (server-side request forgery). Only global unicast
 * addresses pass; everything the IANA special-purpose registries set aside is refused.
 *
 * Standalone on purpose: no imports beyond Node, so the transport probe (src/transport) and the
 * webhook sender (src/jobs) share one rule.
 *
 * Sources: IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890), RFC 1918 (private),
 * RFC 6598 (shared address space, CGNAT), RFC 3927 (IPv4 link-local), RFC 5737 and RFC 3849 /
 * RFC 9637 (documentation), RFC 2544 (benchmarking), RFC 4193 (unique local), RFC 4291 (IPv6
 * architecture: loopback, unspecified, link-local, multicast, IPv4-mapped), RFC 6052 (NAT64),
 * RFC 3056 (6to4), RFC 4380 (Teredo).
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/**
 * What kind of address it is. Only `public` may be connected to by default.
 * - `unspecified`: 0.0.0.0/8 ("this network", RFC 791), `::`.
 * - `loopback`: 127.0.0.0/8, `::1`.
 * - `private`: RFC 1918 (10/8, 172.16/12, 192.168/16) and NAT64 local-use 64:ff9b:1::/48 (RFC 8215).
 * - `cgnat`: 100.64.0.0/10, shared address space (RFC 6598).
 * - `link-local`: 169.254.0.0/16 (RFC 3927), fe80::/10 (RFC 4291 §2.5.6).
 * - `unique-local`: fc00::/7 (RFC 4193).
 * - `multicast`: 224.0.0.0/4, ff00::/8.
 * - `documentation`: 192.0.2/24, 198.51.100/24, 203.0.113/24 (RFC 5737); 2001:db8::/32 (RFC 3849), 3fff::/20 (RFC 9637).
 * - `reserved`: everything else set aside: 192.0.0.0/24 (RFC 6890), 198.18.0.0/15 (RFC 2544), 192.88.99.0/24
 *   (RFC 7526), 240.0.0.0/4 and the broadcast address, IPv6 outside 2000::/3, 100::/64 (discard), 2001::/23
 *   (IETF protocol assignments, Teredo included), fec0::/10 (deprecated site-local), IPv4-compatible `::a.b.c.d`.
 * - `invalid`: not an IP address (or carries a zone index).
 * IPv4 embedded in IPv6 (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) is
 * classified by the IPv4 address it carries.
 */
export type AddressClass =
  | 'public'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'cgnat'
  | 'link-local'
  | 'unique-local'
  | 'multicast'
  | 'documentation'
  | 'reserved'
  | 'invalid';

/** An IPv4 block: first address as a 32-bit number, prefix length, and its class. */
type V4Block = readonly [base: number, prefix: number, kind: AddressClass];

const v4 = (text: string): number => text.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);

/** IPv4 special-purpose blocks (IANA registry, RFC 6890), most specific first where they nest. */
const V4_BLOCKS: readonly V4Block[] = [
  [v4('0.0.0.0'), 8, 'unspecified'], // RFC 791 "this network"
  [v4('10.0.0.0'), 8, 'private'], // RFC 1918
  [v4('100.64.0.0'), 10, 'cgnat'], // RFC 6598
  [v4('127.0.0.0'), 8, 'loopback'], // RFC 1122 §3.2.1.3
  [v4('169.254.0.0'), 16, 'link-local'], // RFC 3927
  [v4('172.16.0.0'), 12, 'private'], // RFC 1918
  [v4('192.0.0.0'), 24, 'reserved'], // RFC 6890 IETF protocol assignments
  [v4('192.0.2.0'), 24, 'documentation'], // RFC 5737 TEST-NET-1
  [v4('192.88.99.0'), 24, 'reserved'], // RFC 7526 deprecated 6to4 relay anycast
  [v4('192.168.0.0'), 16, 'private'], // RFC 1918
  [v4('198.18.0.0'), 15, 'reserved'], // RFC 2544 benchmarking
  [v4('198.51.100.0'), 24, 'documentation'], // RFC 5737 TEST-NET-2
  [v4('203.0.113.0'), 24, 'documentation'], // RFC 5737 TEST-NET-3
  [v4('224.0.0.0'), 4, 'multicast'], // RFC 5771
  [v4('240.0.0.0'), 4, 'reserved'], // RFC 1112 §4, and 255.255.255.255 (RFC 919) inside it
];

/** The class of an IPv4 address given as a 32-bit number. */
function classifyV4(n: number): AddressClass {
  for (const [base, prefix, kind] of V4_BLOCKS) {
    const size = 2 ** (32 - prefix);
    if (n >= base && n < base + size) return kind;
  }
  return 'public';
}

/** Dotted-quad text to a number, or null when it is not one (leading zeros refused: they read as octal elsewhere). */
function parseV4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let n = 0;
  for (const part of parts) {
    if (!/^(?:0|[1-9]\d{0,2})$/.test(part)) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    n = n * 256 + octet;
  }
  return n;
}

/** IPv6 text to eight 16-bit groups, or null (RFC 4291 §2.2 forms, an embedded IPv4 tail included). */
function parseV6(text: string): number[] | null {
  if (isIP(text) !== 6) return null;
  let head = text;
  const lastColon = head.lastIndexOf(':');
  const last = head.slice(lastColon + 1);
  if (last.includes('.')) {
    // An embedded IPv4 tail (RFC 4291 §2.2 form 3) becomes its two 16-bit groups.
    const embedded = parseV4(last);
    if (embedded === null) return null;
    head = `${head.slice(0, lastColon + 1)}${Math.floor(embedded / 65536).toString(16)}:${(embedded % 65536).toString(16)}`;
  }
  const groups = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const doubled = head.indexOf('::');
  let all: number[];
  if (doubled >= 0) {
    const left = groups(head.slice(0, doubled));
    const right = groups(head.slice(doubled + 2));
    const missing = 8 - left.length - right.length;
    if (missing < 1) return null;
    all = [...left, ...new Array<number>(missing).fill(0), ...right];
  } else {
    all = groups(head);
  }
  return all.length === 8 && all.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? all : null;
}

/** The class of an IPv6 address given as eight groups. */
function classifyV6(g: number[]): AddressClass {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const embedded = g6 * 65536 + g7;
  const zeroTo = (end: number) => g.slice(0, end).every((x) => x === 0);
  if (zeroTo(8)) return 'unspecified'; // RFC 4291 §2.5.2
  if (zeroTo(7) && g7 === 1) return 'loopback'; // RFC 4291 §2.5.3
  if (zeroTo(5) && g5 === 0xffff) return classifyV4(embedded); // RFC 4291 §2.5.5.2 IPv4-mapped
  if (zeroTo(6)) return 'reserved'; // RFC 4291 §2.5.5.1 IPv4-compatible (deprecated)
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return classifyV4(embedded); // RFC 6052 NAT64
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return 'private'; // RFC 8215 local-use NAT64
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return 'reserved'; // RFC 6666 discard-only
  if (g0 === 0x2001 && g1 === 0xdb8) return 'documentation'; // RFC 3849
  if (g0 === 0x3fff && g1 <= 0x0fff) return 'documentation'; // RFC 9637 3fff::/20
  if (g0 === 0x2001 && g1 < 0x200) return 'reserved'; // RFC 2928 2001::/23 (Teredo 2001::/32 inside)
  if (g0 === 0x2002) return classifyV4(g1 * 65536 + g2); // RFC 3056 6to4
  if ((g0 & 0xfe00) === 0xfc00) return 'unique-local'; // RFC 4193 fc00::/7
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local'; // RFC 4291 §2.5.6
  if ((g0 & 0xffc0) === 0xfec0) return 'reserved'; // RFC 3879 deprecated site-local
  if ((g0 & 0xff00) === 0xff00) return 'multicast'; // RFC 4291 §2.7
  if ((g0 & 0xe000) !== 0x2000) return 'reserved'; // RFC 4291 §2.4: global unicast is 2000::/3
  return 'public';
}

/**
 * The class of `ip` (IPv4 dotted quad or IPv6 text, brackets allowed). Never throws: text that is
 * not an address is `invalid`, and an IPv6 zone index (`fe80::1%eth0`) is refused as `invalid` too.
 */
export function classifyAddress(ip: string): AddressClass {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  if (bare.includes('%')) return 'invalid';
  const n = parseV4(bare);
  if (n !== null) return classifyV4(n);
  const groups = parseV6(bare.toLowerCase());
  return groups === null ? 'invalid' : classifyV6(groups);
}

/** True when `ip` is a global unicast address that a public service may connect to. */
export function isPublicAddress(ip: string): boolean {
  return classifyAddress(ip) === 'public';
}

/** Plain words for each class, for findings and error messages ("a loopback address"). */
export const ADDRESS_CLASS_TEXT: Readonly<Record<AddressClass, string>> = {
  public: 'a public address',
  unspecified: 'the unspecified address',
  loopback: 'a loopback address',
  private: 'a private network address',
  cgnat: 'a carrier-grade NAT (shared) address',
  'link-local': 'a link-local address',
  'unique-local': 'a unique local IPv6 address',
  multicast: 'a multicast address',
  documentation: 'an address reserved for documentation',
  reserved: 'a reserved address',
  invalid: 'not a valid IP address',
};

/**
 * Why `ip` must not be reached ("a loopback address"), or undefined when it may: the words of
 * {@link ADDRESS_CLASS_TEXT} for every class but `public`. Something that is not an IP address is
 * refused too.
 */
export function forbiddenReason(ip: string): string | undefined {
  const addressClass = classifyAddress(ip);
  return addressClass === 'public' ? undefined : ADDRESS_CLASS_TEXT[addressClass];
}

/** Whether `ip` may not be connected to by default (anything but a global unicast address). */
export function isForbiddenAddress(ip: string): boolean {
  return !isPublicAddress(ip);
}

/** The outcome of {@link resolveAllowedAddress}. */
export type AddressCheck =
  | { ok: true; address: string; family: 4 | 6 }
  | { ok: false; kind: 'forbidden'; address: string; reason: string }
  | { ok: false; kind: 'unresolvable'; reason: string };

/** Resolves a host name to its addresses (injected in tests). */
export type HostLookup = (host: string) => Promise<{ address: string; family: number }[]>;

const systemLookup: HostLookup = (host) => lookup(host, { all: true, verbatim: true });

/**
 * Resolves `host` (an IP literal is taken as is, brackets removed) and checks every address:
 * refused when any is forbidden (unless `allowPrivate`), else the first address, which the caller
 * connects to as it is (never resolving the name again, so DNS cannot answer differently between
 * the check and the connection).
 */
export async function resolveAllowedAddress(host: string, allowPrivate: boolean, resolve: HostLookup = systemLookup): Promise<AddressCheck> {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  let addresses: { address: string; family: number }[];
  if (isIP(bare) !== 0) {
    addresses = [{ address: bare, family: isIP(bare) }];
  } else {
    try {
      addresses = await resolve(bare);
    } catch (error) {
      return { ok: false, kind: 'unresolvable', reason: `${bare} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'lookup failed'})` };
    }
    if (addresses.length === 0) return { ok: false, kind: 'unresolvable', reason: `${bare} has no address` };
  }
  if (!allowPrivate) {
    for (const { address } of addresses) {
      const reason = forbiddenReason(address);
      if (reason !== undefined) return { ok: false, kind: 'forbidden', address, reason };
    }
  }
  const first = addresses[0]!;
  return { ok: true, address: first.address, family: first.family === 6 ? 6 : 4 };
}
