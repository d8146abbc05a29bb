/**
 * Lighthouse over every kind of page the service shows: the public checker (home, a result, a
 * guide, the API docs), the console (sign-in, an invitation, the overview, a domain, its reports,
 * the organisation's reports, alerts, lookalikes, failure reports, members, keys, account and its
 * second-factor set-up) and the shared read-only dashboard. The whole service
 * (src/service/compose.ts, through test/console/helpers.ts) listens on loopback with seeded data:
 * monitored domains, a domain's DMARC and TLS reports and an open shared link (`seedDashboards`),
 * an owner signed in through an invitation, and an open invitation. Lighthouse (its Node API) runs
 * in Debian's Chromium, one browser for all the pages in sequence, started by chrome-launcher
 * (never a downloaded browser); a signed-in page is asked for with the owner's session cookie
 * (Lighthouse's `extraHeaders`). Not audited: pages that answer a form (a new key, a new share
 * link) and error pages (Lighthouse's SEO fails a 4xx by design); axe-core covers those
 * (test/console/browser.test.ts).
 *
 * Used by test/web/lighthouse.test.ts (accessibility, best practices, SEO: scores that do not
 * depend on the machine's speed) and bench/lighthouse.ts (all four, performance included).
 *
 * Pages that are not for search engines: the console's pages behind the sign-in are for the
 * organisation's members, a result page is one person's check, and an invitation and the shared
 * dashboard are secret links; the last three say `noindex` (and the shared link an `X-Robots-Tag`
 * too). Lighthouse's SEO category scores a page as one to be found, so its `is-crawlable` audit
 * fails on a `noindex` page by design. `seoIndexable` is the SEO score re-weighted without that one
 * audit (the other audits' weights as Lighthouse has them), reported beside Lighthouse's own.
 */
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import * as chromeLauncher from 'chrome-launcher';
import lighthouse, { type Flags, type Result } from 'lighthouse';
import { invite } from '../../src/console/accounts.js';
import { CHROMIUM } from './helpers.js';
import { addMember, consoleService, DASHBOARD_DOMAIN, DASHBOARD_WINDOW, ORG_A, seedDashboards, SHARE_TOKEN } from '../console/helpers.js';

/** Lighthouse's four categories, as its report names them. */
export const CATEGORIES = ['performance', 'accessibility', 'best-practices', 'seo'] as const;
export type Category = (typeof CATEGORIES)[number];
/** The categories whose score does not depend on how fast the machine is (performance does: main-thread time is measured). */
export const SPEED_FREE_CATEGORIES: readonly Category[] = ['accessibility', 'best-practices', 'seo'];
/** Issue 41's bar for every category, out of 100. */
export const LIGHTHOUSE_TARGET = 95;
/** The SEO audit that fails on a `noindex` page by design. */
export const CRAWLABLE_AUDIT = 'is-crawlable';

/** A page to audit. */
export interface AuditedPage {
  /** A short name for reports. */
  name: string;
  /** Path and query on the service. */
  path: string;
  /** Asked for with the owner's session. */
  signedIn: boolean;
  /** The page says `noindex` on purpose (a result, a private link). */
  noindex: boolean;
}

/** A monitored domain of the seeded organisation (the fixture resolver answers for it). */
const MONITORED = 'alpha.example';

/** Every kind of page, in the order they are audited. */
export const AUDITED_PAGES: readonly AuditedPage[] = [
  { name: 'home', path: '/', signedIn: false, noindex: false },
  { name: 'result', path: `/check/${MONITORED}`, signedIn: false, noindex: true },
  { name: 'guide', path: '/guides/dmarc-enforce', signedIn: false, noindex: false },
  { name: 'api docs', path: '/docs', signedIn: false, noindex: false },
  { name: 'sign-in', path: '/console/sign-in', signedIn: false, noindex: false },
  { name: 'overview', path: '/console', signedIn: true, noindex: false },
  { name: 'domain', path: `/console/domains/${MONITORED}`, signedIn: true, noindex: false },
  { name: 'domain reports', path: `/console/domains/${DASHBOARD_DOMAIN}/reports${DASHBOARD_WINDOW}`, signedIn: true, noindex: false },
  { name: 'organisation reports', path: `/console/reports${DASHBOARD_WINDOW}`, signedIn: true, noindex: false },
  { name: 'alerts', path: '/console/alerts', signedIn: true, noindex: false },
  { name: 'lookalikes', path: `/console/domains/${MONITORED}/lookalikes`, signedIn: true, noindex: false },
  { name: 'failure reports', path: `/console/domains/${MONITORED}/failures`, signedIn: true, noindex: false },
  { name: 'members', path: '/console/members', signedIn: true, noindex: false },
  { name: 'keys', path: '/console/keys', signedIn: true, noindex: false },
  { name: 'account', path: '/console/account', signedIn: true, noindex: false },
  { name: 'second factor set-up', path: '/console/account?setup=1', signedIn: true, noindex: false },
  { name: 'shared dashboard', path: `/shared/reports/${SHARE_TOKEN}${DASHBOARD_WINDOW}`, signedIn: false, noindex: true },
];

const SIGN_IN_INDEX = AUDITED_PAGES.findIndex((p) => p.name === 'sign-in');

/** One page's scores (0–100; null when Lighthouse could not score the category). */
export interface PageScores {
  page: AuditedPage;
  scores: Partial<Record<Category, number | null>>;
  /** SEO without `is-crawlable` (see the module's comment). */
  seoIndexable: number | null;
  /** Whether `is-crawlable` passed. */
  crawlable: boolean | null;
  /** The scored audits that did not pass, per category: `id (score)`. */
  failing: Partial<Record<Category, string[]>>;
  /** The page's final URL (a redirect to the sign-in shows here). */
  finalUrl: string;
}

/** The service with its seeded data, listening on loopback; the owner's session cookie; the pages to audit (AUDITED_PAGES and an open invitation's). */
export async function lighthouseSite(): Promise<{ base: string; cookie: string; pages: AuditedPage[]; close: () => Promise<void> }> {
  const service = await consoleService();
  await seedDashboards(service.stores);
  const owner = await addMember(service.app, service.stores, ORG_A.id, 'owner@acme.example', 'owner', service.clock);
  await owner.get('/console');
  for (const domain of [MONITORED, 'beta.example', 'gamma.example']) {
    const added = await owner.post('/console/domains', { domain });
    if (added.statusCode !== 303) throw new Error(`adding ${domain} answered ${added.statusCode}`);
  }
  await service.monitors.scheduler.idle();
  const invited = await invite(service.stores.console, { organizationId: ORG_A.id, email: 'new@acme.example', role: 'viewer', invitedBy: 'cli', now: service.clock.now() });
  if (invited.kind !== 'invited') throw new Error(invited.message);
  await service.app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`;
  return {
    base,
    cookie: owner.cookieHeader,
    pages: [...AUDITED_PAGES.slice(0, SIGN_IN_INDEX + 1), { name: 'invitation', path: invited.path, signedIn: false, noindex: true }, ...AUDITED_PAGES.slice(SIGN_IN_INDEX + 1)],
    close: async () => {
      await service.monitors.scheduler.close();
      await service.app.close();
    },
  };
}

/** Headless Debian Chromium, without a GPU or a sandbox, for Lighthouse to drive. */
const CHROMIUM_FLAGS = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Launches Debian's Chromium for Lighthouse, or fails naming the package when it is missing (never skips). */
export async function launchForLighthouse(): Promise<chromeLauncher.LaunchedChrome> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: the Lighthouse runs need Debian's Chromium (apt-get install chromium).`);
  return chromeLauncher.launch({ chromePath: CHROMIUM, chromeFlags: CHROMIUM_FLAGS, logLevel: 'error' });
}

interface AuditResult {
  score: number | null;
  scoreDisplayMode: string;
}

/** A category's score as Lighthouse computes it (weighted mean of scored audits), leaving out `skip`. */
function weightedScore(refs: readonly { id: string; weight: number }[], audits: Record<string, AuditResult>, skip: string | null): number | null {
  let total = 0;
  let weights = 0;
  for (const ref of refs) {
    const audit = audits[ref.id];
    if (ref.id === skip || !audit || audit.score === null || ref.weight === 0 || !['binary', 'numeric', 'metricSavings'].includes(audit.scoreDisplayMode)) continue;
    total += audit.score * ref.weight;
    weights += ref.weight;
  }
  return weights === 0 ? null : Math.round((total / weights) * 100);
}

/** Lighthouse's desktop preset (its core/config/desktop-config.js settings). */
const DESKTOP_FLAGS: Flags = {
  formFactor: 'desktop',
  screenEmulation: { mobile: false, width: 1350, height: 940, deviceScaleFactor: 1, disabled: false },
  throttling: { rttMs: 40, throughputKbps: 10_240, cpuSlowdownMultiplier: 1, requestLatencyMs: 0, downloadThroughputKbps: 0, uploadThroughputKbps: 0 },
};

/**
 * Without performance, nothing is measured over time: the audits read the page once it has loaded
 * (its one deferred script has run by then, as for the axe-core tests after Playwright's `goto`), so
 * Lighthouse's waits after the load (a second each, there for the performance trace) and its full-page
 * screenshot (for the HTML report's pictures) are left out. About half of each page's time.
 */
const SPEED_FREE_FLAGS: Flags = { disableFullPageScreenshot: true, pauseAfterFcpMs: 0, pauseAfterLoadMs: 0, networkQuietThresholdMs: 0, cpuQuietThresholdMs: 0 };

/**
 * Times Lighthouse is asked for a page when it reports a runtime error: its trace of the page load
 * can come back without a navigation start on a loaded machine (`NO_NAVSTART`, "Please run
 * Lighthouse again"); a page that fails every time is an error.
 */
export const LIGHTHOUSE_TRIES = 3;

/** One page's Lighthouse result, tried again on a runtime error. */
async function auditOne(url: string, flags: Flags): Promise<Result> {
  let error = '';
  for (let attempt = 1; attempt <= LIGHTHOUSE_TRIES; attempt++) {
    const result = await lighthouse(url, flags);
    if (!result) throw new Error(`Lighthouse returned nothing for ${url}`);
    if (!result.lhr.runtimeError) return result.lhr;
    error = `${result.lhr.runtimeError.code} ${result.lhr.runtimeError.message}`;
  }
  throw new Error(`Lighthouse could not audit ${url} in ${LIGHTHOUSE_TRIES} tries: ${error}`);
}

/**
 * Runs Lighthouse on each page in turn in one Chromium (`port`), for `categories`. `formFactor`:
 * Lighthouse's mobile default (a Moto G class phone, simulated slow 4G) or its desktop preset.
 */
export async function auditPages(options: { base: string; cookie: string; port: number; pages: readonly AuditedPage[]; categories?: readonly Category[]; formFactor?: 'mobile' | 'desktop' }): Promise<PageScores[]> {
  const categories = options.categories ?? CATEGORIES;
  const desktop = options.formFactor === 'desktop';
  const found: PageScores[] = [];
  for (const page of options.pages) {
    const lhr = await auditOne(`${options.base}${page.path}`, {
      port: options.port,
      output: 'json',
      logLevel: 'error',
      onlyCategories: [...categories],
      ...(page.signedIn ? { extraHeaders: { Cookie: options.cookie } } : {}),
      ...(desktop ? DESKTOP_FLAGS : {}),
      ...(categories.includes('performance') ? {} : SPEED_FREE_FLAGS),
    });
    // A signed-in page that answered with the sign-in page (an expired session) would be scored as the wrong page.
    if (new URL(lhr.finalDisplayedUrl).pathname !== new URL(page.path, options.base).pathname) throw new Error(`${page.path} ended at ${lhr.finalDisplayedUrl}: not the page asked for`);
    const audits = lhr.audits as Record<string, AuditResult>;
    const scores: PageScores['scores'] = {};
    const failing: PageScores['failing'] = {};
    for (const category of categories) {
      const entry = lhr.categories[category];
      scores[category] = entry?.score === null || entry?.score === undefined ? null : Math.round(entry.score * 100);
      failing[category] = (entry?.auditRefs ?? [])
        .filter((ref) => ref.weight > 0 && audits[ref.id]?.score !== null && audits[ref.id]!.score! < 1 && ['binary', 'numeric', 'metricSavings'].includes(audits[ref.id]!.scoreDisplayMode))
        .map((ref) => `${ref.id} (${audits[ref.id]!.score})`);
    }
    const seo = lhr.categories['seo'];
    found.push({
      page,
      scores,
      seoIndexable: seo ? weightedScore(seo.auditRefs, audits, CRAWLABLE_AUDIT) : null,
      crawlable: audits[CRAWLABLE_AUDIT] ? audits[CRAWLABLE_AUDIT].score === 1 : null,
      failing,
      finalUrl: lhr.finalDisplayedUrl,
    });
  }
  return found;
}
