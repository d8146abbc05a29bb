/**
 * The data file's format (`data/shared-infrastructure.json`, or the file `ranges update` writes):
 * JSON with each range set as base64 of big-endian interval bounds (IPv4: two 4-byte words per
 * interval; IPv6: two 16-byte words), sorted and merged. Compact (the shipped file is about
 * 150 KB) and quick to read: decoding is one pass, no address parsing.
 */
import { calendarDay } from './parse.js';
import type { AttackKind, ProviderId, RangeCategory, RangeData, RangeSource } from './types.js';

/** The `format` value of a data file this version reads. */
export const RANGES_FILE_FORMAT = 'spoof-checker/shared-infrastructure@1';

/** The most categories a data file may hold: classification keeps one bit per category in a 32-bit mask. */
export const MAX_CATEGORIES = 32;

/** A range set as written in the file. */
export interface EncodedCategory {
  provider: ProviderId;
  service: string;
  kind: AttackKind;
  ipv4Addresses: number;
  ipv6Addresses: number;
  v4: string;
  v6: string;
}

/** The data file. */
export interface RangesFile {
  format: typeof RANGES_FILE_FORMAT;
  generatedAt: string;
  /** The oldest source date (YYYY-MM-DD). */
  date: string;
  sources: RangeSource[];
  /** First-party mail ranges taken out of every category (Exchange Online…), kept to apply again when a feed is refused. */
  excluded: { tags: string[]; v4: string; v6: string };
  categories: EncodedCategory[];
}

/** Sorted, merged, inclusive intervals of one family. */
export type Intervals = readonly (readonly [bigint, bigint])[];

/** Intervals as base64 of big-endian bounds (`bytes` per bound: 4 for IPv4, 16 for IPv6). */
export function encodeIntervals(intervals: Intervals, bytes: 4 | 16): string {
  const buffer = Buffer.alloc(intervals.length * 2 * bytes);
  let offset = 0;
  for (const [start, end] of intervals) {
    for (const value of [start, end]) {
      for (let i = bytes - 1; i >= 0; i--) buffer[offset + (bytes - 1 - i)] = Number((value >> BigInt(8 * i)) & 0xffn);
      offset += bytes;
    }
  }
  return buffer.toString('base64');
}

/** The inverse of `encodeIntervals`; null when the text is not a whole number of sorted, disjoint intervals. */
export function decodeIntervals(text: string, bytes: 4 | 16): [bigint, bigint][] | null {
  const buffer = Buffer.from(text, 'base64');
  if (buffer.length % (2 * bytes) !== 0) return null;
  const out: [bigint, bigint][] = [];
  let previousEnd = -1n;
  for (let offset = 0; offset < buffer.length; offset += 2 * bytes) {
    const start = readWord(buffer, offset, bytes);
    const end = readWord(buffer, offset + bytes, bytes);
    if (start > end || start <= previousEnd) return null;
    out.push([start, end]);
    previousEnd = end;
  }
  return out;
}

function readWord(buffer: Buffer, offset: number, bytes: number): bigint {
  if (bytes === 4) return BigInt(buffer.readUInt32BE(offset));
  return (buffer.readBigUInt64BE(offset) << 64n) | buffer.readBigUInt64BE(offset + 8);
}

/** The decoded data, or why the file cannot be used. */
export type DecodeResult = { ok: true; data: RangeData } | { ok: false; error: string };

const PROVIDER_IDS: ReadonlySet<string> = new Set(['aws', 'google-cloud', 'azure', 'oracle', 'digitalocean', 'linode', 'github', 'cloudflare', 'fastly', 'akamai']);
const KINDS: ReadonlySet<string> = new Set(['rent', 'runner', 'edge']);

/** Reads a data file's JSON value into classification-ready data. */
export function decodeRangesFile(value: unknown, origin: string): DecodeResult {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, error: 'not a JSON object' };
  const file = value as Partial<RangesFile>;
  if (file.format !== RANGES_FILE_FORMAT) return { ok: false, error: `"format" is ${JSON.stringify(file.format)}, expected "${RANGES_FILE_FORMAT}"` };
  if (typeof file.generatedAt !== 'string' || typeof file.date !== 'string') return { ok: false, error: '"generatedAt" or "date" is missing' };
  // A date that is not a calendar day (`0000-00-00`) would make the data's age NaN days.
  if (!isDay(file.date)) return { ok: false, error: `"date" is ${JSON.stringify(file.date)}, not a YYYY-MM-DD day` };
  if (!Array.isArray(file.sources) || !Array.isArray(file.categories)) return { ok: false, error: '"sources" or "categories" is not a list' };
  for (const [index, source] of (file.sources as unknown[]).entries()) {
    const entry = (source ?? {}) as Partial<RangeSource>;
    if (!(entry.date === null || isDay(entry.date)) || !isDay(entry.readAt)) return { ok: false, error: `sources[${index}] has a "date" or "readAt" that is not a YYYY-MM-DD day` };
  }
  if (file.categories.length > MAX_CATEGORIES) return { ok: false, error: `${file.categories.length} categories, more than the ${MAX_CATEGORIES} this version reads` };
  const categories: RangeCategory[] = [];
  for (const [index, entry] of file.categories.entries()) {
    if (entry === null || typeof entry !== 'object' || !PROVIDER_IDS.has(entry.provider) || !KINDS.has(entry.kind) || typeof entry.service !== 'string') {
      return { ok: false, error: `categories[${index}] names no known provider, kind and service` };
    }
    const v4 = typeof entry.v4 === 'string' ? decodeIntervals(entry.v4, 4) : null;
    const v6 = typeof entry.v6 === 'string' ? decodeIntervals(entry.v6, 16) : null;
    if (v4 === null || v6 === null) return { ok: false, error: `categories[${index}] (${entry.provider} ${entry.service}) has malformed ranges` };
    categories.push(toCategory(entry.provider, entry.service, entry.kind, v4, v6));
  }
  return { ok: true, data: { generatedAt: file.generatedAt, date: file.date, sources: file.sources, categories, origin } };
}

function isDay(value: unknown): value is string {
  return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) && calendarDay(value) === value;
}

/** A category ready for binary search: IPv4 bounds as doubles, IPv6 bounds as bigints. */
export function toCategory(provider: ProviderId, service: string, kind: AttackKind, v4: Intervals, v6: Intervals): RangeCategory {
  const v4Starts = new Float64Array(v4.length);
  const v4Ends = new Float64Array(v4.length);
  let ipv4Addresses = 0;
  v4.forEach(([start, end], i) => {
    v4Starts[i] = Number(start);
    v4Ends[i] = Number(end);
    ipv4Addresses += Number(end - start + 1n);
  });
  let ipv6 = 0n;
  for (const [start, end] of v6) ipv6 += end - start + 1n;
  return {
    provider,
    service,
    kind,
    v4Starts,
    v4Ends,
    v6Starts: v6.map(([start]) => start),
    v6Ends: v6.map(([, end]) => end),
    ipv4Addresses,
    ipv6Addresses: Number(ipv6),
  };
}
