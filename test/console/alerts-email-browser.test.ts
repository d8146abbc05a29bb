/**
 * The email alert channel in real Chromium (playwright-core, Debian's chromium): the service's mail
 * relay set as `--alert-smtp` sets it (alertSmtpConfig: STARTTLS, AUTH, a CA of its own), a local
 * smtp-server relay on loopback; an owner adds an email channel on /console/alerts, presses "Send a
 * test", and the relay takes the mail (subject, plain-text and HTML parts, each with a link back to
 * the console, which opens); the page shows the outcome; axe-core finds no violation on the page
 * after the test. Screenshots go to $CONSOLE_SCREENSHOTS (default: a temporary folder).
 */
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invite } from '../../src/console/accounts.js';
import { alertSmtpConfig } from '../../src/jobs/monitors/alert-email.js';
import { loopbackLookup, makeRelayCertificates, RELAY_HOST, RELAY_PASSWORD, RELAY_USER, startRelay, waitFor } from '../alerts/helpers.js';
import { axeViolations, launchChromium } from '../web/helpers.js';
import { GOOD_PASSWORD, ORG_A } from './helpers.js';
import { peopleService } from './people-helpers.js';

const TIMEOUT_MS = 300_000;
const SHOTS = process.env['CONSOLE_SCREENSHOTS'] ?? join(tmpdir(), 'console-screenshots');

let service: Awaited<ReturnType<typeof peopleService>>;
let relay: Awaited<ReturnType<typeof startRelay>>;
let browser: Browser;
let base = '';

/** A free port on loopback (the console's, known before the alert service that links to it is made). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  const certs = makeRelayCertificates();
  relay = await startRelay(certs);
  const smtp = alertSmtpConfig({ url: `smtp://${RELAY_USER}@${RELAY_HOST}:${relay.port}`, urlFromArgv: true, from: 'alerts@checker.example', passwordFromEnv: RELAY_PASSWORD, passwordFile: undefined, readFile: () => '', extraCa: certs.caPem })!;
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  service = await peopleService({ smtp, lookup: loopbackLookup, publicOrigin: base });
  await service.app.listen({ host: '127.0.0.1', port });
  browser = await launchChromium();
}, TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await service?.close();
  await relay?.close();
});

async function ownerPage(email: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const invited = await invite(service.stores.console, { organizationId: ORG_A.id, email, role: 'owner', invitedBy: 'cli', now: service.clock.now() });
  if (invited.kind !== 'invited') throw new Error(invited.message);
  await page.goto(`${base}${invited.path}`);
  await page.getByLabel('New password', { exact: true }).fill(GOOD_PASSWORD);
  await page.getByLabel('New password again').fill(GOOD_PASSWORD);
  await Promise.all([page.waitForURL(`${base}/console`), page.getByRole('button', { name: 'Set password and join' }).click()]);
  return page;
}

describe('the email alert channel in Chromium', () => {
  it(
    'an owner adds an email channel, sends a test; the local relay takes it (subject, text, HTML, a link back); the page says "Delivered"',
    async () => {
      const page = await ownerPage('mail-owner@acme.example');
      await Promise.all([page.waitForURL(`${base}/console/alerts`), page.getByRole('link', { name: 'Alerts', exact: true }).click()]);
      await page.getByLabel('Kind').selectOption('email');
      await page.getByLabel('Name').fill('Security team');
      await page.getByLabel(/^Recipients/).fill('security@acme.example\nops@acme.example');
      await Promise.all([page.waitForURL(/done=channel_added/), page.getByRole('button', { name: 'Add channel' }).click()]);
      expect(await page.locator('#notice').textContent()).toContain('The channel was added.');
      const channel = page.locator('.channel', { hasText: 'Security team' });
      expect(await channel.locator('.target').textContent()).toBe('security@acme.example, ops@acme.example');

      await Promise.all([page.waitForURL(/tested=/), channel.getByRole('button', { name: 'Send a test' }).click()]);
      // The test is sent before the page is answered: the mail is there (the wait only absorbs a slow machine).
      await waitFor(() => relay.mails.length === 1, 30_000, 'the relay to take the test mail');
      const mail = relay.mails[0]!;
      expect(mail.to.sort()).toEqual(['ops@acme.example', 'security@acme.example']);
      expect(mail.from).toBe('alerts@checker.example');
      // Under STARTTLS, with the relay's password.
      expect(mail.secure).toBe(true);
      expect(mail.user).toBe(RELAY_USER);
      expect(mail.parsed.subject).toMatch(/^\[spoof-checker\] /);
      const text = mail.parsed.text ?? '';
      const htmlPart = typeof mail.parsed.html === 'string' ? mail.parsed.html : '';
      expect(text).toContain('This is a test: the channel works.');
      expect(htmlPart).toContain('<li>This is a test: the channel works.</li>');
      const textLink = /Open it in the console: (\S+)/.exec(text)?.[1];
      const htmlLink = /<a href="([^"]+)">Open /.exec(htmlPart)?.[1];
      expect(textLink).toBeDefined();
      expect(textLink!.startsWith(`${base}/console`)).toBe(true);
      expect(htmlLink).toBe(textLink);

      expect(await page.locator('#notice').textContent()).toMatch(/Test of "Security team": Delivered/);
      expect(await page.locator('.channel', { hasText: 'Security team' }).locator('.last-test').textContent()).toContain('Delivered');
      await page.screenshot({ path: join(SHOTS, 'alerts-email-tested.png'), fullPage: true });
      expect(await axeViolations(page)).toEqual([]);

      // The link opens the console (signed in: the page, not the sign-in form).
      const opened = await page.goto(textLink!);
      expect(opened?.status()).toBeLessThan(500);
      expect(page.url().startsWith(`${base}/console`)).toBe(true);
      expect(page.url()).not.toContain('/sign-in');
      await page.context().close();
    },
    TIMEOUT_MS,
  );
});
