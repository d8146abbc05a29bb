/**
 * Lighthouse's four categories for every kind of page (`npm run lighthouse`, or
 * `npx tsx bench/lighthouse.ts [--desktop] [--smoke]`): the pages of test/web/lighthouse-pages.ts
 * (the public checker, the console signed in, the shared dashboard) over the whole service on
 * loopback with seeded data, each audited in turn in one headless Debian Chromium. Mobile by
 * default (Lighthouse's own: a mid-range phone on a slow 4G link, simulated), `--desktop` for its
 * desktop preset. `--smoke`: two pages (bench/smoke.ts).
 *
 * Performance is here and not in a test: Lighthouse simulates the network and the phone's CPU, but
 * from the main-thread time it measures on this machine, so a loaded machine lowers the score. The
 * baseline is a bare page (a heading and a paragraph, no stylesheet or script) served from the same
 * loopback in the same run and audited the same way: each page's performance is also given as a
 * ratio to it, with the load average beside the figures. SEO is given as Lighthouse computes it
 * and without `is-crawlable` (`seoIndexable`: the pages that say `noindex` on purpose).
 *
 * Prints a table on stderr and one JSON line on stdout.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { auditPages, CATEGORIES, launchForLighthouse, lighthouseSite, type PageScores } from '../test/web/lighthouse-pages.js';
import { SMOKE } from './smoke.js';

const { values } = parseArgs({ options: { desktop: { type: 'boolean' }, smoke: { type: 'boolean' } }, strict: true });
const formFactor = values.desktop ? 'desktop' : 'mobile';
const say = (line: string) => process.stderr.write(`${line}\n`);
/** The pages of a smoke run: one public, one signed in. */
const SMOKE_PAGES = ['home', 'overview'];

/** The bare page of the baseline. */
const BARE_PAGE = '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Baseline</title><meta name="description" content="A bare page."></head><body><h1>Baseline</h1><p>A bare page with no stylesheet or script.</p></body></html>';

async function main(): Promise<void> {
  const site = await lighthouseSite();
  const bare = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(BARE_PAGE);
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const chrome = await launchForLighthouse();
  try {
    const loadBefore = loadavg();
    say(`load average ${loadBefore.map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} cores; ${formFactor}${SMOKE ? ' (--smoke)' : ''}`);
    const baselinePage = { name: 'baseline (bare page)', path: '/', signedIn: false, noindex: false };
    const [baseline] = await auditPages({ base: `http://127.0.0.1:${(bare.address() as AddressInfo).port}`, cookie: '', port: chrome.port, pages: [baselinePage], categories: ['performance'], formFactor });
    const pages = SMOKE ? site.pages.filter((p) => SMOKE_PAGES.includes(p.name)) : site.pages;
    const rows: PageScores[] = [];
    for (const page of pages) {
      const [row] = await auditPages({ base: site.base, cookie: site.cookie, port: chrome.port, pages: [page], formFactor });
      rows.push(row!);
      const s = row!.scores;
      say(`${page.name.padEnd(22)} perf ${String(s.performance).padStart(3)}  a11y ${String(s.accessibility).padStart(3)}  bp ${String(s['best-practices']).padStart(3)}  seo ${String(s.seo).padStart(3)} (without is-crawlable ${row!.seoIndexable})${Object.values(row!.failing).flat().length ? `  below 1: ${Object.entries(row!.failing).filter(([, f]) => f.length).map(([c, f]) => `${c}: ${f.join(', ')}`).join('; ')}` : ''}`);
    }
    const base = baseline!.scores.performance ?? null;
    say(`baseline (bare page) performance ${base}`);
    const loadAfter = loadavg();
    process.stdout.write(
      `${JSON.stringify({
        lighthouse: {
          formFactor,
          mode: SMOKE ? 'smoke' : 'full',
          loadAverage: [loadBefore[0], loadAfter[0]],
          cores: cpus().length,
          baselinePerformance: base,
          pages: rows.map((row) => ({
            name: row.page.name,
            path: row.page.path,
            ...Object.fromEntries(CATEGORIES.map((c) => [c, row.scores[c] ?? null])),
            seoIndexable: row.seoIndexable,
            noindex: row.page.noindex,
            performanceToBaseline: base && row.scores.performance != null ? Math.round((row.scores.performance / base) * 100) / 100 : null,
          })),
        },
      })}\n`,
    );
  } finally {
    chrome.kill();
    await new Promise<void>((resolve) => bare.close(() => resolve()));
    await site.close();
  }
}

await main();
