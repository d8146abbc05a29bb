/**
 * The background refresh of the blocks of days (src/ingest/block-refresher.ts, issue 41): reports
 * stored through the ReportWriter leave their domain's blocks for the dashboard's windows built once
 * the refresh settles, so the read builds nothing; a refresh that fails touches neither ingest nor
 * the figures read; close awaits the running refresh and drops the waiting ones; a domain touched
 * many times is refreshed once, and at most BLOCK_REFRESHES_AT_ONCE domains at once; the store's own
 * close stops the refresh first (nothing touches the store after it, nothing is logged).
 */
import { digestReports, type AggregateReport } from '@spoof-checker/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { BLOCK_REFRESHES_AT_ONCE, BlockRefresher } from '../../src/ingest/block-refresher.js';
import { ReportWriter } from '../../src/ingest/report-writer.js';
import { createMemoryStores } from '../../src/store/memory.js';
import { MemoryReportStore } from '../../src/store/reports-memory.js';
import type { DayRange, NewReport, ReportStore } from '../../src/store/reports.js';
import { REPORT_WINDOWS, reportWindow } from '../../src/summaries/summary.js';
import { sqliteBackend, type OpenedBackend } from '../store/backends.js';

const DAY = 86_400;
/** The tests' today: 2025-06-01T12:00:00Z. */
const NOW = new Date(Date.UTC(2025, 5, 1, 12));
const today = Math.floor(NOW.getTime() / 1000 / DAY) * DAY;

/** A trusted aggregate report of a.example for the day `daysAgo` before today, `messages` from one source. */
function report(id: string, daysAgo: number, source: string, messages: number, domain = 'a.example'): NewReport {
  const begin = today - daysAgo * DAY;
  const aggregate = {
    kind: 'aggregate',
    dateRange: { begin, end: begin + DAY - 1 },
    policyPublished: { domain },
    records: [{ sourceIp: source, count: messages, headerFrom: domain, disposition: 'none', dkimResult: 'pass', spfResult: 'fail', envelopeFrom: null, envelopeTo: null, auth: { dkim: [{ domain, selector: 's1', result: 'pass' }], spf: [] }, reasons: [] }],
  } as unknown as AggregateReport;
  return {
    id,
    organizationId: 'o1',
    kind: 'aggregate',
    identity: `google.com|${id}|${begin}`,
    domain,
    begin,
    end: begin + DAY - 1,
    reporter: 'google.com',
    orgName: 'google.com',
    reportId: id,
    origin: { channel: 'file', fileName: null, sender: null, messageId: null, authenticatedDomain: 'google.com', dkim: 'pass', spf: 'pass', dmarc: 'pass', receivedAt: NOW.toISOString() },
    document: '{}',
    records: [{ sourceIp: source, count: messages, headerFrom: domain, disposition: 'none', dkimAligned: true, spfAligned: false, detail: JSON.stringify({ dkim: [{ domain, selector: 's1', result: 'pass' }] }) }],
    trusted: true,
    digest: digestReports([aggregate], domain).senders,
  };
}

/** The dashboard's windows as of NOW. */
const windows: DayRange[] = REPORT_WINDOWS.map((days) => reportWindow(days, NOW).dayRange);

/** The messages of a window's roll-up, by source (a source's entries summed: its rests come as entries of no messages). */
async function messagesBySource(store: ReportStore, days: DayRange): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const e of await store.senderWindow('o1', 'a.example', days, true)) out[e.source] = (out[e.source] ?? 0) + e.messages;
  return out;
}

let opened: OpenedBackend | undefined;
const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
  await opened?.dispose();
  opened = undefined;
});

/** A SQLite report store and a writer on it whose refresh waits `quietMs` (closed after the test). */
async function sqliteWriter(quietMs = 20, wrap: (store: ReportStore) => ReportStore = (s) => s, log: string[] = []): Promise<{ store: ReportStore; writer: ReportWriter }> {
  opened = await sqliteBackend.open();
  const store = wrap(opened.stores.reports);
  const writer = new ReportWriter(store, { quietMs, now: () => NOW, log: (m) => log.push(m) });
  closing.push(() => writer.close());
  return { store: opened.stores.reports, writer };
}

describe('BlockRefresher', () => {
  it('after reports are stored through the writer and the refresh settles, the blocks of every window are current: the read builds none', async () => {
    const { store, writer } = await sqliteWriter();
    const stored = await Promise.all(Array.from({ length: 40 }, (_, i) => writer.add(report(`r${i}`, (i * 7) % 88, `192.0.2.${i % 5}`, i + 1))));
    expect(stored.every((o) => o === 'stored')).toBe(true);
    await writer.refresher.settled();
    expect(writer.refresher.counters.failed).toBe(0);
    expect(writer.refresher.counters.built).toBeGreaterThan(0);
    // What senderWindow does before reading (the same freshen): nothing left to build for any window.
    for (const days of windows) expect(await store.freshenBlocks('o1', 'a.example', days)).toBe(0);
    // A late report: stale again until the refresh after it settles.
    expect(await writer.add(report('late', 3, '203.0.113.9', 50))).toBe('stored');
    await writer.refresher.settled();
    for (const days of windows) expect(await store.freshenBlocks('o1', 'a.example', days)).toBe(0);
    expect((await messagesBySource(store, windows[0]!))['203.0.113.9']).toBe(50);
  });

  it('a refresh that fails leaves ingest alone and the figures right: the read builds what is stale', async () => {
    const log: string[] = [];
    const failing = (s: ReportStore): ReportStore =>
      new Proxy(s, { get: (target, p, receiver) => (p === 'freshenBlocks' ? () => Promise.reject(new Error('the disk is full')) : Reflect.get(target, p, receiver)) });
    const { store, writer } = await sqliteWriter(20, failing, log);
    expect(await writer.add(report('a', 2, '192.0.2.1', 5))).toBe('stored');
    expect(await writer.add(report('b', 40, '192.0.2.1', 7))).toBe('stored');
    await writer.refresher.settled();
    expect(writer.refresher.counters.failed).toBeGreaterThan(0);
    expect(log.some((m) => m.includes('a.example') && m.includes('the disk is full'))).toBe(true);
    // Ingest goes on, and the window read builds its blocks itself.
    expect(await writer.add(report('c', 1, '192.0.2.2', 3))).toBe('stored');
    expect(await messagesBySource(store, windows[2]!)).toEqual({ '192.0.2.1': 12, '192.0.2.2': 3 });
    expect(await messagesBySource(store, windows[0]!)).toEqual({ '192.0.2.1': 5, '192.0.2.2': 3 });
  });

  it('a domain touched many times is refreshed once; at most BLOCK_REFRESHES_AT_ONCE domains at once', async () => {
    const store = new MemoryReportStore();
    let open = 0;
    let most = 0;
    const refreshed: string[] = [];
    store.freshenBlocks = async (_organizationId, domain) => {
      most = Math.max(most, ++open);
      await new Promise((resolve) => setImmediate(resolve));
      open -= 1;
      refreshed.push(domain);
      return 0;
    };
    // A long pause: nothing starts before flush.
    const refresher = new BlockRefresher(store, { quietMs: 60_000, now: () => NOW });
    closing.push(() => refresher.close());
    for (let i = 0; i < 10; i++) refresher.touch('o1', 'a.example');
    for (let i = 0; i < BLOCK_REFRESHES_AT_ONCE + 2; i++) refresher.touch('o1', `d${i}.example`);
    expect(refreshed).toEqual([]);
    await refresher.flush();
    // Each domain once, for each of the dashboard's windows.
    expect(refresher.counters.refreshes).toBe(BLOCK_REFRESHES_AT_ONCE + 3);
    expect(refreshed.filter((d) => d === 'a.example')).toHaveLength(REPORT_WINDOWS.length);
    expect(most).toBe(BLOCK_REFRESHES_AT_ONCE);
  });

  it('close awaits the running refresh and drops the waiting ones; nothing starts after it', async () => {
    const store = new MemoryReportStore();
    let release: () => void = () => {};
    const started: string[] = [];
    store.freshenBlocks = async (_organizationId, domain) => {
      started.push(domain);
      await new Promise<void>((resolve) => (release = resolve));
      return 0;
    };
    const refresher = new BlockRefresher(store, { quietMs: 0, now: () => NOW });
    refresher.touch('o1', 'a.example');
    while (started.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    refresher.touch('o1', 'a.example');
    let closed = false;
    const stopping = refresher.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(closed).toBe(false);
    release();
    await stopping;
    // The running refresh stopped after its window; the one waiting never ran, and a touch after close is ignored.
    refresher.touch('o1', 'b.example');
    await refresher.settled();
    expect(started).toEqual(['a.example']);
    expect(refresher.counters.refreshes).toBe(1);
  });

  it('closing the store stops its refresh: the waiting refresh never runs against the closed store, nothing is logged', async () => {
    const log: string[] = [];
    // A long pause: the refresh is still waiting when the store closes.
    const { writer } = await sqliteWriter(60_000, (s) => s, log);
    expect(await writer.add(report('a', 2, '192.0.2.1', 5))).toBe('stored');
    await opened!.stores.close();
    // Were it still waiting, this would run it against the closed store (and log its failure).
    await writer.refresher.flush();
    expect(writer.refresher.counters).toEqual({ refreshes: 0, built: 0, failed: 0, stopped: 0 });
    expect(log).toEqual([]);
  });

  it("the store's close awaits the running refresh before it ends; one failing once the stop began ends quietly", async () => {
    const stores = createMemoryStores();
    let release: () => void = () => {};
    const log: string[] = [];
    stores.reports.freshenBlocks = async () => {
      await new Promise<void>((resolve) => (release = resolve));
      throw new Error('the store is closed (the service is shutting down)');
    };
    const refresher = new BlockRefresher(stores.reports, { quietMs: 0, now: () => NOW, log: (m) => log.push(m) });
    refresher.touch('o1', 'a.example');
    while (refresher.counters.refreshes === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    let closed = false;
    const closing = stores.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(closed).toBe(false);
    release();
    await closing;
    expect(refresher.counters).toMatchObject({ refreshes: 1, failed: 0, stopped: 1 });
    expect(log).toEqual([]);
    // A refresher made on a store already closed is stopped at once.
    const late = new BlockRefresher(stores.reports, { quietMs: 0, now: () => NOW });
    late.touch('o1', 'b.example');
    await late.settled();
    expect(late.counters.refreshes).toBe(0);
  });
});
