/**
 * Issue 38 item 6: the records an organisation takes are bounded, per organisation and per reporting
 * source, over the last day. Every untrusted report shares one budget
 * (MAX_UNTRUSTED_REPORT_RECORDS_PER_DAY), so forged reports cannot crowd out a real reporter; beyond
 * it a report is refused whole with a clear reason, and nothing already stored is lost. Run against
 * memory, SQLite and PostgreSQL.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ingestReportFile, reportSink, type OriginBase } from '../../src/ingest/ingest.js';
import { MAX_UNTRUSTED_REPORT_RECORDS_PER_DAY } from '../../src/store/reports.js';
import type { Stores } from '../../src/store/types.js';
import { memoryBackend, postgresBackend, sqliteBackend, type Backend, type OpenedBackend } from '../store/backends.js';
import { floodReport } from './helpers.js';

const DOMAIN = 'victim.example';
const BEGIN = Date.UTC(2026, 10, 20) / 1000;
const UNAUTHENTICATED: OriginBase = { channel: 'smtp', sender: 'dmarc@forger.example', messageId: null, authenticatedDomain: null, dkim: 'none', spf: 'fail', dmarc: 'fail' };
const AUTHENTICATED: OriginBase = { channel: 'smtp', sender: 'noreply@reporter.example', messageId: null, authenticatedDomain: 'reporter.example', dkim: 'pass', spf: 'pass', dmarc: 'pass' };
/** Each forged report takes 60% of the untrusted budget: the second passes it. */
const RECORDS = Math.ceil(MAX_UNTRUSTED_REPORT_RECORDS_PER_DAY * 0.6);

describe.each<Backend>([memoryBackend, sqliteBackend, postgresBackend()])('record limits: $name', (backend) => {
  let opened: OpenedBackend;
  let stores: Stores;
  beforeAll(() => backend.setup());
  afterAll(() => backend.teardown());
  beforeEach(async () => {
    opened = await backend.open();
    stores = opened.stores;
  });
  afterEach(() => opened.dispose());

  it('refuses untrusted reports beyond their shared budget, keeps what was stored, and still takes an authenticated reporter', { timeout: 120_000 }, async () => {
    let clock = new Date((BEGIN + 86_400) * 1000);
    const sink = await reportSink(stores.reports, { organizationId: 'o1' }, { now: () => clock });
    const send = (reportId: string, origin: OriginBase) => ingestReportFile(sink, { bytes: floodReport({ domain: DOMAIN, records: RECORDS, begin: BEGIN, reportId }), fileName: `${reportId}.xml.gz` }, origin);
    expect((await send('forged-1', UNAUTHENTICATED)).reports).toMatchObject([{ outcome: 'stored', records: RECORDS }]);
    const second = await send('forged-2', UNAUTHENTICATED);
    expect(second.reports).toEqual([]);
    expect(second.rejected).toEqual([{ fileName: expect.any(String), reason: 'over-limit', detail: expect.stringContaining('MAX_UNTRUSTED_REPORT_RECORDS_PER_DAY') }]);
    // Nothing already stored was lost, and the refused report added nothing.
    expect(await stores.reports.counts('o1', DOMAIN, null)).toMatchObject({ aggregate: 1, untrusted: 1, messages: RECORDS });
    // A resend of the stored report is still a duplicate, not a refusal.
    expect((await send('forged-1', UNAUTHENTICATED)).reports).toMatchObject([{ outcome: 'duplicate' }]);
    // An authenticated reporter has its own budget.
    expect((await send('real-1', AUTHENTICATED)).reports).toMatchObject([{ outcome: 'stored' }]);
    // A day later the untrusted budget is free again.
    clock = new Date(clock.getTime() + 86_400_000 + 1_000);
    expect((await send('forged-3', UNAUTHENTICATED)).reports).toMatchObject([{ outcome: 'stored' }]);
  });
});
