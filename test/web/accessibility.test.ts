/**
 * Every page a person can reach, through axe-core in Chromium, at a desktop's and a phone's width,
 * light and dark: no violation at all (minor and moderate included), in the plain service and in
 * the demo; and the API documentation at /docs as well. A page added later belongs in PAGES.
 */
import type { FastifyInstance } from 'fastify';
import { type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoSettings } from '../../src/cli/demo.js';
import { DEMO_SCENARIOS_FILE, DEMO_ZONES_DIR } from '../../src/cli/serve.js';
import { axeViolations, fixtureApp, launchChromium } from './helpers.js';

const VIEWPORTS = { desktop: { width: 1280, height: 900 }, phone: { width: 375, height: 800 } };
const TIMEOUT_MS = 300_000;

/** The pages of the checker: home, results, an error, a guide, the transport page. */
const PAGES = ['/', '/check/p-none.example', '/check/p-reject.example', '/check/spf-include-open.example', '/check?domain=192.0.2.1', '/guides/dmarc-enforce', '/transport/p-none.example'];

let plain: FastifyInstance;
let demo: FastifyInstance;
let browser: Browser;
const bases = { plain: '', demo: '' };

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

beforeAll(async () => {
  ({ app: plain } = await fixtureApp());
  const settings = await loadDemoSettings(DEMO_SCENARIOS_FILE, DEMO_ZONES_DIR);
  ({ app: demo } = await fixtureApp({ overrides: { pages: { demo: settings } } }));
  bases.plain = await listen(plain);
  bases.demo = await listen(demo);
  browser = await launchChromium();
}, TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await plain?.close();
  await demo?.close();
});

describe('axe-core on every page', () => {
  for (const [mode, extra] of [['plain', ['/docs']], ['demo', ['/docs']]] as const) {
    it(
      `${mode}: no violation on any page, desktop and phone, light and dark`,
      async () => {
        const found: string[] = [];
        for (const [size, viewport] of Object.entries(VIEWPORTS)) {
          for (const colorScheme of ['light', 'dark'] as const) {
            const context = await browser.newContext({ viewport, colorScheme });
            const page = await context.newPage();
            try {
              for (const path of [...PAGES, ...extra]) {
                await page.goto(`${bases[mode]}${path}`);
                // Sections loaded after the verdict are part of the page a person sees.
                await page.waitForLoadState('networkidle');
                for (const v of await axeViolations(page)) found.push(`${size} ${colorScheme} ${path}: ${v}`);
              }
            } finally {
              await context.close();
            }
          }
        }
        expect(found).toEqual([]);
      },
      TIMEOUT_MS,
    );
  }

  it(
    'the transport page has one h1, and the demo banner sits inside a landmark',
    async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      try {
        await page.goto(`${bases.demo}/transport/p-none.example`);
        expect(await page.locator('h1').count()).toBe(1);
        expect(await page.locator('#demo-banner').count()).toBe(1);
        expect(await page.evaluate<boolean>("!!document.querySelector('#demo-banner').closest('header, main, footer, nav, aside, section[aria-label], [role=region], [role=banner], [role=contentinfo]')")).toBe(true);
      } finally {
        await context.close();
      }
    },
    TIMEOUT_MS,
  );
});
