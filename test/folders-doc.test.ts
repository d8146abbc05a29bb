/**
 * Every folder says what it holds: the folders on disk, listed here, each named in
 * docs/architecture.md's folder table (as `path/`, in backticks), and the top-level ones in the
 * README too. A folder added without a line there fails this test, naming it.
 *
 * Listed: the top-level folders (not those .gitignore leaves out, nor .git), the folders of src/,
 * src/jobs/, packages/, packages/engine/ and packages/engine/src/.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The folders whose sub-folders each need a line of their own. */
const LISTED_PARENTS = ['src', 'src/jobs', 'packages', 'packages/engine', 'packages/engine/src'] as const;

/** The top-level folder names .gitignore leaves out (`node_modules/`, `/data/`: a line ending in a slash). */
function ignoredFolders(): Set<string> {
  const lines = readFileSync(join(ROOT, '.gitignore'), 'utf8').split('\n').map((line) => line.trim());
  return new Set(lines.filter((line) => !line.startsWith('#') && line.endsWith('/')).map((line) => line.replace(/^\//, '').replace(/\/$/, '')));
}

function foldersOf(relativeDir: string): string[] {
  return readdirSync(join(ROOT, relativeDir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

function topFolders(): string[] {
  const ignored = ignoredFolders();
  return foldersOf('.').filter((name) => name !== '.git' && !ignored.has(name));
}

/** Every folder the architecture page must name, as a path with a trailing slash. */
function listedFolders(): string[] {
  const ignored = ignoredFolders();
  const nested = LISTED_PARENTS.flatMap((parent) => foldersOf(parent).filter((name) => !ignored.has(name)).map((name) => `${parent}/${name}/`));
  return [...topFolders().map((name) => `${name}/`), ...nested];
}

/** A doc names a folder when it writes its path, with the slash, not as part of a longer path. */
const names = (doc: string, folder: string): boolean => new RegExp(`(^|[\\s\`(\\[])${folder.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'm').test(doc);

describe('the folders and the docs that say what they hold', () => {
  const architecture = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

  it('the reader: a path with its slash, not a piece of a longer one', () => {
    expect(names('the `src/jobs/batches/` folder', 'src/jobs/batches/')).toBe(true);
    expect(names('| `test/` | tests', 'test/')).toBe(true);
    expect(names('see packages/engine/test/', 'test/')).toBe(false);
    expect(names('see `src/jobs`', 'src/jobs/')).toBe(false);
  });

  it('lists the folders it must (the listing is not empty or stale)', () => {
    const folders = listedFolders();
    for (const folder of ['src/', 'test/', 'packages/engine/src/', 'packages/engine/test/', 'src/jobs/batches/', 'src/jobs/monitors/', 'packages/engine/src/spf/']) {
      expect(folders, folder).toContain(folder);
    }
    expect(folders).not.toContain('node_modules/');
  });

  it('docs/architecture.md names every folder in backticks (its folder table)', () => {
    const missing = listedFolders().filter((folder) => !architecture.includes(`\`${folder}\``));
    expect(missing, `add a row to the folder table of docs/architecture.md for: ${missing.join(', ')}`).toEqual([]);
  });

  it('README.md names every top-level folder', () => {
    const missing = topFolders()
      .map((name) => `${name}/`)
      .filter((folder) => !names(readme, folder));
    expect(missing, `name these in the README's "How it is built": ${missing.join(', ')}`).toEqual([]);
  });
});
