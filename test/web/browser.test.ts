/**
 * The page in a real browser (Debian's Chromium through playwright-core) against a real listening
 * server over the fixture zones: the form, a result without JavaScript, axe-core on the home and
 * result pages in light and dark, the 360 px layout, keyboard use, no CSP violation, and
 * screenshots under test-artifacts/web/ for people to look at.
 */
import { existsSync, mkdirSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import axe from 'axe-core';
import { type Browser, type BrowserContextOptions, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Verdict } from '../../packages/engine/src/result.js';
import { VERDICT_LABELS } from '../../src/web/result-view.js';
import { fixtureApp, launchChromium } from './helpers.js';

const ARTIFACTS = new URL('../../test-artifacts/web/', import.meta.url).pathname;
/** The narrowest phone width the page supports. */
const MOBILE = { width: 360, height: 740 };
const DESKTOP = { width: 1280, height: 900 };
const BROWSER_TEST_TIMEOUT_MS = 60_000;

let app: FastifyInstance;
let browser: Browser;
let base: string;

beforeAll(async () => {
  ({ app } = await fixtureApp());
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

/** A fresh page; every CSP violation and page error it reports is collected. */
async function open(options: BrowserContextOptions = {}): Promise<{ page: Page; problems: string[]; close: () => Promise<void> }> {
  const context = await browser.newContext({ viewport: DESKTOP, ...options });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    // A failed load is reported below with its address; anything else (a CSP violation) is a problem.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text());
  });
  page.on('response', (response) => {
    // Only an error page the test asks for (its URL carries an invalid domain) may fail.
    if (response.status() >= 400 && !response.url().includes('192.0.2.1')) problems.push(`${response.status()} ${response.url()}`);
  });
  page.on('pageerror', (error) => problems.push(error.message));
  return { page, problems, close: () => context.close() };
}

/** axe-core's serious and critical violations on the current page. */
async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(axe.source);
  // Expressions as strings: the test is compiled without the DOM library.
  const results = await page.evaluate<{ violations: { id: string; impact: string | null; nodes: { target: unknown }[] }[] }>("axe.run(document, { resultTypes: ['violations'] })");
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
}

describe('in Chromium', () => {
  it(
    'types a domain into the form, submits it with the keyboard, and reads the verdict',
    async () => {
      const { page, problems, close } = await open();
      try {
        await page.goto(`${base}/`);
        await page.keyboard.press('Tab');
        expect(await page.evaluate<string | null>('document.activeElement && document.activeElement.textContent')).toBe('Skip to the content');
        await page.getByLabel('Domain, email address or website').fill('ceo@p-none.example');
        // Focus is visible on the field.
        expect(await page.evaluate<string>("getComputedStyle(document.querySelector('#domain')).outlineWidth")).toBe('3px');
        await Promise.all([page.waitForURL(`${base}/check/p-none.example`), page.keyboard.press('Enter')]);
        expect(await page.textContent('#verdict')).toBe('Spoofable');
        expect(await page.textContent('#headline')).toContain('p-none.example');
        // The enhancement added copy buttons to the record blocks.
        expect(await page.locator('button.copy').count()).toBeGreaterThan(0);
        expect(problems).toEqual([]);
      } finally {
        await close();
      }
    },
    BROWSER_TEST_TIMEOUT_MS,
  );

  it(
    'shows a complete result with JavaScript disabled',
    async () => {
      const { page, problems, close } = await open({ javaScriptEnabled: false });
      try {
        const response = await page.goto(`${base}/check/p-reject.example`);
        expect(response?.status()).toBe(200);
        const api = (await (await fetch(`${base}/check/p-reject.example`, { headers: { accept: 'application/json' } })).json()) as { verdict: string; headline: string };
        expect(await page.textContent('#headline')).toBe(api.headline);
        expect(await page.textContent('#verdict')).toBe(VERDICT_LABELS[api.verdict as Verdict].label);
        expect(await page.textContent('#next-title')).toBeTruthy();
        expect(await page.locator('pre.record').count()).toBeGreaterThan(1);
        expect(await page.locator('button.copy').count()).toBe(0);
        // The form works without JavaScript too.
        await page.fill('#domain', 'spf-include-open.example');
        await Promise.all([page.waitForURL(`${base}/check/spf-include-open.example`), page.click('button[type="submit"]')]);
        expect(await page.textContent('#verdict')).toBe(VERDICT_LABELS.spoofable.label);
        expect(await page.locator('[data-opens="true"]').count()).toBeGreaterThan(0);
        expect(problems).toEqual([]);
      } finally {
        await close();
      }
    },
    BROWSER_TEST_TIMEOUT_MS,
  );

  it(
    'has no serious or critical axe-core violation on home, results and an error page, light and dark',
    async () => {
      for (const colorScheme of ['light', 'dark'] as const) {
        const { page, problems, close } = await open({ colorScheme });
        try {
          for (const path of ['/', '/check/p-none.example', '/check/p-reject.example', '/check/spf-include-open.example', '/check?domain=192.0.2.1', '/guides/dmarc-enforce']) {
            await page.goto(`${base}${path}`);
            expect(await seriousViolations(page), `${colorScheme} ${path}`).toEqual([]);
          }
          expect(problems).toEqual([]);
        } finally {
          await close();
        }
      }
    },
    BROWSER_TEST_TIMEOUT_MS,
  );

  it(
    'fits 360 px wide without horizontal scrolling',
    async () => {
      const { page, close } = await open({ viewport: MOBILE });
      try {
        for (const path of ['/', '/check/p-none.example', '/check/spf-include-open.example', '/check/spf-long-record.example', '/check?domain=%22%3E%3Cimg%3E', '/guides/spf-open']) {
          await page.goto(`${base}${path}`);
          const widths = await page.evaluate<{ scroll: number; view: number }>('({ scroll: document.documentElement.scrollWidth, view: window.innerWidth })');
          expect(widths.scroll, path).toBeLessThanOrEqual(widths.view);
        }
      } finally {
        await close();
      }
    },
    BROWSER_TEST_TIMEOUT_MS,
  );

  it(
    'saves screenshots of home, a spoofable and a protected result, light and dark, desktop and 360 px',
    async () => {
      const pages = { home: '/', spoofable: '/check/spf-include-open.example', protected: '/check/p-reject.example' };
      for (const colorScheme of ['light', 'dark'] as const) {
        for (const [size, viewport] of Object.entries({ desktop: DESKTOP, mobile: MOBILE })) {
          const { page, close } = await open({ colorScheme, viewport });
          try {
            for (const [name, path] of Object.entries(pages)) {
              await page.goto(`${base}${path}`);
              const file = `${ARTIFACTS}${name}-${colorScheme}-${size}.png`;
              await page.screenshot({ path: file, fullPage: true });
              expect(existsSync(file)).toBe(true);
            }
          } finally {
            await close();
          }
        }
      }
    },
    BROWSER_TEST_TIMEOUT_MS,
  );
});
