/**
 * `/console/reports` for an organisation with more domains than a page: every domain is reachable
 * (pages of ORGANISATION_REPORT_ROWS_PER_PAGE, the totals and the CSV over all of them, each row's
 * figures what that domain's dashboard shows); the window's links mark the one shown and both report
 * pages carry a date form that the server checks (bad dates, more than MAX_REPORT_DAYS days).
 */
import type { SenderDigestEntry } from '@spoof-checker/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORGANISATION_REPORT_ROWS_PER_PAGE } from '../../src/console/reports-view.js';
import type { NewReport } from '../../src/store/reports.js';
import { TestClock } from '../monitors/helpers.js';
import { addMember, consoleService, ORG_A, type Browser } from './helpers.js';

const NOW = '2026-11-27T12:00:00.000Z';
const DOMAINS = 250;
const nameOf = (i: number) => `d${String(i).padStart(3, '0')}.example`;

function entry(day: string, source: string, messages: number, pass: number): SenderDigestEntry {
  return {
    day, source, messages, spfAligned: pass, dkimAligned: pass, dmarcPass: pass, failing: messages - pass, forwardedFailing: 0,
    selectors: [], dkimDomains: [], spfDomains: [], verified: [], ownFailed: [], ownFailedNoSelector: false, broken: [], brokenNoSelector: 0,
    unalignedDkimPass: null, unalignedSpfPass: null, ownSpfFailed: null,
  };
}

/** Domain i's report of yesterday: 10 + i messages, i % 10 of them failing. */
function reportOf(i: number): NewReport {
  const begin = Date.parse('2026-11-26T00:00:00Z') / 1000;
  const digest = [entry('2026-11-26', '192.0.2.1', 10 + i, 10 + i - (i % 10))];
  return {
    id: `rep_${i}`, organizationId: ORG_A.id, kind: 'aggregate', identity: `t|${i}`, domain: nameOf(i), begin, end: begin + 86_399, reporter: 'r.example', orgName: null, reportId: `${i}`,
    origin: { channel: 'file', fileName: null, sender: null, messageId: null, authenticatedDomain: null, dkim: 'none', spf: 'none', dmarc: 'none', receivedAt: NOW },
    document: '{}',
    records: [{ sourceIp: '192.0.2.1', count: 10 + i, headerFrom: nameOf(i), disposition: 'none', dkimAligned: true, spfAligned: true, detail: '{}' }],
    trusted: true,
    digest,
  };
}

describe(`/console/reports with ${DOMAINS} domains`, () => {
  let service: Awaited<ReturnType<typeof consoleService>>;
  let viewer: Browser;

  beforeAll(async () => {
    service = await consoleService({ clock: new TestClock(Date.parse(NOW)) });
    for (let i = 0; i < DOMAINS; i++) expect(await service.stores.reports.add(reportOf(i))).toBe('stored');
    viewer = await addMember(service.app, service.stores, ORG_A.id, 'viewer@a.example', 'viewer', service.clock);
  });
  afterAll(() => service.app.close());

  const domainsOn = (body: string) => [...body.matchAll(/<th scope="row"><a href="\/console\/domains\/([^/"]+)\/reports/g)].map((m) => m[1]!);

  it('pages through every domain, by name; the totals and the CSV cover them all', async () => {
    const seen: string[] = [];
    const pages = Math.ceil(DOMAINS / ORGANISATION_REPORT_ROWS_PER_PAGE);
    for (let page = 1; page <= pages; page++) {
      const res = await viewer.get(`/console/reports?days=7${page > 1 ? `&page=${page}` : ''}`);
      expect(res.statusCode).toBe(200);
      const shown = domainsOn(res.body);
      expect(shown.length).toBe(Math.min(ORGANISATION_REPORT_ROWS_PER_PAGE, DOMAINS - seen.length));
      seen.push(...shown);
      expect(res.body).toContain(`Page ${page} of ${pages}`);
      if (page < pages) expect(res.body).toContain(`href="/console/reports?days=7&amp;page=${page + 1}" rel="next"`);
      else expect(res.body).not.toContain('rel="next"');
    }
    expect(seen).toEqual(Array.from({ length: DOMAINS }, (_, i) => nameOf(i)));
    const messages = Array.from({ length: DOMAINS }, (_, i) => 10 + i).reduce((a, b) => a + b, 0);
    const first = await viewer.get('/console/reports?days=7');
    expect(first.body).toContain(`${messages.toLocaleString('en-US')} message(s) in all`);
    const csv = await viewer.get('/console/reports.csv?days=7');
    const lines = csv.body.trimEnd().split('\r\n');
    expect(lines.length).toBe(DOMAINS + 1);
    // Each row's figures: domain 137 has 147 messages, 7 failing, one report.
    expect(lines).toContain(`${nameOf(137)},1,147,140,140,140,7,0`);
    // A page past the last shows the last; a page that is not a number is a 400.
    expect(domainsOn((await viewer.get('/console/reports?days=7&page=99')).body)).toEqual(seen.slice((pages - 1) * ORGANISATION_REPORT_ROWS_PER_PAGE));
    expect((await viewer.get('/console/reports?days=7&page=x')).statusCode).toBe(400);
  });

  it('the window links mark the one shown; both report pages have a date form the server checks', async () => {
    for (const base of ['/console/reports', `/console/domains/${nameOf(3)}/reports`]) {
      const res = await viewer.get(`${base}?days=30`);
      expect(res.statusCode).toBe(200);
      const nav = res.body.slice(res.body.indexOf('<nav aria-label="Window"'), res.body.indexOf('</nav>', res.body.indexOf('<nav aria-label="Window"')));
      expect(nav.match(/aria-current="page"/g)?.length).toBe(1);
      expect(nav).toMatch(/<a href="[^"]*days=30"[^>]*aria-current="page">Last 30 days<\/a>/);
      expect(res.body).toContain(`<form method="get" action="${base}" class="console-form inline" id="window-form">`);
      expect(res.body).toMatch(/<input type="date" id="from" name="from" value="2026-10-28" required>/);
      const dated = await viewer.get(`${base}?from=2026-11-01&until=2026-11-27`);
      expect(dated.statusCode).toBe(200);
      expect(dated.body).toContain('<span aria-current="page" class="window-current">');
      expect(dated.body).not.toMatch(/<a [^>]*aria-current="page">Last/);
      const bad = await viewer.get(`${base}?from=2026-02-30&until=2026-03-01`);
      expect(bad.statusCode).toBe(400);
      expect(bad.body).toContain('is not a date of the calendar');
      const long = await viewer.get(`${base}?from=2025-01-01&until=2026-11-27`);
      expect(long.statusCode).toBe(400);
      expect(long.body).toContain('at most 366');
      expect((await viewer.get(`${base}?from=2026-11-27&until=2026-11-01`)).body).toContain('is before from');
    }
  });
});
