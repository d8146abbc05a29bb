/**
 * Issue 42, item 11: the kinds of drift a new user met, each made a failing test.
 * - The README's `apt-get install` line lists every Debian package `.ci/run` installs.
 * - A doc names only npm modules the packages depend on (or Node built-ins) as what they use: a
 *   storage driver, a queue, a server framework, an HTTP client (better-sqlite3 had stayed named
 *   after the move to `node:sqlite`).
 * - No Markdown table row stands alone, cut off from its table (docs/cli.md had two after the
 *   monitor section).
 * - The home page's "What is checked" names every section a result page shows.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const docs = ['README.md', ...readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];

describe("the README's apt-get line and .ci/run", () => {
  it('lists every package .ci/run installs', () => {
    const ci = read('.ci/run');
    const installed = [...ci.matchAll(/missing\+=\(([a-z0-9.+-]+)\)/g)].map((m) => m[1]!);
    expect(installed.length).toBeGreaterThan(5);
    const line = /^apt-get install -y (.+)$/m.exec(read('README.md'))?.[1];
    expect(line, 'the README has an apt-get install line').toBeDefined();
    const listed = line!.trim().split(/\s+/);
    expect(installed.filter((pkg) => !listed.includes(pkg)), 'installed by .ci/run, missing from the README').toEqual([]);
    expect(listed.filter((pkg) => !installed.includes(pkg)), 'in the README, not installed by .ci/run').toEqual([]);
  });
});

/**
 * npm modules that do one job another module (or a Node built-in) could do: a doc that names one
 * as used must name one the packages depend on. A line that says a module is gone or not used is history.
 */
const ALTERNATIVES: readonly string[] = ['better-sqlite3', 'sqlite3', 'node:sqlite', 'pg', 'ioredis', 'redis', 'bullmq', 'bull', 'bee-queue', 'fastify', 'express', 'koa', 'hapi', 'undici', 'node-fetch', 'axios', 'imapflow', 'node-imap', 'mailauth', 'nodemailer', 'kysely', 'knex', 'prisma'];
const HISTORY = /\b(gone|no longer|not used|instead of|replaced|removed|dropped|was loaded|nothing from)\b/i;

function dependencies(): Set<string> {
  const names = new Set<string>();
  for (const manifest of ['package.json', 'packages/engine/package.json']) {
    const json = JSON.parse(read(manifest)) as Record<string, Record<string, string> | undefined>;
    for (const field of ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies']) for (const name of Object.keys(json[field] ?? {})) names.add(name);
  }
  return names;
}

describe('npm modules named in the docs', () => {
  const deps = dependencies();
  it.each(docs.map((d) => [d]))('%s names only modules the packages use', (doc) => {
    const wrong: string[] = [];
    for (const line of read(doc).split('\n')) {
      if (HISTORY.test(line)) continue;
      for (const name of ALTERNATIVES) {
        const named = new RegExp(`(?<![\\w@/.-])${name.replace(/[.:]/g, '\\$&')}(?![\\w/-])`).test(line);
        if (!named) continue;
        const used = name.startsWith('node:') || deps.has(name);
        // Words that are also module names ("got", "express", "postgres", "redis") count only in code spans or parentheses.
        const asModule = new RegExp(`[\`(]${name.replace(/[.:]/g, '\\$&')}[\`)@ ,]`).test(line);
        if (!used && asModule) wrong.push(`${name}: ${line.trim().slice(0, 100)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('catches the drift it was made for', () => {
    expect(deps.has('better-sqlite3')).toBe(false);
    expect(HISTORY.test('- **SQLite** (better-sqlite3): the directory is created if missing')).toBe(false);
  });
});

describe('Markdown tables', () => {
  it.each(docs.map((d) => [d]))('%s: every table row belongs to a table (a header and its separator above it)', (doc) => {
    const lines = read(doc).split('\n');
    const stray: string[] = [];
    let inFence = false;
    let inTable = false;
    lines.forEach((line, i) => {
      if (/^\s*```/.test(line)) inFence = !inFence;
      if (inFence) return;
      const row = /^\|.*\|\s*$/.test(line);
      if (!row) {
        inTable = false;
        return;
      }
      if (inTable) return;
      // A table starts with a header followed by its separator row (| --- | --- |).
      if (/^\|(\s*:?-{3,}:?\s*\|)+\s*$/.test(lines[i + 1] ?? '')) inTable = true;
      else stray.push(`line ${i + 1}: ${line.slice(0, 80)}`);
    });
    expect(stray).toEqual([]);
  });
});

describe('the home page and the result page', () => {
  /** Each check section of a result (its heading's id) and the words the home page names it by. */
  const SECTIONS: Record<string, string> = {
    'spf-title': 'SPF',
    'shared-title': 'Shared infrastructure',
    'dmarc-title': 'DMARC',
    'dkim-title': 'DKIM',
    'mx-title': 'MX',
    'transport-title': 'Mail sent to you',
    'bimi-title': 'BIMI',
    'lookalikes-title': 'lookalikes',
    dnssec: 'DNSSEC',
  };
  /** Headings of a result page that are not a check: the answer's parts. */
  const NOT_CHECKS = new Set(['reasons-title', 'about-title', 'next-title', 'unchecked-title']);

  it('"What is checked" names every section a result shows', () => {
    const views = ['src/web/result-view.ts', 'src/web/transport-view.ts', 'src/web/bimi-view.ts', 'src/web/lookalikes-view.ts'].map(read).join('\n');
    const ids = new Set([...views.matchAll(/<h2 id="([a-z-]+)"/g)].map((m) => m[1]!).filter((id) => !NOT_CHECKS.has(id)));
    if (/id="dnssec"/.test(views)) ids.add('dnssec');
    expect([...ids].filter((id) => SECTIONS[id] === undefined), 'a new result section: add it to "What is checked" (src/web/views.ts) and here').toEqual([]);
    const home = read('src/web/views.ts');
    const list = /<h2>What is checked<\/h2>\s*<ul class="checks">([\s\S]*?)<\/ul>/.exec(home)?.[1] ?? '';
    const named = [...list.matchAll(/<strong>([^<]+)<\/strong>/g)].map((m) => m[1]!);
    expect([...ids].filter((id) => !named.some((name) => name.includes(SECTIONS[id]!))).map((id) => SECTIONS[id])).toEqual([]);
  });
});

describe('the command synopses', () => {
  it.each([['README.md'], ['docs/cli.md']])('%s: every command line that takes --zones takes --demo-zones too', (doc) => {
    const lines = read(doc).split('\n').filter((line) => /^spoof-checker \S+/.test(line) && /--zones DIR/.test(line));
    expect(lines.length).toBeGreaterThan(3);
    expect(lines.filter((line) => !line.includes('--demo-zones'))).toEqual([]);
  });
});
