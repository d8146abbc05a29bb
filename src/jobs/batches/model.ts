/**
 * Batches: a list of names handed over at once, checked in the background, read back as JSON lines.
 *
 * A batch is stored (with every name) before any of it is queued, so the store is the truth and the
 * queue only says what to work on next: a job is a range of name indexes (`ChunkJob`), never the names
 * themselves. Results are keyed by (batch id, name index), so a job that runs twice writes each row
 * once (INSERT … ON CONFLICT DO NOTHING).
 */
import type { CheckErrorCode } from '@spoof-checker/engine';
import type { SpoofCheckResult } from '@spoof-checker/engine';
import type { Batch, BatchResultRow } from '../../store/batch-model.js';

/** Most names one batch may hold. */
export const MAX_BATCH_NAMES = 100_000;
/**
 * Largest body of a batch submission: 100,000 names of ~30 characters are about 3 MB, so 4 MiB
 * (every other route keeps the app's 1 MiB).
 */
export const BATCH_BODY_LIMIT_BYTES = 4 * 1024 * 1024;
/** Names per queue job: large enough that queue overhead is small, small enough that a lost job costs little. */
export const BATCH_CHUNK_SIZE = 100;
/** Names an organisation may submit per UTC day unless the service is configured otherwise. */
export const DEFAULT_BATCH_NAMES_PER_DAY = 1_000_000;
/** Names checked at once by one runner or worker unless configured otherwise. */
export const DEFAULT_BATCH_CONCURRENCY = 32;

// The stored shapes live with the store that keeps them (store/ is below jobs/); re-exported here.
export type { Batch, BatchName, BatchResultRow, BatchStatus } from '../../store/batch-model.js';
/** A unit of queue work: the names of `batchId` with `fromSeq <= seq < toSeq`. */
export interface ChunkJob {
  batchId: string;
  fromSeq: number;
  toSeq: number;
}

/** Fewest chunks a runner or worker holds at once (see {@link chunksInFlight}). */
export const MIN_CHUNKS_IN_FLIGHT = 8;

/**
 * Chunks a runner or worker with `concurrency` name slots works on at once. Each chunk spends part
 * of its time in the store (reading its names, writing its rows: a few round trips), during which
 * its slots would idle; with checks as cheap as local zones (a fraction of a millisecond) that part
 * is as long as the checking, so enough chunks are held that other chunks' names fill the slots.
 */
export function chunksInFlight(concurrency: number): number {
  return Math.max(MIN_CHUNKS_IN_FLIGHT, Math.ceil((2 * concurrency) / BATCH_CHUNK_SIZE) + 2);
}

/** Runs one spoof check (the service binds `checkDomain` to its resolver). */
export type BatchCheck = (input: string) => Promise<SpoofCheckResult>;

/** Error codes of error rows: the HTTP catalogue's spelling of the engine's refusals (`INVALID_DOMAIN`, `DNS_FAILURE`…). */
export type BatchErrorCode = Uppercase<CheckErrorCode> | 'INTERNAL';

/** The chunks of a batch of `total` names, in order. */
export function chunksOf(batchId: string, total: number, size = BATCH_CHUNK_SIZE): ChunkJob[] {
  const chunks: ChunkJob[] = [];
  for (let from = 0; from < total; from += size) chunks.push({ batchId, fromSeq: from, toSeq: Math.min(total, from + size) });
  return chunks;
}

/** The JSON line of a checked name: the spec's result without `details`, with the input as sent. */
export function resultLine(input: string, result: SpoofCheckResult): string {
  const { details: _details, ...summary } = result;
  return JSON.stringify({ input, ...summary });
}

/** The JSON line of a name that could not be checked: `{ domain, error: { code, message } }`. */
export function errorLine(input: string, code: BatchErrorCode, message: string): string {
  return JSON.stringify({ domain: input, error: { code, message } });
}

/** A stored line with its cursor as the first field, for the results stream. */
export function withCursor(row: BatchResultRow): string {
  return `{"cursor":"${row.seq}",${row.line.slice(1)}\n`;
}

/** Checked names per second since the batch started (until it finished), one decimal. */
export function namesPerSecond(batch: Batch, now: Date): number {
  if (batch.startedAt === null) return 0;
  const end = batch.finishedAt === null ? now.getTime() : Date.parse(batch.finishedAt);
  const seconds = (end - Date.parse(batch.startedAt)) / 1000;
  if (seconds <= 0) return 0;
  return Math.round((batch.done / seconds) * 10) / 10;
}

/** The start of the UTC day of `now` (quota window). */
export function startOfUtcDay(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}
