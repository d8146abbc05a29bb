/**
 * The private-address guard: outbound connections the service makes for its users (webhooks) must
 * not reach the service's own machine or network (SSRF). An address is forbidden when it is
 * loopback, private, link-local, shared (CGNAT), multicast, unspecified, documentation or otherwise
 * reserved; `--allow-private-addresses` lifts the guard for labs and tests.
 *
 * The host is resolved once, every address checked, and the connection is made to the checked
 * address (the caller passes it as the socket's lookup result), so a DNS answer that changes between
 * the check and the connection (DNS rebinding) cannot slip a private address through.
 *
 * No service imports: this module may move to the engine package beside the SMTP probes' guard.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** IPv4 ranges never reached on a user's behalf (RFC 6890 special-purpose registry, and multicast). */
const FORBIDDEN_V4: readonly [string, number, string][] = [
  ['0.0.0.0', 8, 'this network (RFC 791)'],
  ['10.0.0.0', 8, 'private (RFC 1918)'],
  ['100.64.0.0', 10, 'shared address space, CGNAT (RFC 6598)'],
  ['127.0.0.0', 8, 'loopback (RFC 1122 §3.2.1.3)'],
  ['169.254.0.0', 16, 'link-local (RFC 3927)'],
  ['172.16.0.0', 12, 'private (RFC 1918)'],
  ['192.0.0.0', 24, 'IETF protocol assignments (RFC 6890 §2.2.2)'],
  ['192.0.2.0', 24, 'documentation (RFC 5737)'],
  ['192.88.99.0', 24, '6to4 relay anycast (RFC 7526)'],
  ['192.168.0.0', 16, 'private (RFC 1918)'],
  ['198.18.0.0', 15, 'benchmarking (RFC 2544)'],
  ['198.51.100.0', 24, 'documentation (RFC 5737)'],
  ['203.0.113.0', 24, 'documentation (RFC 5737)'],
  ['224.0.0.0', 4, 'multicast (RFC 5771)'],
  ['240.0.0.0', 4, 'reserved (RFC 1112 §4), broadcast included'],
];

/** IPv6 ranges never reached on a user's behalf (RFC 6890 §2.2.3, RFC 4291 §2.4). */
const FORBIDDEN_V6: readonly [string, number, string][] = [
  ['::', 128, 'unspecified (RFC 4291 §2.5.2)'],
  ['::1', 128, 'loopback (RFC 4291 §2.5.3)'],
  ['64:ff9b:1::', 48, 'local-use IPv4/IPv6 translation (RFC 8215)'],
  ['100::', 64, 'discard-only (RFC 6666)'],
  ['2001::', 23, 'IETF protocol assignments (RFC 2928)'],
  ['2001:db8::', 32, 'documentation (RFC 3849)'],
  ['2002::', 16, '6to4 (RFC 3056): may embed a private IPv4 address'],
  ['fc00::', 7, 'unique local (RFC 4193)'],
  ['fe80::', 10, 'link-local (RFC 4291 §2.5.6)'],
  ['fec0::', 10, 'site-local, deprecated (RFC 3879)'],
  ['ff00::', 8, 'multicast (RFC 4291 §2.7)'],
];

const blockV4 = new BlockList();
for (const [net, bits] of FORBIDDEN_V4) blockV4.addSubnet(net, bits, 'ipv4');
const blockV6 = new BlockList();
for (const [net, bits] of FORBIDDEN_V6) blockV6.addSubnet(net, bits, 'ipv6');

/** The IPv4 address an IPv6 address carries (IPv4-mapped `::ffff:a.b.c.d`, RFC 4291 §2.5.5.2; NAT64 `64:ff9b::/96`, RFC 6052), if any. */
function embeddedV4(ip: string): string | undefined {
  const lower = ip.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const hi = parseInt(hex[1]!, 16);
    const lo = parseInt(hex[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return undefined;
}

/**
 * Why `ip` must not be reached (e.g. "loopback (RFC 1122 §3.2.1.3)"), or undefined when it may.
 * Something that is not an IP address is forbidden too.
 */
export function forbiddenReason(ip: string): string | undefined {
  const version = isIP(ip);
  if (version === 4) {
    for (const [net, bits, why] of FORBIDDEN_V4) {
      const single = new BlockList();
      single.addSubnet(net, bits, 'ipv4');
      if (single.check(ip, 'ipv4')) return why;
    }
    return undefined;
  }
  if (version === 6) {
    const v4 = embeddedV4(ip);
    if (v4 !== undefined) return forbiddenReason(v4);
    if (!blockV6.check(ip, 'ipv6')) return undefined;
    for (const [net, bits, why] of FORBIDDEN_V6) {
      const single = new BlockList();
      single.addSubnet(net, bits, 'ipv6');
      if (single.check(ip, 'ipv6')) return why;
    }
    return 'reserved';
  }
  return 'not an IP address';
}

/** Whether `ip` is loopback, private, link-local, CGNAT, multicast or reserved (or not an IP at all). */
export function isForbiddenAddress(ip: string): boolean {
  if (isIP(ip) === 4) return blockV4.check(ip, 'ipv4');
  return forbiddenReason(ip) !== undefined;
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
 * refused when any is forbidden (unless `allowPrivate`), else the first address, to connect to.
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
