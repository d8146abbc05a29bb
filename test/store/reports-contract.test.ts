/**
 * The report store's contract, run unchanged against memory, SQLite and PostgreSQL: whole reports,
 * one per identity (a duplicate is counted, not stored), tenancy, the reports' own date range,
 * the digest merged per source and day as reports arrive (trusted and untrusted apart), counts, and
 * refused files.
 */
import { digestReports, mergeSenderDigests, summariseDigestSenders, type AggregateReport, type SenderDigestEntry } from '@spoof-checker/engine';
import { sql } from 'kysely';
import { digestRestJson } from '../../src/store/reports-sql.js';
import { describe, expect, it } from 'vitest';
import { dayBlocks, emptyDigestEntry, isTrustedOrigin, MAX_DIGEST_SOURCES_PER_DAY, mergeDigestDay, MAX_REPORTS_PER_BATCH, OTHER_SOURCES, type DayRange, type NewReport, type ReportOrigin, type ReportRecordRow } from '../../src/store/reports.js';
import type { Domain } from '../../src/store/types.js';
import { describeStoreContract } from './contract-stores.js';

const DAY = 86_400;
/** 2025-03-01T00:00:00Z */
const D0 = Date.UTC(2025, 2, 1) / 1000;

const origin = (authenticatedDomain: string | null): ReportOrigin => ({
  channel: 'smtp',
  fileName: 'google.com!a.example!1!2.zip',
  sender: 'noreply-dmarc-support@google.com',
  messageId: '<m1@google.com>',
  authenticatedDomain,
  dkim: authenticatedDomain ? 'pass' : 'none',
  spf: 'pass',
  dmarc: authenticatedDomain ? 'pass' : 'fail',
  receivedAt: '2025-03-02T08:00:00.000Z',
});

const row = (sourceIp: string, count: number, extra: Partial<ReportRecordRow> = {}): ReportRecordRow => ({
  sourceIp,
  count,
  headerFrom: 'a.example',
  disposition: 'none',
  dkimAligned: true,
  spfAligned: false,
  detail: JSON.stringify({ dkim: [{ domain: 'a.example', selector: 's1', result: 'pass' }] }),
  ...extra,
});

/** The engine's digest of stored rows (as ingest computes it from the parsed report). */
function digestOf(records: readonly ReportRecordRow[], begin: number): SenderDigestEntry[] {
  const aggregate = {
    kind: 'aggregate',
    dateRange: { begin, end: begin + DAY - 1 },
    policyPublished: { domain: 'a.example' },
    records: records.filter((r) => r.headerFrom !== null).map((r) => {
      const detail = JSON.parse(r.detail) as { dkim?: { domain: string; selector: string; result: string }[] };
      return { sourceIp: r.sourceIp, count: r.count, headerFrom: r.headerFrom, disposition: r.disposition, dkimResult: r.dkimAligned ? 'pass' : 'fail', spfResult: r.spfAligned ? 'pass' : 'fail', envelopeFrom: null, envelopeTo: null, auth: { dkim: detail.dkim ?? [], spf: [] }, reasons: [] };
    }),
  } as unknown as AggregateReport;
  return digestReports([aggregate], 'a.example').senders;
}

const report = (id: string, organizationId: string, day: number, records: ReportRecordRow[], extra: Partial<NewReport> = {}): NewReport => {
  const base: Omit<NewReport, 'trusted' | 'digest'> = {
  id,
  organizationId,
  kind: 'aggregate',
  identity: `google.com|${id}|${D0 + day * DAY}`,
  domain: 'a.example',
  begin: D0 + day * DAY,
  end: D0 + (day + 1) * DAY - 1,
  reporter: 'google.com',
  orgName: 'google.com',
  reportId: `rid-${id}`,
  origin: origin('google.com'),
  document: JSON.stringify({ policy: { p: 'none' } }),
  records,
  ...extra,
  };
  const kept = extra.records ?? records;
  return { ...base, trusted: extra.trusted ?? isTrustedOrigin(base.origin), digest: extra.digest ?? (base.kind === 'aggregate' ? digestOf(kept, base.begin) : []) };
};

const DAYS = { from: '2025-01-01', to: '2025-12-31' };

describeStoreContract('report store contract', ({ stores, opened }, backend) => {
  it('stores a report whole, lists it with its counts, and reads its document back', async () => {
    expect(await stores.reports.add(report('r1', 'o1', 0, [row('192.0.2.1', 10), row('2001:db8::1', 5, { dkimAligned: false })]))).toBe('stored');
    const page = await stores.reports.list('o1', { page: 1, limit: 10 });
    expect(page.total).toBe(1);
    const { records: _records, digest: _digest, trusted: _trusted, ...rest } = report('r1', 'o1', 0, []);
    expect(page.items[0]).toEqual({ ...rest, recordCount: 2, messageCount: 15, contested: false });
    expect(await stores.reports.documents('o1', 'a.example', 'aggregate', { from: D0, to: D0 + DAY })).toEqual([JSON.stringify({ policy: { p: 'none' } })]);
    expect(await stores.reports.latestEnd('o1', 'a.example')).toBe(D0 + DAY - 1);
    expect(await stores.reports.latestEnd('o1', 'b.example')).toBeNull();
    expect(await stores.reports.domains('o1')).toEqual(['a.example']);
  });

  it('a second receipt of the same identity is counted as a duplicate and adds no row, whatever its records', async () => {
    expect(await stores.reports.add(report('r1', 'o1', 0, [row('192.0.2.1', 10)]))).toBe('stored');
    const again = report('r1', 'o1', 0, [row('192.0.2.9', 999)], { id: 'r1-copy' });
    expect(await stores.reports.add(again)).toBe('duplicate');
    expect(await stores.reports.add({ ...again, id: 'r1-copy2' })).toBe('duplicate');
    const counts = await stores.reports.counts('o1', 'a.example', null);
    expect(counts).toEqual({ aggregate: 1, tls: 0, unauthenticated: 0, untrusted: 0, duplicates: 2, messages: 10 });
    // The duplicate's records never reach the digest.
    const entries = await stores.reports.senderDays('o1', 'a.example', DAYS, true);
    expect(entries.map((e) => [e.source, e.messages])).toEqual([['192.0.2.1', 10]]);
    // The same identity in another organisation is that organisation's own first copy.
    expect(await stores.reports.add(report('r1-o2', 'o2', 0, [row('192.0.2.1', 10)], { identity: again.identity }))).toBe('stored');
  });

  it('the revision moves with every report stored in the organisation, never with a duplicate or another organisation\u2019s report', async () => {
    const empty = await stores.reports.revision('o1');
    expect(await stores.reports.add(report('r1', 'o1', 0, [row('192.0.2.1', 10)]))).toBe('stored');
    const one = await stores.reports.revision('o1');
    expect(one).not.toBe(empty);
    expect(await stores.reports.add(report('r1', 'o1', 0, [row('192.0.2.1', 10)], { id: 'r1-copy' }))).toBe('duplicate');
    expect(await stores.reports.add(report('r9', 'o2', 0, [row('192.0.2.1', 10)]))).toBe('stored');
    expect(await stores.reports.revision('o1')).toBe(one);
    // Received at the same instant as the first: the revision still moves.
    expect(await stores.reports.add(report('r2', 'o1', 1, [row('192.0.2.2', 5)]))).toBe('stored');
    const two = await stores.reports.revision('o1');
    expect([empty, one]).not.toContain(two);
    // A batch moves it once its reports are stored (another domain, a TLS report); a batch of duplicates does not.
    const tls = report('t1', 'o1', 2, [], { kind: 'tls', domain: 'b.example', identity: 'tls|t1' });
    const outcomes = await stores.reports.addMany([report('r3', 'o1', 2, [row('192.0.2.3', 1)], { domain: 'b.example' }), tls, report('r1', 'o1', 0, [row('192.0.2.1', 10)], { id: 'r1-again' })]);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : o.reason))).toEqual(['stored', 'stored', 'duplicate']);
    const three = await stores.reports.revision('o1');
    expect([empty, one, two]).not.toContain(three);
    expect(await stores.reports.addMany([{ ...tls, id: 't1-copy' }])).toEqual([{ status: 'fulfilled', value: 'duplicate' }]);
    expect(await stores.reports.revision('o1')).toBe(three);
  });

  describe('addMany: several reports in one transaction, each whole or absent on its own', () => {
    const outcomes = (settled: PromiseSettledResult<unknown>[]) => settled.map((o) => (o.status === 'fulfilled' ? o.value : 'failed'));
    const ids = async () => (await stores.reports.list('o1', { page: 1, limit: 10 })).items.map((r) => r.id).sort();

    it('a duplicate inside the batch is a duplicate of the earlier one: counted, its records never stored', async () => {
      const first = report('r1', 'o1', 0, [row('192.0.2.1', 10)]);
      const copy = report('r1', 'o1', 0, [row('192.0.2.9', 999)], { id: 'r1-copy' });
      expect(outcomes(await stores.reports.addMany([first, report('r2', 'o1', 1, [row('192.0.2.2', 3)]), copy]))).toEqual(['stored', 'stored', 'duplicate']);
      expect(await ids()).toEqual(['r1', 'r2']);
      expect(await stores.reports.counts('o1', 'a.example', null)).toMatchObject({ aggregate: 2, duplicates: 1, messages: 13 });
      expect((await stores.reports.senderDays('o1', 'a.example', DAYS, true)).map((e) => [e.source, e.messages])).toEqual([['192.0.2.1', 10], ['192.0.2.2', 3]]);
    });

    it('a duplicate of a stored report is counted, and the rest of its batch is stored', async () => {
      expect(await stores.reports.add(report('r1', 'o1', 0, [row('192.0.2.1', 10)]))).toBe('stored');
      const copy = report('r1', 'o1', 0, [row('192.0.2.1', 10)], { id: 'r1-copy' });
      expect(outcomes(await stores.reports.addMany([copy, report('r2', 'o1', 1, [row('192.0.2.2', 3)])]))).toEqual(['duplicate', 'stored']);
      expect(await ids()).toEqual(['r1', 'r2']);
      expect(await stores.reports.counts('o1', 'a.example', null)).toMatchObject({ aggregate: 2, duplicates: 1, messages: 13 });
    });

    it('the record limits count what the batch stored before a report: one over the limit in the middle is refused, the ones before and after are stored', { timeout: 120_000 }, async () => {
      // Untrusted reports share MAX_UNTRUSTED_REPORT_RECORDS_PER_DAY (100,000 records a day).
      const untrusted = (id: string, records: number): NewReport =>
        report(id, 'o1', 0, Array.from({ length: records }, (_, i) => row(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, 1)), { identity: `u|${id}`, reporter: 'unauthenticated', origin: origin(null), digest: [] });
      const batch = [untrusted('first', 50_001), untrusted('over', 50_000), untrusted('after', 1)];
      expect(outcomes(await stores.reports.addMany(batch))).toEqual(['stored', 'over-source-limit', 'stored']);
      expect(await ids()).toEqual(['after', 'first']);
      expect(await stores.reports.counts('o1', 'a.example', null)).toMatchObject({ aggregate: 2, untrusted: 2, duplicates: 0, messages: 50_002 });
    });

    it('the record limits count, for each report of a batch, the reports received in its own last day: those stored before the batch and earlier in it', { timeout: 180_000 }, async () => {
      // MAX_UNTRUSTED_REPORT_RECORDS_PER_DAY (100,000): reports received at hours from the origin's receipt time.
      const hour = (h: number) => new Date(Date.parse(origin(null).receivedAt) + h * 3_600_000).toISOString();
      const untrusted = (id: string, records: number, h: number): NewReport =>
        report(id, 'o1', 0, Array.from({ length: records }, (_, i) => row(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, 1)), { identity: `u|${id}`, reporter: 'unauthenticated', origin: { ...origin(null), receivedAt: hour(h) }, digest: [] });
      expect(await stores.reports.add(untrusted('before', 60_000, 0))).toBe('stored');
      // 'late' (25 h) no longer counts 'before'; 'early' (1 h) counts 'before' and 'late' (110,000 with its own): refused;
      // 'last' (25 h) counts 'late' only (90,000 with its own).
      const batch = [untrusted('late', 30_000, 25), untrusted('early', 20_000, 1), untrusted('last', 60_000, 25)];
      expect(outcomes(await stores.reports.addMany(batch))).toEqual(['stored', 'over-source-limit', 'stored']);
      expect(await ids()).toEqual(['before', 'last', 'late']);
    });

    it('a report that fails is rolled back alone: the others of its batch are stored, its identity stays free', async () => {
      if (backend.name === 'memory') return; // memory copies a report in one step: nothing it refuses is half-written
      // A record the database refuses (NOT NULL) after the report's row and its first records are written.
      const records = Array.from({ length: 600 }, (_, i) => row(`192.0.2.${i % 250}`, 1));
      (records[550] as { headerFrom: unknown }).headerFrom = null;
      const settled = await stores.reports.addMany([report('a', 'o1', 0, [row('192.0.2.1', 10)]), report('bad', 'o1', 1, records), report('c', 'o1', 2, [row('192.0.2.3', 4)])]);
      expect(outcomes(settled)).toEqual(['stored', 'failed', 'stored']);
      expect(settled[1]).toMatchObject({ status: 'rejected', reason: expect.any(Error) });
      expect(await ids()).toEqual(['a', 'c']);
      expect(await stores.reports.counts('o1', 'a.example', null)).toMatchObject({ aggregate: 2, messages: 14 });
      // Nothing of the failed report reached the digest, and the same report, whole, is stored.
      expect((await stores.reports.dailyTotals('o1', 'a.example', DAYS)).map((d) => [d.day, d.messages])).toEqual([['2025-03-01', 10], ['2025-03-03', 4]]);
      expect(await stores.reports.add(report('bad', 'o1', 1, records.map((r) => ({ ...r, headerFrom: 'a.example' }))))).toBe('stored');
    });

    it('a report rolled back by its savepoint does not count against the record limits of the reports after it', { timeout: 180_000 }, async () => {
      if (backend.name === 'memory') return; // memory copies a report in one step: nothing it refuses is half-written
      // MAX_UNTRUSTED_REPORT_RECORDS_PER_DAY (100,000): 'bad' writes its row and 55,000 records, then fails (NOT NULL);
      // counted, it would put 'after' (50,000) over the limit.
      const untrusted = (id: string, records: number): NewReport =>
        report(id, 'o1', 0, Array.from({ length: records }, (_, i) => row(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, 1)), { identity: `u|${id}`, reporter: 'unauthenticated', origin: origin(null), digest: [] });
      const bad = untrusted('bad', 60_000);
      (bad.records[55_000] as { headerFrom: unknown }).headerFrom = null;
      expect(outcomes(await stores.reports.addMany([bad, untrusted('after', 50_000)]))).toEqual(['failed', 'stored']);
      expect(await ids()).toEqual(['after']);
    });

    it('refuses a batch larger than MAX_REPORTS_PER_BATCH before storing anything', async () => {
      const many = Array.from({ length: MAX_REPORTS_PER_BATCH + 1 }, (_, i) => report(`m${i}`, 'o1', 0, [row('192.0.2.1', 1)]));
      await expect(stores.reports.addMany(many)).rejects.toThrow(/MAX_REPORTS_PER_BATCH/);
      expect(await ids()).toEqual([]);
    });
  });

  it('tenancy: another organisation sees nothing', async () => {
    await stores.reports.add(report('r1', 'o1', 0, [row('192.0.2.1', 10)]));
    await stores.reports.reject({ id: 'x1', organizationId: 'o1', receivedAt: '2025-03-02T00:00:00.000Z', channel: 'file', fileName: 'bad.xml', sender: null, reason: 'xml-entity', detail: 'a DTD' });
    expect(await stores.reports.list('o2', { page: 1, limit: 10 })).toEqual({ items: [], total: 0 });
    expect(await stores.reports.senderDays('o2', 'a.example', DAYS, true)).toEqual([]);
    expect(await stores.reports.dailyTotals('o2', 'a.example', DAYS)).toEqual([]);
    expect(await stores.reports.documents('o2', 'a.example', 'aggregate', { from: 0, to: D0 * 2 })).toEqual([]);
    expect(await stores.reports.counts('o2', null, null)).toEqual({ aggregate: 0, tls: 0, unauthenticated: 0, untrusted: 0, duplicates: 0, messages: 0 });
    expect(await stores.reports.domains('o2')).toEqual([]);
    expect(await stores.reports.rejections('o2', { page: 1, limit: 10 })).toEqual({ items: [], total: 0 });
    expect(await stores.reports.rejectionCount('o2')).toBe(0);
    expect(await stores.reports.latestEnd('o2', 'a.example')).toBeNull();
  });

  it('merges each report’s digest per source and day as it is stored, trusted and untrusted apart; counts by the reports’ own range', async () => {
    for (let day = 0; day < 5; day++) {
      await stores.reports.add(report(`r${day}`, 'o1', day, [row('192.0.2.1', 10), row('192.0.2.2', 1, { dkimAligned: false, disposition: 'quarantine' })]));
    }
    // A second trusted reporter on day 3: its counts join day 3's entry of 192.0.2.1, sets united.
    await stores.reports.add(report('g3', 'o1', 3, [row('192.0.2.1', 7, { detail: JSON.stringify({ dkim: [{ domain: 'a.example', selector: 's2', result: 'pass' }] }) })], { identity: 'gmx|g3', reporter: 'gmx.net', origin: origin('gmx.net') }));
    // An unauthenticated one (mail anyone could send): kept apart.
    await stores.reports.add(report('y3', 'o1', 3, [row('192.0.2.1', 700), row('203.0.113.9', 50, { dkimAligned: false })], { identity: 'yahoo|y3', reporter: 'unauthenticated', origin: origin(null) }));
    const days = { from: '2025-03-03', to: '2025-03-04' };
    const trusted = await stores.reports.senderDays('o1', 'a.example', days, true);
    expect(trusted.map((e) => [e.day, e.source, e.messages, e.dmarcPass, e.failing, e.selectors])).toEqual([
      ['2025-03-03', '192.0.2.1', 10, 10, 0, ['s1']],
      ['2025-03-03', '192.0.2.2', 1, 0, 1, ['s1']],
      ['2025-03-04', '192.0.2.1', 17, 17, 0, ['s1', 's2']],
      ['2025-03-04', '192.0.2.2', 1, 0, 1, ['s1']],
    ]);
    const untrusted = await stores.reports.senderDays('o1', 'a.example', days, false);
    expect(untrusted.map((e) => [e.day, e.source, e.messages])).toEqual([
      ['2025-03-04', '192.0.2.1', 700],
      ['2025-03-04', '203.0.113.9', 50],
    ]);
    expect(await stores.reports.dailyTotals('o1', 'a.example', days)).toEqual([
      { day: '2025-03-03', trusted: true, messages: 11, dmarcPass: 10, spfAligned: 0, dkimAligned: 10, failing: 1 },
      { day: '2025-03-04', trusted: true, messages: 18, dmarcPass: 17, spfAligned: 0, dkimAligned: 17, failing: 1 },
      { day: '2025-03-04', trusted: false, messages: 750, dmarcPass: 700, spfAligned: 0, dkimAligned: 700, failing: 50 },
    ]);
    expect(await stores.reports.sourceTotals('o1', 'a.example', days, false, 1)).toEqual({ sources: [{ source: '192.0.2.1', messages: 700, dmarcPass: 700, failing: 0 }], count: 2 });
    expect(await stores.reports.counts('o1', 'a.example', { from: D0 + 2 * DAY, to: D0 + 4 * DAY })).toEqual({ aggregate: 4, tls: 0, unauthenticated: 1, untrusted: 1, duplicates: 0, messages: 779 });
    const newest = await stores.reports.list('o1', { page: 1, limit: 2, domain: 'a.example', kind: 'aggregate' });
    expect(newest.total).toBe(7);
    expect(newest.items.map((r) => r.id)).toEqual(['r4', 'y3']);
    expect((await stores.reports.list('o1', { page: 1, limit: 2, domain: 'b.example' })).total).toBe(0);
  });

  it('every domain\u2019s day totals in one read equal each domain\u2019s dailyTotals, by domain then day; the window and tenancy hold', async () => {
    for (let day = 0; day < 3; day++) await stores.reports.add(report(`a${day}`, 'o1', day, [row('192.0.2.1', 10), row('192.0.2.2', 2, { dkimAligned: false })]));
    await stores.reports.add(report('b1', 'o1', 1, [row('198.51.100.7', 4)], { identity: 'b|b1', domain: 'b.example' }));
    await stores.reports.add(report('y1', 'o1', 1, [row('203.0.113.9', 50, { dkimAligned: false })], { identity: 'yahoo|y1', domain: 'b.example', reporter: 'unauthenticated', origin: origin(null) }));
    await stores.reports.add(report('c1', 'o2', 1, [row('192.0.2.1', 3)], { identity: 'c|c1', domain: 'c.example' }));
    const days = { from: '2025-03-02', to: '2025-03-03' };
    const all = await stores.reports.domainDailyTotals('o1', days);
    const each = [
      ...(await stores.reports.dailyTotals('o1', 'a.example', days)).map((t) => ({ domain: 'a.example', ...t })),
      ...(await stores.reports.dailyTotals('o1', 'b.example', days)).map((t) => ({ domain: 'b.example', ...t })),
    ];
    expect(all).toEqual(each);
    expect(all.map((t) => [t.domain, t.day, t.trusted, t.messages, t.failing])).toEqual([
      ['a.example', '2025-03-02', true, 12, 2],
      ['a.example', '2025-03-03', true, 12, 2],
      ['b.example', '2025-03-02', true, 4, 0],
      ['b.example', '2025-03-02', false, 50, 50],
    ]);
    expect(await stores.reports.domainDailyTotals('o3', DAYS)).toEqual([]);
    expect((await stores.reports.domainDailyTotals('o2', DAYS)).map((t) => t.domain)).toEqual(['c.example']);
    // Only the domains asked for: what the full read gives for them.
    expect(await stores.reports.domainDailyTotals('o1', days, ['b.example'])).toEqual(all.filter((t) => t.domain === 'b.example'));
    expect(await stores.reports.domainDailyTotals('o1', days, ['b.example', 'a.example', 'z.example'])).toEqual(all);
    expect(await stores.reports.domainDailyTotals('o1', days, [])).toEqual([]);
  });

  it('arrivals: the reports in all, the latest arrival, and the domains of those received after an arrival, of the organisation alone', async () => {
    expect(await stores.reports.arrivals('o1', null)).toEqual({ total: 0, latest: null, after: [] });
    const at = (n: number) => `2025-03-02T08:0${n}:00.000Z`;
    await stores.reports.add(report('a1', 'o1', 0, [row('192.0.2.1', 1)], { origin: { ...origin('google.com'), receivedAt: at(1) } }));
    await stores.reports.add(report('b1', 'o1', 0, [row('192.0.2.1', 1)], { identity: 'b|b1', domain: 'b.example', origin: { ...origin('google.com'), receivedAt: at(2) } }));
    await stores.reports.add(report('b2', 'o1', 1, [row('192.0.2.1', 1)], { identity: 'b|b2', domain: 'b.example', origin: { ...origin('google.com'), receivedAt: at(3) } }));
    await stores.reports.add(report('c1', 'o2', 0, [row('192.0.2.1', 1)], { identity: 'c|c1', domain: 'c.example', origin: { ...origin('google.com'), receivedAt: at(4) } }));
    expect(await stores.reports.arrivals('o1', null)).toEqual({ total: 3, latest: at(3), after: [] });
    expect(await stores.reports.arrivals('o1', at(1))).toEqual({ total: 3, latest: at(3), after: [{ domain: 'b.example', reports: 2 }] });
    expect(await stores.reports.arrivals('o1', at(0))).toEqual({ total: 3, latest: at(3), after: [{ domain: 'a.example', reports: 1 }, { domain: 'b.example', reports: 2 }] });
    expect(await stores.reports.arrivals('o1', at(3))).toEqual({ total: 3, latest: at(3), after: [] });
  });

  it('keeps TLS reports apart from aggregate ones', async () => {
    const doc = JSON.stringify({ policies: [{ policy: { 'policy-type': 'sts' } }] });
    expect(await stores.reports.add(report('t1', 'o1', 0, [], { kind: 'tls', identity: 'tls|t1', document: doc }))).toBe('stored');
    expect(await stores.reports.add(report('a1', 'o1', 0, [row('192.0.2.1', 3)]))).toBe('stored');
    expect(await stores.reports.documents('o1', 'a.example', 'tls', { from: D0, to: D0 + DAY })).toEqual([doc]);
    expect(await stores.reports.counts('o1', null, null)).toEqual({ aggregate: 1, tls: 1, unauthenticated: 0, untrusted: 0, duplicates: 0, messages: 3 });
    expect((await stores.reports.list('o1', { page: 1, limit: 10, kind: 'tls' })).items.map((r) => r.id)).toEqual(['t1']);
  });

  it('a report that cannot be written leaves nothing behind (one transaction)', async () => {
    // A record the database refuses (NOT NULL) half-way through a report of 1,200 records.
    const records = Array.from({ length: 1_200 }, (_, i) => row(`192.0.2.${i % 250}`, 1));
    (records[1_100] as { headerFrom: unknown }).headerFrom = null;
    if (backend.name === 'memory') return; // memory copies the report in one step; there is nothing half-written to test
    await expect(stores.reports.add(report('big', 'o1', 0, records))).rejects.toThrow();
    expect(await stores.reports.list('o1', { page: 1, limit: 10 })).toEqual({ items: [], total: 0 });
    expect(await stores.reports.senderDays('o1', 'a.example', DAYS, true)).toEqual([]);
    // The identity is free: the same report, whole, is stored.
    expect(await stores.reports.add(report('big', 'o1', 0, records.map((r) => ({ ...r, headerFrom: 'a.example' }))))).toBe('stored');
    expect((await stores.reports.counts('o1', null, null)).messages).toBe(1_200);
    expect((await stores.reports.dailyTotals('o1', 'a.example', DAYS)).map((d) => d.messages)).toEqual([1_200]);
  });

  it('routing: the organisations that added the domain (not deleted ones), and every organisation', async () => {
    const at = '2025-01-01T00:00:00.000Z';
    const domain = (id: string, organizationId: string, name: string): Domain => ({
      id, organizationId, domain: name, status: 'verified', userVerifiedDomain: true, systemVerified: true, customReturnPath: null, trackingSubdomain: null,
      isClickTrackingEnabled: false, isOpenTrackingEnabled: false, tls: 'opportunistic', isTrackingDomain: false, isSendingEmailEnabled: true,
      isReceivingEmailEnabled: false, verificationFailedReason: null, dnsRecords: [], lastVerifiedAt: null, createdAt: at, updatedAt: at, deletedAt: null,
    });
    expect(await stores.reports.routing('a.example')).toEqual({ withDomain: [], organizations: [] });
    await stores.apiKeys.addOrganization({ id: 'o2', name: 'Two' });
    await stores.apiKeys.addOrganization({ id: 'o1', name: 'One' });
    await stores.domains.add(domain('d1', 'o1', 'a.example'));
    await stores.domains.add(domain('d2', 'o2', 'a.example'));
    await stores.domains.add(domain('d3', 'o2', 'b.example'));
    await stores.domains.softDelete('o2', 'd2', at);
    expect(await stores.reports.routing('a.example')).toEqual({ withDomain: ['o1'], organizations: ['o1', 'o2'] });
    expect(await stores.reports.routing('b.example')).toEqual({ withDomain: ['o2'], organizations: ['o1', 'o2'] });
    expect(await stores.reports.routing('c.example')).toEqual({ withDomain: [], organizations: ['o1', 'o2'] });
  });

  it('contested is a fact of the store: two unauthenticated reports under one identity base are marked on whatever page each is', async () => {
    const forged = (id: string, day: number, base: string) =>
      report(id, 'o1', day, [row('192.0.2.1', 1 + day)], { identity: `unauth|${id}`, reporter: 'unauthenticated', origin: { ...origin(null), identityBase: base } });
    await stores.reports.add(forged('real', 0, 'google.com|rid|1'));
    await stores.reports.add(forged('other', 1, 'google.com|other|2'));
    await stores.reports.add(forged('fake', 2, 'google.com|rid|1'));
    await stores.reports.add(report('auth', 'o1', 3, [row('192.0.2.1', 1)]));
    // One report a page: the two that collide are never on the same page.
    const marks: [string, boolean][] = [];
    for (let page = 1; page <= 4; page++) for (const r of (await stores.reports.list('o1', { page, limit: 1 })).items) marks.push([r.id, r.contested]);
    expect(marks).toEqual([
      ['auth', false],
      ['fake', true],
      ['other', false],
      ['real', true],
    ]);
    // Another organisation's report under the same base contests nothing here.
    await stores.reports.add({ ...forged('o2-copy', 4, 'google.com|other|2'), organizationId: 'o2' });
    expect((await stores.reports.list('o1', { page: 1, limit: 10 })).items.find((r) => r.id === 'other')?.contested).toBe(false);
  });

  /** Reports to store, as (id, day, trusted, records): the roll-up must equal a recomputation from their rows. */
  const ROLLUP_CASES: { name: string; reports: { id: string; day: number; trusted: boolean; records: ReportRecordRow[] }[] }[] = [
    { name: 'one report', reports: [{ id: 'a', day: 0, trusted: true, records: [row('192.0.2.1', 3), row('192.0.2.2', 4, { dkimAligned: false })] }] },
    {
      name: 'the same sources on one day from several reporters',
      reports: [
        { id: 'a', day: 1, trusted: true, records: [row('192.0.2.1', 3), row('192.0.2.1', 2, { spfAligned: true })] },
        { id: 'b', day: 1, trusted: true, records: [row('192.0.2.1', 5, { detail: JSON.stringify({ dkim: [{ domain: 'a.example', selector: 's9', result: 'fail' }] }), dkimAligned: false })] },
        { id: 'c', day: 1, trusted: true, records: [row('192.0.2.3', 1, { disposition: 'reject', dkimAligned: false })] },
      ],
    },
    {
      name: 'days, trusted and untrusted apart',
      reports: [
        { id: 'a', day: 0, trusted: true, records: [row('192.0.2.1', 1)] },
        { id: 'b', day: 2, trusted: false, records: [row('192.0.2.1', 9, { dkimAligned: false })] },
        { id: 'c', day: 2, trusted: true, records: [row('2001:db8::1', 6), row('192.0.2.1', 1)] },
        { id: 'd', day: 4, trusted: false, records: [row('198.51.100.7', 2)] },
      ],
    },
    {
      name: 'one source over days, its sets and failing signatures changing (equal rests counted once by the store)',
      reports: [0, 1, 2, 3].map((day) => ({
        id: `s${day}`,
        day,
        trusted: true,
        records: [
          row('192.0.2.1', 2 + day, { detail: JSON.stringify({ dkim: [{ domain: 'a.example', selector: `s${day % 2}`, result: 'pass' }] }) }),
          row('192.0.2.1', 3, { dkimAligned: false, detail: JSON.stringify({ dkim: [{ domain: 'a.example', selector: 'old', result: 'fail' }] }) }),
        ],
      })),
    },
  ];

  it.each(ROLLUP_CASES)('the per-source, per-day roll-up equals a recomputation from the raw rows: $name', async ({ reports }) => {
    for (const r of reports) {
      const stored = report(r.id, 'o1', r.day, r.records, r.trusted ? {} : { identity: `u|${r.id}`, reporter: 'unauthenticated', origin: { ...origin(null), channel: 'smtp' } });
      expect(stored.trusted).toBe(r.trusted);
      expect(await stores.reports.add(stored)).toBe('stored');
    }
    for (const trusted of [true, false]) {
      const expected = mergeSenderDigests(reports.filter((r) => r.trusted === trusted).flatMap((r) => digestOf(r.records, D0 + r.day * DAY)), 'a.example');
      expect(await stores.reports.senderDays('o1', 'a.example', DAYS, trusted)).toEqual(expected);
      const bySource = new Map<string, { source: string; messages: number; dmarcPass: number; failing: number }>();
      for (const e of expected) {
        const t = bySource.get(e.source) ?? { source: e.source, messages: 0, dmarcPass: 0, failing: 0 };
        bySource.set(e.source, { source: e.source, messages: t.messages + e.messages, dmarcPass: t.dmarcPass + e.dmarcPass, failing: t.failing + e.failing });
      }
      const sources = [...bySource.values()].sort((a, b) => b.messages - a.messages || (a.source < b.source ? -1 : 1));
      expect(await stores.reports.sourceTotals('o1', 'a.example', DAYS, trusted, 100)).toEqual({ sources, count: sources.length });
      // The window's roll-up per source (what show and the dashboard read) summarises as every day's entries do.
      const window = await stores.reports.senderWindow('o1', 'a.example', DAYS, trusted);
      expect(window.filter((e) => e.messages > 0).map((e) => e.source)).toEqual(sources.map((s) => s.source).sort());
      const options = { domain: 'a.example', days: 30, now: new Date((D0 + 10 * DAY) * 1000) };
      expect(summariseDigestSenders(window, options)).toEqual(summariseDigestSenders(expected, options));
    }
    const days = new Map<string, { day: string; trusted: boolean; messages: number; dmarcPass: number; spfAligned: number; dkimAligned: number; failing: number }>();
    for (const r of reports) {
      for (const e of digestOf(r.records, D0 + r.day * DAY)) {
        const key = `${e.day} ${r.trusted}`;
        const t = days.get(key) ?? { day: e.day, trusted: r.trusted, messages: 0, dmarcPass: 0, spfAligned: 0, dkimAligned: 0, failing: 0 };
        days.set(key, { ...t, messages: t.messages + e.messages, dmarcPass: t.dmarcPass + e.dmarcPass, spfAligned: t.spfAligned + e.spfAligned, dkimAligned: t.dkimAligned + e.dkimAligned, failing: t.failing + e.failing });
      }
    }
    const totals = [...days.values()].sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : Number(b.trusted) - Number(a.trusted)));
    expect(await stores.reports.dailyTotals('o1', 'a.example', DAYS)).toEqual(totals);
  });

  it('the window read by blocks of days equals every day summed: windows across block edges, a late report for an old day, the per-day source cap, trusted and untrusted apart', async () => {
    const dayText = (day: number) => new Date((D0 + day * DAY) * 1000).toISOString().slice(0, 10);
    const untrusted = (id: string): Partial<NewReport> => ({ identity: `u|${id}`, reporter: 'unauthenticated', origin: { ...origin(null), channel: 'smtp' } });
    const failing = (selector: string) => ({ dkimAligned: false, detail: JSON.stringify({ dkim: [{ domain: 'a.example', selector, result: 'fail' }] }) });
    // 80 days from 2025-03-01 (day 52 of an aligned block of 64: the window crosses blocks of every size).
    for (let day = 0; day < 80; day += 3) {
      const records = [row(`192.0.2.${day % 7}`, day + 1, { detail: JSON.stringify({ dkim: [{ domain: 'a.example', selector: `s${day % 3}`, result: 'pass' }] }) }), row(`192.0.2.${(day % 5) + 20}`, 2, failing(`k${day % 2}`))];
      expect(await stores.reports.add(report(`t${day}`, 'o1', day, records))).toBe('stored');
      if (day % 9 === 0) expect(await stores.reports.add(report(`u${day}`, 'o1', day, [row(`198.51.100.${day % 4}`, 3, failing('x'))], untrusted(`u${day}`)))).toBe('stored');
    }
    const windows: DayRange[] = [
      { from: dayText(0), to: dayText(79) },
      { from: dayText(5), to: dayText(70) },
      { from: dayText(12), to: dayText(75) },
      { from: dayText(12), to: dayText(12) },
      { from: dayText(11), to: dayText(11) },
      { from: dayText(30), to: dayText(44) },
    ];
    // The windows do read blocks of several sizes, across the edge of a block of 64 days (day 12).
    expect(new Set(windows.flatMap((w) => dayBlocks(w).map((b) => b.size)))).toEqual(new Set([1, 2, 4, 8, 16, 32, 64]));
    const check = async () => {
      for (const window of windows) {
        for (const trusted of [true, false]) {
          const everyDay = await stores.reports.senderDays('o1', 'a.example', window, trusted);
          const rolled = await stores.reports.senderWindow('o1', 'a.example', window, trusted);
          const options = { domain: 'a.example', days: 366, now: new Date((D0 + 100 * DAY) * 1000) };
          expect(summariseDigestSenders(rolled, options)).toEqual(summariseDigestSenders(everyDay, options));
          // Per source: the counts summed, and the first and last day, as every day gives them.
          const perSource = (entries: readonly SenderDigestEntry[]) => {
            const out = new Map<string, [string, string, number, number, number, number, number]>();
            for (const e of entries) {
              const t = out.get(e.source) ?? [e.day, e.day, 0, 0, 0, 0, 0];
              out.set(e.source, [e.day < t[0] ? e.day : t[0], e.day > t[1] ? e.day : t[1], t[2] + e.messages, t[3] + e.dmarcPass, t[4] + e.spfAligned, t[5] + e.dkimAligned, t[6] + e.failing]);
            }
            return [...out.entries()].sort();
          };
          expect(perSource(rolled)).toEqual(perSource(everyDay));
          if (window === windows[0]) expect(everyDay.length).toBeGreaterThan(0);
        }
        // The day totals kept as reports arrive equal the day roll-up summed per day.
        const totals = new Map<string, { day: string; trusted: boolean; messages: number; dmarcPass: number; spfAligned: number; dkimAligned: number; failing: number }>();
        for (const trusted of [true, false]) {
          for (const e of await stores.reports.senderDays('o1', 'a.example', window, trusted)) {
            const t = totals.get(`${e.day} ${trusted}`) ?? { day: e.day, trusted, messages: 0, dmarcPass: 0, spfAligned: 0, dkimAligned: 0, failing: 0 };
            totals.set(`${e.day} ${trusted}`, { ...t, messages: t.messages + e.messages, dmarcPass: t.dmarcPass + e.dmarcPass, spfAligned: t.spfAligned + e.spfAligned, dkimAligned: t.dkimAligned + e.dkimAligned, failing: t.failing + e.failing });
          }
        }
        expect(await stores.reports.dailyTotals('o1', 'a.example', window)).toEqual([...totals.values()].sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : Number(b.trusted) - Number(a.trusted))));
      }
    };
    await check();
    // A late report for an old day (its blocks were read above): a new source, a new selector, and more of a source already held.
    expect(await stores.reports.add(report('late', 'o1', 3, [row('203.0.113.9', 40, failing('late')), row('192.0.2.3', 7, { detail: JSON.stringify({ dkim: [{ domain: 'a.example', selector: 'new', result: 'pass' }] }) })]))).toBe('stored');
    expect(await stores.reports.add(report('late-u', 'o1', 13, [row('198.51.100.200', 5)], untrusted('late-u')))).toBe('stored');
    await check();
    const late = (await stores.reports.senderWindow('o1', 'a.example', windows[0]!, true)).find((e) => e.source === '203.0.113.9');
    expect(late?.messages).toBe(40);
    // A day past its cap of sources: those beyond it summed into one entry, in the blocks as in the days.
    const many = Array.from({ length: MAX_DIGEST_SOURCES_PER_DAY + 5 }, (_, i) => row(`10.0.${Math.floor(i / 250)}.${i % 250}`, 1 + (i % 3)));
    expect(await stores.reports.add(report('capped', 'o1', 40, many))).toBe('stored');
    await check();
    expect((await stores.reports.senderDays('o1', 'a.example', { from: dayText(40), to: dayText(40) }, true)).some((e) => e.source === OTHER_SOURCES)).toBe(true);
    expect((await stores.reports.senderWindow('o1', 'a.example', windows[0]!, true)).some((e) => e.source === OTHER_SOURCES)).toBe(true);
  });

  it('freshenBlocks builds ahead what the window reads: a second call, and the read after it, build nothing; a late report makes its blocks stale again', async () => {
    const dayText = (day: number) => new Date((D0 + day * DAY) * 1000).toISOString().slice(0, 10);
    for (let day = 0; day < 40; day += 2) expect(await stores.reports.add(report(`t${day}`, 'o1', day, [row(`192.0.2.${day % 5}`, day + 1)]))).toBe('stored');
    const window: DayRange = { from: dayText(0), to: dayText(39) };
    const before = await stores.reports.senderWindow('o1', 'a.example', window, true);
    // senderWindow above built the trusted blocks; the untrusted ones (no days) are built empty here on SQL.
    await stores.reports.freshenBlocks('o1', 'a.example', window);
    expect(await stores.reports.freshenBlocks('o1', 'a.example', window)).toBe(0);
    expect(await stores.reports.add(report('late', 'o1', 5, [row('203.0.113.9', 40)]))).toBe('stored');
    const built = await stores.reports.freshenBlocks('o1', 'a.example', window);
    // SQL: the blocks holding day 5 (a path down the halves) and nothing else; memory keeps no blocks.
    if (backend.name === 'memory') expect(built).toBe(0);
    else expect(built).toBeGreaterThan(0);
    expect(await stores.reports.freshenBlocks('o1', 'a.example', window)).toBe(0);
    const after = await stores.reports.senderWindow('o1', 'a.example', window, true);
    expect(after.find((e) => e.source === '203.0.113.9')?.messages).toBe(40);
    expect(after.filter((e) => e.source !== '203.0.113.9')).toEqual(before);
    expect(await stores.reports.freshenBlocks('o1', 'a.example', { from: dayText(9), to: dayText(1) })).toBe(0);
  });

  it('the stored digest is what merging whole entries gives, byte for byte: rests equal, within, beyond the held ones, additive maps, the lesser word, new sources, the cap, several days, batches', { timeout: 120_000 }, async () => {
    // A fixed pseudo-random sequence (the same every run): rests drawn from small pools, so that they repeat, nest and differ.
    let seed = 7;
    const next = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648), seed % n);
    const some = (pool: readonly string[]) => pool.filter(() => next(3) === 0);
    const dayText = (day: number) => new Date((D0 + day * DAY) * 1000).toISOString().slice(0, 10);
    const entry = (day: number, source: string): SenderDigestEntry => {
      const messages = 1 + next(40);
      const plain = next(2) === 0;
      return {
        ...emptyDigestEntry(source, dayText(day)),
        messages,
        dmarcPass: next(messages + 1),
        spfAligned: next(messages + 1),
        dkimAligned: next(messages + 1),
        failing: next(messages + 1),
        selectors: plain ? ['s1'] : some(['s0', 's1', 's2']),
        dkimDomains: plain ? ['a.example'] : some(['a.example', 'esp.example']),
        spfDomains: ['a.example'],
        verified: plain ? [] : some(['a.example s0', 'a.example s1']),
        ownFailed: next(5) === 0 ? [['a.example s2', next(2) === 0 ? 'fail' : 'neutral']] : [],
        ownFailedNoSelector: next(7) === 0,
        broken: next(6) === 0 ? [['a.example s2', 1 + next(3)]] : [],
        brokenNoSelector: next(8) === 0 ? 1 : 0,
        forwardedFailing: next(6) === 0 ? 1 + next(4) : 0,
        unalignedDkimPass: next(4) === 0 ? (next(2) === 0 ? 'esp.example' : 'bulk.example') : null,
        unalignedSpfPass: null,
        ownSpfFailed: next(9) === 0 ? 'a.example' : null,
      };
    };
    const sources = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    const pool = sources(30, '192.0.2.');
    const digestOfDays = (days: number[], count: number) => days.flatMap((day) => pool.filter(() => next(30) < count).map((source) => entry(day, source)));
    const untrusted = (id: string): Partial<NewReport> => ({ identity: `u|${id}`, reporter: 'unauthenticated', origin: { ...origin(null), channel: 'smtp' } });
    const sequence: NewReport[][] = [];
    for (let i = 0; i < 24; i++) {
      const digest = digestOfDays(i % 5 === 0 ? [0, 1] : [next(3)], 12);
      sequence.push([report(`d${i}`, 'o1', 0, [row('192.0.2.1', 1)], { digest, ...(i % 4 === 3 ? untrusted(`d${i}`) : {}) })]);
    }
    // A day past its cap (read and written in chunks), then more sources for it: summed into the held OTHER_SOURCES.
    const capped = sources(MAX_DIGEST_SOURCES_PER_DAY + 3, '10.0.0.').map((source) => entry(2, source));
    sequence.push([report('capped', 'o1', 0, [row('192.0.2.1', 1)], { digest: [...capped, ...digestOfDays([2], 30)] })]);
    sequence.push([report('over', 'o1', 0, [row('192.0.2.1', 1)], { digest: [...sources(8, '10.9.0.').map((source) => entry(2, source)), ...digestOfDays([2], 20)] })]);
    // Batches: a duplicate inside one, and reports of the same day and sources one after the other.
    const batch = Array.from({ length: 5 }, (_, i) => report(`b${i}`, 'o1', 0, [row('192.0.2.1', 1)], { digest: digestOfDays([1], 15) }));
    sequence.push([...batch, { ...batch[1]!, id: 'b1-copy' }]);
    // The reference: each report's entries merged into the whole held entries (counts and rests) as mergeDigestDay merges them.
    const expected = new Map<string, SenderDigestEntry>();
    const expectedFor = (trusted: boolean) => [...expected.entries()].filter(([key]) => key.startsWith(`${trusted} `)).map(([, e]) => e);
    const seen = new Set<string>();
    for (const reports of sequence) {
      const outcomes = reports.length === 1 ? [{ status: 'fulfilled', value: await stores.reports.add(reports[0]!) }] : await stores.reports.addMany(reports);
      reports.forEach((r, i) => {
        const stored = !seen.has(r.identity);
        seen.add(r.identity);
        expect(outcomes[i]).toEqual({ status: 'fulfilled', value: stored ? 'stored' : 'duplicate' });
        if (!stored) return;
        for (const day of new Set(r.digest.map((e) => e.day))) {
          const prefix = `${r.trusted} ${day} `;
          const held = new Map([...expected].filter(([key]) => key.startsWith(prefix)).map(([, e]) => [e.source, e]));
          for (const e of mergeDigestDay(r.digest.filter((e) => e.day === day), held, () => held.size, 'a.example')) expected.set(`${prefix}${e.source}`, e);
        }
      });
    }
    const order = (a: SenderDigestEntry, b: SenderDigestEntry) => (a.day < b.day ? -1 : a.day > b.day ? 1 : a.source < b.source ? -1 : a.source > b.source ? 1 : 0);
    for (const trusted of [true, false]) {
      const want = expectedFor(trusted).sort(order);
      expect(want.length).toBeGreaterThan(trusted ? MAX_DIGEST_SOURCES_PER_DAY : 10);
      expect(await stores.reports.senderDays('o1', 'a.example', DAYS, trusted)).toEqual(want);
    }
    expect(expected.get(`true ${dayText(2)} ${OTHER_SOURCES}`)?.messages).toBeGreaterThan(0);
    if (opened.sql === undefined) return;
    // The rows themselves, byte for byte: the counts and the rest's JSON text.
    const { rows } = await sql<{ day: string; trusted: number; source: string; messages: number | string; dmarc_pass: number | string; spf_aligned: number | string; dkim_aligned: number | string; failing: number | string; entry: string }>`
      select day, trusted, source, messages, dmarc_pass, spf_aligned, dkim_aligned, failing, entry from report_sender_days where organization_id = 'o1' order by trusted desc, day, source`.execute(opened.sql.db);
    const want = [true, false].flatMap((trusted) => expectedFor(trusted).sort(order).map((e) => [e.day, trusted ? 1 : 0, e.source, e.messages, e.dmarcPass, e.spfAligned, e.dkimAligned, e.failing, digestRestJson(e)]));
    expect(rows.map((r) => [r.day, Number(r.trusted), r.source, Number(r.messages), Number(r.dmarc_pass), Number(r.spf_aligned), Number(r.dkim_aligned), Number(r.failing), r.entry])).toEqual(want);
  });

  it('keeps refused files with their reason, newest first', async () => {
    await stores.reports.reject({ id: 'x1', organizationId: 'o1', receivedAt: '2025-03-02T00:00:00.000Z', channel: 'file', fileName: 'bad.xml', sender: null, reason: 'xml-entity', detail: 'the file declares a DTD' });
    await stores.reports.reject({ id: 'x2', organizationId: 'o1', receivedAt: '2025-03-03T00:00:00.000Z', channel: 'smtp', fileName: 'r.xml.gz', sender: 'a@b.example', reason: 'truncated', detail: 'the gzip stream ends early' });
    const page = await stores.reports.rejections('o1', { page: 1, limit: 10 });
    expect(page.total).toBe(2);
    expect(page.items.map((r) => [r.id, r.reason, r.channel, r.sender])).toEqual([
      ['x2', 'truncated', 'smtp', 'a@b.example'],
      ['x1', 'xml-entity', 'file', null],
    ]);
    expect(await stores.reports.rejectionCount('o1')).toBe(2);
  });
});
