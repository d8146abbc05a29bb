/**
 * The console in real Chromium (playwright-core, Debian's /usr/bin/chromium): invite → set the
 * password → sign in → add a domain → its page and history → a viewer cannot change anything →
 * sign out; the refused cross-site POST; the sign-in limit; the session ended on the server;
 * another organisation's domain; keyboard only with a visible focus; axe-core with no violation on
 * every console page at 1280×800 and 390×844, light and dark, the overview among them with a domain
 * whose SPF record is still being read (`checking-spf`: the report resolver holds its answers) and one
 * whose record could not be read (`spf-unreadable`: SERVFAIL), in the words a person reads. Screenshots go to
 * $CONSOLE_SCREENSHOTS (default: a temporary folder) to be looked at.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DnsAnswer, RecordType, Resolver } from '@spoof-checker/engine';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseZone } from '../../packages/engine/src/zones/parse.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { invite } from '../../src/console/accounts.js';
import { axeViolations, launchChromium } from '../web/helpers.js';
import { consoleService, DASHBOARD_DOMAIN, DASHBOARD_WINDOW, dayReport, GOOD_PASSWORD, monitorOf, ORG_A, ORG_B, seedDashboards, SHARE_TOKEN } from './helpers.js';

const TIMEOUT_MS = 300_000;
const SHOTS = process.env['CONSOLE_SCREENSHOTS'] ?? join(tmpdir(), 'console-screenshots');
const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };

const REPORT_WINDOW = DASHBOARD_WINDOW;

let service: Awaited<ReturnType<typeof consoleService>>;
let browser: Browser;
let base = '';
let attacker: Server;
let attackerBase = '';

/** A domain whose SPF record the report resolver never answers for while the tests run: the overview shows it `checking-spf`. */
const SPF_CHECKING = 'spf-slow.example';
/** A domain whose SPF record the report resolver cannot read (SERVFAIL): the overview shows it `spf-unreadable`. */
const SPF_UNREADABLE = 'spf-broken.example';
/** Released when the tests end: SPF_CHECKING's answers wait for it. */
let releaseSlow = () => {};
const slow = new Promise<void>((resolve) => (releaseSlow = resolve));
/** The service's report resolver: DASHBOARD_DOMAIN's fixture zone, SPF_CHECKING held, SPF_UNREADABLE failing. */
const dashboardZone = new ZoneResolver([parseZone(readFileSync(new URL(`../../fixtures/zones/${DASHBOARD_DOMAIN}.zone`, import.meta.url), 'utf8'))]);
const reportResolver: Resolver = {
  resolve: async <T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> => {
    if (name === SPF_UNREADABLE) return { kind: 'error', reason: 'servfail' };
    if (name === SPF_CHECKING) await slow;
    return dashboardZone.resolve(name, type);
  },
};

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  service = await consoleService({ extra: { reports: { resolver: reportResolver } } });
  // Reports of spf-cloud-ec2.example for the report dashboards, and a shared link to it.
  await seedDashboards(service.stores);
  await service.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`;
  // Another site, whose page posts a form to the console (a cross-site request forgery).
  attacker = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><title>x</title><form id="f" method="post" action="${base}/console/domains"><input name="domain" value="gamma.example"><input name="csrf_token" value="guess"></form><script>document.getElementById('f').submit()</script>`);
  });
  await new Promise<void>((resolve) => attacker.listen(0, 'localhost', resolve));
  attackerBase = `http://localhost:${(attacker.address() as AddressInfo).port}`;
  browser = await launchChromium();
}, TIMEOUT_MS);

afterAll(async () => {
  releaseSlow();
  await browser?.close();
  await new Promise<void>((resolve) => attacker?.close(() => resolve()));
  await service?.monitors.scheduler.close();
  await service?.app.close();
});

async function inviteLink(organizationId: string, email: string, role: 'owner' | 'admin' | 'viewer'): Promise<string> {
  const invited = await invite(service.stores.console, { organizationId, email, role, invitedBy: 'cli', now: service.clock.now() });
  if (invited.kind !== 'invited') throw new Error(invited.message);
  return `${base}${invited.path}`;
}

async function acceptAs(context: BrowserContext, link: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(link);
  await page.getByLabel('New password', { exact: true }).fill(GOOD_PASSWORD);
  await page.getByLabel('New password again').fill(GOOD_PASSWORD);
  await Promise.all([page.waitForURL(`${base}/console`), page.getByRole('button', { name: 'Set password and join' }).click()]);
  return page;
}

async function signIn(page: Page, email: string, password = GOOD_PASSWORD) {
  await page.goto(`${base}/console/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  return Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Sign in' }).click()]);
}

describe('the console in Chromium', () => {
  it(
    'invite → password → add a domain → its page and history; a viewer cannot change anything; sign out ends the session on the server',
    async () => {
      const owner = await browser.newContext({ viewport: VIEWPORTS.desktop });
      const page = await acceptAs(owner, await inviteLink(ORG_A.id, 'ann@acme.example', 'owner'));
      expect(await page.locator('h1').first().textContent()).toBe('Domains of Acme Corp');
      await page.screenshot({ path: join(SHOTS, 'overview-empty.png'), fullPage: true });

      // Add a domain: its monitor is created and checked, its page opens.
      await page.getByLabel('Add a domain to watch').fill('beta.example');
      await Promise.all([page.waitForURL(/\/console\/domains\/beta\.example/), page.getByRole('button', { name: 'Add domain' }).click()]);
      await service.monitors.scheduler.idle();
      await page.reload();
      expect(await page.locator('#verdict').getAttribute('data-verdict')).toBe('spoofable');
      expect(await page.locator('#no-changes').count()).toBe(1);

      // The domain publishes p=reject; two runs confirm the change, and it is on the timeline.
      service.setDmarc('beta.example', 'v=DMARC1; p=reject');
      for (let i = 0; i < 2; i++) {
        await Promise.all([page.waitForURL(/done=ran/), page.getByRole('button', { name: 'Run now' }).click()]);
        await service.monitors.scheduler.idle();
      }
      await page.goto(`${base}/console/domains/beta.example`);
      expect(await page.locator('#verdict').getAttribute('data-verdict')).toBe('protected');
      expect(await page.locator('#timeline > li').count()).toBe(1);
      expect(await page.locator('#timeline').textContent()).toContain('p=reject');
      await page.screenshot({ path: join(SHOTS, 'domain-desktop.png'), fullPage: true });

      await page.goto(`${base}/console`);
      expect(await page.locator('#overview tbody tr').count()).toBe(1);
      expect(await page.locator('#overview tbody tr').first().textContent()).toContain('p=reject');
      await page.screenshot({ path: join(SHOTS, 'overview.png'), fullPage: true });

      // A viewer: sees the domain, no action; a crafted POST with their own token is 403.
      const viewer = await browser.newContext({ viewport: VIEWPORTS.phone, colorScheme: 'dark' });
      const vpage = await acceptAs(viewer, await inviteLink(ORG_A.id, 'vic@acme.example', 'viewer'));
      expect(await vpage.locator('#add-domain').count()).toBe(0);
      await vpage.goto(`${base}/console/domains/beta.example`);
      expect(await vpage.getByRole('button', { name: 'Run now' }).count()).toBe(0);
      await vpage.screenshot({ path: join(SHOTS, 'domain-viewer-phone-dark.png'), fullPage: true });
      const crafted = await vpage.evaluate<number>(
        `fetch('/console/domains/beta.example/remove', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'csrf_token=' + encodeURIComponent(document.querySelector('input[name="csrf_token"]').value) }).then((r) => r.status)`,
      );
      expect(crafted).toBe(403);
      expect((await service.stores.monitors.list(ORG_A.id, { page: 1, limit: 10 })).total).toBe(1);

      // Sign out: the session is ended on the server, so its cookie replayed is signed out.
      const cookies = await owner.cookies();
      await Promise.all([page.waitForURL(`${base}/console/sign-in`), page.getByRole('button', { name: 'Sign out' }).click()]);
      const replay = await browser.newContext();
      await replay.addCookies(cookies);
      const rpage = await replay.newPage();
      await rpage.goto(`${base}/console`);
      expect(rpage.url()).toBe(`${base}/console/sign-in`);
      await Promise.all([owner.close(), viewer.close(), replay.close()]);
    },
    TIMEOUT_MS,
  );

  it(
    'a cross-site form post is refused with 403; another organisation’s domain is 404; the sign-in limit answers 429',
    async () => {
      const context = await browser.newContext();
      const page = await acceptAs(context, await inviteLink(ORG_B.id, 'zed@bravo.example', 'owner'));
      // The attacker's page submits a form to the console in this signed-in browser.
      const [response] = await Promise.all([page.waitForResponse((r) => r.url() === `${base}/console/domains` && r.request().method() === 'POST'), page.goto(attackerBase)]);
      expect(response.status()).toBe(403);
      expect((await service.stores.monitors.list(ORG_B.id, { page: 1, limit: 10 })).total).toBe(0);
      // Another organisation's domain by URL.
      const other = await page.goto(`${base}/console/domains/beta.example`);
      expect(other?.status()).toBe(404);
      await page.screenshot({ path: join(SHOTS, 'not-found.png'), fullPage: true });

      // Ten wrong passwords for one account, then even the right one waits.
      const fresh = await browser.newContext();
      const signInPage = await fresh.newPage();
      for (let i = 0; i < 10; i++) {
        await signIn(signInPage, 'zed@bravo.example', 'this is not the password');
        expect(await signInPage.locator('#sign-in-error').textContent()).toContain('The email or the password is wrong.');
      }
      const [limited] = await Promise.all([
        signInPage.waitForResponse((r) => r.url() === `${base}/console/sign-in` && r.request().method() === 'POST'),
        signIn(signInPage, 'zed@bravo.example'),
      ]);
      expect(limited.status()).toBe(429);
      expect(Number(await limited.headerValue('retry-after'))).toBeGreaterThan(0);
      await signInPage.screenshot({ path: join(SHOTS, 'sign-in-limited.png'), fullPage: true });
      await Promise.all([context.close(), fresh.close()]);
    },
    TIMEOUT_MS,
  );

  it(
    'keyboard only: sign in, reach the domains and the actions, with the focus always visible',
    async () => {
      await inviteLink(ORG_A.id, 'kim@acme.example', 'admin').then(async (link) => {
        const c = await browser.newContext();
        await acceptAs(c, link);
        await c.close();
      });
      const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
      const page = await context.newPage();
      await page.goto(`${base}/console/sign-in`);
      const focusVisible = async () =>
        page.evaluate<string>(`(() => {
          const el = document.activeElement;
          if (!el || el === document.body) return 'none';
          const style = getComputedStyle(el);
          return style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2 ? 'visible' : el.tagName + ' outline ' + style.outlineStyle + ' ' + style.outlineWidth;
        })()`);
      const activeId = () => page.evaluate<string>('document.activeElement ? document.activeElement.id : ""');
      const activeHref = () => page.evaluate<string>('document.activeElement && document.activeElement.href ? document.activeElement.href : ""');
      // Tab through to the email field, each stop visibly focused.
      let guard = 0;
      while ((await activeId()) !== 'email' && guard++ < 15) {
        await page.keyboard.press('Tab');
        expect(await focusVisible()).toBe('visible');
      }
      await page.keyboard.type('kim@acme.example');
      await page.keyboard.press('Tab');
      expect(await focusVisible()).toBe('visible');
      await page.keyboard.type(GOOD_PASSWORD);
      await page.keyboard.press('Tab');
      expect(await page.evaluate<string>('document.activeElement.textContent')).toBe('Sign in');
      expect(await focusVisible()).toBe('visible');
      await page.screenshot({ path: join(SHOTS, 'sign-in-focus.png') });
      await Promise.all([page.waitForURL(`${base}/console`), page.keyboard.press('Enter')]);
      // To the first domain's link by Tab, then Enter opens it.
      guard = 0;
      while (!(await activeHref()).includes('/console/domains/') && guard++ < 60) {
        await page.keyboard.press('Tab');
        expect(await focusVisible()).toBe('visible');
      }
      await Promise.all([page.waitForURL(/\/console\/domains\//), page.keyboard.press('Enter')]);
      expect(await page.locator('#domain-title').textContent()).toBe('beta.example');
      await context.close();
    },
    TIMEOUT_MS,
  );

  it(
    'axe-core: no violation on any console page, 1280×800 and 390×844, light and dark',
    async () => {
      const found: string[] = [];
      // Two domains whose readiness waits on the SPF record (a failing sender the record could let pass).
      const now = service.clock.now().toISOString();
      for (const [i, domain] of [SPF_CHECKING, SPF_UNREADABLE].entries()) {
        await service.stores.monitors.create(monitorOf(90 + i, domain, now));
        expect(await service.stores.reports.add(dayReport(`r-${domain}`, domain, 100, 90, now, now))).toBe('stored');
      }
      const readinessOf = (page: Page, domain: string) => page.locator(`#overview tr[data-domain="${domain}"] td[data-readiness]`);
      const invitation = await inviteLink(ORG_A.id, 'axe@acme.example', 'owner');
      const pending = await inviteLink(ORG_A.id, 'later@acme.example', 'viewer');
      for (const [size, viewport] of Object.entries(VIEWPORTS)) {
        for (const colorScheme of ['light', 'dark'] as const) {
          const context = await browser.newContext({ viewport, colorScheme });
          const page = await context.newPage();
          try {
            const check = async (label: string) => {
              for (const v of await axeViolations(page)) found.push(`${size} ${colorScheme} ${label}: ${v}`);
            };
            await page.goto(`${base}/console/sign-in`);
            await check('sign-in');
            await page.goto(pending);
            await check('invitation');
            await page.goto(`${base}/console/invite/${'x'.repeat(43)}`);
            await check('invitation gone');
            if (size === 'desktop' && colorScheme === 'light') await acceptAs(context, invitation);
            else await signIn(page, 'axe@acme.example');
            for (const path of ['/console', '/console?sort=domain&order=desc&q=beta', '/console/domains/beta.example', '/console/members', '/console/keys', '/console/account', '/console/account?setup=1', '/console/nothing-here', '/console/alerts', '/console/domains/beta.example/lookalikes', '/console/domains/beta.example/failures', `/console/reports${REPORT_WINDOW}`, '/console/reports?days=30', `/console/domains/spf-cloud-ec2.example/reports${REPORT_WINDOW}`, `/shared/reports/${SHARE_TOKEN}${REPORT_WINDOW}`, `/shared/reports/${'x'.repeat(43)}`]) {
              await page.goto(`${base}${path}`);
              await check(path);
              if (path === '/console') {
                // What a person reads: the pending row in words, the line that says why, the unreadable row.
                expect(await readinessOf(page, SPF_CHECKING).innerText()).toBe('Checking SPF…');
                expect(await page.locator('#readiness-pending').innerText()).toBe('1 domain: Enforce? is still checking the SPF record (it shows Checking SPF… until then). Reload the page in a few seconds for the verdict.');
                expect(await readinessOf(page, SPF_UNREADABLE).innerText()).toBe('SPF unreadable');
                // At 1280 pixels the table fits: no column is cut off behind a scroll.
                if (size === 'desktop') expect(await page.locator('#overview').evaluate((table) => table.parentElement!.scrollWidth <= table.parentElement!.clientWidth)).toBe(true);
                await page.screenshot({ path: join(SHOTS, `overview-spf-pending-${size}-${colorScheme}.png`), fullPage: true });
              }
              if (path.includes('reports') && path.endsWith(REPORT_WINDOW)) await page.screenshot({ path: join(SHOTS, `${path.startsWith('/shared') ? 'shared' : path.startsWith('/console/reports') ? 'org-reports' : 'dashboard'}-${size}-${colorScheme}.png`), fullPage: true });
              if (path === '/console/members' || path === '/console/account?setup=1') await page.screenshot({ path: join(SHOTS, `${path.replace(/[^a-z]+/g, '-')}-${size}-${colorScheme}.png`), fullPage: true });
            }
            // A page with a secret shown once (a new API key).
            await page.goto(`${base}/console/keys`);
            await page.getByLabel('Name of the new key').fill(`key ${size} ${colorScheme}`);
            await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Create key' }).click()]);
            await page.waitForSelector('#secret');
            await check('new key');
            await page.screenshot({ path: join(SHOTS, `keys-${size}-${colorScheme}.png`), fullPage: true });
            await page.goto(`${base}/console`);
            await page.screenshot({ path: join(SHOTS, `overview-${size}-${colorScheme}.png`), fullPage: true });
          } finally {
            await context.close();
          }
        }
      }
      expect(found).toEqual([]);
    },
    TIMEOUT_MS,
  );
});
