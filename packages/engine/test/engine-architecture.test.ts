/**
 * The engine's floor plan (issue 39 item 1), checked on the import graph of packages/engine/src/ as
 * test/architecture.test.ts checks the service's: a room (a folder, or a file at the top) imports
 * its own files and rooms on its own or lower floors only.
 *
 *   ground    — dns (the resolvers, the wire codec), xml (the strict XML reader) and the helpers that import nothing of the engine
 *   vocabulary — errors, input, findings (they name DNS failures and inputs); zones, dnssec
 *   analysers — spf, dmarc, dkim, mx, ranges, verdict, net, dane, transport, bimi, lookalikes, reports
 *   top       — result, check, index
 *
 * A room not in the table counts as an analyser. The upward imports that remain are listed in
 * `KNOWN_UPWARD` with what removes them (the moves of issue 39 item 1); the test fails on any other,
 * and on a listed one that is gone (so the list only shrinks).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ENGINE_SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

/** Each room's floor: 0 ground (dns, xml, helpers), 1 vocabulary (zones, dnssec), 2 analysers, 3 top. */
const FLOOR: Readonly<Record<string, number>> = {
  dns: 0,
  xml: 0,
  'map-bounded': 0,
  'text-cache': 0,
  'json-file': 0,
  errors: 1,
  input: 1,
  findings: 1,
  zones: 1,
  dnssec: 1,
  result: 3,
  check: 3,
  index: 3,
};
const ANALYSER_FLOOR = 2;

/**
 * Upward imports that remain, each with what removes it. None now: the zone resolver and the
 * embedded server moved to zones/, the raw codec and query port joined dns/ (dns/canonical.ts).
 */
const KNOWN_UPWARD: readonly string[] = [];

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Relative module specifiers of a file's imports and re-exports (comments removed first). */
function localSpecifiers(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
  const found: string[] = [];
  for (const pattern of [/\b(?:import|export)\s+(?:type\s+)?[^'"`;]*?\bfrom\s*['"](\.[^'"]+)['"]/g, /\bimport\s*['"](\.[^'"]+)['"]/g, /\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g]) {
    for (const match of code.matchAll(pattern)) found.push(match[1]!);
  }
  return found;
}

const roomOf = (file: string): string => relative(ENGINE_SRC, file).split(/[\\/]/)[0]!.replace(/\.ts$/, '');
const floorOf = (room: string): number => FLOOR[room] ?? ANALYSER_FLOOR;

/** Every import from a room to a room on a higher floor, as "from → to" (paths under the engine's src/). */
function upwardImports(): string[] {
  const files = sourceFiles(ENGINE_SRC);
  const known = new Set(files);
  const lines: string[] = [];
  for (const file of files) {
    for (const specifier of localSpecifiers(readFileSync(file, 'utf8'))) {
      const target = resolve(dirname(file), specifier).replace(/\.js$/, '.ts');
      const hit = [target, `${target}.ts`, join(target, 'index.ts')].find((candidate) => known.has(candidate));
      if (hit === undefined) throw new Error(`${relative(ENGINE_SRC, file)} imports ${specifier}, which is not an engine source file`);
      const from = roomOf(file);
      const to = roomOf(hit);
      if (from !== to && floorOf(to) > floorOf(from)) lines.push(`${relative(ENGINE_SRC, file)} → ${relative(ENGINE_SRC, hit)}`);
    }
  }
  return [...new Set(lines)].sort();
}

describe('the engine\'s floors: dns at the ground, zones and dnssec above it, the analysers above them, check on top', () => {
  const found = upwardImports();

  it('no import goes up a floor but the known ones', () => {
    expect(found.filter((line) => !KNOWN_UPWARD.includes(line))).toEqual([]);
  });

  it('every known upward import still exists (remove it from KNOWN_UPWARD once it is gone)', () => {
    expect(KNOWN_UPWARD.filter((line) => !found.includes(line))).toEqual([]);
  });

  it('the analysers never import check, result or index', () => {
    expect(found.filter((line) => /→ (check|result|index)\.ts$/.test(line))).toEqual([]);
  });
});
