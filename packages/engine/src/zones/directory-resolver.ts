/**
 * Zone files read when first asked for, not all at start: `scan --zones` over a million files in
 * flat memory. An index of the directory (each file's origin, read from the `$ORIGIN` its head
 * declares) says which file holds a name; a bounded cache keeps the zones parsed most recently.
 * Answers are `ZoneResolver`'s over the same files (the same RFC 1035 §5 reader, the same answer
 * code: `answerFromZones`): NXDOMAIN and NODATA apart, RFC 4592 wildcards, CNAME chains across files.
 *
 * A file that fails to load once the index is built is that lookup's failure (`servfail` naming the
 * file, line and column), never a missing name: a broken zone file is not an empty zone.
 */
import type { Dirent } from 'node:fs';
import { open, opendir } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalName } from '../dns/name.js';
import type { CheckSource, DnsAnswer, RecordType, Resolver } from '../dns/types.js';
import { answerFromZones, buildLoadedZones, labelCount, MAX_CNAME_CHAIN, type LoadedZone } from './zone-resolver.js';
import { loadZoneFile, ZONE_FILE_SUFFIX, ZONE_FILES_READ_AT_ONCE, ZoneLoadError, type LoadZoneOptions } from './load.js';

/** Parsed zones kept in memory at once; the least recently used beyond it is dropped (read again when asked). */
export const DEFAULT_ZONE_CACHE_MAX_ZONES = 64;
/** Bytes read from the head of each file to find its `$ORIGIN` while indexing the directory. */
export const ZONE_HEAD_BYTES = 4_096;

/** Options of `ZoneDirectoryResolver.open`. */
export interface ZoneDirectoryOptions extends Pick<LoadZoneOptions, 'requireSoaAndNs'> {
  /** Parsed zones kept in memory at once (`DEFAULT_ZONE_CACHE_MAX_ZONES`). */
  maxCachedZones?: number;
}

/** What the cache holds for an origin: the zone, or why its file did not load. */
type CachedZone = LoadedZone | { failed: string };

/**
 * A resolver over a directory of `*.zone` files that parses each zone on first use and keeps at most
 * `maxCachedZones` of them. Open it with `ZoneDirectoryResolver.open(dir)`: that reads the directory's
 * index (every file's head) and refuses, as `loadZoneDirectory` does, an empty directory or two files
 * with one origin.
 */
export class ZoneDirectoryResolver implements Resolver {
  /** Answers from zone files, never from the DNS itself. */
  readonly source: CheckSource = 'fixture-zones';
  /** Zones parsed from their files (`loads`) and answers given from memory, for tests and benchmarks. */
  readonly stats = { loads: 0 };
  private readonly cache = new Map<string, CachedZone>();
  private readonly pending = new Map<string, Promise<CachedZone>>();
  private readonly maxOriginLabels: number;

  private constructor(
    private readonly dir: string,
    private readonly index: ZoneDirectoryIndex,
    private readonly maxCachedZones: number,
    private readonly loadOptions: Pick<LoadZoneOptions, 'requireSoaAndNs'>,
  ) {
    this.maxOriginLabels = index.maxOriginLabels;
  }

  /** Indexes `dir` (its `*.zone` files, not subdirectories). Rejects with a `ZoneLoadError` or `ZoneSyntaxError`. */
  static async open(dir: string, options: ZoneDirectoryOptions = {}): Promise<ZoneDirectoryResolver> {
    const maxCachedZones = options.maxCachedZones ?? DEFAULT_ZONE_CACHE_MAX_ZONES;
    if (!Number.isInteger(maxCachedZones) || maxCachedZones < 1) throw new RangeError('maxCachedZones must be a whole number of at least 1');
    const loadOptions = options.requireSoaAndNs === undefined ? {} : { requireSoaAndNs: options.requireSoaAndNs };
    const index = await indexZoneDirectory(dir, loadOptions);
    return new ZoneDirectoryResolver(dir, index, maxCachedZones, loadOptions);
  }

  /** How many zone files the directory holds. */
  get zoneCount(): number {
    return this.index.size;
  }

  async resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    // The zones this question needed, held until it is answered even if the cache drops them meanwhile:
    // each round loads one more, and a CNAME chain crosses at most MAX_CNAME_CHAIN + 1 zones.
    const held = new Map<string, CachedZone>();
    for (let round = 0; round <= MAX_CNAME_CHAIN + 1; round++) {
      let failure: string | undefined;
      const answer = answerFromZones(name, type, (suffixes) => {
        const origin = this.originFor(suffixes);
        if (origin === undefined) return undefined;
        const zone = held.get(origin) ?? this.cached(origin);
        if (zone === undefined) return { load: origin };
        if ('failed' in zone) {
          failure = zone.failed;
          return { load: origin };
        }
        return zone;
      });
      if (failure !== undefined) return { kind: 'error', reason: 'servfail', detail: failure };
      if (answer.kind !== 'load') return answer as DnsAnswer<T>;
      held.set(answer.origin, await this.load(answer.origin));
    }
    return { kind: 'error', reason: 'servfail', detail: `CNAME chain across more than ${MAX_CNAME_CHAIN} zones at ${name}` };
  }

  /** The longest origin in the index that `suffixes` (a name and its parents) falls under. */
  private originFor(suffixes: readonly string[]): string | undefined {
    for (let index = Math.max(0, suffixes.length - 1 - this.maxOriginLabels); index < suffixes.length; index++) {
      const suffix = suffixes[index] as string;
      if (this.index.has(suffix)) return suffix;
    }
    return undefined;
  }

  /** A cached zone, marked most recently used. */
  private cached(origin: string): CachedZone | undefined {
    const zone = this.cache.get(origin);
    if (zone !== undefined) {
      this.cache.delete(origin);
      this.cache.set(origin, zone);
    }
    return zone;
  }

  /** Parses the zone of `origin` once, however many questions wait for it, and caches it. */
  private load(origin: string): Promise<CachedZone> {
    const waiting = this.pending.get(origin);
    if (waiting) return waiting;
    const path = join(this.dir, this.index.fileOf(origin) ?? `${origin}${ZONE_FILE_SUFFIX}`);
    const loading = loadZoneFile(path, this.loadOptions).then(
      (zone): CachedZone => {
        this.stats.loads++;
        if (canonicalName(zone.origin) !== origin) {
          return { failed: `the zone file "${path}" now holds ${zone.origin || '.'}, not ${origin}: it changed after the directory was indexed` };
        }
        return buildLoadedZones([zone]).get(origin) as LoadedZone;
      },
      (error: unknown): CachedZone => ({ failed: error instanceof Error ? error.message : String(error) }),
    );
    this.pending.set(origin, loading);
    return loading.then((zone) => {
      this.pending.delete(origin);
      this.cache.set(origin, zone);
      if (this.cache.size > this.maxCachedZones) this.cache.delete(this.cache.keys().next().value as string);
      return zone;
    });
  }
}

/**
 * The origins of a directory's zone files, in little memory: a million files take about 30 MB. The
 * usual file, named `<origin>.zone`, is one entry in a sorted run of ASCII names packed in one buffer
 * (binary search); any other file is an entry in a small map from its origin to its name.
 */
export class ZoneDirectoryIndex {
  /** How many zone files it holds. */
  readonly size: number;
  /** The most labels any origin has. */
  readonly maxOriginLabels: number;

  constructor(
    /** The sorted origins of files named after them, packed end to end. */
    private readonly packed: Buffer,
    /** Where each packed origin starts; one more entry marks the end of the last. */
    private readonly offsets: Uint32Array,
    /** origin → file name, for files not named `<origin>.zone`. */
    private readonly others: ReadonlyMap<string, string>,
  ) {
    this.size = offsets.length - 1 + others.size;
    let most = 0;
    // Labels counted on the bytes (a dot more than the dots, none for the root): no string per origin.
    for (let at = 0; at < offsets.length - 1; at++) {
      const start = offsets[at] as number;
      const end = offsets[at + 1] as number;
      let labels = end > start ? 1 : 0;
      for (let index = start; index < end; index++) if (packed[index] === DOT) labels++;
      most = Math.max(most, labels);
    }
    for (const origin of others.keys()) most = Math.max(most, labelCount(origin));
    this.maxOriginLabels = most;
  }

  /** The file that holds `origin`'s zone, or undefined when no file does. */
  fileOf(origin: string): string | undefined {
    const other = this.others.get(origin);
    if (other !== undefined) return other;
    return this.findPacked(origin) ? `${origin}${ZONE_FILE_SUFFIX}` : undefined;
  }

  /** Whether a zone file holds `origin`. */
  has(origin: string): boolean {
    return this.others.has(origin) || this.findPacked(origin);
  }

  private findPacked(origin: string): boolean {
    let low = 0;
    let high = this.offsets.length - 2;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const order = this.compare(middle, origin);
      if (order === 0) return true;
      if (order < 0) low = middle + 1;
      else high = middle - 1;
    }
    return false;
  }

  /** The packed origin at `at` against `origin`, by code unit: negative, zero or positive. */
  private compare(at: number, origin: string): number {
    const start = this.offsets[at] as number;
    const length = (this.offsets[at + 1] as number) - start;
    const common = Math.min(length, origin.length);
    for (let index = 0; index < common; index++) {
      const difference = (this.packed[start + index] as number) - origin.charCodeAt(index);
      if (difference !== 0) return difference;
    }
    return length - origin.length;
  }
}

/**
 * Indexes every `*.zone` file in `dir` by origin: the `$ORIGIN` a file's head declares (after blank
 * lines, comments and `$TTL`), as files in a zone directory must begin; a file that declares none
 * first is parsed whole to learn it (`loadZoneFile`'s rules). The directory is read as a stream, so a
 * million names are never all held at once.
 */
async function indexZoneDirectory(dir: string, options: Pick<LoadZoneOptions, 'requireSoaAndNs'>): Promise<ZoneDirectoryIndex> {
  let entries: AsyncIterable<Dirent>;
  try {
    entries = await opendir(dir, { bufferSize: 256 });
  } catch (error) {
    throw new ZoneLoadError(dir, `cannot read the zone directory "${dir}": ${(error as Error).message}`, { cause: error });
  }
  const named = new PackedOrigins();
  const others = new Map<string, string>();
  const buffers: Buffer[] = [];
  const reading = new Set<Promise<void>>();
  // The first file that failed: held as a value (a rejected promise nobody awaits yet would end the process).
  let failure: unknown;
  const read = async (name: string): Promise<void> => {
    const buffer = buffers.pop() ?? Buffer.allocUnsafe(ZONE_HEAD_BYTES);
    const path = join(dir, name);
    try {
      const origin = (await declaredOrigin(path, buffer)) ?? canonicalName((await loadZoneFile(path, options)).origin);
      // ASCII origins named after themselves pack; anything else is kept by name.
      if (name === `${origin}${ZONE_FILE_SUFFIX}` && /^[\x20-\x7e]*$/.test(origin)) named.add(origin);
      else {
        const earlier = others.get(origin);
        if (earlier !== undefined) throw duplicateZone(dir, origin, earlier, name);
        others.set(origin, name);
      }
    } catch (error) {
      failure ??= error;
    } finally {
      buffers.push(buffer);
    }
  };
  try {
    for await (const entry of entries) {
      if (failure !== undefined) break;
      if (!entry.isFile() || !entry.name.endsWith(ZONE_FILE_SUFFIX)) continue;
      // A bounded number of files open at once, as loadZoneDirectory reads them.
      if (reading.size >= ZONE_FILES_READ_AT_ONCE) await Promise.race(reading);
      const one: Promise<void> = read(entry.name).finally(() => reading.delete(one));
      reading.add(one);
    }
  } catch (error) {
    failure ??= new ZoneLoadError(dir, `cannot read the zone directory "${dir}": ${(error as Error).message}`, { cause: error });
  }
  await Promise.all(reading);
  if (failure !== undefined) throw failure;
  if (named.count === 0 && others.size === 0) throw new ZoneLoadError(dir, `the zone directory "${dir}" holds no *${ZONE_FILE_SUFFIX} files`);
  const { packed, offsets } = named.sorted();
  const index = new ZoneDirectoryIndex(packed, offsets, others);
  // A file named after its zone and another file that declares the same zone: a server could load only one.
  for (const [origin, name] of others) {
    if (index.fileOf(origin) !== name) throw duplicateZone(dir, origin, `${origin}${ZONE_FILE_SUFFIX}`, name);
  }
  return index;
}

/** Initial sizes of `PackedOrigins`' buffers; each doubles when full. */
const PACKED_ORIGINS_INITIAL_BYTES = 64 * 1024;
const PACKED_ORIGINS_INITIAL_COUNT = 4 * 1024;
/** '.' in ASCII. */
const DOT = 0x2e;

/**
 * ASCII origins packed end to end as the directory is read, in the order found. Not an array of
 * strings: an origin cut from a file's head is a slice of that head (V8 keeps the whole head string
 * alive for it), and a million of them kept the heap hundreds of MB high while indexing, which also
 * set V8's next collection that high for the scan after it.
 */
class PackedOrigins {
  count = 0;
  private bytes = Buffer.allocUnsafe(PACKED_ORIGINS_INITIAL_BYTES);
  /** Where each origin ends (it starts where the one before it ends). */
  private ends = new Uint32Array(PACKED_ORIGINS_INITIAL_COUNT);
  private used = 0;

  /** Adds an origin of ASCII characters (one byte each). */
  add(origin: string): void {
    if (this.used + origin.length > this.bytes.length) {
      const larger = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.used + origin.length));
      this.bytes.copy(larger, 0, 0, this.used);
      this.bytes = larger;
    }
    if (this.count === this.ends.length) {
      const larger = new Uint32Array(this.ends.length * 2);
      larger.set(this.ends);
      this.ends = larger;
    }
    this.used += this.bytes.write(origin, this.used, 'latin1');
    this.ends[this.count++] = this.used;
  }

  /** The origins in byte order (ASCII: code-point order), for the binary search: one buffer and where each starts. */
  sorted(): { packed: Buffer; offsets: Uint32Array } {
    const { bytes, ends } = this;
    const start = (at: number): number => (at === 0 ? 0 : (ends[at - 1] as number));
    const order = new Uint32Array(this.count);
    for (let at = 0; at < this.count; at++) order[at] = at;
    order.sort((a, b) => {
      const aStart = start(a);
      const bStart = start(b);
      const aLength = (ends[a] as number) - aStart;
      const bLength = (ends[b] as number) - bStart;
      const common = Math.min(aLength, bLength);
      for (let index = 0; index < common; index++) {
        const difference = (bytes[aStart + index] as number) - (bytes[bStart + index] as number);
        if (difference !== 0) return difference;
      }
      return aLength - bLength;
    });
    const packed = Buffer.allocUnsafe(this.used);
    const offsets = new Uint32Array(this.count + 1);
    let written = 0;
    for (let at = 0; at < this.count; at++) {
      const from = order[at] as number;
      offsets[at] = written;
      written += bytes.copy(packed, written, start(from), ends[from]);
    }
    offsets[this.count] = written;
    return { packed, offsets };
  }
}

function duplicateZone(dir: string, origin: string, first: string, second: string): ZoneLoadError {
  const [a, b] = [first, second].sort();
  return new ZoneLoadError(join(dir, b as string), `"${join(dir, a as string)}" and "${join(dir, b as string)}" both hold the zone "${origin || '.'}": give each zone one file`);
}

/** The `$ORIGIN` a file's head declares before anything else but blank lines, comments and `$TTL`; undefined otherwise. */
async function declaredOrigin(path: string, buffer: Buffer): Promise<string | undefined> {
  let text: string;
  try {
    const handle = await open(path, 'r');
    try {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      text = buffer.toString('utf8', 0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw new ZoneLoadError(path, `cannot read the zone file "${path}": ${(error as Error).message}`, { cause: error });
  }
  const lines = text.split('\n');
  // The last line may be cut off by the head's end: never read it.
  lines.pop();
  for (const raw of lines) {
    const line = raw.replace(/;.*$/, '').trim();
    if (line === '') continue;
    const directive = /^\$(ORIGIN|TTL)\s+(\S+)$/i.exec(line);
    if (!directive) return undefined;
    if ((directive[1] as string).toUpperCase() === 'TTL') continue;
    const origin = directive[2] as string;
    // RFC 1035 §5.1: $ORIGIN takes an absolute name here (nothing came before it to be relative to).
    if (!origin.endsWith('.') || origin.includes('\\') || origin.includes('"')) return undefined;
    return canonicalName(origin === '.' ? '' : origin.slice(0, -1));
  }
  return undefined;
}
