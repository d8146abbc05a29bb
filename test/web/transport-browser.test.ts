/**
 * "Mail sent to you" in a real browser (Debian's Chromium through playwright-core) against a real
 * listening server whose check probes the transport lab (test/transport/lab.ts): the verdict shows
 * first, the section loads after through the page's script within the CSP, and without JavaScript
 * the link leads to the same section.
 */
import type { FastifyInstance } from 'fastify';
import { type Browser } from 'playwright-core';
import { launchChromium } from './helpers.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDomain } from '../../packages/engine/src/check.js';
import { buildApp } from '../../src/service/compose.js';
import { createMemoryStores } from '../../src/store/memory.js';
import { TransportCache } from '../../packages/engine/src/transport/check.js';
import { startLab, type Lab } from '../transport/lab.js';

const TIMEOUT_MS = 60_000;

let lab: Lab;
let app: FastifyInstance;
let browser: Browser;
let base: string;

beforeAll(async () => {
  lab = await startLab();
  const transport = { cache: new TransportCache(), tlsCa: lab.caPem, connectPorts: { smtp: lab.smtpPort, https: lab.httpsPort }, allowPrivateAddresses: true };
  app = await buildApp({
    stores: createMemoryStores(),
    check: (domain, options) => checkDomain(domain, { resolver: lab.resolver, ...(options?.transport ? { transport } : {}) }),
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

describe('"Mail sent to you" in Chromium', () => {
  it(
    'shows the spoof verdict, then loads the section by script, with no CSP violation',
    async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      try {
        await page.goto(`${base}/check/wrong-name.example`);
        expect(await page.locator('#verdict').textContent()).toBeTruthy();
        await page.locator('#transport-verdict').waitFor({ timeout: 30_000 });
        expect(await page.locator('#transport-verdict').textContent()).toBe('Broken');
        expect(await page.locator('#transport [data-outcome="cert-name-mismatch"]').count()).toBe(1);
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    },
    TIMEOUT_MS,
  );

  it(
    'without JavaScript, the link leads to the section on a page of its own',
    async () => {
      const context = await browser.newContext({ javaScriptEnabled: false });
      const page = await context.newPage();
      try {
        await page.goto(`${base}/check/no-starttls.example`);
        expect(await page.locator('#transport-verdict').count()).toBe(0);
        await page.locator('#transport-link').click();
        await page.waitForURL(`${base}/transport/no-starttls.example`);
        expect(await page.locator('#transport-verdict').textContent()).toBe('At risk');
      } finally {
        await context.close();
      }
    },
    TIMEOUT_MS,
  );
});

describe('"Mail sent to you" when the transport limit is spent', () => {
  let limited: FastifyInstance;
  let limitedBase: string;
  beforeAll(async () => {
    limited = await buildApp({
      stores: createMemoryStores(),
      check: (domain) => checkDomain(domain, { resolver: lab.resolver }),
      // One page check a minute with transport: the section's own request is the second, refused.
      rateLimits: {
        spoofCheck: { max: 100, windowMs: 60_000 },
        transportCheck: { max: 0, windowMs: 60_000 },
        domainUpdate: { max: 10, windowMs: 60_000 },
        domainDelete: { max: 10, windowMs: 60_000 },
        contactList: { max: 60, windowMs: 60_000 },
      },
    });
    await limited.listen({ host: '127.0.0.1', port: 0 });
    const address = limited.server.address();
    limitedBase = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  }, TIMEOUT_MS);
  afterAll(async () => {
    await limited?.close();
  });

  it(
    'says "too many checks, try again in N s", and leaves focus and scroll where the reader is',
    async () => {
      const context = await browser.newContext({ viewport: { width: 390, height: 700 } });
      const page = await context.newPage();
      try {
        await page.goto(`${limitedBase}/check/no-starttls.example`);
        const note = page.locator('section[data-transport-src] p[role="status"]');
        await note.waitFor({ timeout: 30_000 });
        expect(await note.textContent()).toMatch(/^Too many checks from your network just now: try again in \d+ s/);
        expect(await page.evaluate<number>('window.scrollY')).toBe(0);
        expect(await page.evaluate<string>("document.activeElement ? (document.activeElement.id || document.activeElement.tagName) : ''")).not.toBe('transport-link');
      } finally {
        await context.close();
      }
    },
    TIMEOUT_MS,
  );

  it(
    'Back after a check gives a usable form again, not a button stuck at "Checking…"',
    async () => {
      const cached = await launchChromium({ backForwardCache: true });
      const context = await cached.newContext();
      const page = await context.newPage();
      try {
        await page.goto(`${limitedBase}/`);
        const button = page.locator('form.check button[type="submit"]').first();
        const label = await button.textContent();
        await page.locator('form.check input#domain').first().fill('no-starttls.example');
        await button.click();
        await page.waitForURL(/\/check\/no-starttls\.example/);
        // Restored from the back-forward cache: no 'load' event, only 'pageshow'.
        await page.goBack({ waitUntil: 'commit' });
        await expect.poll(() => page.url()).toBe(`${limitedBase}/`);
        await expect.poll(() => button.isDisabled()).toBe(false);
        expect(await button.textContent()).toBe(label);
      } finally {
        await context.close();
        await cached.close();
      }
    },
    TIMEOUT_MS,
  );
});
