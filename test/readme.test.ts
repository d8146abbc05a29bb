/**
 * The README is the front door (at most MAX_README_LINES lines); the details live in docs/. Every
 * relative link in the README and in docs/ must lead to a file of this repository (a clone or the
 * package stands alone: nothing may point outside it), and the verdict table in docs/verdict.md must
 * be the one the code applies.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { VERDICT_RULES } from '../packages/engine/src/verdict/index.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** What a newcomer reads before the first command (issue 20). */
const MAX_README_LINES = 300;

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const docs = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.md'))
  .map((file) => join('docs', file));

/** Relative link targets of a Markdown file (no scheme, no pure anchors), without their anchors. */
function relativeLinks(markdown: string): string[] {
  const links: string[] = [];
  for (const match of markdown.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
    links.push(target.split('#')[0]!);
  }
  return links;
}

describe('README', () => {
  it(`is at most ${MAX_README_LINES} lines`, () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(MAX_README_LINES);
  });

  it('shows the two set-up commands and what npm test needs', () => {
    expect(readme).toContain('npm install && npm run demo');
    expect(readme).toMatch(/^npm test\b/m);
    expect(readme).toContain('apt-get install -y postgresql redis-server chromium');
  });

  it.each([['README.md'], ...docs.map((file) => [file])])('%s: every relative link leads to a file in the repository', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    expect(text).not.toContain('../shared/');
    const broken = relativeLinks(text).filter((target) => {
      const path = resolve(ROOT, dirname(file), target);
      return !path.startsWith(ROOT) || !existsSync(path);
    });
    expect(broken).toEqual([]);
  });
});

describe('docs/verdict.md', () => {
  it('shows the verdict table exactly as the code applies it', () => {
    const text = readFileSync(join(ROOT, 'docs/verdict.md'), 'utf8');
    const block = /<!-- verdict-table:start -->\n([\s\S]*?)<!-- verdict-table:end -->/.exec(text)?.[1] ?? '';
    const rows = block.trim().split('\n').slice(2);
    expect(rows).toEqual(VERDICT_RULES.map((r, i) => `| ${i + 1} | \`${r.id}\` | ${r.condition} | \`${r.verdict}\` | \`${r.inboxOutcome}\` |`));
  });
});
