/**
 * Issue 38 item 6: forged reports cannot fill another organisation's summary, drive its monitors or
 * name the selectors its checks probe. The public TLS-RPT route refuses DMARC XML unread; an
 * unauthenticated report (mail anyone could send) is shown apart and marked, raises no alert and
 * names no selector; an authenticated one still does both; lists in summaries, signals and webhook
 * bodies hold at most MAX_SUMMARY_LIST entries and say how many were left out.
 */
import { describe, expect, it } from 'vitest';
import { MAX_SUMMARY_LIST } from '@spoof-checker/engine';
import { TLSRPT_PATH } from '../../src/http/routes/reports.js';
import { ingestReportFile, reportSink, unauthenticatedOrigin, type OriginBase } from '../../src/ingest/ingest.js';
import { capEventLists } from '../../src/jobs/monitors/monitor-run.js';
import { createMemoryStores } from '../../src/store/memory.js';
import { reportSelectorCache } from '../../src/summaries/selectors.js';
import { monitorReportSignals } from '../../src/summaries/signals.js';
import { showReports } from '../../src/summaries/summary.js';
import { makeApp } from '../http/helpers.js';
import { floodReport, floodXml } from './helpers.js';

const DOMAIN = 'victim.example';
const BEGIN = Date.UTC(2026, 10, 20) / 1000;
const NOW = new Date((BEGIN + 2 * 86_400) * 1000);
/** 2,000 failing sources, 10 messages each (over the alert floor), every tenth with a signature under selector s<n>. */
const FORGED = { domain: DOMAIN, records: 2_000, begin: BEGIN, count: 10 };
const SMTP_UNAUTHENTICATED: OriginBase = { channel: 'smtp', sender: 'dmarc@forger.example', messageId: '<1@forger.example>', authenticatedDomain: null, dkim: 'none', spf: 'fail', dmarc: 'fail' };
const SMTP_AUTHENTICATED: OriginBase = { channel: 'smtp', sender: 'noreply-dmarc@reporter.example', messageId: '<1@reporter.example>', authenticatedDomain: 'reporter.example', dkim: 'pass', spf: 'pass', dmarc: 'pass' };

describe('forged reports', () => {
  it('the public TLS-RPT route refuses a DMARC aggregate report with a clear 422, and stores nothing', async () => {
    const { app, stores } = await makeApp({ now: () => NOW });
    const before = await stores.reports.counts('org_a', null, null);
    for (const [payload, type] of [[floodReport({ ...FORGED, records: 50 }), 'application/tlsrpt+gzip'], [floodXml({ ...FORGED, records: 50 }), 'application/tlsrpt+json']] as const) {
      const response = await app.inject({ method: 'POST', url: TLSRPT_PATH, headers: { 'content-type': type }, payload });
      expect(response.statusCode, response.body).toBe(422);
      expect(response.json()).toMatchObject({ code: 'REPORT_REFUSED' });
      expect(response.json().message).toContain('wrong-kind');
      expect(response.json().message).toContain('TLS report');
    }
    expect(await stores.reports.counts('org_a', null, null)).toEqual(before);
    await app.close();
  });

  it('an unauthenticated report is shown apart and marked, raises no alert and names no selector to probe', async () => {
    const stores = createMemoryStores();
    const sink = await reportSink(stores.reports, { organizationId: 'o1' }, { now: () => NOW });
    const tally = await ingestReportFile(sink, { bytes: floodReport(FORGED), fileName: 'forged.xml.gz' }, SMTP_UNAUTHENTICATED);
    expect(tally.reports).toMatchObject([{ outcome: 'stored', reporter: 'unauthenticated' }]);
    const shown = await showReports({ store: stores.reports, organizationId: 'o1', domain: DOMAIN, days: 30, now: NOW });
    expect(shown.summary).toMatchObject({ reports: 0, messages: 0, senders: [], sendersLeftOut: 0, selectors: [] });
    expect(shown.summary.untrusted).toMatchObject({ marked: 'untrusted', reports: 1, messages: 20_000, failing: 20_000 });
    expect(shown.summary.untrusted.sources.length).toBe(MAX_SUMMARY_LIST);
    expect(shown.summary.untrusted.sourcesLeftOut).toBeGreaterThan(0);
    expect(await monitorReportSignals(stores.reports, () => NOW)('o1', DOMAIN)).toBeNull();
    expect(await reportSelectorCache(stores.reports, () => NOW)('o1', DOMAIN)).toEqual([]);
  });

  it('an authenticated report still raises the alert (its list capped, the rest counted) and its selectors are probed', async () => {
    const stores = createMemoryStores();
    const sink = await reportSink(stores.reports, { organizationId: 'o1' }, { now: () => NOW });
    await ingestReportFile(sink, { bytes: floodReport(FORGED), fileName: 'real.xml.gz' }, SMTP_AUTHENTICATED);
    const signals = await monitorReportSignals(stores.reports, () => NOW)('o1', DOMAIN);
    expect(signals?.unauthorised.length).toBe(MAX_SUMMARY_LIST);
    expect(signals?.unauthorisedLeftOut).toBeGreaterThan(0);
    const selectors = await reportSelectorCache(stores.reports, () => NOW)('o1', DOMAIN);
    expect(selectors).toEqual(['s0', 's10', 's20', 's30', 's40']);
  });

  it('a webhook body holds at most MAX_SUMMARY_LIST entries a list and says how many it left out', () => {
    const sources = Array.from({ length: 2_000 }, (_, i) => `10.0.${i >> 8}.${i & 255}`);
    const event = { type: 'monitor.changed', changes: [{ field: 'reports.unauthorised', before: [], after: sources }], after: { reports: { unauthorised: sources, passRateDropped: false } } };
    const capped = capEventLists(event);
    expect(capped.changes[0]!.after).toHaveLength(MAX_SUMMARY_LIST);
    expect(capped.changes[0]).toMatchObject({ afterLeftOut: 1_900 });
    expect(capped.after.reports.unauthorised).toHaveLength(MAX_SUMMARY_LIST);
    expect(capped.after.reports).toMatchObject({ unauthorisedLeftOut: 1_900 });
    expect(JSON.stringify(capped).length).toBeLessThan(8_000);
  });
});
