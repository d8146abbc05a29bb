/**
 * Who the client is: which hop of `X-Forwarded-For` to believe behind a proxy, and the key a
 * per-client rate limit counts under (an IPv6 client by its /64, since one host usually holds a
 * whole /64; an IPv4-mapped IPv6 address as the IPv4 address it is).
 */
import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';

/**
 * Which proxies to trust: `false` (none: the client is the socket's peer), a hop count (the
 * rightmost `hops` addresses, starting with the peer, are proxies of ours), or addresses and CIDR
 * blocks of our proxies.
 */
export type TrustProxy = false | number | string[];

/** Most proxy hops `--trust-proxy` accepts (more is certainly a typo). */
export const MAX_TRUSTED_HOPS = 16;
/** Prefix length an IPv6 client is rate-limited by (RFC 6177: a site gets a /48 to /64; a host usually a /64). */
export const IPV6_CLIENT_PREFIX_BITS = 64;

/** Why `text` is not an address or CIDR block, or null when it is. */
function cidrProblem(text: string): string | null {
  const slash = text.indexOf('/');
  const address = slash === -1 ? text : text.slice(0, slash);
  const version = isIP(address);
  if (version === 0) return `"${text}" is not an IP address or CIDR block (e.g. 10.0.0.0/8, 192.0.2.7, fd00::/8)`;
  if (slash === -1) return null;
  const bits = text.slice(slash + 1);
  const max = version === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return `"${text}" has a prefix length that is not 0 to ${max}`;
  return null;
}

/** Thrown for a trust-proxy setting that cannot be used; the message says how to fix it. */
export class TrustProxyError extends Error {
  override readonly name = 'TrustProxyError';
}

/**
 * Reads a trust-proxy setting: `off`/`false`/empty (none), a hop count (`1`), or a comma-separated
 * list of addresses and CIDR blocks (`10.0.0.0/8,fd00::/8`). `true` is refused: trusting every hop
 * makes the leftmost `X-Forwarded-For` entry the client, and a client writes that entry itself.
 */
export function parseTrustProxy(text: string | undefined): TrustProxy {
  const value = text?.trim() ?? '';
  if (value === '' || ['off', 'false', 'no', '0'].includes(value.toLowerCase())) return false;
  if (['on', 'true', 'yes'].includes(value.toLowerCase())) {
    throw new TrustProxyError(
      `trust proxy "${value}" would believe any X-Forwarded-For a client sends; give the number of proxies in front of the service (e.g. 1) or their addresses (e.g. 10.0.0.0/8)`,
    );
  }
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > MAX_TRUSTED_HOPS) throw new TrustProxyError(`trust proxy hop count must be 0 to ${MAX_TRUSTED_HOPS}, not ${value}`);
    return hops === 0 ? false : hops;
  }
  const blocks = value.split(',').map((entry) => entry.trim());
  for (const block of blocks) {
    const problem = block === '' ? 'an empty entry (two commas in a row?)' : cidrProblem(block);
    if (problem) throw new TrustProxyError(`trust proxy: ${problem}`);
  }
  return blocks;
}

/**
 * Why a hop count is risky, for the start-up warning: it believes whoever connects, so it is safe
 * only when nothing but the proxies can reach the port.
 */
export function trustProxyWarning(trust: TrustProxy): string | null {
  if (typeof trust !== 'number') return null;
  return (
    `--trust-proxy ${trust} believes X-Forwarded-For from whoever connects: a client that reaches this port directly ` +
    'can name any address and so escape every per-client limit. Give the proxies\' addresses instead (e.g. --trust-proxy 10.0.0.0/8,127.0.0.1).'
  );
}

/** Longest X-Forwarded-For header read (longer ones are ignored whole: the socket's peer is the client). */
export const MAX_FORWARDED_FOR_CHARS = 2048;

/**
 * True when every entry of an `X-Forwarded-For` value is an IP address (RFC 7239 §5.2 would allow
 * ports and obfuscated names; the de-facto header carries bare addresses). Anything else (a name, a
 * port, markup) makes the whole header untrustworthy.
 */
export function isValidForwardedFor(value: string | string[] | undefined): boolean {
  if (value === undefined) return true;
  const text = Array.isArray(value) ? value.join(',') : value;
  if (text.length > MAX_FORWARDED_FOR_CHARS) return false;
  return text.split(',').every((entry) => isIP(entry.trim()) !== 0);
}

/**
 * Drops an `X-Forwarded-For` header that holds anything but IP addresses, so that the client
 * address (Fastify's `request.ip`, read lazily from the raw headers) falls back to the next trusted
 * hop or the socket's peer instead of a string a client wrote. Run first on every request.
 */
export function dropInvalidForwardedFor(raw: IncomingMessage): void {
  if (!isValidForwardedFor(raw.headers['x-forwarded-for'])) delete raw.headers['x-forwarded-for'];
}

/** The client's address as an IP address: `request.ip` when it is one, else the socket's peer (never a client-written string). */
export function clientAddress(request: { ip: string; raw: IncomingMessage }): string {
  if (isIP(request.ip) !== 0) return request.ip;
  return request.raw.socket?.remoteAddress ?? '';
}

/**
 * Fastify's `trustProxy` for a setting. A hop count becomes a function because Fastify treats a bare
 * number as "trust nothing"; proxy-addr calls it with each address from the socket's peer (i = 0)
 * leftwards through `X-Forwarded-For`, so the client is the first address past the trusted hops.
 */
export function fastifyTrustProxy(trust: TrustProxy): false | string[] | ((address: string, hop: number) => boolean) {
  if (trust === false) return false;
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return [...trust];
}

/** The eight 16-bit groups of an IPv6 address (zone id dropped), or undefined when it is not one. */
function ipv6Groups(address: string): number[] | undefined {
  const text = address.split('%')[0] ?? '';
  if (isIP(text) !== 6) return undefined;
  let head = text;
  // An embedded IPv4 address (RFC 4291 §2.2, form 3) is the last two groups, written in decimal.
  const lastColon = head.lastIndexOf(':');
  const last = head.slice(lastColon + 1);
  if (last.includes('.')) {
    const [a = 0, b = 0, c = 0, d = 0] = last.split('.').map(Number);
    head = `${head.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').filter((g) => g !== '').map((g) => parseInt(g, 16)));
  const gap = head.indexOf('::');
  const left = gap === -1 ? parse(head) : parse(head.slice(0, gap));
  const right = gap === -1 ? [] : parse(head.slice(gap + 2));
  const missing = 8 - left.length - right.length;
  return [...left, ...new Array<number>(Math.max(0, missing)).fill(0), ...right];
}

/**
 * The key a per-client limit counts under: an IPv4 address as it is, an IPv4-mapped IPv6 address
 * (`::ffff:192.0.2.7`, RFC 4291 §2.5.5.2) as its IPv4 address, any other IPv6 address as its /64
 * (`2001:db8:1:2::/64`). Exported for every limiter that counts per client (the public page's too).
 */
export function clientRateLimitKey(address: string): string {
  return clientNetworks(address).client;
}

/** The networks a client address belongs to, as rate-limit keys. */
export interface ClientNetworks {
  /** The client: an IPv4 address, or an IPv6 /64. */
  client: string;
  /** The /56 and /48 of an IPv6 client (null for IPv4: one address is one client there). */
  net56: string | null;
  net48: string | null;
}

/** `groups` cut to `bits` (a multiple of 8), written as a prefix: `2001:db8:1:200::/56`. */
function ipv6Prefix(groups: readonly number[], bits: number): string {
  const kept = groups.slice(0, Math.ceil(bits / 16)).map((group, index) => {
    const end = (index + 1) * 16;
    return end <= bits ? group : group & (0xffff << (end - bits)) & 0xffff;
  });
  return `${kept.map((g) => g.toString(16)).join(':')}::/${bits}`;
}

/**
 * The keys a per-client limit and the aggregate limits count under: an IPv4 address (or IPv4-mapped
 * IPv6 address, RFC 4291 §2.5.5.2) as itself; an IPv6 client as its /64, /56 and /48 (RFC 6177).
 */
export function clientNetworks(address: string): ClientNetworks {
  const groups = ipv6Groups(address);
  if (!groups) return { client: address, net56: null, net48: null };
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6);
    return { client: `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`, net56: null, net48: null };
  }
  return { client: ipv6Prefix(groups, IPV6_CLIENT_PREFIX_BITS), net56: ipv6Prefix(groups, 56), net48: ipv6Prefix(groups, 48) };
}
