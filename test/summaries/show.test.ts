/**
 * One answer whatever the store: the fixture reports of spf-cloud-ec2.example ingested into memory,
 * SQLite and PostgreSQL, and `showReports` (which reads the digest the store kept as each report
 * arrived, never the rows) gives exactly what the engine's `summariseReports` gives over the parsed
 * reports themselves: the senders and their classes, readiness, selectors, the daily series. The
 * engine's pairwise merge of two digest entries equals its general merge.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { digestReports, mergeDigestEntries, mergeSenderDigests, parseAggregateReport, parseTlsReport, reportIdentity, shippedRanges, summariseReports, unpackReportFile, type AggregateReport, type TlsReport } from '@spoof-checker/engine';
import { sql } from 'kysely';
import { ingestReportFile, unauthenticatedOrigin } from '../../src/ingest/ingest.js';
import { digestStoredReports, totalStoredDays } from '../../src/store/reports-sql.js';
import { showReports } from '../../src/summaries/summary.js';
import type { Stores } from '../../src/store/types.js';
import { fixture } from '../../packages/engine/test/reports/helpers.js';
import { memoryBackend, postgresBackend, sqliteBackend, type Backend, type OpenedBackend } from '../store/backends.js';

const NOW = new Date('2026-11-27T12:00:00Z');
const DOMAIN = 'spf-cloud-ec2.example';
const FILES = [
  'google.com!spf-cloud-ec2.example!1795219200!1795305599.zip',
  'protection.outlook.com!spf-cloud-ec2.example!1795219200!1795305600.xml.gz',
  'yahoo.com!spf-cloud-ec2.example!1795132800!1795219199.xml.gz',
  'src/gmx.net!spf-cloud-ec2.example!1795305600!1795391999.xml',
  'src/google.com!spf-cloud-ec2.example!2026-11-21.json',
  'microsoft.com!spf-cloud-ec2.example!2026-11-21.json.gz',
];

function parsed(): { aggregate: AggregateReport[]; tls: TlsReport[] } {
  const aggregate: AggregateReport[] = [];
  const tls: TlsReport[] = [];
  for (const file of FILES) {
    const unpacked = unpackReportFile(fixture(file), { filename: file });
    if (!unpacked.ok) throw new Error(unpacked.detail);
    for (const d of unpacked.documents) {
      const p = d.kind === 'aggregate' ? parseAggregateReport(d.bytes) : parseTlsReport(d.bytes);
      if (!p.ok) throw new Error(p.detail);
      if (p.report.kind === 'aggregate') aggregate.push(p.report);
      else tls.push(p.report);
    }
  }
  return { aggregate, tls };
}

describe.each<Backend>([memoryBackend, sqliteBackend, postgresBackend()])('reports show from the stored digest: $name', (backend) => {
  let opened: OpenedBackend;
  let stores: Stores;
  beforeAll(() => backend.setup());
  afterAll(() => backend.teardown());
  beforeEach(async () => {
    opened = await backend.open();
    stores = opened.stores;
  });
  afterEach(() => opened.dispose());

  it('equals the engine’s summary over the parsed reports', async () => {
    const sink = { store: stores.reports, organizationsFor: async () => ['o1'], rejectionOrganizations: ['o1'], now: () => NOW };
    for (const file of FILES) await ingestReportFile(sink, { bytes: fixture(file), fileName: file.replace(/^src\//, '') }, unauthenticatedOrigin('file', null));
    const shown = await showReports({ store: stores.reports, organizationId: 'o1', domain: DOMAIN, days: 30, now: NOW });
    const { aggregate, tls } = parsed();
    const expected = summariseReports({ domain: DOMAIN, days: 30, now: NOW, aggregate, tls, ranges: shippedRanges() });
    expect(shown.summary.senders).toEqual(expected.senders);
    expect(shown.summary.readiness).toEqual(expected.readiness);
    expect(shown.summary.selectors).toEqual(expected.selectors);
    expect(shown.summary.daily).toEqual(expected.daily);
    expect(shown.summary.messages).toBe(expected.messages);
    expect(shown.summary.reports).toBe(aggregate.length);
    expect(shown.summary.tls).toEqual(expected.tls);
    expect(shown.summary.untrusted).toMatchObject({ marked: 'untrusted', reports: 0, messages: 0, sources: [], sourcesLeftOut: 0 });
    // Migration 0008 digests the reports stored before it (and so fills the roll-ups of 0014 as ingestion would): the same digest, the same answer.
    if (opened.sql) {
      const rollUps = ['report_sender_days', 'report_day_totals', 'report_sender_blocks', 'report_sender_block_stamps'];
      for (const table of rollUps) await sql`delete from ${sql.table(table)}`.execute(opened.sql.db);
      expect((await showReports({ store: stores.reports, organizationId: 'o1', domain: DOMAIN, days: 30, now: NOW })).summary.senders).toEqual([]);
      await digestStoredReports(opened.sql.db, opened.sql.dialect);
      expect(await showReports({ store: stores.reports, organizationId: 'o1', domain: DOMAIN, days: 30, now: NOW })).toEqual(shown);
      // Migration 0014 totals the days stored before it; their blocks are built from the days when first read.
      for (const table of rollUps.slice(1)) await sql`delete from ${sql.table(table)}`.execute(opened.sql.db);
      expect((await showReports({ store: stores.reports, organizationId: 'o1', domain: DOMAIN, days: 30, now: NOW })).summary.series).toEqual([]);
      await totalStoredDays(opened.sql.db);
      expect(await showReports({ store: stores.reports, organizationId: 'o1', domain: DOMAIN, days: 30, now: NOW })).toEqual(shown);
    }
  });
});

describe('mergeDigestEntries', () => {
  it('merges two entries of one source and day as mergeSenderDigests does, whatever the order', () => {
    const { aggregate } = parsed();
    const seen = new Set<string>();
    const entries = aggregate.filter((r) => !seen.has(reportIdentity(r)) && Boolean(seen.add(reportIdentity(r)))).flatMap((r) => digestReports([{ ...r, dateRange: { begin: 1795219200, end: 1795305599 } }], DOMAIN).senders);
    const bySource = new Map<string, typeof entries>();
    for (const e of entries) bySource.set(e.source, [...(bySource.get(e.source) ?? []), e]);
    let pairs = 0;
    for (const list of bySource.values()) {
      if (list.length < 2) continue;
      const [a, b] = list as [(typeof entries)[0], (typeof entries)[0]];
      expect(mergeDigestEntries(a, b)).toEqual(mergeSenderDigests([a, b], DOMAIN)[0]);
      expect(mergeDigestEntries(b, a)).toEqual(mergeSenderDigests([a, b], DOMAIN)[0]);
      pairs++;
    }
    expect(pairs).toBeGreaterThan(0);
  });
});
