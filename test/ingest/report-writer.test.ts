/**
 * The ingest path's writer (src/ingest/report-writer.ts): reports that arrive while a batch is
 * written go together in the next one (at most MAX_REPORTS_PER_BATCH), a lone report is written at
 * once, and a report that fails fails alone: its caller gets the error, the others their outcome.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { REPORT_WRITER_BATCHES_AT_ONCE, REPORT_WRITER_GATHER_MS, ReportWriter, reportWriter } from '../../src/ingest/report-writer.js';
import { MemoryReportStore } from '../../src/store/reports-memory.js';
import { MAX_REPORTS_PER_BATCH, type AddReportOutcome, type NewReport } from '../../src/store/reports.js';

const report = (id: string, identity = id, domain = 'a.example'): NewReport => ({
  id,
  organizationId: 'o1',
  kind: 'aggregate',
  identity,
  domain,
  begin: 1_740_787_200,
  end: 1_740_873_599,
  reporter: 'google.com',
  orgName: 'google.com',
  reportId: id,
  origin: { channel: 'file', fileName: null, sender: null, messageId: null, authenticatedDomain: null, dkim: 'none', spf: 'none', dmarc: 'none', receivedAt: '2025-03-02T00:00:00.000Z' },
  document: '{}',
  records: [],
  trusted: true,
  digest: [],
});

/** A memory store that records the size of every batch it is given. */
function recordingStore(): { store: MemoryReportStore; batches: number[] } {
  const store = new MemoryReportStore();
  const batches: number[] = [];
  const addMany = store.addMany.bind(store);
  store.addMany = (reports) => {
    batches.push(reports.length);
    return addMany(reports);
  };
  return { store, batches };
}

describe('ReportWriter', () => {
  it('writes a lone report at once, and groups what arrives while a batch is written, in order', async () => {
    const { store, batches } = recordingStore();
    const writer = new ReportWriter(store);
    expect(await writer.add(report('r0'))).toBe('stored');
    expect(batches).toEqual([1]);
    // Arriving together: one batch; the copy of r1 inside it is a duplicate of the earlier one.
    const outcomes = await Promise.all([writer.add(report('r1')), writer.add(report('r2')), writer.add(report('r1-copy', 'r1'))]);
    expect(outcomes).toEqual<AddReportOutcome[]>(['stored', 'stored', 'duplicate']);
    expect(batches).toEqual([1, 3]);
    expect(writer.counters).toEqual({ batches: 2, reports: 4 });
  });

  it('never makes a batch larger than MAX_REPORTS_PER_BATCH', async () => {
    const { store, batches } = recordingStore();
    const writer = new ReportWriter(store);
    const all = await Promise.all(Array.from({ length: MAX_REPORTS_PER_BATCH * 2 + 1 }, (_, i) => writer.add(report(`r${i}`))));
    expect(all.every((o) => o === 'stored')).toBe(true);
    expect(Math.max(...batches)).toBe(MAX_REPORTS_PER_BATCH);
    expect(batches.reduce((a, b) => a + b, 0)).toBe(MAX_REPORTS_PER_BATCH * 2 + 1);
  });

  it('a batch holds one domain; batches of different domains are written at once (at most REPORT_WRITER_BATCHES_AT_ONCE)', async () => {
    const store = new MemoryReportStore();
    const addMany = store.addMany.bind(store);
    const batches: string[][] = [];
    let open = 0;
    let most = 0;
    store.addMany = async (reports) => {
      batches.push(reports.map((r) => r.id));
      most = Math.max(most, ++open);
      // Held until every batch of this turn has started: they run side by side.
      await new Promise((resolve) => setTimeout(resolve, 20));
      open -= 1;
      return addMany(reports);
    };
    const writer = new ReportWriter(store);
    const domains = Array.from({ length: REPORT_WRITER_BATCHES_AT_ONCE + 1 }, (_, i) => `d${i}.example`);
    const outcomes = await Promise.all(domains.flatMap((domain) => [writer.add(report(`${domain}-1`, `${domain}-1`, domain)), writer.add(report(`${domain}-2`, `${domain}-2`, domain))]));
    expect(outcomes.every((o) => o === 'stored')).toBe(true);
    expect(batches).toEqual(domains.map((domain) => [`${domain}-1`, `${domain}-2`]));
    expect(most).toBe(REPORT_WRITER_BATCHES_AT_ONCE);
  });

  it('a store that writes one transaction at a time (serialWrites, SQLite) gets one batch of every domain that arrived together', async () => {
    const { store, batches } = recordingStore();
    Object.defineProperty(store, 'serialWrites', { value: true });
    const writer = new ReportWriter(store);
    const touched: string[] = [];
    writer.refresher.touch = (_organizationId, domain) => touched.push(domain);
    const domains = ['d0.example', 'd1.example', 'd2.example', 'd3.example'];
    const outcomes = await Promise.all(domains.map((domain) => writer.add(report(`${domain}-1`, `${domain}-1`, domain))));
    expect(outcomes.every((o) => o === 'stored')).toBe(true);
    expect(batches).toEqual([domains.length]);
    // Each domain's blocks are refreshed after the batch, not only the first one's.
    expect(touched.sort()).toEqual(domains);
  });

  describe('gathering on a store that writes one transaction at a time, while reports are on their way (expect)', () => {
    // Only the bound's timer is faked: the writer's turn of the event loop (setImmediate) runs; the bound passes only when a test says so.
    afterEach(() => vi.useRealTimers());
    const serial = () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const recording = recordingStore();
      Object.defineProperty(recording.store, 'serialWrites', { value: true });
      return { ...recording, writer: new ReportWriter(recording.store) };
    };
    const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

    it('a lone report, nothing on its way, is written at once', async () => {
      const { writer, batches } = serial();
      const arrived = writer.expect();
      arrived();
      expect(await writer.add(report('lone'))).toBe('stored');
      expect(batches).toEqual([1]);
    });

    it('reports arriving while others are parsed share one transaction, written as soon as none is on its way', async () => {
      const { writer, batches } = serial();
      const [a, b, c] = [writer.expect(), writer.expect(), writer.expect()];
      const first = writer.add(report('g1'));
      a();
      await turn();
      await turn();
      // Two parses still in flight: the first report waits for them (within the bound).
      expect(batches).toEqual([]);
      const second = writer.add(report('g2'));
      b();
      const third = writer.add(report('g3'));
      c();
      expect(await Promise.all([first, second, third])).toEqual(['stored', 'stored', 'stored']);
      expect(batches).toEqual([3]);
    });

    it('waits no longer than REPORT_WRITER_GATHER_MS for a parse that does not answer', async () => {
      const { writer, batches } = serial();
      const slow = writer.expect();
      const waiting = writer.add(report('w1'));
      await turn();
      await turn();
      expect(batches).toEqual([]);
      vi.advanceTimersByTime(REPORT_WRITER_GATHER_MS);
      expect(await waiting).toBe('stored');
      expect(batches).toEqual([1]);
      slow();
    });

    it('a full batch (MAX_REPORTS_PER_BATCH) is written without waiting, and a store with lanes never gathers', async () => {
      const { writer, batches } = serial();
      const slow = writer.expect();
      const all = Array.from({ length: MAX_REPORTS_PER_BATCH }, (_, i) => writer.add(report(`f${i}`)));
      expect((await Promise.all(all)).every((o) => o === 'stored')).toBe(true);
      expect(batches).toEqual([MAX_REPORTS_PER_BATCH]);
      slow();
      const lanes = recordingStore();
      const laned = new ReportWriter(lanes.store);
      const pending = laned.expect();
      expect(await laned.add(report('l1'))).toBe('stored');
      expect(lanes.batches).toEqual([1]);
      pending();
    });
  });

  it('a report that fails fails alone; a batch the store cannot take fails each of its callers, and the writer goes on', async () => {
    const store = new MemoryReportStore();
    const addMany = store.addMany.bind(store);
    let down = false;
    store.addMany = async (reports) => {
      if (down) throw new Error('the database is gone');
      const settled = await addMany(reports.filter((r) => r.id !== 'bad'));
      return reports.map((r) => (r.id === 'bad' ? { status: 'rejected', reason: new Error('bad report') } : settled.shift()!));
    };
    const writer = new ReportWriter(store);
    const [a, bad, c] = await Promise.allSettled([writer.add(report('a')), writer.add(report('bad')), writer.add(report('c'))]);
    expect(a).toEqual({ status: 'fulfilled', value: 'stored' });
    expect(bad).toMatchObject({ status: 'rejected', reason: { message: 'bad report' } });
    expect(c).toEqual({ status: 'fulfilled', value: 'stored' });
    down = true;
    await expect(writer.add(report('d'))).rejects.toThrow('the database is gone');
    down = false;
    expect(await writer.add(report('e'))).toBe('stored');
    expect((await store.list('o1', { page: 1, limit: 10 })).items.map((r) => r.id).sort()).toEqual(['a', 'c', 'e']);
  });

  it('one writer per store: every path into a store shares its batches', () => {
    const store = new MemoryReportStore();
    expect(reportWriter(store)).toBe(reportWriter(store));
    expect(reportWriter(new MemoryReportStore())).not.toBe(reportWriter(store));
  });
});
