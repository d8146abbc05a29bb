/**
 * Issue 42, item 7: when a section after the verdict meets its rate limit, the note that says so
 * points at the section's link where it is (above the note), by its words, never "the link below".
 */
import type { FastifyInstance } from 'fastify';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureApp, launchChromium } from './helpers.js';

let app: FastifyInstance;
let browser: Browser;
let base: string;

beforeAll(async () => {
  // One transport-limited section a minute: "Mail sent to you" takes it, the BIMI section meets the limit.
  ({ app } = await fixtureApp({ overrides: { rateLimits: { transportCheck: { max: 1, windowMs: 60_000 } } } }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
});

describe('a section that meets its rate limit', () => {
  it('says to try again, and names the link above it by its words', { timeout: 60_000 }, async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${base}/check/p-none.example`);
      const note = page.locator('section p[role="status"]', { hasText: 'Too many checks' }).first();
      await note.waitFor({ timeout: 20_000 });
      const text = (await note.textContent()) ?? '';
      expect(text).not.toMatch(/below/);
      expect(text).toMatch(/^Too many checks from your network just now: try again in \d+ s \(the link above, “[^”]+”, checks it on its own page\)\.$/);
      // The link it names is in the same section, above the note.
      const placed = await note.evaluate((element) => {
        const section = element.closest('section');
        const link = section?.querySelector('a[href]');
        const words = /“([^”]+)”/.exec(element.textContent ?? '')?.[1];
        return { above: link ? Boolean(link.compareDocumentPosition(element) & 4 /* Node.DOCUMENT_POSITION_FOLLOWING */) : false, same: link?.textContent?.trim() === words };
      });
      expect(placed).toEqual({ above: true, same: true });
    } finally {
      await page.close();
    }
  });
});
