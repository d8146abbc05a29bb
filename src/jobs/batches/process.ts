/**
 * Processing one chunk of a batch: the same code in the in-process runner and in queue workers.
 * It reads the names of the chunk that have no result yet, checks them (at most `limit` at once
 * across the whole runner or worker), retries DNS failures with backoff a bounded number of times,
 * and writes the rows of the chunk in one idempotent call.
 */
import { isSpoofCheckError, type CheckErrorCode } from '@spoof-checker/engine';
import type { BatchStore } from '../../store/batches.js';
import { errorLine, resultLine, type BatchCheck, type BatchErrorCode, type BatchResultRow, type ChunkJob } from './model.js';

/** Attempts per name when DNS fails or times out (the first try included). */
export const DNS_MAX_ATTEMPTS = 3;
/** Wait before the first DNS retry; doubled for each further one. */
export const DNS_RETRY_BASE_DELAY_MS = 200;

/** The runner's concurrency gate (p-limit's function shape). */
export type Gate = <T>(task: () => Promise<T>) => Promise<T>;

/** What processing a chunk needs. */
export interface ChunkDeps {
  store: BatchStore;
  check: BatchCheck;
  /** Bounds the names checked at once across every chunk of the runner or worker. */
  gate: Gate;
  now?: () => Date;
  /** DNS retries: attempts and the first delay (tests shorten it). */
  retry?: { attempts: number; baseDelayMs: number };
}

/** What became of a chunk. */
export type ChunkOutcome = { kind: 'checked'; names: number } | { kind: 'skipped'; reason: 'missing' | 'cancelled' | 'finished' };

const RETRIED: ReadonlySet<CheckErrorCode> = new Set(['dns_failure', 'dns_timeout']);

/** Checks the names of one chunk that have no result yet and records them. */
export async function processChunk(job: ChunkJob, deps: ChunkDeps): Promise<ChunkOutcome> {
  const now = deps.now ?? (() => new Date());
  const batch = await deps.store.getById(job.batchId);
  if (!batch) return { kind: 'skipped', reason: 'missing' };
  if (batch.status === 'cancelled') return { kind: 'skipped', reason: 'cancelled' };
  if (batch.status === 'done') return { kind: 'skipped', reason: 'finished' };
  if (batch.status === 'queued') await deps.store.markRunning(job.batchId, now().toISOString());
  const names = await deps.store.pendingNames(job.batchId, job.fromSeq, job.toSeq);
  const rows = await Promise.all(names.map(({ seq, name }) => deps.gate(() => checkToRow(seq, name, deps))));
  await deps.store.recordResults(job.batchId, rows, now().toISOString());
  return { kind: 'checked', names: rows.length };
}

/** One name to one row: a result, or an error after the DNS retries. Never throws. */
async function checkToRow(seq: number, name: string, deps: ChunkDeps): Promise<BatchResultRow> {
  const { attempts, baseDelayMs } = deps.retry ?? { attempts: DNS_MAX_ATTEMPTS, baseDelayMs: DNS_RETRY_BASE_DELAY_MS };
  for (let attempt = 1; ; attempt++) {
    try {
      return { seq, line: resultLine(name, await deps.check(name)), failed: false };
    } catch (error) {
      if (isSpoofCheckError(error)) {
        if (RETRIED.has(error.code) && attempt < attempts) {
          await sleep(baseDelayMs * 2 ** (attempt - 1));
          continue;
        }
        const tried = RETRIED.has(error.code) ? ` (after ${attempt} attempt(s))` : '';
        return { seq, line: errorLine(name, error.code.toUpperCase() as BatchErrorCode, `${error.message}${tried} ${error.fix}`), failed: true };
      }
      // A fault of ours: recorded against the name, so one bad name never blocks the batch.
      return { seq, line: errorLine(name, 'INTERNAL', 'The check failed on our side.'), failed: true };
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
