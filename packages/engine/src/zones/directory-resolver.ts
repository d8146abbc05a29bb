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
import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalName } from '../dns/name.js';
import type { CheckSource, DnsAnswer, RecordType, Resolver } from '../dns/types.js';
import { answerFromZones, buildLoadedZones, labelCount, MAX_CNAME_CHAIN, type LoadedZone } from '../dns/zone-resolver.js';
import { loadZoneFile, ZONE_FILE_SUFFIX, ZONE_FILES_READ_AT_ONCE, ZoneLoadError, type LoadZoneOptions } from './load.js';

/** Parsed zones kept in memory at once; the least recently used beyond it is dropped (read again when asked). */
export const DEFAULT_ZONE_CACHE_MAX_ZONES = 2_000;
/** Bytes read from the head of each file to find its `$ORIGIN` while indexing the directory. */
export const ZONE_HEAD_BYTES = 4_096;

/** Options of `ZoneDirectoryResolver.open`. */
export interface ZoneDirectoryOptions extends Pick<LoadZoneOptions, 'requireSoaAndNs'> {
  /** Parsed zones kept in memory at once (`DEFAULT_ZONE_CACHE_MAX_ZONES`). */
  maxCachedZones?: number;
}

/** What the cache holds for an origin: the zone, or why its file did not load. */
type CachedZone = LoadedZone | { failed: string };

/** The index's mark for a file named `<origin>.zone`: its name is not stored again. */
const NAMED_AFTER_ORIGIN = '';

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
    /** origin → file name (`NAMED_AFTER_ORIGIN` when it is `<origin>.zone`). */
    private readonly index: Map<string, string>,
    private readonly maxCachedZones: number,
    private readonly loadOptions: Pick<LoadZoneOptions, 'requireSoaAndNs'>,
  ) {
    let most = 0;
    for (const origin of index.keys()) most = Math.max(most, labelCount(origin));
    this.maxOriginLabels = most;
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
    const file = this.index.get(origin);
    const path = join(this.dir, file === undefined || file === NAMED_AFTER_ORIGIN ? `${origin}${ZONE_FILE_SUFFIX}` : file);
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
 * origin → file for every `*.zone` file in `dir`. The origin is the `$ORIGIN` a file's head declares
 * (after blank lines, comments and `$TTL`), as files in a zone directory must begin; a file that
 * declares none first is parsed whole to learn it (`loadZoneFile`'s rules).
 */
async function indexZoneDirectory(dir: string, options: Pick<LoadZoneOptions, 'requireSoaAndNs'>): Promise<Map<string, string>> {
  let names: string[];
  try {
    names = (await readdir(dir, { withFileTypes: true })).filter((entry) => entry.isFile() && entry.name.endsWith(ZONE_FILE_SUFFIX)).map((entry) => entry.name);
  } catch (error) {
    throw new ZoneLoadError(dir, `cannot read the zone directory "${dir}": ${(error as Error).message}`, { cause: error });
  }
  if (names.length === 0) throw new ZoneLoadError(dir, `the zone directory "${dir}" holds no *${ZONE_FILE_SUFFIX} files`);
  // Code-point order, so that the same duplicate is named on every machine.
  names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const origins: string[] = new Array<string>(names.length);
  let next = 0;
  const head = async (): Promise<void> => {
    const buffer = Buffer.allocUnsafe(ZONE_HEAD_BYTES);
    while (next < names.length) {
      const at = next++;
      const path = join(dir, names[at] as string);
      origins[at] = (await declaredOrigin(path, buffer)) ?? canonicalName((await loadZoneFile(path, options)).origin);
    }
  };
  // A bounded number of files open at once, as loadZoneDirectory reads them.
  await Promise.all(Array.from({ length: Math.min(ZONE_FILES_READ_AT_ONCE, names.length) }, head));
  const index = new Map<string, string>();
  for (let at = 0; at < names.length; at++) {
    const origin = origins[at] as string;
    const name = names[at] as string;
    const earlier = index.get(origin);
    if (earlier !== undefined) {
      const earlierName = earlier === NAMED_AFTER_ORIGIN ? `${origin}${ZONE_FILE_SUFFIX}` : earlier;
      throw new ZoneLoadError(join(dir, name), `"${join(dir, earlierName)}" and "${join(dir, name)}" both hold the zone "${origin || '.'}": give each zone one file`);
    }
    index.set(origin, name === `${origin}${ZONE_FILE_SUFFIX}` ? NAMED_AFTER_ORIGIN : name);
  }
  return index;
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
