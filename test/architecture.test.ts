/**
 * The house's floor plan, checked on the import graph of src/: no circle of imports between
 * modules, and no room importing a room above it.
 *
 * Floors, lowest first (a room may import its own files and rooms on lower floors only):
 *   engine  — the check itself (DNS, zones, SPF, DMARC, DKIM, MX, verdict, checkDomain, …)
 *   store   — storage (SQLite, PostgreSQL, memory) and the batch model it stores
 *   jobs    — batch scans, queue, workers (jobs/batches/), monitors with their alerts (jobs/monitors/)
 *   http, web — the API routes and the public page: siblings, neither imports the other
 *   service — the composition root (src/service.ts, src/service/): http + web + store + jobs
 *   cli     — the command line, on top of everything
 *
 * A new top-level room is tolerated: it counts as an engine room until it is added to ROOMS, so
 * the test fails only if it imports a service room (and then it says which table to extend).
 * The graph is read with regular expressions over `import … from`, `export … from`, `import('…')`
 * and side-effect `import '…'` statements (type-only imports included: a circle of types is a
 * circle of understanding too).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** The floors, lowest first. */
const FLOORS = ['engine', 'store', 'jobs', 'http', 'web', 'service', 'cli'] as const;
type Floor = (typeof FLOORS)[number];
/** Floor rank: http and web share one (siblings); a room imports its own floor and strictly lower ranks only. */
const RANK: Readonly<Record<Floor, number>> = { engine: 0, store: 1, jobs: 2, http: 3, web: 3, service: 4, cli: 5 };

/**
 * THE ROOM TABLE: each top-level entry of src/ (a directory, or a file at the top) and its floor.
 * Rooms that other work may add are listed ahead (ranges, transport, net: engine; monitors: a
 * service room between jobs and http would need its own rank — it is put with jobs here).
 */
const ROOMS: Readonly<Record<string, Floor>> = {
  // engine
  dns: 'engine',
  zones: 'engine',
  spf: 'engine',
  dmarc: 'engine',
  dkim: 'engine',
  mx: 'engine',
  verdict: 'engine',
  ranges: 'engine',
  transport: 'engine',
  net: 'engine',
  'input.ts': 'engine',
  'check.ts': 'engine',
  'result.ts': 'engine',
  'findings.ts': 'engine',
  'errors.ts': 'engine',
  'text-cache.ts': 'engine',
  'json-file.ts': 'engine',
  'map-bounded.ts': 'engine',
  'fixtures.ts': 'engine',
  'index.ts': 'engine',
  // service rooms
  store: 'store',
  // jobs/ is a floor of three rooms: its top files (shared Redis module loading, the resolver's
  // host lookup) and two folders, batch scans and monitors (with their alerts and webhooks)
  jobs: 'jobs',
  'jobs/batches': 'jobs',
  'jobs/monitors': 'jobs',
  monitors: 'jobs',
  // receiving DMARC and TLS reports: files, SMTP, IMAP (above the store, below the API that uploads to it)
  ingest: 'jobs',
  // what stored reports say: summaries, the selectors checks probe, monitor signals (read side; the store below, the API above)
  summaries: 'jobs',
  http: 'http',
  web: 'web',
  // the console (sign-in, the overview, a domain's page): on the page's floor, it uses web/'s shell and result view
  console: 'web',
  'service.ts': 'service',
  service: 'service',
  cli: 'cli',
};

/** Packages only the service may load: never from an engine room. */
const SERVICE_PACKAGES = /^(fastify|@fastify\/|fastify-plugin|pg|kysely|ioredis|bullmq|better-sqlite3|node:sqlite$|mailparser|mailauth|imapflow|smtp-server)/;

/** The service package's sources (every room but the engine's). */
const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');
/** The engine package's sources: all of it is the engine floor. */
const ENGINE_SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../packages/engine/src');
/** How the service names the engine: its package, never a path into it. */
const ENGINE_PACKAGE = '@spoof-checker/engine';
const insideEngine = (file: string): boolean => !relative(ENGINE_SRC, file).startsWith('..');
/** A file's path for messages: `engine/spf/parse.ts` or `http/app.ts`. */
const shown = (file: string): string => (insideEngine(file) ? `engine/${relative(ENGINE_SRC, file)}` : relative(SRC, file));

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every module specifier a file names in an import or re-export. */
export function specifiers(source: string): string[] {
  // Comments out first, so that an example in a doc comment is not taken for an import.
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
  const found: string[] = [];
  const patterns = [
    /\b(?:import|export)\s+(?:type\s+)?[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g, // import x from '…', export { x } from '…'
    /\bimport\s*['"]([^'"]+)['"]/g, // import '…'
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g, // import('…')
  ];
  for (const pattern of patterns) for (const match of code.matchAll(pattern)) found.push(match[1]!);
  return found;
}

/** Top-level rooms whose folders are rooms of their own (`jobs/batches`, `jobs/monitors`). */
const FOLDERED = new Set(['jobs']);
/**
 * The room of a file: its first path segment under src/ or packages/engine/src/, or its first two
 * for a folder of a foldered room (src/jobs/batches/queue.ts is in `jobs/batches`).
 */
function roomOf(file: string): string {
  const segments = relative(insideEngine(file) ? ENGINE_SRC : SRC, file).split(/[\\/]/);
  const [first, second] = segments;
  return !insideEngine(file) && FOLDERED.has(first!) && segments.length > 2 ? `${first}/${second}` : first!;
}
function floorOf(room: string): Floor {
  return ROOMS[room] ?? 'engine';
}
/** The floor of a file: everything in the engine package is the engine. */
function floorOfFile(file: string): Floor {
  return insideEngine(file) ? 'engine' : floorOf(roomOf(file));
}

interface Graph {
  files: string[];
  /** file → the src/ files it imports */
  edges: Map<string, string[]>;
  /** file → the packages it imports */
  packages: Map<string, string[]>;
}

function readGraph(): Graph {
  const files = [...sourceFiles(ENGINE_SRC), ...sourceFiles(SRC)];
  const known = new Set(files);
  const edges = new Map<string, string[]>();
  const packages = new Map<string, string[]>();
  for (const file of files) {
    const local: string[] = [];
    const external: string[] = [];
    for (const specifier of specifiers(readFileSync(file, 'utf8'))) {
      if (!specifier.startsWith('.')) {
        external.push(specifier);
        continue;
      }
      const target = resolve(dirname(file), specifier).replace(/\.js$/, '.ts');
      const candidates = [target, `${target}.ts`, join(target, 'index.ts')];
      const hit = candidates.find((c) => known.has(c));
      if (hit === undefined) throw new Error(`${shown(file)} imports ${specifier}, which is not a source file of either package`);
      local.push(hit);
    }
    edges.set(file, local);
    packages.set(file, external);
  }
  return { files, edges, packages };
}

/** The strongly connected components with more than one file (Tarjan), each as a list of files. */
function circles(graph: Graph): string[][] {
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string): void => {
    indexOf.set(file, index);
    low.set(file, index);
    index += 1;
    stack.push(file);
    onStack.add(file);
    for (const next of graph.edges.get(file) ?? []) {
      if (!indexOf.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, indexOf.get(next)!));
      }
    }
    if (low.get(file) === indexOf.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      const selfLoop = (graph.edges.get(file) ?? []).includes(file);
      if (component.length > 1 || selfLoop) found.push(component.map(shown).sort());
    }
  };
  for (const file of graph.files) if (!indexOf.has(file)) visit(file);
  return found;
}

/** Imports that go up (or sideways between http and web), as "from → to" lines. */
function breaches(graph: Graph): string[] {
  const lines: string[] = [];
  for (const [file, targets] of graph.edges) {
    const room = roomOf(file);
    for (const target of targets) {
      const other = roomOf(target);
      // Rooms on one floor may use each other (the engine's rooms do); http and web are two floors of one rank.
      if (other === room || floorOfFile(target) === floorOfFile(file)) continue;
      if (RANK[floorOfFile(target)] >= RANK[floorOfFile(file)]) {
        const unlisted = [room, other].filter((r) => !(r in ROOMS));
        const hint = unlisted.length > 0 ? ` (not in the ROOMS table: ${unlisted.join(', ')})` : '';
        lines.push(`${shown(file)} (${floorOfFile(file)}) → ${shown(target)} (${floorOfFile(target)})${hint}`);
      }
    }
  }
  return lines.sort();
}

describe('the import graph of src/', () => {
  const graph = readGraph();

  it('reads every kind of import statement (the reader itself)', () => {
    const source = [
      "import a from './a.js';",
      "import type { B } from '../b.js';",
      "import {\n  c,\n  type D,\n} from './c.js';",
      "export * from './e.js';",
      "export { f } from './f.js';",
      "import './g.js';",
      "const h = await import('./h.js');",
      "// import x from './commented.js';",
      "/** import y from './doc.js'; */",
      "const s = 'from here';",
    ].join('\n');
    expect(specifiers(source)).toEqual(['./a.js', '../b.js', './c.js', './e.js', './f.js', './g.js', './h.js']);
  });

  it('finds the rooms it knows (the table is not stale)', () => {
    expect(graph.files.length).toBeGreaterThan(100);
    for (const room of ['dns', 'spf', 'verdict', 'store', 'jobs', 'http', 'web', 'cli', 'check.ts', 'result.ts']) {
      expect(graph.files.some((f) => roomOf(f) === room), room).toBe(true);
    }
  });

  it('keeps the shared files of a foldered room below its folders (src/jobs/*.ts imports neither batches/ nor monitors/)', () => {
    const lines: string[] = [];
    for (const [file, targets] of graph.edges) {
      if (insideEngine(file) || !FOLDERED.has(roomOf(file))) continue;
      for (const target of targets) if (roomOf(target).startsWith(`${roomOf(file)}/`)) lines.push(`${shown(file)} → ${shown(target)}`);
    }
    expect(lines).toEqual([]);
    for (const room of ['jobs/batches', 'jobs/monitors']) expect(graph.files.some((f) => roomOf(f) === room), room).toBe(true);
  });

  it('has no circle of imports', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('has no import from a lower room to a higher one (engine < store < jobs < http | web < service < cli)', () => {
    expect(breaches(graph)).toEqual([]);
  });

  it('keeps the service packages out of the engine rooms', () => {
    const lines: string[] = [];
    for (const [file, external] of graph.packages) {
      if (floorOfFile(file) !== 'engine') continue;
      for (const name of external) if (SERVICE_PACKAGES.test(name)) lines.push(`${shown(file)} → ${name}`);
    }
    expect(lines).toEqual([]);
  });

  it('the engine package stands alone: no path out of packages/engine/src, no service room inside it', () => {
    const lines: string[] = [];
    for (const [file, targets] of graph.edges) {
      if (!insideEngine(file)) continue;
      for (const target of targets) if (!insideEngine(target)) lines.push(`${shown(file)} → ${shown(target)}`);
      for (const name of graph.packages.get(file) ?? []) if (name === ENGINE_PACKAGE || name.startsWith('spoof-checker')) lines.push(`${shown(file)} → ${name}`);
    }
    expect(lines).toEqual([]);
    const serviceRoomsInEngine = [...new Set(graph.files.filter(insideEngine).map(roomOf))].filter((room) => ROOMS[room] !== undefined && ROOMS[room] !== 'engine');
    expect(serviceRoomsInEngine).toEqual([]);
  });

  it('the service reaches the engine only through its package name', () => {
    const lines: string[] = [];
    for (const [file, targets] of graph.edges) {
      if (insideEngine(file)) continue;
      for (const target of targets) if (insideEngine(target)) lines.push(`${shown(file)} → ${shown(target)}`);
    }
    expect(lines).toEqual([]);
    expect([...graph.packages.values()].some((names) => names.includes(ENGINE_PACKAGE))).toBe(true);
  });
});
