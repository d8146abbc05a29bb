import { it } from 'vitest';
import { TLSRPT_PATH } from '../src/http/routes/reports.js';
import { makeApp } from '../test/http/helpers.js';
import { floodReport } from '../test/summaries/helpers.js';
it('measure', async () => {
  const { app, stores } = await makeApp({ now: () => new Date(Date.UTC(2026, 10, 22)) });
  const body = floodReport({ domain: 'example.com', records: 200_000, begin: Date.UTC(2026, 10, 20) / 1000, signatures: false });
  const rss = process.memoryUsage().rss;
  const t = performance.now();
  const r = await app.inject({ method: 'POST', url: TLSRPT_PATH, headers: { 'content-type': 'application/tlsrpt+gzip' }, payload: body });
  console.log('bytes', body.length, 'status', r.statusCode, 'ms', (performance.now() - t).toFixed(0), 'rss+MB', ((process.memoryUsage().rss - rss) / 2 ** 20).toFixed(0), r.body.slice(0, 300), JSON.stringify(await stores.reports.counts('org_a', null, null)));
}, 120000);
