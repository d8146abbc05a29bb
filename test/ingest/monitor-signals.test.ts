/**
 * Monitors alerting from DMARC reports: `monitorReportSignals` over the store (an unauthorised sender
 * over the volume floor, a drop of the pass rate), and a monitor run that confirms a new unauthorised
 * sender as a change and queues its webhook, while a monitor without reports keeps its snapshot.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkDomain, digestReports, loadZoneDirectory, parseZone, ZoneResolver, type AggregateReport } from '@spoof-checker/engine';
import { ingestReportFile, unauthenticatedOrigin } from '../../src/ingest/ingest.js';
import { reportSelectorCache } from '../../src/summaries/selectors.js';
import { monitorReportSignals, SIGNAL_MIN_UNAUTHORISED_MESSAGES } from '../../src/summaries/signals.js';
import { INITIAL_MACHINE } from '../../src/jobs/monitors/monitor-changes.js';
import { runMonitor, type MonitorReportSource } from '../../src/jobs/monitors/monitor-run.js';
import { createMemoryStores } from '../../src/store/memory.js';
import type { Monitor } from '../../src/store/monitors.js';
import type { ReportRecordRow } from '../../src/store/reports.js';
import { FIXTURE_ZONES } from '../cli/helpers.js';
import { fixture, GOOGLE_ZIP, OUTLOOK_GZ, REPORT_DOMAIN, REPORT_SOURCES, YAHOO_GZ } from './helpers.js';

const DAY = 86_400;

describe('monitorReportSignals', () => {
  it('names the unauthorised senders of the last week over the volume floor; nothing for a domain without reports', async () => {
    const stores = createMemoryStores();
    const sink = { store: stores.reports, organizationsFor: async () => ['o1'], rejectionOrganizations: ['o1'] };
    for (const name of [GOOGLE_ZIP, YAHOO_GZ, OUTLOOK_GZ]) await ingestReportFile(sink, { bytes: fixture(name), fileName: name }, unauthenticatedOrigin('file', null));
    await ingestReportFile(sink, { bytes: readFileSync(join(REPORT_SOURCES, 'gmx.net!spf-cloud-ec2.example!1795305600!1795391999.xml')), fileName: 'gmx.xml' }, unauthenticatedOrigin('file', null));
    const signals = monitorReportSignals(stores.reports, () => new Date('2026-11-24T00:00:00Z'));
    const found = await signals('o1', REPORT_DOMAIN);
    // 203.0.113.9 sent 35 spoofed messages (over the floor of SIGNAL_MIN_UNAUTHORISED_MESSAGES).
    expect(SIGNAL_MIN_UNAUTHORISED_MESSAGES).toBeLessThanOrEqual(35);
    expect(found).toEqual({ unauthorised: ['203.0.113.9'], passRateDropped: false });
    expect(await signals('o2', REPORT_DOMAIN)).toBeNull();
    expect(await signals('o1', 'p-reject.example')).toBeNull();
  });

  it('says when the pass rate of the last week fell ten points below the weeks before', async () => {
    const stores = createMemoryStores();
    const end = Date.UTC(2026, 10, 24) / 1000;
    const row = (pass: boolean, count: number): ReportRecordRow => ({
      sourceIp: '198.51.100.7', count, headerFrom: 'drop.example', disposition: 'none', dkimAligned: pass, spfAligned: pass,
      detail: JSON.stringify({ dkimResult: pass ? 'pass' : 'fail', spfResult: pass ? 'pass' : 'fail', envelopeFrom: null, envelopeTo: null, auth: { dkim: [], spf: [] }, reasons: [] }),
    });
    const add = async (daysAgo: number, passing: number, failing: number) => {
      const begin = end - daysAgo * DAY;
      const document = { kind: 'aggregate', schema: '7489', namespace: null, version: null, reporter: { orgName: 'x', email: null, extraContactInfo: null, generator: null }, reportId: `r${daysAgo}`, dateRange: { begin, end: begin + DAY - 1 }, errors: [], policyPublished: { domain: 'drop.example', adkim: 'r', aspf: 'r', p: 'none', sp: null, np: null, pct: null, fo: null, testing: null, discoveryMethod: null } };
      const records = [row(true, passing), row(false, failing)];
      const parsed = { ...document, records: records.map((r) => ({ sourceIp: r.sourceIp, count: r.count, headerFrom: r.headerFrom, disposition: r.disposition, ...JSON.parse(r.detail) })) } as unknown as AggregateReport;
      await stores.reports.add({
        trusted: true,
        digest: digestReports([parsed], 'drop.example').senders,
        id: `r${daysAgo}`, organizationId: 'o1', kind: 'aggregate', identity: `i${daysAgo}`, domain: 'drop.example', begin, end: begin + DAY - 1, reporter: 'x', orgName: 'x', reportId: `r${daysAgo}`,
        origin: { channel: 'file', fileName: null, sender: null, messageId: null, authenticatedDomain: null, dkim: 'none', spf: 'none', dmarc: 'none', receivedAt: '2026-11-24T00:00:00.000Z' },
        document: JSON.stringify(document),
        records,
      });
    };
    for (let d = 10; d <= 30; d++) await add(d, 95, 5);
    const signals = monitorReportSignals(stores.reports, () => new Date(end * 1000));
    expect(await signals('o1', 'drop.example')).toBeNull();
    for (let d = 1; d <= 5; d++) await add(d, 50, 50);
    expect(await signals('o1', 'drop.example')).toEqual({ unauthorised: [], passRateDropped: true });
  });
});

describe('a monitor run with report signals', () => {
  it('confirms a new unauthorised sender as a change and queues its webhook; no signals, no change', async () => {
    const stores = createMemoryStores();
    const resolver = new ZoneResolver(await loadZoneDirectory(FIXTURE_ZONES));
    const at = '2026-11-24T00:00:00.000Z';
    const monitor: Monitor = {
      id: 'm1', organizationId: 'o1', domain: REPORT_DOMAIN, intervalMinutes: 60, webhookUrl: 'https://hooks.example/x', checks: [], sealedSecret: 'sealed',
      machine: INITIAL_MACHINE, lastResult: null, nextRunAt: at, leaseUntil: null, version: 0, createdAt: at, updatedAt: at,
    };
    expect(await stores.monitors.create(monitor)).toBe('created');
    let signals: Awaited<ReturnType<MonitorReportSource>> = null;
    const deps = { store: stores.monitors, check: (domain: string) => checkDomain(domain, { resolver }), now: () => new Date(at), reportSignals: async () => signals };
    let run = 0;
    const once = async () => runMonitor(deps, 'm1', `manual:${run++}`);
    const first = await once();
    expect(first).toMatchObject({ kind: 'committed', changed: false });
    expect(first.kind === 'committed' && first.snapshot.kind === 'checked' && first.snapshot.reports).toBeUndefined();
    signals = { unauthorised: ['203.0.113.9'], passRateDropped: false };
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await once());
    const changed = outcomes.find((o) => o.kind === 'committed' && o.changed);
    expect(changed).toMatchObject({ kind: 'committed', changed: true, deliveries: 1 });
    const history = await stores.monitors.history('o1', 'm1', { page: 1, limit: 50 });
    const change = history?.items.find((e) => e.type === 'change');
    expect(change && 'changes' in change ? change.changes : []).toEqual([{ field: 'reports.unauthorised', before: [], after: ['203.0.113.9'] }]);
    const deliveries = await stores.monitors.deliveries('o1', 'm1', { page: 1, limit: 10 });
    expect(JSON.parse(deliveries!.items[0]!.body)).toMatchObject({ type: 'monitor.changed', changes: [{ field: 'reports.unauthorised', after: ['203.0.113.9'] }] });
  });
});

describe('a monitor run probes the DKIM selectors its organisation’s reports have seen', () => {
  const at = '2026-11-24T00:00:00.000Z';
  const monitorOf = (organizationId: string): Monitor => ({
    id: `m-${organizationId}`, organizationId, domain: REPORT_DOMAIN, intervalMinutes: 60, webhookUrl: 'https://hooks.example/x', checks: [], sealedSecret: 'sealed',
    machine: INITIAL_MACHINE, lastResult: null, nextRunAt: at, leaseUntil: null, version: 0, createdAt: at, updatedAt: at,
  });

  it('passes the selectors of the organisation’s reports to the check, none for another organisation, and none when the store fails', async () => {
    const stores = createMemoryStores();
    const sink = { store: stores.reports, organizationsFor: async () => ['o1'], rejectionOrganizations: ['o1'] };
    for (const name of [GOOGLE_ZIP, YAHOO_GZ, OUTLOOK_GZ]) await ingestReportFile(sink, { bytes: fixture(name), fileName: name }, unauthenticatedOrigin('file', null));
    const resolver = new ZoneResolver(await loadZoneDirectory(FIXTURE_ZONES));
    const asked: { domain: string; selectors: string[] | undefined }[] = [];
    const check = (domain: string, options: { selectors?: string[] }) => {
      asked.push({ domain, selectors: options.selectors });
      return checkDomain(domain, { resolver, ...(options.selectors ? { selectors: options.selectors } : {}) });
    };
    const selectors = reportSelectorCache(stores.reports, () => new Date(at));
    for (const organizationId of ['o1', 'o2']) {
      expect(await stores.monitors.create(monitorOf(organizationId))).toBe('created');
      const outcome = await runMonitor({ store: stores.monitors, check, reportSelectors: selectors, now: () => new Date(at) }, `m-${organizationId}`, 'manual:1');
      expect(outcome).toMatchObject({ kind: 'committed' });
    }
    expect(asked).toEqual([
      { domain: REPORT_DOMAIN, selectors: ['app2026', 'billing2024', 'esp1'] },
      { domain: REPORT_DOMAIN, selectors: undefined },
    ]);
    // A store that cannot answer: no selectors, and the run still checks and commits.
    const failing = async () => Promise.reject(new Error('store down'));
    const outcome = await runMonitor({ store: stores.monitors, check, reportSelectors: failing, now: () => new Date(at) }, 'm-o1', 'manual:2');
    expect(outcome).toMatchObject({ kind: 'committed' });
    expect(asked.at(-1)).toEqual({ domain: REPORT_DOMAIN, selectors: undefined });
  });

  it('finds a key published under a selector only the reports name', async () => {
    const zone = `$ORIGIN ${REPORT_DOMAIN}.\n$TTL 300\n@ IN SOA ns hostmaster 1 7200 900 1209600 300\n@ IN NS ns\n@ IN TXT "v=spf1 -all"\n_dmarc IN TXT "v=DMARC1; p=reject"\napp2026._domainkey IN TXT "v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="\n`;
    const resolver = new ZoneResolver([parseZone(zone, { file: 'z' })]);
    const stores = createMemoryStores();
    const check = (domain: string, options: { selectors?: string[] }) => checkDomain(domain, { resolver, ...(options.selectors ? { selectors: options.selectors } : {}) });
    expect(await stores.monitors.create(monitorOf('o1'))).toBe('created');
    const without = await runMonitor({ store: stores.monitors, check, now: () => new Date(at) }, 'm-o1', 'manual:1');
    const withSelectors = await runMonitor({ store: stores.monitors, check, reportSelectors: async () => ['app2026'], now: () => new Date(at) }, 'm-o1', 'manual:2');
    const dkimOf = (outcome: typeof without) => (outcome.kind === 'committed' && outcome.snapshot.kind === 'checked' ? outcome.snapshot.dkim : undefined);
    expect(dkimOf(without)?.keys).toEqual([]);
    expect(dkimOf(withSelectors)?.keys).toEqual(['app2026:valid']);
  });
});
