/**
 * The demo page (`serve --demo`) in Chromium at a phone's width (375 px) and on a desktop: the
 * banner is on screen, the domains to try are links that open a result, axe finds nothing serious,
 * and no word breaks at its hyphen (`p-⏎none.example` reads as another name). Screenshots go under
 * test-artifacts/web/ for people to look at.
 */
import { mkdirSync } from 'node:fs';
import axe from 'axe-core';
import type { FastifyInstance } from 'fastify';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoSettings } from '../../src/cli/demo.js';
import { DEMO_SCENARIOS_FILE, DEMO_ZONES_DIR } from '../../src/cli/serve.js';
import { fixtureApp, launchChromium } from './helpers.js';

const ARTIFACTS = new URL('../../test-artifacts/web/', import.meta.url).pathname;
const PHONE = { width: 375, height: 800 };
const DESKTOP = { width: 1280, height: 900 };
const BROWSER_TEST_TIMEOUT_MS = 60_000;

let app: FastifyInstance;
let browser: Browser;
let base: string;

beforeAll(async () => {
  const demo = await loadDemoSettings(DEMO_SCENARIOS_FILE, DEMO_ZONES_DIR);
  ({ app } = await fixtureApp({ overrides: { pages: { demo } } }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  browser = await launchChromium();
  mkdirSync(ARTIFACTS, { recursive: true });
}, BROWSER_TEST_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await app?.close();
});

/**
 * Where a line of the main text ends right after a hyphen between two letters or digits: the
 * words broken there (each "before-|after"). Measured character by character with Range rects.
 */
const HYPHEN_BREAKS = `(() => {
  const found = [];
  const roots = [document.querySelector('main'), document.querySelector('#demo-banner')].filter(Boolean);
  for (const root of roots) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    let previous = null;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let i = 0; i < node.data.length; i++) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = range.getClientRects()[0];
        if (!rect || rect.width === 0) continue;
        const char = node.data[i];
        if (previous && rect.top > previous.top + 4 && previous.char === '-' && /[\\p{L}\\p{N}]/u.test(previous.before) && /[\\p{L}\\p{N}]/u.test(char)) {
          found.push(previous.context + '|' + node.data.slice(i, i + 12));
        }
        previous = { top: rect.top, char, before: i > 0 ? node.data[i - 1] : '', context: node.data.slice(Math.max(0, i - 12), i) };
      }
    }
  }
  return found;
})()`;

async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(axe.source);
  const results = await page.evaluate<{ violations: { id: string; impact: string | null; nodes: { target: unknown }[] }[] }>("axe.run(document, { resultTypes: ['violations'] })");
  return results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
}

describe('the demo in Chromium', () => {
  it.each([
    ['phone', PHONE],
    ['desktop', DESKTOP],
  ] as const)(
    'on a %s: banner, domains to try, a result from a link, no word broken at its hyphen',
    async (label, viewport) => {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      try {
        await page.goto(`${base}/`);
        expect(await page.isVisible('#demo-banner')).toBe(true);
        expect(await page.textContent('#demo-banner')).toContain('not from public DNS');
        expect(await page.evaluate<string[]>(HYPHEN_BREAKS)).toEqual([]);
        expect(await seriousViolations(page)).toEqual([]);
        await page.screenshot({ path: `${ARTIFACTS}demo-home-${label}.png`, fullPage: true });

        // The domain list's links open results; the long, hyphenated names of this one stay whole.
        await Promise.all([page.waitForURL(`${base}/check/spf-too-many-lookups.example`), page.click('a[href="/check/spf-too-many-lookups.example"]')]);
        expect(await page.textContent('#verdict')).toBeTruthy();
        expect(await page.isVisible('#demo-banner')).toBe(true);
        expect(await page.evaluate<string[]>(HYPHEN_BREAKS)).toEqual([]);
        await page.screenshot({ path: `${ARTIFACTS}demo-result-${label}.png`, fullPage: true });

        await page.goto(`${base}/check/google.com`);
        expect(await page.textContent('h1')).toBe('google.com is not in the demo');
        expect(await page.evaluate<string[]>(HYPHEN_BREAKS)).toEqual([]);
        await page.screenshot({ path: `${ARTIFACTS}demo-not-in-demo-${label}.png`, fullPage: true });
      } finally {
        await context.close();
      }
    },
    BROWSER_TEST_TIMEOUT_MS,
  );
});
