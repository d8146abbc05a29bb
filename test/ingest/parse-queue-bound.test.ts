/**
 * The parser's queue has a byte bound of its own for uploads: a bounded job that must wait, and
 * would take the bytes waiting past MAX_REPORT_PARSE_QUEUED_BYTES, is refused at once
 * (`parser-full`); mail's jobs (unbounded) still queue. The upload route answers such a refusal 503
 * REPORT_PARSER_BUSY with Retry-After, and records nothing.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_REPORT_PARSE_QUEUED_BYTES, PARSER_FULL, REPORT_PARSE_RETRY_AFTER_SECONDS, ReportParserPool, type ReportParser } from '../../src/ingest/parse-pool.js';
import { REPORTS_PATH } from '../../src/http/routes/reports.js';
import { bearerA, makeApp } from '../http/helpers.js';
import { fixture, GOOGLE_ZIP } from './helpers.js';

const pools: ReportParserPool[] = [];
afterAll(async () => {
  for (const pool of pools) await pool.close();
});

const file = (bytes: number) => ({ bytes: new Uint8Array(bytes), fileName: 'r.xml', contentType: 'application/xml' });

describe('the parser pool bounds the bytes waiting', () => {
  it('is 100 MiB, four of the largest uploads', () => {
    expect(MAX_REPORT_PARSE_QUEUED_BYTES).toBe(100 * 1024 * 1024);
  });

  it('refuses a bounded job that would pass the bound while others wait, queues an unbounded one, and counts bytes out as jobs start', async () => {
    const pool = new ReportParserPool({ workers: 1, maxQueuedBytes: 1000 });
    pools.push(pool);
    // One worker: the first job starts at once (not waiting), the next ones wait.
    const running = pool.parse([file(5000)], { bounded: true });
    const waiting = pool.parse([file(600)], { bounded: true });
    expect(pool.queuedBytes).toBe(600);
    const refused = await pool.parse([file(500)], { bounded: true });
    expect(refused).toEqual([{ ok: false, reason: PARSER_FULL, detail: expect.stringContaining('MAX_REPORT_PARSE_QUEUED_BYTES') }]);
    expect(pool.counters.full).toBe(1);
    // A job that fits still queues; mail (unbounded) is never refused by the bound.
    const fits = pool.parse([file(400)], { bounded: true });
    const mail = pool.parse([file(3000)]);
    expect(pool.queuedBytes).toBe(4000);
    for (const outcome of await Promise.all([running, waiting, fits, mail])) expect(outcome[0]).toMatchObject({ ok: false, reason: 'unknown-format' });
    expect(pool.queuedBytes).toBe(0);
  }, 60_000);
});

describe('the upload route when the parser is full', () => {
  it('answers 503 REPORT_PARSER_BUSY with Retry-After, and records no rejection', async () => {
    const full: ReportParser = { parse: async (files, options) => files.map(() => (options?.bounded ? { ok: false as const, reason: PARSER_FULL, detail: 'full' } : { ok: false as const, reason: 'unknown-format', detail: 'x' })) };
    const { app, stores } = await makeApp({ reports: { parser: full } });
    try {
      const response = await app.inject({ method: 'POST', url: REPORTS_PATH, headers: { ...bearerA, 'content-type': 'application/zip' }, payload: fixture(GOOGLE_ZIP) });
      expect(response.statusCode).toBe(503);
      expect(response.headers['retry-after']).toBe(String(REPORT_PARSE_RETRY_AFTER_SECONDS));
      expect(response.json()).toMatchObject({ code: 'REPORT_PARSER_BUSY', retryAfter: REPORT_PARSE_RETRY_AFTER_SECONDS });
      expect((await stores.reports.rejections('org_a', { page: 1, limit: 10 })).total).toBe(0);
    } finally {
      await app.close();
    }
  });
});
