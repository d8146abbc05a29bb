import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VERDICT_RULES } from '../src/verdict/index.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('shows the verdict table exactly as the code applies it', () => {
    const block = /<!-- verdict-table:start -->\n([\s\S]*?)<!-- verdict-table:end -->/.exec(readme)?.[1] ?? '';
    const rows = block.trim().split('\n').slice(2);
    expect(rows).toEqual(VERDICT_RULES.map((r, i) => `| ${i + 1} | \`${r.id}\` | ${r.condition} | \`${r.verdict}\` | \`${r.inboxOutcome}\` |`));
  });

  it('shows the two set-up commands', () => {
    expect(readme).toContain('npm install && npm run demo');
    expect(readme).toMatch(/^npm test\b/m);
  });
});
