/**
 * "Your logo in the inbox" in a real browser (Debian's Chromium through playwright-core) against a
 * real listening server whose check reaches the BIMI lab (packages/engine/test/bimi/lab.ts): the verdict shows
 * first, the section loads after through the page's script within the CSP, the validated logo is
 * drawn as an image (never inline markup), and a logo that breaks a rule is not drawn at all.
 */
import type { FastifyInstance } from 'fastify';
import { type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDomain } from '../../packages/engine/src/check.js';
import { buildApp } from '../../src/service/compose.js';
import { createMemoryStores } from '../../src/store/memory.js';
import { startBimiLab, type BimiLab } from '../../packages/engine/test/bimi/lab.js';
import { launchChromium } from './helpers.js';

const TIMEOUT_MS = 60_000;

let lab: BimiLab;
let app: FastifyInstance;
let browser: Browser;
let base: string;

beforeAll(async () => {
  lab = await startBimiLab();
  const bimi = { tlsCa: lab.tlsCaPem, connectPorts: { https: lab.httpsPort }, allowPrivateAddresses: true, extraRoots: lab.mvaRootPem };
  app = await buildApp({
    stores: createMemoryStores(),
    check: (domain, options) => checkDomain(domain, { resolver: lab.resolver, ...(options?.bimi ? { bimi } : {}) }),
    rateLimits: false,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  browser = await launchChromium();
}, TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await lab?.close();
});

describe('"Your logo in the inbox" in Chromium', () => {
  it(
    'shows the verdict, then the section with the logo drawn as an image, with no CSP violation',
    async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      try {
        await page.goto(`${base}/check/vmc.example`);
        expect(await page.locator('#verdict').textContent()).toBeTruthy();
        await page.locator('#bimi-grade').waitFor({ timeout: 30_000 });
        expect(await page.locator('#bimi-grade').textContent()).toBe('Ready (VMC)');
        const logo = page.locator('img#bimi-logo');
        await expect.poll(() => logo.evaluate((img) => { const image = img as unknown as { complete: boolean; naturalWidth: number }; return image.complete && image.naturalWidth > 0; })).toBe(true);
        // Never inline: no element of the logo's markup is in the page.
        expect(await page.locator('#bimi svg, #bimi rect').count()).toBe(0);
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    },
    TIMEOUT_MS,
  );

  it(
    'a logo with a script is not drawn; without JavaScript the link leads to the section',
    async () => {
      const context = await browser.newContext({ javaScriptEnabled: false });
      const page = await context.newPage();
      try {
        await page.goto(`${base}/check/script.example`);
        expect(await page.locator('#bimi-grade').count()).toBe(0);
        await page.locator('#bimi-link').click();
        await page.waitForURL(`${base}/bimi/script.example`);
        expect(await page.locator('#bimi-grade').textContent()).toBe('Not ready');
        expect(await page.locator('#bimi img').count()).toBe(0);
        expect(await page.locator('#bimi-violations [data-rule="script"]').textContent()).toContain('line 5');
      } finally {
        await context.close();
      }
    },
    TIMEOUT_MS,
  );
});
