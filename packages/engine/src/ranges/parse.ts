/**
 * Parsers for the providers' published feeds, each in its official format (see
 * `fixtures/provider-ranges/README.md`). Every parser is strict: a feed that is not in its format, or
 * that holds an address block that is not a valid CIDR, is refused whole with the reason, so a
 * broken download never replaces good data.
 */
import { parseIp4, parseIp6 } from '../spf/address.js';
import { ip6ToBigInt } from '../spf/ranges.js';
import type { FeedFormat } from './types.js';

/** A block of addresses: family and inclusive integer bounds. */
export interface Cidr {
  family: 4 | 6;
  start: bigint;
  end: bigint;
}

/** One prefix of a feed, with the service (or tag, or list) the feed files it under; `*` when the feed has one list. */
export interface FeedPrefix {
  service: string;
  cidr: Cidr;
}

/** A parsed feed, or why it was refused. */
export type FeedParseResult = { ok: true; date: string | null; prefixes: FeedPrefix[] } | { ok: false; error: string };

/** The service name of feeds that publish a single list. */
export const SINGLE_LIST = '*';

/**
 * The widest IPv4 block a provider's feed may list: a /8. IANA handed out IPv4 in /8s, the largest unit
 * one organisation ever held (the legacy class A networks, such as Amazon's 3.0.0.0/8); the widest block
 * the real feeds list is a /10 (Akamai). A wider one (`0.0.0.0/0`, `128.0.0.0/1`) is not space a
 * provider could hold: it is a broken or hostile feed that would file the whole internet as rentable.
 */
export const WIDEST_PLAUSIBLE_IPV4_PREFIX = 8;
/**
 * The widest IPv6 block a provider's feed may list: a /16. IANA hands the regional registries /12s; the
 * largest allocations a registry has made to one organisation are about a /19 (RFC 6177 §3 leaves sizes to
 * registry policy), and the widest block the real feeds list is a /24 (Akamai). `::/0` and the like are refused.
 */
export const WIDEST_PLAUSIBLE_IPV6_PREFIX = 16;

/** The prefix length of a block (`/n`). */
export function prefixLength(block: Cidr): number {
  const size = block.end - block.start + 1n;
  return (block.family === 4 ? 32 : 128) - (size.toString(2).length - 1);
}

/**
 * `YYYY-MM-DD` when `text` starts with a real calendar day (`2025-07-24`, `2025-07-24-20-23-14`,
 * `2025-07-24T19:16:28`), else null: `0000-00-00`, `2025-02-30` and `yesterday` are not days.
 */
export function calendarDay(text: string): string | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?![0-9])/.exec(text.trim());
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1970 || month < 1 || month > 12 || day < 1) return null;
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return `${match[1]}-${match[2]}-${match[3]}`;
}

/**
 * `a.b.c.d/n` or `x:y::/n` as an inclusive integer range; null when it is not a valid block (RFC 4632
 * §3.1, RFC 4291 §2.3). Host bits below the prefix are tolerated and ignored, as the feeds sometimes
 * set them. A bare address is a /32 or /128.
 */
export function parseCidr(text: string): Cidr | null {
  const slash = text.indexOf('/');
  const address = slash === -1 ? text : text.slice(0, slash);
  const lengthText = slash === -1 ? null : text.slice(slash + 1);
  if (lengthText !== null && !/^\d{1,3}$/.test(lengthText)) return null;
  if (address.includes(':')) {
    const words = parseIp6(address);
    if (words === null) return null;
    const prefix = lengthText === null ? 128 : Number(lengthText);
    if (prefix > 128) return null;
    return block(6, ip6ToBigInt(words), prefix);
  }
  const value = parseIp4(address);
  if (value === null) return null;
  const prefix = lengthText === null ? 32 : Number(lengthText);
  if (prefix > 32) return null;
  return block(4, BigInt(value), prefix);
}

function block(family: 4 | 6, network: bigint, prefix: number): Cidr {
  const hostBits = BigInt((family === 4 ? 32 : 128) - prefix);
  const start = (network >> hostBits) << hostBits;
  return { family, start, end: start + (1n << hostBits) - 1n };
}

/** Parses a feed's text in its official format. */
export function parseFeed(format: FeedFormat, text: string): FeedParseResult {
  try {
    switch (format) {
      case 'aws-json':
        return parseAws(text);
      case 'google-cloud-json':
        return parseGoogleCloud(text);
      case 'azure-service-tags-json':
        return parseAzure(text);
      case 'oracle-json':
        return parseOracle(text);
      case 'geofeed-csv':
        return parseGeofeed(text);
      case 'cidr-lines':
        return parseCidrLines(text);
      case 'fastly-json':
        return parseFastly(text);
      case 'github-meta-json':
        return parseGithub(text);
    }
  } catch (error) {
    if (error instanceof FeedError) return { ok: false, error: error.message };
    throw error;
  }
}

/** A refusal raised inside a parser and turned into `{ ok: false }` by `parseFeed`. */
class FeedError extends Error {}

function json(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new FeedError(`not valid JSON (${(error as Error).message})`);
  }
}

function object(value: unknown, where: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new FeedError(`${where} is not an object`);
  return value as Record<string, unknown>;
}

function array(value: unknown, where: string): unknown[] {
  if (!Array.isArray(value)) throw new FeedError(`${where} is not an array`);
  return value;
}

function string(value: unknown, where: string): string {
  if (typeof value !== 'string') throw new FeedError(`${where} is not a string`);
  return value;
}

function cidr(text: unknown, where: string): Cidr {
  const parsed = parseCidr(string(text, where).trim());
  if (parsed === null) throw new FeedError(`${where} is not an address block: ${JSON.stringify(text)}`);
  const widest = parsed.family === 4 ? WIDEST_PLAUSIBLE_IPV4_PREFIX : WIDEST_PLAUSIBLE_IPV6_PREFIX;
  if (prefixLength(parsed) < widest) {
    throw new FeedError(`${where} is ${JSON.stringify(text)}, wider than any provider holds (the widest plausible IPv${parsed.family} block is a /${widest})`);
  }
  return parsed;
}

/**
 * The feed's own date as `YYYY-MM-DD`: null when the feed gives none (the field is absent), refused
 * when it gives one that is not a day: a feed that cannot say when it was made is not trusted.
 */
function feedDay(value: unknown, where: string): string | null {
  if (value === undefined || value === null) return null;
  const day = typeof value === 'string' ? calendarDay(value) : null;
  if (day === null) throw new FeedError(`${where} is ${JSON.stringify(value)}, not a date`);
  return day;
}

/** AWS ip-ranges.json: `prefixes[].ip_prefix` and `ipv6_prefixes[].ipv6_prefix`, each with `service`. */
function parseAws(text: string): FeedParseResult {
  const root = object(json(text), 'the document');
  const prefixes: FeedPrefix[] = [];
  for (const [index, item] of array(root.prefixes, 'prefixes').entries()) {
    const entry = object(item, `prefixes[${index}]`);
    prefixes.push({ service: string(entry.service, `prefixes[${index}].service`), cidr: cidr(entry.ip_prefix, `prefixes[${index}].ip_prefix`) });
  }
  for (const [index, item] of array(root.ipv6_prefixes, 'ipv6_prefixes').entries()) {
    const entry = object(item, `ipv6_prefixes[${index}]`);
    prefixes.push({ service: string(entry.service, `ipv6_prefixes[${index}].service`), cidr: cidr(entry.ipv6_prefix, `ipv6_prefixes[${index}].ipv6_prefix`) });
  }
  return { ok: true, date: feedDay(root.createDate, 'createDate'), prefixes };
}

/** Google cloud.json: `prefixes[]` with `ipv4Prefix` or `ipv6Prefix`, and `service`. */
function parseGoogleCloud(text: string): FeedParseResult {
  const root = object(json(text), 'the document');
  const prefixes: FeedPrefix[] = [];
  for (const [index, item] of array(root.prefixes, 'prefixes').entries()) {
    const entry = object(item, `prefixes[${index}]`);
    const value = entry.ipv4Prefix ?? entry.ipv6Prefix;
    prefixes.push({ service: string(entry.service, `prefixes[${index}].service`), cidr: cidr(value, `prefixes[${index}] prefix`) });
  }
  return { ok: true, date: feedDay(root.creationTime, 'creationTime'), prefixes };
}

/** Azure Service Tags: `values[]` with `name` and `properties.addressPrefixes`. */
function parseAzure(text: string): FeedParseResult {
  const root = object(json(text), 'the document');
  const prefixes: FeedPrefix[] = [];
  for (const [index, item] of array(root.values, 'values').entries()) {
    const entry = object(item, `values[${index}]`);
    const name = string(entry.name, `values[${index}].name`);
    const properties = object(entry.properties, `values[${index}].properties`);
    for (const [at, value] of array(properties.addressPrefixes, `values[${index}].properties.addressPrefixes`).entries()) {
      prefixes.push({ service: name, cidr: cidr(value, `${name} addressPrefixes[${at}]`) });
    }
  }
  // The file carries a change number, not a date.
  return { ok: true, date: null, prefixes };
}

/** Oracle public_ip_ranges.json: `regions[].cidrs[]` with `cidr` and `tags`. */
function parseOracle(text: string): FeedParseResult {
  const root = object(json(text), 'the document');
  const prefixes: FeedPrefix[] = [];
  for (const [index, item] of array(root.regions, 'regions').entries()) {
    const region = object(item, `regions[${index}]`);
    for (const [at, entryValue] of array(region.cidrs, `regions[${index}].cidrs`).entries()) {
      const entry = object(entryValue, `regions[${index}].cidrs[${at}]`);
      const block = cidr(entry.cidr, `regions[${index}].cidrs[${at}].cidr`);
      for (const tag of array(entry.tags, `regions[${index}].cidrs[${at}].tags`)) prefixes.push({ service: string(tag, 'a tag'), cidr: block });
    }
  }
  return { ok: true, date: feedDay(root.last_updated_timestamp, 'last_updated_timestamp'), prefixes };
}

/** RFC 8805 geofeed: `prefix,country,region,city,postal` a line; `#` starts a comment. */
function parseGeofeed(text: string): FeedParseResult {
  const prefixes: FeedPrefix[] = [];
  let date: string | null = null;
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line.startsWith('#')) {
      const stamp = /last modified:\s*(.*)$/i.exec(line)?.[1];
      if (stamp !== undefined) date ??= feedDay(stamp, `line ${index + 1} ("last modified")`);
      continue;
    }
    if (line === '') continue;
    // RFC 8805 §2.1.1: the first field is the prefix.
    const first = line.split(',')[0]!.trim();
    prefixes.push({ service: SINGLE_LIST, cidr: cidr(first, `line ${index + 1}`) });
  }
  if (prefixes.length === 0) throw new FeedError('no prefixes');
  return { ok: true, date, prefixes };
}

/** One CIDR a line (Cloudflare, Akamai); blank lines and `#` comments are skipped. */
function parseCidrLines(text: string): FeedParseResult {
  const prefixes: FeedPrefix[] = [];
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    prefixes.push({ service: SINGLE_LIST, cidr: cidr(line, `line ${index + 1}`) });
  }
  if (prefixes.length === 0) throw new FeedError('no prefixes');
  return { ok: true, date: null, prefixes };
}

/** Fastly public-ip-list: `addresses[]` and `ipv6_addresses[]`. */
function parseFastly(text: string): FeedParseResult {
  const root = object(json(text), 'the document');
  const prefixes: FeedPrefix[] = [];
  for (const [index, value] of array(root.addresses, 'addresses').entries()) prefixes.push({ service: SINGLE_LIST, cidr: cidr(value, `addresses[${index}]`) });
  for (const [index, value] of array(root.ipv6_addresses, 'ipv6_addresses').entries()) prefixes.push({ service: SINGLE_LIST, cidr: cidr(value, `ipv6_addresses[${index}]`) });
  return { ok: true, date: null, prefixes };
}

/** GitHub meta: one list of CIDRs per service (`actions`, `hooks`, `web`…); other keys are skipped. */
function parseGithub(text: string): FeedParseResult {
  const root = object(json(text), 'the document');
  if (!Array.isArray(root.actions)) throw new FeedError('no "actions" list');
  const prefixes: FeedPrefix[] = [];
  for (const [key, value] of Object.entries(root)) {
    if (!Array.isArray(value) || key === 'ssh_keys') continue;
    for (const [index, item] of value.entries()) prefixes.push({ service: key, cidr: cidr(item, `${key}[${index}]`) });
  }
  return { ok: true, date: null, prefixes };
}
