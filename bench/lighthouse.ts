/**
 * Lighthouse's four categories for every kind of page (`npm run lighthouse`, or
 * `npx tsx bench/lighthouse.ts [--desktop] [--runs N] [--smoke]`): the pages of test/web/lighthouse-pages.ts
 * (the public checker, the console signed in, the shared dashboard) over the whole service on
 * loopback with seeded data, each audited in turn in one headless Debian Chromium. Mobile by
 * default (Lighthouse's own: a mid-range phone on a slow 4G link, simulated), `--desktop` for its
 * desktop preset. `--smoke`: two pages, one run each (bench/smoke.ts).
 *
 * Performance is here and not in a test: Lighthouse simulates the network and the phone's CPU, but
 * from the main-thread time it measures on this machine, so a loaded machine lowers the score. The
 * baseline is a bare page (a heading and a paragraph, no stylesheet or script) served from the same
 * loopback in the same run and audited the same way: each page's performance is also given as a
 * ratio to it, with the load average beside the figures. Each page's performance is the median of
 * `--runs` runs (default RUNS, as Lighthouse's own advice for a noisy machine), with the lowest and
 * highest beside it; the other three categories come from the first run (they do not vary). SEO is given as Lighthouse computes it
 * and without `is-crawlable` (`seoIndexable`: the pages that say `noindex` on purpose).
 *
 * Prints a table on stderr and one JSON line on stdout.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { auditPages, CATEGORIES, launchForLighthouse, lighthouseSite, type AuditedPage, type PageScores } from '../test/web/lighthouse-pages.js';
import { SMOKE } from './smoke.js';
import { median } from './stats.js';

const { values } = parseArgs({ options: { desktop: { type: 'boolean' }, runs: { type: 'string' }, smoke: { type: 'boolean' } }, strict: true });
/** Runs of each page whose performance scores give the median. */
const RUNS = 3;
const runs = SMOKE ? 1 : Number(values.runs ?? RUNS);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs takes a whole number of at least 1, not ${values.runs}`);
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
    const bareBase = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;
    const baselinePage = { name: 'baseline (bare page)', path: '/', signedIn: false, noindex: false };
    /** The performance scores of `runs` runs of a page (the first run's row given too, when it scored all four). */
    const performanceRuns = async (base: string, page: AuditedPage, first: PageScores | null): Promise<number[]> => {
      const scores = first ? [first.scores.performance ?? Number.NaN] : [];
      while (scores.length < runs) {
        const [row] = await auditPages({ base, cookie: site.cookie, port: chrome.port, pages: [page], categories: ['performance'], formFactor });
        scores.push(row!.scores.performance ?? Number.NaN);
      }
      return scores;
    };
    const baselineRuns = await performanceRuns(bareBase, baselinePage, null);
    const baseline = median(baselineRuns);
    const pages = SMOKE ? site.pages.filter((p) => SMOKE_PAGES.includes(p.name)) : site.pages;
    const rows: { row: PageScores; performance: number[] }[] = [];
    for (const page of pages) {
      const [row] = await auditPages({ base: site.base, cookie: site.cookie, port: chrome.port, pages: [page], formFactor });
      const performance = await performanceRuns(site.base, page, row!);
      rows.push({ row: row!, performance });
      const s = row!.scores;
      const below = Object.entries(row!.failing).filter(([, f]) => f.length);
      say(`${page.name.padEnd(22)} perf ${String(median(performance)).padStart(3)} (${Math.min(...performance)}–${Math.max(...performance)})  a11y ${String(s.accessibility).padStart(3)}  bp ${String(s['best-practices']).padStart(3)}  seo ${String(s.seo).padStart(3)} (without is-crawlable ${row!.seoIndexable})${below.length ? `  first run below 1: ${below.map(([c, f]) => `${c}: ${f.join(', ')}`).join('; ')}` : ''}`);
    }
    say(`baseline (bare page) performance ${baseline} (${Math.min(...baselineRuns)}–${Math.max(...baselineRuns)})`);
    const loadAfter = loadavg();
    process.stdout.write(
      `${JSON.stringify({
        lighthouse: {
          formFactor,
          mode: SMOKE ? 'smoke' : 'full',
          runs,
          loadAverage: [loadBefore[0], loadAfter[0]],
          cores: cpus().length,
          baselinePerformance: baseline,
          pages: rows.map(({ row, performance }) => ({
            name: row.page.name,
            path: row.page.path,
            ...Object.fromEntries(CATEGORIES.map((c) => [c, c === 'performance' ? median(performance) : (row.scores[c] ?? null)])),
            performanceRange: [Math.min(...performance), Math.max(...performance)],
            seoIndexable: row.seoIndexable,
            noindex: row.page.noindex,
            performanceToBaseline: baseline ? Math.round((median(performance) / baseline) * 100) / 100 : null,
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
