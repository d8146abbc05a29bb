/**
 * Report files parsed from their path (src/ingest/parse-files.ts, `reports import`): the parser reads
 * the file itself, under the same cap and with the same refusals as when the storing process read it;
 * each report comes back in the form the store takes (rows, digest, document), equal to what the store
 * computed from the report before, and checked when it crosses from the parser process.
 */
import { mkdtemp, mkdir, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestReports, parseAggregateReport, unpackReportFile, type AggregateReport } from '@spoof-checker/engine';
import { importPaths, MAX_IMPORT_FILE_BYTES } from '../../src/ingest/files.js';
import { MAX_RECORDS_FORMED_IN_PARSER, parseReportFiles, recordRow, type ParsedFile } from '../../src/ingest/parse-files.js';
import { floodReport } from '../summaries/helpers.js';
import { ReportParserPool } from '../../src/ingest/parse-pool.js';
import { createMemoryStores } from '../../src/store/memory.js';
import { fixture, REPORT_DOMAIN, REPORTS_DIR, YAHOO_GZ } from './helpers.js';

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'parse-files-'));
});
afterAll(() => rm(work, { recursive: true, force: true }));

/** The fixture's aggregate report as the engine parses it, whole (records included). */
function yahooReport(): AggregateReport {
  const unpacked = unpackReportFile(fixture(YAHOO_GZ), { filename: YAHOO_GZ });
  if (!unpacked.ok) throw new Error('fixture did not unpack');
  const parsed = parseAggregateReport(unpacked.documents[0]!.bytes);
  if (!parsed.ok) throw new Error('fixture did not parse');
  return parsed.report;
}

const firstOutcome = (file: ParsedFile | undefined) => {
  if (!file?.ok) throw new Error(`refused: ${JSON.stringify(file)}`);
  const outcome = file.documents[0]!.outcome;
  if (!outcome.ok) throw new Error(`refused: ${outcome.detail}`);
  return outcome;
};

describe('report files from their path', () => {
  it('a path parses as its bytes do; the stored form holds the rows and the digest the store computed from the whole report', () => {
    const [fromPath, fromBytes] = parseReportFiles([
      { path: join(REPORTS_DIR, YAHOO_GZ), maxBytes: MAX_IMPORT_FILE_BYTES, fileName: YAHOO_GZ },
      { bytes: fixture(YAHOO_GZ), fileName: YAHOO_GZ },
    ]);
    expect(fromPath).toEqual(fromBytes);
    const outcome = firstOutcome(fromPath);
    const report = yahooReport();
    const { records, ...head } = report;
    expect(records.length).toBeGreaterThan(0);
    expect(outcome.report).toEqual(head);
    expect(outcome.stored.records).toEqual(records.map(recordRow));
    expect(outcome.stored.digest).toEqual(digestReports([report], REPORT_DOMAIN).senders);
    expect(JSON.parse(outcome.stored.document)).toEqual(head);
  });

  it('a file over the cap is refused unread (too-large, the cap named); a missing file and a directory are refused as unreadable', async () => {
    const big = join(work, 'big.xml');
    await writeFile(big, '');
    // Sparse: the size is over the cap without writing it.
    await truncate(big, MAX_IMPORT_FILE_BYTES + 1);
    const directory = join(work, 'a-directory.xml');
    await mkdir(directory);
    const [tooLarge, missing, notFile] = parseReportFiles([
      { path: big, maxBytes: MAX_IMPORT_FILE_BYTES, fileName: 'big.xml' },
      { path: join(work, 'missing.xml'), maxBytes: MAX_IMPORT_FILE_BYTES, fileName: 'missing.xml' },
      { path: directory, maxBytes: MAX_IMPORT_FILE_BYTES, fileName: 'a-directory.xml' },
    ]);
    expect(tooLarge).toEqual({ ok: false, reason: 'too-large', detail: `the file is over the ${MAX_IMPORT_FILE_BYTES}-byte cap` });
    expect(missing).toMatchObject({ ok: false, reason: 'unreadable', detail: expect.stringMatching(/^cannot read .*missing\.xml: .*ENOENT/) });
    expect(notFile).toMatchObject({ ok: false, reason: 'unreadable', detail: expect.stringContaining('not a regular file') });
  });

  it('through the parser process: the same stored form; reports import refuses the file over the cap with the message it always gave', async () => {
    const pool = new ReportParserPool({ workers: 1 });
    try {
      const [viaPool] = await pool.parse([{ path: join(REPORTS_DIR, YAHOO_GZ), maxBytes: MAX_IMPORT_FILE_BYTES, fileName: YAHOO_GZ }]);
      const [inThread] = parseReportFiles([{ bytes: fixture(YAHOO_GZ), fileName: YAHOO_GZ }]);
      expect(viaPool).toEqual(inThread);
      // A path holds no bytes in the storing process: nothing counts against the queue's bound.
      expect(pool.queuedBytes).toBe(0);
      const dir = join(work, 'import');
      await mkdir(dir);
      await writeFile(join(dir, 'a.xml.gz'), fixture(YAHOO_GZ));
      await writeFile(join(dir, 'b-big.xml'), '');
      await truncate(join(dir, 'b-big.xml'), MAX_IMPORT_FILE_BYTES + 1);
      const stores = createMemoryStores();
      const result = await importPaths([dir], { sink: { store: stores.reports, organizationsFor: async () => ['o1'], rejectionOrganizations: ['o1'], parser: pool } });
      expect(result.reports.map((r) => r.outcome)).toEqual(['stored']);
      expect(result.rejected).toEqual([{ fileName: 'b-big.xml', reason: 'too-large', detail: `the file is over the ${MAX_IMPORT_FILE_BYTES}-byte cap` }]);
    } finally {
      await pool.close();
    }
  }, 60_000);

  it('a report of more than MAX_RECORDS_FORMED_IN_PARSER records crosses whole and is formed in the storing process: the same stored form', async () => {
    const pool = new ReportParserPool({ workers: 1 });
    try {
      const bytes = floodReport({ domain: REPORT_DOMAIN, records: MAX_RECORDS_FORMED_IN_PARSER + 1, begin: 1_700_000_000 });
      const [viaPool] = await pool.parse([{ bytes, fileName: 'large.xml.gz' }]);
      const [inThread] = parseReportFiles([{ bytes, fileName: 'large.xml.gz' }]);
      expect(viaPool).toEqual(inThread);
      const outcome = viaPool !== undefined && viaPool.ok ? viaPool.documents[0]?.outcome : undefined;
      expect(outcome?.ok && outcome.stored.records.length).toBe(MAX_RECORDS_FORMED_IN_PARSER + 1);
      // The head the storing process reads holds no records: they are the stored form's rows.
      expect(outcome?.ok && 'records' in outcome.report).toBe(false);
    } finally {
      await pool.close();
    }
  }, 60_000);
});
