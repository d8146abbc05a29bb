/**
 * Issue 38 item 10: a forged report cannot pre-empt a real one. A forged, unauthenticated copy of a
 * guessable report id sent first does not make the real report a duplicate: two unauthenticated
 * reports that collide on identity but say different things are both kept, and marked (`contested`
 * in the list); the same report resent (another container) is still one; an authenticated report is
 * never a duplicate of an unauthenticated one, in either order.
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ingestReportFile, unauthenticatedOrigin, type OriginBase, type ReportSink } from '../../src/ingest/ingest.js';
import { inThreadReportParser } from '../../src/ingest/parse-pool.js';
import { REPORTS_PATH } from '../../src/http/routes/reports.js';
import { createMemoryStores } from '../../src/store/memory.js';
import { bearerA, makeApp } from '../http/helpers.js';

const begin = 1_795_219_200;
/** A report of google.com's shape: the id is guessable, the records are what matters. */
function report(records: [string, number][]): Buffer {
  const rows = records
    .map(([ip, count]) => `<record><row><source_ip>${ip}</source_ip><count>${count}</count><policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row><identifiers><header_from>victim.example</header_from></identifiers></record>`)
    .join('');
  return Buffer.from(
    `<?xml version="1.0"?><feedback><report_metadata><org_name>google.com</org_name><email>noreply-dmarc-support@google.com</email><report_id>15573390546331429891</report_id><date_range><begin>${begin}</begin><end>${begin + 86_399}</end></date_range></report_metadata><policy_published><domain>victim.example</domain><p>none</p></policy_published>${rows}</feedback>`,
  );
}
const REAL = report([['192.0.2.10', 48_000]]);
const FORGED = report([['198.51.100.66', 1]]);

function sink(): ReportSink & { stores: ReturnType<typeof createMemoryStores> } {
  const stores = createMemoryStores();
  return { stores, store: stores.reports, organizationsFor: async () => ['o1'], rejectionOrganizations: ['o1'], parser: inThreadReportParser, now: () => new Date((begin + 2 * 86_400) * 1000) };
}
const UNAUTHENTICATED = unauthenticatedOrigin('https', '203.0.113.9');
const AUTHENTICATED: OriginBase = { channel: 'smtp', sender: 'noreply-dmarc-support@google.com', messageId: '<r@google.com>', authenticatedDomain: 'google.com', dkim: 'pass', spf: 'pass', dmarc: 'pass' };

describe('a forged report cannot pre-empt a real one', () => {
  it('a forged unauthenticated copy sent first: the real unauthenticated report is still stored, both kept', async () => {
    const s = sink();
    const forged = await ingestReportFile(s, { bytes: FORGED, fileName: 'forged.xml' }, UNAUTHENTICATED);
    const real = await ingestReportFile(s, { bytes: gzipSync(REAL), fileName: 'real.xml.gz' }, UNAUTHENTICATED);
    expect(forged.reports.map((r) => r.outcome)).toEqual(['stored']);
    expect(real.reports.map((r) => r.outcome)).toEqual(['stored']);
    const counts = await s.store.counts('o1', 'victim.example', null);
    expect(counts.messages).toBe(48_001);
  });

  it('the same report resent in another container is still one (a duplicate)', async () => {
    const s = sink();
    await ingestReportFile(s, { bytes: REAL, fileName: 'real.xml' }, UNAUTHENTICATED);
    const again = await ingestReportFile(s, { bytes: gzipSync(REAL), fileName: 'real.xml.gz' }, UNAUTHENTICATED);
    expect(again.reports.map((r) => r.outcome)).toEqual(['duplicate']);
  });

  it.each([
    ['forged unauthenticated first, then the authenticated real one', [[FORGED, UNAUTHENTICATED], [REAL, AUTHENTICATED]]],
    ['the same bytes unauthenticated first, then authenticated', [[REAL, UNAUTHENTICATED], [REAL, AUTHENTICATED]]],
    ['authenticated first, then the same bytes unauthenticated', [[REAL, AUTHENTICATED], [REAL, UNAUTHENTICATED]]],
  ] as const)('%s: both stored', async (_, sequence) => {
    const s = sink();
    const outcomes = [];
    for (const [bytes, origin] of sequence) outcomes.push(...(await ingestReportFile(s, { bytes, fileName: 'r.xml' }, origin)).reports.map((r) => r.outcome));
    expect(outcomes).toEqual(['stored', 'stored']);
  });

  it('the list marks the two colliding unauthenticated reports as contested, and no other', async () => {
    const { app, stores } = await makeApp({ now: () => new Date((begin + 2 * 86_400) * 1000) });
    try {
      const upload = (bytes: Buffer) => app.inject({ method: 'POST', url: REPORTS_PATH, headers: { ...bearerA, 'content-type': 'application/xml' }, payload: bytes });
      expect((await upload(FORGED)).json()).toMatchObject({ stored: 1 });
      expect((await upload(REAL)).json()).toMatchObject({ stored: 1 });
      const other = report([['192.0.2.20', 5]]).toString().replace('15573390546331429891', '999');
      expect((await upload(Buffer.from(other))).json()).toMatchObject({ stored: 1 });
      const list = await app.inject({ method: 'GET', url: `${REPORTS_PATH}?domain=victim.example`, headers: bearerA });
      const items = list.json().reports as { reportId: string; contested: boolean; messages: number }[];
      expect(items.map((r) => [r.reportId, r.messages, r.contested]).sort()).toEqual([
        ['15573390546331429891', 1, true],
        ['15573390546331429891', 48_000, true],
        ['999', 5, false],
      ]);
      expect(stores).toBeDefined();
    } finally {
      await app.close();
    }
  });
});
