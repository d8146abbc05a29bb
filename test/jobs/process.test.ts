/** Chunk processing: DNS retries with backoff, idempotent rows, counters and the final status. */
import { describe, expect, it } from 'vitest';
import { SpoofCheckError } from '../../packages/engine/src/errors.js';
import { chunksOf, namesPerSecond, withCursor, type BatchCheck } from '../../src/jobs/batches/model.js';
import { processChunk } from '../../src/jobs/batches/process.js';
import { MemoryBatchStore } from '../../src/store/batches-memory.js';
import { SAMPLE_RESULT } from '../http/helpers.js';
import { fixtureCheck } from './helpers.js';

const gate = <T>(task: () => Promise<T>) => task();
const AT = '2026-01-01T00:00:00.000Z';

async function storeWith(names: string[]) {
  const store = new MemoryBatchStore();
  await store.create({ id: 'b1', organizationId: 'org', createdAt: AT, names: names.map((name, seq) => ({ seq, name })), errorRows: [] });
  return store;
}

const dnsFailure = () => new SpoofCheckError('dns_failure', 'The DNS server failed for _dmarc.x.example TXT.', { why: 'w', fix: 'Retry later.' });

describe('processChunk', () => {
  it('retries a DNS failure with growing delays, then records the result', async () => {
    const store = await storeWith(['p-reject.example']);
    const calls: number[] = [];
    const check: BatchCheck = async (name) => {
      calls.push(performance.now());
      if (calls.length < 3) throw dnsFailure();
      return { ...SAMPLE_RESULT, domain: name };
    };
    await processChunk({ batchId: 'b1', fromSeq: 0, toSeq: 1 }, { store, check, gate, retry: { attempts: 3, baseDelayMs: 20 } });
    expect(calls).toHaveLength(3);
    // Timers may fire a millisecond early; the second wait is twice the first.
    expect(calls[1]! - calls[0]!).toBeGreaterThanOrEqual(15);
    expect(calls[2]! - calls[1]!).toBeGreaterThanOrEqual(35);
    const [row] = await store.readResults('org', 'b1', -1, 10);
    expect(row!.failed).toBe(false);
    expect(JSON.parse(row!.line)).toMatchObject({ input: 'p-reject.example', domain: 'p-reject.example', verdict: SAMPLE_RESULT.verdict });
    expect(await store.getById('b1')).toMatchObject({ status: 'done', done: 1, failed: 0 });
  });

  it('records an error row after the last attempt, and never retries an invalid name', async () => {
    const store = await storeWith(['x.example', 'y.example']);
    let calls = 0;
    const check: BatchCheck = async (name) => {
      calls++;
      if (name === 'y.example') throw new SpoofCheckError('invalid_domain', 'No.', { why: 'w', fix: 'Send a domain.' });
      throw dnsFailure();
    };
    await processChunk({ batchId: 'b1', fromSeq: 0, toSeq: 2 }, { store, check, gate, retry: { attempts: 3, baseDelayMs: 1 } });
    expect(calls).toBe(4);
    const rows = await store.readResults('org', 'b1', -1, 10);
    expect(rows.map((r) => JSON.parse(r.line))).toEqual([
      { domain: 'x.example', error: { code: 'DNS_FAILURE', message: 'The DNS server failed for _dmarc.x.example TXT. (after 3 attempt(s)) Retry later.' } },
      { domain: 'y.example', error: { code: 'INVALID_DOMAIN', message: 'No. Send a domain.' } },
    ]);
    expect(await store.getById('b1')).toMatchObject({ status: 'done', done: 2, failed: 2 });
  });

  it('a chunk processed twice (a retried job) checks and writes only what is missing', async () => {
    const store = await storeWith(['p-reject.example', 'p-none.example', 'p-quarantine.example']);
    const real = await fixtureCheck();
    const checked: string[] = [];
    const check: BatchCheck = async (name) => (checked.push(name), real(name));
    await processChunk({ batchId: 'b1', fromSeq: 0, toSeq: 2 }, { store, check, gate });
    // A second worker got the same job back (stalled) while the first had written it.
    await store.recordResults('b1', [{ seq: 0, line: '{"input":"duplicate"}', failed: false }], AT);
    await processChunk({ batchId: 'b1', fromSeq: 0, toSeq: 3 }, { store, check, gate });
    expect(checked).toEqual(['p-reject.example', 'p-none.example', 'p-quarantine.example']);
    const rows = await store.readResults('org', 'b1', -1, 10);
    expect(rows.map((r) => r.seq)).toEqual([0, 1, 2]);
    expect(JSON.parse(rows[0]!.line).input).toBe('p-reject.example');
    expect(await store.getById('b1')).toMatchObject({ status: 'done', done: 3 });
  });

  it('an internal failure of one name becomes an INTERNAL row, not a lost chunk', async () => {
    const store = await storeWith(['a.example']);
    await processChunk({ batchId: 'b1', fromSeq: 0, toSeq: 1 }, { store, check: async () => { throw new TypeError('boom'); }, gate });
    const [row] = await store.readResults('org', 'b1', -1, 10);
    expect(JSON.parse(row!.line)).toEqual({ domain: 'a.example', error: { code: 'INTERNAL', message: 'The check failed on our side.' } });
  });
});

describe('batch model', () => {
  it('splits a batch into chunks that cover every index once', () => {
    expect(chunksOf('b', 250, 100)).toEqual([
      { batchId: 'b', fromSeq: 0, toSeq: 100 },
      { batchId: 'b', fromSeq: 100, toSeq: 200 },
      { batchId: 'b', fromSeq: 200, toSeq: 250 },
    ]);
    expect(chunksOf('b', 0)).toEqual([]);
  });

  it('puts the cursor first on each line, and computes names per second from start to finish', () => {
    expect(withCursor({ seq: 7, line: '{"domain":"a"}', failed: false })).toBe('{"cursor":"7","domain":"a"}\n');
    const batch = { id: 'b', organizationId: 'o', status: 'done' as const, total: 10, done: 10, failed: 0, createdAt: AT, startedAt: AT, finishedAt: '2026-01-01T00:00:04.000Z', enqueued: true };
    expect(namesPerSecond(batch, new Date())).toBe(2.5);
    expect(namesPerSecond({ ...batch, startedAt: null, finishedAt: null }, new Date())).toBe(0);
  });
});
