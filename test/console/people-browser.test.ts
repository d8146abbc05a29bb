/**
 * The console's alerts, lookalikes and failure-report pages in real Chromium (playwright-core):
 * an owner adds a Slack channel pointing at a local HTTP receiver, sends a test and reads
 * "Delivered" on the page after the redirect (the receiver checks the Slack payload's shape);
 * marks a lookalike ours; and axe-core finds no violation on any of these pages at 1280×800 and
 * 390×844, light and dark. Screenshots go to $CONSOLE_SCREENSHOTS (default: a temporary folder).
 */
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invite } from '../../src/console/accounts.js';
import { axeViolations, launchChromium } from '../web/helpers.js';
import { GOOD_PASSWORD, ORG_A } from './helpers.js';
import { failure, peopleService, remembered } from './people-helpers.js';

const TIMEOUT_MS = 300_000;
const SHOTS = process.env['CONSOLE_SCREENSHOTS'] ?? join(tmpdir(), 'console-screenshots');
const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };

let service: Awaited<ReturnType<typeof peopleService>>;
let browser: Browser;
let base = '';
let slack: Server;
let slackUrl = '';
const slackBodies: unknown[] = [];
let failedChannel = '';

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  service = await peopleService({ smtp: true });
  await service.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`;
  // A Slack incoming webhook stand-in: takes JSON with a `text`, answers "ok" as Slack does.
  slack = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    request.on('end', () => {
      try {
        const body = JSON.parse(text) as { text?: unknown };
        slackBodies.push(body);
        response.writeHead(typeof body.text === 'string' && request.headers['content-type']?.startsWith('application/json') ? 200 : 400).end('ok');
      } catch {
        response.writeHead(400).end('invalid_payload');
      }
    });
  });
  await new Promise<void>((resolve) => slack.listen(0, '127.0.0.1', resolve));
  slackUrl = `http://127.0.0.1:${(slack.address() as AddressInfo).port}/services/T000/B000/XXXXSECRET`;
  // A watched domain with remembered lookalikes (one IDN) and failure reports.
  const created = await service.monitors.create(ORG_A.id, { domain: 'alpha.example', checks: ['lookalikes'] });
  if ('kind' in created) throw new Error(created.kind);
  await service.stores.rememberedLookalikes.save([remembered('xn--alph-ooa.example', 'alphä.example', created.monitor.id), remembered('alpha-mail.example', 'alpha-mail.example', created.monitor.id, { ours: true })]);
  for (const [n, ip] of [[1, '203.0.113.9'], [2, '203.0.113.9'], [3, '198.51.100.7']] as const) await service.stores.failureReports.add(failure(n, ip, '2026-02-28T00:00:00.000Z'));
  // A channel whose last test failed, for the page that shows a failure.
  const failed = await service.alerts.create(ORG_A.id, { name: 'Pager', kind: 'webhook', url: slackUrl });
  if ('kind' in failed) throw new Error(failed.kind);
  failedChannel = failed.channel.id;
  await service.stores.alerts.updateChannel(ORG_A.id, failedChannel, { lastTest: { at: '2026-03-01T11:00:00.000Z', outcome: 'http-error', statusCode: 500, durationMs: 12, detail: 'the receiver answered 500' } }, '2026-03-01T11:00:00.000Z');
  browser = await launchChromium();
}, TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => slack?.close(() => resolve()));
  await service?.close();
});

async function ownerPage(email: string, viewport: { width: number; height: number }, colorScheme: 'light' | 'dark'): Promise<Page> {
  const context = await browser.newContext({ viewport, colorScheme });
  const page = await context.newPage();
  const existing = await service.stores.console.findUserByEmail(email);
  if (!existing) {
    const invited = await invite(service.stores.console, { organizationId: ORG_A.id, email, role: 'owner', invitedBy: 'cli', now: service.clock.now() });
    if (invited.kind !== 'invited') throw new Error(invited.message);
    await page.goto(`${base}${invited.path}`);
    await page.getByLabel('New password', { exact: true }).fill(GOOD_PASSWORD);
    await page.getByLabel('New password again').fill(GOOD_PASSWORD);
    await Promise.all([page.waitForURL(`${base}/console`), page.getByRole('button', { name: 'Set password and join' }).click()]);
  } else {
    await page.goto(`${base}/console/sign-in`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(GOOD_PASSWORD);
    await Promise.all([page.waitForURL(`${base}/console`), page.getByRole('button', { name: 'Sign in' }).click()]);
  }
  return page;
}

describe('alerts, lookalikes and failure reports in Chromium', () => {
  it(
    'add a Slack channel, send a test to a local receiver, read "Delivered"; mark a lookalike ours',
    async () => {
      const page = await ownerPage('ann@acme.example', VIEWPORTS.desktop, 'light');
      await Promise.all([page.waitForURL(`${base}/console/alerts`), page.getByRole('link', { name: 'Alerts', exact: true }).click()]);
      await page.getByLabel('Kind').selectOption('slack');
      await page.getByLabel('Name').fill('#security');
      await page.getByLabel(/^URL/).fill(slackUrl);
      await page.locator('#new-event-bimi').uncheck();
      await page.getByLabel(/^Only these domains/).fill('alpha.example');
      await Promise.all([page.waitForURL(/done=channel_added/), page.getByRole('button', { name: 'Add channel' }).click()]);
      expect(await page.locator('#notice').textContent()).toContain('The channel was added.');
      expect(await page.content()).not.toContain('XXXXSECRET');
      await Promise.all([page.waitForURL(/tested=/), page.locator('.channel', { hasText: '#security' }).getByRole('button', { name: 'Send a test' }).click()]);
      expect(slackBodies).toHaveLength(1);
      expect(typeof (slackBodies[0] as { text?: unknown }).text).toBe('string');
      expect(await page.locator('#notice').textContent()).toMatch(/Test of "#security": Delivered \(200\)/);
      expect(await page.locator('.channel', { hasText: '#security' }).locator('.last-test').textContent()).toContain('Delivered');
      await page.screenshot({ path: join(SHOTS, 'alerts-tested.png'), fullPage: true });

      await page.goto(`${base}/console/domains/alpha.example`);
      await Promise.all([page.waitForURL(/\/lookalikes$/), page.getByRole('link', { name: 'Lookalikes remembered' }).click()]);
      await Promise.all([page.waitForURL(/done=ours/), page.getByRole('button', { name: 'Mark ours: xn--alph-ooa.example' }).click()]);
      expect(await page.getByRole('button', { name: 'Unmark ours: xn--alph-ooa.example' }).count()).toBe(1);
      await page.screenshot({ path: join(SHOTS, 'lookalikes.png'), fullPage: true });
      await page.context().close();
    },
    TIMEOUT_MS,
  );

  it(
    'axe-core: no violation on the alerts, lookalikes and failure-report pages, 1280×800 and 390×844, light and dark',
    async () => {
      const found: string[] = [];
      for (const [size, viewport] of Object.entries(VIEWPORTS)) {
        for (const colorScheme of ['light', 'dark'] as const) {
          const page = await ownerPage('axe@acme.example', viewport, colorScheme);
          try {
            const check = async (label: string) => {
              for (const v of await axeViolations(page)) found.push(`${size} ${colorScheme} ${label}: ${v}`);
            };
            await page.goto(`${base}/console/domains/alpha.example/failures`);
            await page.locator('#source-0 summary').click();
            await check('failure report open');
            await page.screenshot({ path: join(SHOTS, `failure-open-${size}-${colorScheme}.png`), fullPage: true });
            for (const path of ['/console/alerts', '/console/domains/alpha.example/lookalikes', '/console/domains/alpha.example/failures', '/console/domains/alpha.example/failures?days=7', '/console/alerts?wait=5', `/console/alerts?tested=${failedChannel}`]) {
              await page.goto(`${base}${path}`);
              await check(path);
              await page.screenshot({ path: join(SHOTS, `${path.replace(/[^a-z0-9]+/g, '-')}-${size}-${colorScheme}.png`), fullPage: true });
            }
            // The rules form opened, and a signed webhook's secret shown once.
            await page.goto(`${base}/console/alerts`);
            await page.locator('details summary').first().click();
            await check('rules open');
            await page.getByLabel('Kind').selectOption('webhook');
            await page.getByLabel('Name').fill(`hook ${size} ${colorScheme}`);
            await page.getByLabel(/^URL/).fill(slackUrl);
            await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Add channel' }).click()]);
            await page.waitForSelector('#secret');
            await check('webhook secret');
            await page.screenshot({ path: join(SHOTS, `alerts-secret-${size}-${colorScheme}.png`), fullPage: true });
            // A refused channel: the error in words.
            await page.getByLabel('Name').fill('bad');
            await page.getByLabel('Kind').selectOption('teams');
            // Past the browser's own URL check, to reach the service's refusal.
            await page.evaluate("document.getElementById('channel-url').type = 'text'; document.getElementById('channel-url').value = 'ftp://example.com/'");
            await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST' && r.status() === 400), page.getByRole('button', { name: 'Add channel' }).click()]);
            await page.waitForLoadState('load');
            expect(await page.locator('#notice').textContent()).toContain('This URL cannot be used');
            await check('refused');
          } finally {
            await page.context().close();
          }
        }
      }
      expect(found).toEqual([]);
    },
    TIMEOUT_MS,
  );
});
