/**
 * Docs are code: what they name must exist. (test/readme.test.ts checks the relative links and the
 * verdict table; test/library-doc.test.ts runs docs/library.md's examples.) Here:
 *
 * - every repository path a doc cites in backticks (README.md, docs/**\/*.md,
 *   packages/engine/README.md) exists, and every one it writes in prose (`prosePaths`): a span that is a path and nothing else, starting with one of
 *   the repository's top-level folders or naming a file at its root (`src/cli/serve.ts`,
 *   `packages/engine/src/ranges/`, `fixtures/zones`, `package.json`); a span with a placeholder
 *   (`<topic>`, `…`, `*`, `N`) or under a build folder (`dist/`) is not a path to check;
 * - every export docs/library.md names is exported: the names each `import { … } from '<package>'`
 *   of its examples takes, by that package (`@spoof-checker/engine`, `spoof-checker`,
 *   `spoof-checker/service`), and every other identifier it sets in backticks or writes in an
 *   example that looks like an export (a constant in capitals, a PascalCase name, a function called
 *   with parentheses), by one of them.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The documents whose paths are checked. */
const DOCS = [
  'README.md',
  'packages/engine/README.md',
  ...readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.md'))
    .map((file) => join('docs', file)),
];

/** Top-level folders of the repository a cited path may start with. */
const TOP_FOLDERS = ['src', 'packages', 'docs', 'test', 'bench', 'fixtures', 'scripts', 'conformance', 'bin', '.ci'];
/** Files at the root a doc may cite by name. */
const ROOT_FILE = /^(README\.md|LICENSE|package\.json|package-lock\.json|tsconfig(\.[a-z]+)?\.json|vitest\.config\.ts)$/;
/** What marks a span as a pattern or a placeholder rather than one path. */
const PLACEHOLDER = /[<>…*{}$]|\bN\b|\.\.\.|\/dist(\/|$)|^dist\//;

/** The document's text without its fenced code blocks (their backticks are not inline spans). */
function withoutFences(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '');
}

/** The inline code spans of a Markdown text. */
function codeSpans(markdown: string): string[] {
  return [...withoutFences(markdown).matchAll(/(?<!`)`([^`\n]+)`(?!`)/g)].map((match) => match[1]!.trim());
}

/** The spans of `markdown` that are repository paths (a `:line` suffix taken off). */
export function citedPaths(markdown: string): string[] {
  const paths: string[] = [];
  for (const span of codeSpans(markdown)) {
    if (/\s/.test(span) || PLACEHOLDER.test(span)) continue;
    const path = span.replace(/:\d+(-\d+)?$/, '').replace(/^\.\//, '');
    if (ROOT_FILE.test(path) || TOP_FOLDERS.some((folder) => path.startsWith(`${folder}/`))) paths.push(path);
  }
  return paths;
}

/**
 * Paths written in prose too (outside backticks and code blocks: `(src/dns/limits.ts)`), starting
 * with one of the top-level folders; one followed by a glob or a placeholder is a pattern.
 */
export function prosePaths(markdown: string): string[] {
  const text = withoutFences(markdown).replace(/(?<!`)`[^`\n]+`(?!`)/g, ' ');
  const paths: string[] = [];
  for (const match of text.matchAll(new RegExp(`(?<![\\w/.-])((?:${TOP_FOLDERS.map((f) => f.replace('.', '\\.')).join('|')})/[\\w./-]*)([*<…{]?)`, 'g'))) {
    if (match[2]) continue;
    const path = match[1]!.replace(/[.,;:]+$/, '');
    if (PLACEHOLDER.test(path)) continue;
    paths.push(path);
  }
  return paths;
}

describe('every repository path a doc cites exists', () => {
  it('finds prose paths (and not patterns)', () => {
    expect(prosePaths('The cap (src/dns/limits.ts), src/store/batches*.ts, `src/in/a/span.ts`, src/… and docs/guides/<topic>.md.')).toEqual(['src/dns/limits.ts']);
  });

  it.each(DOCS.map((file) => [file]))('%s, in prose', (file) => {
    const missing = prosePaths(readFileSync(join(ROOT, file), 'utf8')).filter((path) => !existsSync(join(ROOT, path)));
    expect(missing, `${file} names paths that do not exist`).toEqual([]);
  });

  it('finds the paths it is meant to (and only those)', () => {
    expect(citedPaths('See `src/cli/serve.ts`, `packages/engine/src/ranges/` and `fixtures/zones`; `package.json`.')).toEqual([
      'src/cli/serve.ts',
      'packages/engine/src/ranges/',
      'fixtures/zones',
      'package.json',
    ]);
    expect(citedPaths('`docs/guides/<topic>.md`, `dist/cli/main.js`, `src/…`, `npm run build`, `test/**/*.ts`, `checkDomain`')).toEqual([]);
    expect(citedPaths('```\nsrc/not/in/a/span.ts\n```\n`src/cli/io.ts:24`')).toEqual(['src/cli/io.ts']);
  });

  it.each(DOCS.map((file) => [file]))('%s', (file) => {
    const missing = citedPaths(readFileSync(join(ROOT, file), 'utf8')).filter((path) => !existsSync(join(ROOT, path)));
    expect(missing, `${file} cites paths that do not exist`).toEqual([]);
  });
});

describe('the Node version the docs state', () => {
  it('is the floor both packages declare (engines.node)', () => {
    const floors = ['package.json', 'packages/engine/package.json'].map((file) => (JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as { engines: { node: string } }).engines.node);
    expect(new Set(floors).size).toBe(1);
    const floor = /^>=(\d+\.\d+)$/.exec(floors[0]!)?.[1];
    expect(floor).toBeDefined();
    for (const file of DOCS) {
      const stated = [...readFileSync(join(ROOT, file), 'utf8').matchAll(/Node (\d+\.\d+) or later/g)].map((match) => match[1]);
      expect(stated.filter((version) => version !== floor), file).toEqual([]);
    }
  });
});

/** The three entries the library doc can name, by package name. */
const ENTRIES = {
  '@spoof-checker/engine': 'packages/engine/src/index.ts',
  'spoof-checker': 'src/index.ts',
  'spoof-checker/service': 'src/service.ts',
} as const;
type EntryName = keyof typeof ENTRIES;

/**
 * The names a module exports, values and types: its runtime exports, plus the type-only names of
 * `export type { … }`, `export interface X`, `export type X` and `export type * from './x.js'` (one
 * level), read from its source.
 */
async function exportedNames(entry: string): Promise<Set<string>> {
  const names = new Set(Object.keys((await import(join(ROOT, entry))) as Record<string, unknown>));
  const typeNames = (file: string, depth: number): void => {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/export type \{([^}]*)\}/g)) {
      for (const part of match[1]!.split(',')) {
        const name = part.trim().split(/\s+as\s+/).pop()?.trim();
        if (name) names.add(name);
      }
    }
    for (const match of text.matchAll(/export (?:interface|type|class|enum) ([A-Za-z_$][\w$]*)/g)) names.add(match[1]!);
    if (depth > 0) {
      for (const match of text.matchAll(/export type \* from '(\.[^']+)'/g)) typeNames(resolve(dirname(file), match[1]!.replace(/\.js$/, '.ts')), depth - 1);
    }
  };
  typeNames(join(ROOT, entry), 1);
  return names;
}

const exported = {} as Record<EntryName, Set<string>>;
beforeAll(async () => {
  for (const [name, entry] of Object.entries(ENTRIES) as [EntryName, string][]) exported[name] = await exportedNames(entry);
  // `spoof-checker` re-exports the engine (`export * from '@spoof-checker/engine'`): its types too.
  for (const name of exported['@spoof-checker/engine']) exported['spoof-checker'].add(name);
}, 60_000);

const library = readFileSync(join(ROOT, 'docs/library.md'), 'utf8');

/** `import { a, b as c } from 'pkg'` in the doc's examples: each name with the package it is taken from. */
function importedNames(markdown: string): { name: string; from: string }[] {
  const found: { name: string; from: string }[] = [];
  for (const match of markdown.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'([^']+)'/g)) {
    for (const part of match[1]!.split(',')) {
      const name = part.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0]?.trim();
      if (name) found.push({ name, from: match[2]! });
    }
  }
  return found;
}

/** Globals and words a doc sets in backticks that are not this project's exports. */
const NOT_EXPORTS = new Set(['JSON', 'Promise', 'Error', 'Date', 'URL', 'AbortSignal', 'Fastify', 'TypeScript', 'JavaScript', 'Node', 'ES', 'IDN', 'TXT', 'MX', 'SPF', 'DKIM', 'DMARC', 'DNS', 'TTL', 'RSA', 'SOA', 'NS', 'CNAME', 'PTR', 'API', 'HTTP', 'HTTPS']);

/**
 * Identifiers in library.md that look like exports: in inline spans and in its examples, constants
 * in capitals (`DEFAULT_CACHE_TTL_SECONDS`), PascalCase names (`ZoneResolver`), and functions called
 * as `name(` (`checkDomain(`); a property (`result.verdict`, `.close(`) or an option (`maxEntries`) is not one.
 */
function documentedIdentifiers(markdown: string): string[] {
  const found = new Set<string>();
  const fenced = [...markdown.matchAll(/^```[a-z]*\n([\s\S]*?)^```/gm)].map((match) => match[1]!);
  const texts = [...codeSpans(markdown), ...fenced];
  for (const text of texts) {
    for (const match of text.matchAll(/(?<![\w$.'"/-])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?![\w$])/g)) found.add(match[1]!);
    for (const match of text.matchAll(/(?<![\w$.'"/-])([A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)(?![\w$'"])/g)) found.add(match[1]!);
    for (const match of text.matchAll(/(?<![\w$.'"/-])([a-z][a-zA-Z0-9]*[A-Z][a-zA-Z0-9]*)\(/g)) found.add(match[1]!);
  }
  // Names an example declares itself (`const resolver = …`, `function x(`) or takes from Node are not exports.
  for (const { name, from } of importedNames(markdown)) if (from.startsWith('node:')) found.delete(name);
  for (const text of fenced) for (const match of text.matchAll(/(?:const|let|function|class)\s+([A-Za-z_$][\w$]*)/g)) found.delete(match[1]!);
  return [...found].filter((name) => !NOT_EXPORTS.has(name)).sort();
}

describe('every export docs/library.md names is exported', () => {
  it('each name an example imports, by the package it imports it from', () => {
    const imports = importedNames(library);
    expect(imports.length).toBeGreaterThan(5);
    const wrong = imports.filter(({ name, from }) => from in ENTRIES && !exported[from as EntryName].has(name)).map(({ name, from }) => `${name} from ${from}`);
    expect(wrong).toEqual([]);
    // Only the three entries are imported from.
    expect([...new Set(imports.map(({ from }) => from))].filter((from) => !(from in ENTRIES) && !from.startsWith('node:'))).toEqual([]);
  });

  it('and so does every other doc: each name its examples import, by the package it imports it from', () => {
    const wrong = DOCS.flatMap((file) =>
      importedNames(readFileSync(join(ROOT, file), 'utf8'))
        .filter(({ name, from }) => from in ENTRIES && !exported[from as EntryName].has(name))
        .map(({ name, from }) => `${file}: ${name} from ${from}`),
    );
    expect(wrong).toEqual([]);
  });

  it('each other export-like name it sets in backticks or writes in an example, by one of the packages', () => {
    const any = new Set([...exported['@spoof-checker/engine'], ...exported['spoof-checker'], ...exported['spoof-checker/service']]);
    const names = documentedIdentifiers(library);
    expect(names.length).toBeGreaterThan(10);
    expect(names.filter((name) => !any.has(name))).toEqual([]);
  });

  it('names every dependency of the engine, and says how many', () => {
    const engine = JSON.parse(readFileSync(join(ROOT, 'packages/engine/package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const names = Object.keys(engine.dependencies);
    const words = ['', 'One', 'Two', 'Three', 'Four', 'Five', 'Six', 'Seven', 'Eight', 'Nine', 'Ten'];
    const bullet = /- `@spoof-checker\/engine`[\s\S]*?(?=\n- |\n\n)/.exec(library)?.[0] ?? '';
    expect(bullet).toContain(`${words[names.length]} small dependencies`);
    for (const name of names) expect(bullet).toContain(`\`${name}\``);
  });

  it('finds what it is meant to (and not properties or local names)', () => {
    expect(documentedIdentifiers('`DEFAULT_NEGATIVE_TTL_SECONDS`, `ZoneResolver`, `checkDomain(input)`, `result.verdict`, `app.close()`\n```ts\nconst myResolver = makeThing();\n```\n')).toEqual([
      'DEFAULT_NEGATIVE_TTL_SECONDS',
      'ZoneResolver',
      'checkDomain',
      'makeThing',
    ]);
  });
});
