/**
 * Loads master files from disk: one file as a `Zone`, or a directory of `*.zone` files as a zone set
 * for `ZoneResolver`, the embedded DNS server and the demo.
 *
 * The origin of each zone: the `origin` option when given, otherwise what the file itself says
 * (`$ORIGIN` before the first record, or an SOA record first; see `parseZone`). The file name is never
 * used: scenario files are named after scenarios, not domains, and a guessed origin would put every
 * record outside its zone. Files in a directory must therefore begin with `$ORIGIN`, as NSD, BIND and
 * Knot all accept.
 */
import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseZone } from './parse.js';
import type { Zone } from './types.js';
import { mapBounded } from '../map-bounded.js';

/** The suffix of the files `loadZoneDirectory` reads; included fragments use another (e.g. `.inc`). */
export const ZONE_FILE_SUFFIX = '.zone';
/** Zone files read at once by `loadZoneDirectory`. */
export const ZONE_FILES_READ_AT_ONCE = 64;

/** A zone file or directory that cannot be read at all. Syntax problems are `ZoneSyntaxError`s. */
export class ZoneLoadError extends Error {
  override readonly name = 'ZoneLoadError' as const;
  /** The file or directory concerned. */
  readonly path: string;

  constructor(path: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.path = path;
  }
}

/** How to load a zone file. */
export interface LoadZoneOptions {
  /** The zone's apex, as a server's configuration would give it; otherwise the file says. */
  origin?: string;
  /**
   * Refuse a zone without an SOA and NS records at its apex. On by default: the files are meant to
   * load unchanged in NSD, BIND and Knot, which all refuse such zones.
   */
  requireSoaAndNs?: boolean;
}

/**
 * Reads and parses one master file; `$INCLUDE` paths are relative to it. Rejects with a
 * `ZoneLoadError` when the file cannot be read, a `ZoneSyntaxError` (naming the file, line and
 * column) when its text is wrong.
 */
export async function loadZoneFile(path: string, options: LoadZoneOptions = {}): Promise<Zone> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ZoneLoadError(path, `cannot read the zone file "${path}": ${(error as Error).message}`, { cause: error });
  }
  return parseZone(text, {
    file: path,
    ...(options.origin !== undefined ? { origin: options.origin } : {}),
    requireSoaAndNs: options.requireSoaAndNs ?? true,
    // Included files are few and small; reading them synchronously keeps the parser a plain function.
    readInclude: (included) => readFileSync(included, 'utf8'),
  });
}

/**
 * Loads every `*.zone` file directly in `dir` (not in subdirectories), in name order, as one zone
 * set. Rejects when the directory is missing or holds no zone file, when any file fails to load,
 * or when two files claim the same origin (a server could load only one of them).
 */
export async function loadZoneDirectory(dir: string, options: Pick<LoadZoneOptions, 'requireSoaAndNs'> = {}): Promise<Zone[]> {
  let names: string[];
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    names = entries.filter((entry) => entry.isFile() && entry.name.endsWith(ZONE_FILE_SUFFIX)).map((entry) => entry.name);
  } catch (error) {
    throw new ZoneLoadError(dir, `cannot read the zone directory "${dir}": ${(error as Error).message}`, { cause: error });
  }
  if (names.length === 0) {
    throw new ZoneLoadError(dir, `the zone directory "${dir}" holds no *${ZONE_FILE_SUFFIX} files`);
  }
  // Code-point order, the same on every machine and locale.
  names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  // Read a bounded number of files at once: a directory may hold more files than the process may open.
  const loaded = await mapBounded(names, ZONE_FILES_READ_AT_ONCE, (name) =>
    loadZoneFile(join(dir, name), options).then(
      (zone) => ({ zone }),
      (error: unknown) => ({ error }),
    ),
  );
  // The first broken file in name order is reported, whichever read finished first.
  const failed = loaded.find((outcome) => 'error' in outcome);
  if (failed && 'error' in failed) throw failed.error;
  const zones = loaded.map((outcome) => (outcome as { zone: Zone }).zone);
  const byOrigin = new Map<string, string>();
  for (const zone of zones) {
    const source = zone.source ?? '';
    const earlier = byOrigin.get(zone.origin);
    if (earlier !== undefined) {
      throw new ZoneLoadError(source, `"${earlier}" and "${source}" both hold the zone "${zone.origin || '.'}": give each zone one file`);
    }
    byOrigin.set(zone.origin, source);
  }
  return zones;
}
