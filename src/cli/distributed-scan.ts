/**
 * `spoof-checker scan <file|-> --redis URL (--database URL | --data DIR)`: a local list checked by
 * the queue's workers. The names go into the shared store as batches of at most 100,000 (organisation
 * `cli`), their chunks onto the queue; the results are streamed back in submission order, in the
 * usual formats (`--format jsonl|csv`), as soon as they are contiguous. Progress on stderr.
 * SIGINT/SIGTERM cancels what has not run and stops.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { MAX_BATCH_NAMES } from '../jobs/batches/model.js';
import { checkRedisUrl, RedisBatchQueue } from '../jobs/batches/queue.js';
import { loadRedisModules } from '../jobs/redis-modules.js';
import { resultPages } from '../jobs/batches/results.js';
import { BatchService } from '../jobs/batches/service.js';
import { newBatch, newBatchId } from '../jobs/batches/submit.js';
import type { SpoofCheckResult } from '@spoof-checker/engine';
import { MEMORY_DATA_DIR, openStores, type StorageChoice } from '../store/open.js';
import { checkDatabaseUrl } from '../store/postgres.js';
import { integerOption, parseCommandArgs, settingsOrExit, UsageError } from './args.js';
import type { ErrorLine } from './check.js';
import { EXIT_FAILED, EXIT_OK, exitCodeForSignal, type CliIo } from './io.js';
import { CSV_COLUMNS, csvLine, jsonLine } from './scan-output.js';

/** The organisation that owns batches submitted from the command line. */
export const CLI_ORGANIZATION = 'cli';
/** How often the store is asked for new results while the workers run. */
const POLL_INTERVAL_MS = 200;
/** How often a progress line is written to stderr. */
const PROGRESS_INTERVAL_MS = 1000;

const USAGE = `Usage: spoof-checker scan <file|-> --redis URL (--database URL | --data DIR) [--format jsonl|csv] [--batch-size N]

Checks one name per line on the workers of the Redis queue ('spoof-checker worker', same Redis and
store) and streams the results back in input order.
`;

interface Settings {
  file: string;
  redis: string;
  storage: StorageChoice;
  format: 'jsonl' | 'csv';
  batchSize: number;
}

function readSettings(args: string[], env: NodeJS.ProcessEnv): Settings | 'help' {
  const { values, positionals } = parseCommandArgs(
    args,
    { redis: { type: 'string' }, database: { type: 'string' }, data: { type: 'string' }, format: { type: 'string' }, 'batch-size': { type: 'string' } },
    true,
  );
  if (values.help) return 'help';
  if (positionals.length !== 1) throw new UsageError('give exactly one input: a file with one name per line, or - for stdin');
  const redis = values.redis ?? '';
  try {
    checkRedisUrl(redis);
  } catch (error) {
    throw new UsageError(`--redis: ${(error as Error).message}`);
  }
  if (values.data !== undefined && values.database !== undefined) throw new UsageError('give --data or --database, not both');
  const url = values.data !== undefined ? undefined : (values.database ?? (env['DATABASE_URL'] || undefined));
  let storage: StorageChoice;
  if (url !== undefined) {
    const problem = checkDatabaseUrl(url);
    if (problem !== undefined) throw new UsageError(problem);
    storage = { kind: 'postgres', url };
  } else {
    const dir = values.data ?? (env['SPOOF_CHECKER_DATA'] || undefined);
    if (dir === undefined || dir === MEMORY_DATA_DIR) throw new UsageError('with --redis, give the store the workers use: --database URL or --data DIR');
    storage = { kind: 'sqlite', dir };
  }
  const format = values.format ?? 'jsonl';
  if (format !== 'jsonl' && format !== 'csv') throw new UsageError(`--format must be jsonl or csv, not "${format}"`);
  return { file: positionals[0]!, redis, storage, format, batchSize: integerOption(values['batch-size'], 'batch-size', MAX_BATCH_NAMES, 1, MAX_BATCH_NAMES) };
}

/** Reads names (blank lines and # comments skipped) in groups of `size`. */
async function* nameGroups(input: Readable, size: number): AsyncGenerator<string[]> {
  let group: string[] = [];
  for await (const raw of createInterface({ input, crlfDelay: Infinity })) {
    const name = raw.trim();
    if (name === '' || name.startsWith('#')) continue;
    group.push(name);
    if (group.length >= size) {
      yield group;
      group = [];
    }
  }
  if (group.length > 0) yield group;
}

/** A stored line in the scan's own formats (error codes in its lower-case spelling). */
function formatRow(line: string, format: 'jsonl' | 'csv'): { text: string; failed: boolean } {
  const parsed = JSON.parse(line) as (SpoofCheckResult & { input: string }) | { domain: string; error: { code: string; message: string } };
  if ('error' in parsed) {
    const error: ErrorLine = { input: parsed.domain, error: { code: parsed.error.code.toLowerCase(), message: parsed.error.message } };
    return { text: format === 'csv' ? csvLine(error.input, error) : jsonLine(error.input, error, false), failed: true };
  }
  const { input, ...result } = parsed;
  return { text: format === 'csv' ? csvLine(input, result as SpoofCheckResult) : jsonLine(input, result as SpoofCheckResult, false), failed: false };
}

/** The distributed scan. Exit 0 when every name was checked, 1 when any could not be (or Redis/the store is unreachable), 2 on a usage error. */
export async function distributedScan(args: string[], io: CliIo): Promise<number> {
  const read = settingsOrExit('scan', USAGE, io, () => readSettings(args, io.env));
  if ('exit' in read) return read.exit;
  const { settings } = read;
  let opened;
  try {
    // BullMQ and ioredis are optional: say which is missing before anything is opened.
    await loadRedisModules();
    opened = await openStores(settings.storage, { pruneAutomatically: false });
  } catch (error) {
    io.err(`spoof-checker scan: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_FAILED;
  }
  const store = opened.stores.batches;
  if (!(await opened.stores.apiKeys.getOrganization(CLI_ORGANIZATION))) await opened.stores.apiKeys.addOrganization({ id: CLI_ORGANIZATION, name: 'spoof-checker scan' });
  const service = new BatchService({ store, queue: new RedisBatchQueue(settings.redis) });
  const started = Date.now();
  let checked = 0;
  let failed = 0;
  let stoppedBy: string | undefined;
  let currentBatch: string | undefined;
  void io.stopSignal.then(async (signal) => {
    stoppedBy = signal;
    if (currentBatch) await store.cancel(CLI_ORGANIZATION, currentBatch, new Date().toISOString()).catch(() => undefined);
  });
  let lastProgress = 0;
  const progress = (total: number, batchDone: number) => {
    if (Date.now() - lastProgress < PROGRESS_INTERVAL_MS) return;
    lastProgress = Date.now();
    const rate = checked / Math.max(0.001, (Date.now() - started) / 1000);
    io.err(`${io.stderrIsTTY ? '\r\x1b[K' : ''}scan: ${batchDone}/${total} of this batch done, ${checked} written, ${rate.toFixed(0)}/s${io.stderrIsTTY ? '' : '\n'}`);
  };

  try {
    // Wait for the queue to connect (a few hundred ms), then refuse clearly if it cannot be reached.
    let readiness = await service.queue.ready();
    for (let i = 0; i < 25 && !readiness.ok; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      readiness = await service.queue.ready();
    }
    if (!readiness.ok) {
      io.err(`spoof-checker scan: cannot reach the queue at ${settings.redis}: ${readiness.reason}\n`);
      return EXIT_FAILED;
    }
    if (settings.format === 'csv') io.out(`${CSV_COLUMNS.join(',')}\n`);
    const input = (settings.file === '-' ? io.stdin : createReadStream(settings.file)) as Readable;
    for await (const names of nameGroups(input, settings.batchSize)) {
      if (stoppedBy) break;
      const batch = await store.create(newBatch(newBatchId(), CLI_ORGANIZATION, new Date().toISOString(), names));
      currentBatch = batch.id;
      if (!(await service.dispatch(batch))) throw new Error('the queue refused the batch');
      let after = -1;
      for (;;) {
        const current = await store.getById(batch.id);
        const final = current === undefined || current.status === 'done' || current.status === 'cancelled';
        for await (const page of resultPages(store, CLI_ORGANIZATION, batch.id, after, !final)) {
          let text = '';
          for (const row of page) {
            const formatted = formatRow(row.line, settings.format);
            text += formatted.text;
            checked++;
            if (formatted.failed) failed++;
          }
          io.out(text);
          after = page[page.length - 1]!.seq;
        }
        if (final || stoppedBy) break;
        progress(batch.total, current.done);
        await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
      }
      currentBatch = undefined;
    }
  } catch (error) {
    io.err(`spoof-checker scan: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_FAILED;
  } finally {
    await service.close();
    await opened.stores.close();
  }
  const seconds = (Date.now() - started) / 1000;
  io.err(`${io.stderrIsTTY ? '\r\x1b[K' : ''}scan: ${checked} checked in ${seconds.toFixed(1)} s on the queue's workers; ${failed} failed${stoppedBy ? `; stopped by ${stoppedBy}` : ''}\n`);
  if (stoppedBy) return exitCodeForSignal(stoppedBy);
  return failed > 0 ? EXIT_FAILED : EXIT_OK;
}
