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

/**
 * Every record box of the page (`pre.record`): how many text lines each record takes on screen
 * against how many it has, and whether the page itself is wider than the screen.
 */
const RECORD_LINES = `(() => {
  const boxes = [...document.querySelectorAll('pre.record')].map((pre) => {
    const code = pre.querySelector('code') || pre;
    const written = code.textContent.split('\\n').length;
    const lineHeight = parseFloat(getComputedStyle(code).lineHeight);
    const shown = Math.round(code.getBoundingClientRect().height / lineHeight);
    return { text: code.textContent.slice(0, 60), written, shown, scrolls: pre.scrollWidth > pre.clientWidth, focusable: pre.tabIndex === 0 };
  });
  return { boxes, pageWidth: document.documentElement.scrollWidth, viewport: window.innerWidth };
})()`;

describe('records to publish on a 390 px phone (issue 42)', () => {
  it(
    'each record stays on its own lines, unbroken (the box scrolls sideways), and the page is no wider than the screen',
    async () => {
      const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
      const page = await context.newPage();
      try {
        let boxesSeen = 0;
        let scrolling = 0;
        for (const path of ['/check/p-none.example', '/check/reject-sp-none.example', '/check/spf-too-many-lookups.example', '/check/no-dmarc.example', '/transport/sts-none.example']) {
          await page.goto(`${base}${path}`);
          const measured = await page.evaluate<{ boxes: { text: string; written: number; shown: number; scrolls: boolean; focusable: boolean }[]; pageWidth: number; viewport: number }>(RECORD_LINES);
          expect(measured.pageWidth, path).toBeLessThanOrEqual(measured.viewport);
          for (const box of measured.boxes) {
            expect(box.shown, `${path}: ${box.text}`).toBe(box.written);
            // A box that scrolls can be reached from the keyboard (axe: scrollable-region-focusable).
            expect(box.focusable, `${path}: ${box.text}`).toBe(true);
            if (box.scrolls) scrolling += 1;
          }
          boxesSeen += measured.boxes.length;
        }
        expect(boxesSeen).toBeGreaterThan(5);
        // At 390 px some records are longer than the screen: those scroll instead of wrapping.
        expect(scrolling).toBeGreaterThan(0);
        expect(await seriousViolations(page)).toEqual([]);
      } finally {
        await context.close();
      }
    },
    BROWSER_TEST_TIMEOUT_MS,
  );
});
