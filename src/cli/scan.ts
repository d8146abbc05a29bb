import { once, setMaxListeners } from 'node:events';
import { createReadStream, createWriteStream, existsSync, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { setImmediate } from 'node:timers/promises';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { CheckOptions } from '@spoof-checker/engine';
import type { CheckErrorCode } from '@spoof-checker/engine';
import type { SpoofCheckResult } from '@spoof-checker/engine';
import { booleanOptions, integerOption, parseCommandArgs, RESOLVER_OPTIONS, stringOptions, UsageError } from './args.js';
import { writeFileAtomically } from './atomic-file.js';
import { checkOne, splitList, type ErrorLine } from './check.js';
import { limitHeapGrowth } from './heap-growth.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, exitCodeForSignal, type CliIo, type Command } from './io.js';
import { RANGES_HELP, rangesFromFlag } from './ranges-options.js';
import { resolverFromFlags } from './resolver-options.js';
import { CSV_COLUMNS, csvLine, jsonLine } from './scan-output.js';
import { hasTransportFlags, TRANSPORT_OPTIONS, TRANSPORT_USAGE, transportOptionsFromFlags } from './transport-options.js';

export { CSV_COLUMNS, csvLine, jsonLine, sharedInfrastructureCell } from './scan-output.js';

/** Checks in flight at once unless --concurrency says otherwise. */
export const DEFAULT_SCAN_CONCURRENCY = 32;
export const MAX_SCAN_CONCURRENCY = 1024;
/**
 * Checks in flight at once with `--transport`, unless --concurrency says otherwise. Each transport
 * check opens up to MAX_PARALLEL_PROBES SMTP connections and waits seconds on other people's
 * servers: 8 checks keep a scan at 32 connections at most, about what the API's transport limit
 * lets one client have, instead of the 32 × 4 a DNS-only scan's pool would open.
 */
export const DEFAULT_SCAN_TRANSPORT_CONCURRENCY = 8;
/** The most transport checks a scan runs at once, whatever --concurrency asks. */
export const MAX_SCAN_TRANSPORT_CONCURRENCY = 64;
/**
 * Answers the shared cache keeps during a scan against real servers (`--resolver`, the system's).
 * What a scan asks again is the providers' names (SPF includes, MX hosts), which every domain uses
 * and so stay in the LRU; each domain's own names (about 45 a check, most of them DKIM selectors)
 * are asked once, the check memoising its repeats. With the service's 50,000 entries the cache
 * filled with such answers after about 1,100 domains and stayed full, and V8 lets the heap grow to
 * several times what is live before it collects: 10,000 entries took the peak RSS of a scan from
 * 243 to 187 MB (bench/scan.ts, 10,000 domains), with the same upstream queries and results.
 */
export const SCAN_CACHE_MAX_ENTRIES = 10_000;
/**
 * V8's heap growing factor during a scan, as a percentage over the live heap (V8's
 * `--heap-growing-percent`; by default it picks up to 300 %). A scan's live heap is small and flat
 * (about 30 MB: the checks in flight, the cached zones, the index of a zone directory), but what it
 * frees is a lot, much of it after one scavenge (a parsed zone, a check's answers), so with the
 * default V8 let the old space grow to four times the live heap between full collections and kept
 * the freed pages: `scan --zones` over 200,000 files peaked at 261 MB, and near 300 MB at a million.
 * With 50 % the old space is collected at 1.5 times the live heap (full collections of a 30 MB heap
 * take milliseconds). Set when `scan` starts, for the rest of the process: `scan` is the process's
 * command. Node started with `--heap-growing-percent=N` keeps N (0: V8's own choice); NODE_OPTIONS
 * cannot carry this flag.
 */
export const SCAN_HEAP_GROWING_PERCENT = 50;
/** How often the progress line is redrawn on a terminal. */
const PROGRESS_INTERVAL_MS = 250;

const USAGE = `Usage: spoof-checker scan <file|-> [options]

Checks one name per line (blank lines and lines starting with # are skipped) and streams one result
per name, in completion order, in constant memory. A summary goes to stderr at the end.

Options:
  --concurrency N      checks in flight at once (default ${DEFAULT_SCAN_CONCURRENCY}, at most ${MAX_SCAN_CONCURRENCY})
  --format jsonl|csv   output format (default jsonl)
  --out FILE           write to FILE; if it exists, resume: names already in it are skipped,
                       names that failed there on DNS (dns_failure, dns_timeout) are checked again
  --details            keep each result's details (the SPF tree, DKIM probes…) in JSON lines
  --zones DIR          answer from the *.zone files in DIR
  --demo-zones         answer from the fixture zones shipped with spoof-checker
  --resolver IP[:PORT] ask this DNS server instead of the system's resolvers; several,
                       comma-separated (1.1.1.1,8.8.8.8), share the queries and stand in for each other
  --timeout MS         per-query timeout for real DNS servers
  --faults FILE        inject the DNS faults listed in FILE (a JSON list of rules, or of scenarios
                       such as fixtures/scenarios.json)
  --selectors a,b      DKIM selectors to probe before the built-in list
  --transport          also check mail sent TO each domain (MTA-STS, TLS-RPT, a STARTTLS probe of
                       every MX), added as "transport" to each JSON line (--format jsonl only); at most
                       ${DEFAULT_SCAN_TRANSPORT_CONCURRENCY} checks in flight unless --concurrency says otherwise (at most ${MAX_SCAN_TRANSPORT_CONCURRENCY}),
                       probes of one MX address shared between domains
${TRANSPORT_USAGE}
${RANGES_HELP}
  --redis URL          check on the workers of this Redis queue instead (with --database URL or --data DIR,
                       the store the workers use; --format only): see 'spoof-checker worker'
  -h, --help           this text

Ctrl-C or SIGTERM stops at once: the output keeps only whole lines, the summary says where it
stopped; a second signal ends the process without the summary. A progress line (names/s, ETA) is
drawn on stderr when it is a terminal.

Exit status: 0 when every name was checked, 1 when any could not be, 2 on a usage error,
130/143 when stopped by SIGINT/SIGTERM, 141 when the reader of stdout went away.
`;

type Format = 'jsonl' | 'csv';

/** `spoof-checker scan`: bulk checks from a file or stdin, streamed, resumable, stoppable. */
export const scan: Command = async (args, io) => {
  // `--redis URL`: the names are checked by the queue's workers and streamed back (src/cli/distributed-scan.ts).
  if (args.some((arg) => arg === '--redis' || arg.startsWith('--redis='))) return (await import('./distributed-scan.js')).distributedScan(args, io);
  let settings;
  try {
    settings = readSettings(args);
  } catch (error) {
    io.err(`spoof-checker scan: ${error instanceof Error ? error.message : String(error)}\nRun 'spoof-checker scan --help' for the options.\n`);
    return EXIT_USAGE;
  }
  if (settings === 'help') {
    io.out(USAGE);
    return EXIT_OK;
  }
  limitHeapGrowth(SCAN_HEAP_GROWING_PERCENT);
  let built;
  let ranges;
  try {
    ranges = rangesFromFlag(settings.rangesFlag, io.env);
    built = await resolverFromFlags(settings.resolverFlags);
  } catch (error) {
    io.err(`spoof-checker scan: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_USAGE;
  }
  // One signal stops every check in flight; each check adds one listener while its lookups run, and
  // the pool bounds the checks, so the bound on listeners is the pool's size (no MaxListeners warning).
  const abort = new AbortController();
  setMaxListeners(settings.concurrency * LISTENERS_PER_CHECK, abort.signal);
  const options: CheckOptions = { resolver: built.resolver, selectors: settings.selectors, signal: abort.signal, ranges };
  if (settings.transport) {
    try {
      // One probe cache for the whole scan (bounded, MAX_CACHED_PROBES): domains sharing an MX share its probe.
      options.transport = await transportOptionsFromFlags(settings.transportFlags);
    } catch (error) {
      io.err(`spoof-checker scan: ${error instanceof Error ? error.message : String(error)}\n`);
      return EXIT_USAGE;
    }
  }

  let previous: PreviousOutput = { done: new Set(), retried: 0, dropped: 0 };
  // Only a regular file is read back for resuming: a device or a pipe (/dev/stdout, a FIFO) is written to only.
  const outStat = settings.out ? statSync(settings.out, { throwIfNoEntry: false }) : undefined;
  if (outStat?.isDirectory()) {
    io.err(`spoof-checker scan: --out ${settings.out} is a directory; give a file name in it.\n`);
    return EXIT_USAGE;
  }
  if (settings.out && outStat?.isFile()) {
    try {
      previous = await readPreviousOutput(settings.out, settings.format);
    } catch (error) {
      io.err(`spoof-checker scan: cannot resume from ${settings.out}: ${error instanceof Error ? error.message : String(error)}\n`);
      return EXIT_USAGE;
    }
  }
  const done = previous.done;
  const sink = settings.out ? createWriteStream(settings.out, { flags: 'a' }) : undefined;
  let sinkError: Error | undefined;
  sink?.on('error', (error) => {
    sinkError ??= error;
    abort.abort();
  });
  // Every writer waits on the same 'drain', so there is one listener however many results are waiting.
  let drained: Promise<unknown> | undefined;
  const write = async (text: string) => {
    if (!sink) return io.out(text);
    if (sinkError) return;
    if (!sink.write(text)) {
      drained ??= once(sink, 'drain').finally(() => (drained = undefined));
      await drained;
    }
  };
  if (settings.format === 'csv' && !(await hasContent(settings.out))) {
    await write(`${CSV_COLUMNS.join(',')}\n`);
  }

  const input = (settings.file === '-' ? io.stdin : createReadStream(settings.file)) as Readable;
  if (settings.file === '-' && (io.stdin as { isTTY?: boolean }).isTTY) {
    io.err('scan: reading names from the terminal, one per line; end with Ctrl-D.\n');
  }
  const progress = showProgress(io, settings.out !== undefined);
  const total = progress && settings.file !== '-' ? await countNames(settings.file, done) : undefined;
  const tally = new Tally(io, progress, total);
  let failedToRead: string | undefined;
  input.on('error', (error: Error) => (failedToRead ??= error.message));

  const lines = createInterface({ input, crlfDelay: Infinity });
  let stoppedBy: string | undefined;
  let linesRead = 0;
  let skipped = 0;
  void io.stopSignal.then((signal) => {
    // Stop at once: no new checks, the ones in flight are cancelled and their results dropped, so
    // the output holds only whole lines of finished checks.
    stoppedBy = signal;
    abort.abort();
    lines.close();
  });

  const inFlight = new Set<Promise<void>>();
  let lastTurn = performance.now();
  try {
    for await (const raw of lines) {
      // Checks answered from memory (--zones) and buffered input lines are all promise jobs: without
      // a turn of the event loop now and then, signals, the progress timer and pipe errors would wait.
      if (performance.now() - lastTurn > EVENT_LOOP_TURN_MS) {
        await setImmediate();
        lastTurn = performance.now();
      }
      if (stoppedBy || sinkError) break;
      linesRead++;
      const name = raw.trim();
      if (name === '' || name.startsWith('#')) continue;
      if (done.has(name)) {
        skipped++;
        continue;
      }
      const job = checkOne(name, { ...options, resolver: built.resolverFor(name) })
        .then(async (result) => {
          if (stoppedBy || sinkError) return;
          tally.add(result);
          await write(settings.format === 'csv' ? csvLine(name, result) : jsonLine(name, result, settings.details));
        })
        .catch((error: Error) => {
          // Only the write can fail (checkOne never throws): the output file is gone or full.
          sinkError ??= error;
          abort.abort();
        });
      const tracked = job.finally(() => inFlight.delete(tracked));
      inFlight.add(tracked);
      // Back-pressure: stop reading while the pool is full, so memory stays flat however long the list.
      if (inFlight.size >= settings.concurrency) await Promise.race(inFlight);
    }
  } catch (error) {
    failedToRead ??= error instanceof Error ? error.message : String(error);
  }
  await Promise.all(inFlight);
  if (settings.file !== '-') input.destroy();
  if (sink) {
    sink.end();
    if (!sink.closed) await once(sink, 'close').catch(() => undefined);
  }
  tally.finish({ previous, skipped, stoppedBy, linesRead, file: settings.file, out: settings.out });
  if (sinkError) {
    io.err(`spoof-checker scan: cannot write ${settings.out}: ${sinkError.message}\n`);
    return EXIT_FAILED;
  }
  if (stoppedBy) return exitCodeForSignal(stoppedBy);
  if (failedToRead) {
    io.err(`spoof-checker scan: cannot read ${settings.file}: ${failedToRead}\n`);
    return EXIT_USAGE;
  }
  return tally.failed > 0 ? EXIT_FAILED : EXIT_OK;
};

/** The longest the scan loop runs without letting the event loop turn (signals, timers, I/O errors). */
const EVENT_LOOP_TURN_MS = 20;

/** Abort listeners one check holds on the scan's signal at most (one today; two leaves room). */
const LISTENERS_PER_CHECK = 2;

/**
 * Whether to draw the progress line: only on a terminal (a log or a pipe gets the summary alone), not
 * on a dumb one (it cannot erase the line), and not when the results go to the same terminal on
 * stdout (they would tear the line apart; the results are the progress there).
 */
export function showProgress(io: Pick<CliIo, 'stderrIsTTY' | 'stdoutIsTTY' | 'env'>, toFile: boolean): boolean {
  if (!io.stderrIsTTY || io.env.TERM === 'dumb') return false;
  return toFile || !io.stdoutIsTTY;
}

function readSettings(args: string[]) {
  const { values, positionals } = parseCommandArgs(
    args,
    {
      ...RESOLVER_OPTIONS,
      ...stringOptions('concurrency', 'format', 'out', 'selectors', 'faults', 'ranges'),
      ...booleanOptions('details', 'transport'),
      ...TRANSPORT_OPTIONS,
    },
    true,
  );
  if (values.help) return 'help' as const;
  if (positionals.length !== 1) throw new UsageError('give exactly one input: a file with one name per line, or - for stdin');
  if (positionals[0] !== '-' && !existsSync(positionals[0]!)) throw new UsageError(`cannot read "${positionals[0]}": no such file`);
  const format = values.format ?? 'jsonl';
  if (format !== 'jsonl' && format !== 'csv') throw new UsageError(`--format must be jsonl or csv, not "${format}"`);
  const transport = values.transport ?? false;
  const transportFlags = { tlsCa: values['tls-ca'], connectPorts: values['connect-ports'], allowPrivateAddresses: values['allow-private-addresses'] };
  if (!transport && hasTransportFlags(transportFlags)) throw new UsageError('--tls-ca, --connect-ports and --allow-private-addresses apply to --transport; add --transport');
  // The CSV columns are fixed (a resumed file must keep its shape): the transport result goes in JSON lines.
  if (transport && format === 'csv') throw new UsageError('--transport writes its result into JSON lines; use --format jsonl (the default)');
  return {
    file: positionals[0]!,
    concurrency: transport
      ? integerOption(values.concurrency, 'concurrency', DEFAULT_SCAN_TRANSPORT_CONCURRENCY, 1, MAX_SCAN_TRANSPORT_CONCURRENCY)
      : integerOption(values.concurrency, 'concurrency', DEFAULT_SCAN_CONCURRENCY, 1, MAX_SCAN_CONCURRENCY),
    transport,
    transportFlags,
    format: format as Format,
    out: values.out,
    details: values.details ?? false,
    selectors: splitList(values.selectors),
    rangesFlag: values.ranges,
    resolverFlags: { zones: values.zones, demoZones: values['demo-zones'], resolver: values.resolver, timeout: values.timeout, cacheMaxEntries: SCAN_CACHE_MAX_ENTRIES, faults: values.faults, onDemandZones: true },
  };
}

/** What an earlier run left in the output file. */
export interface PreviousOutput {
  /** Names with a result (or a failure that retrying cannot fix): skipped. */
  done: Set<string>;
  /** Names whose check failed for a reason that may pass now (a DNS failure or timeout): checked again. */
  retried: number;
  /** Lines removed from the file: the failures checked again, and a last line cut short by a killed run. */
  dropped: number;
}

/**
 * Error codes a second try cannot fix: the input is not a domain, or DNS answered that it does not
 * exist (an answer, RFC 8020, not a failure). Every other failure (dns_failure, dns_timeout, internal)
 * is checked again on resume.
 */
export const FINAL_ERROR_CODES: ReadonlySet<CheckErrorCode> = new Set<CheckErrorCode>(['invalid_domain', 'domain_not_found']);

/**
 * Reads an earlier run's output: the first column of CSV, the `input` of JSON lines. Names that
 * failed for a passing reason are not done; their lines (and a last line cut short by a killed run)
 * are removed from the file, through a temporary file renamed over it, so that after the resume the
 * file holds exactly one whole line per name. A file with any other line that is not a result (not
 * what this command writes) is refused, untouched: resuming must never rewrite someone else's file.
 */
export async function readPreviousOutput(path: string, format: Format): Promise<PreviousOutput> {
  const done = new Set<string>();
  let retried = 0;
  const keep: boolean[] = [];
  let foreign: number | undefined; // the first line that is not a result, counted from 1
  for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
    const entry = format === 'csv' ? readCsvEntry(line) : readJsonEntry(line);
    if (entry === 'header' || entry === 'blank') {
      keep.push(true);
    } else if (entry === undefined) {
      foreign ??= keep.length + 1;
      keep.push(false);
    } else if (entry.error !== undefined && !(FINAL_ERROR_CODES as ReadonlySet<string>).has(entry.error)) {
      keep.push(false);
      retried++;
    } else {
      keep.push(true);
      done.add(entry.input);
    }
  }
  // A line cut short by a killed run is the last one, with no newline after it.
  const cutShort = foreign === keep.length && !(await endsWithNewline(path));
  if (foreign !== undefined && !cutShort) {
    throw new Error(`line ${foreign} is not a ${format === 'csv' ? 'CSV row' : 'JSON line'} this command writes; resume only from a file a scan wrote (with the same --format), or give a new --out file`);
  }
  const dropped = keep.filter((k) => !k).length;
  if (dropped > 0) await rewriteKeeping(path, keep);
  return { done, retried, dropped };
}

async function endsWithNewline(path: string): Promise<boolean> {
  const { size } = await stat(path);
  if (size === 0) return true;
  for await (const chunk of createReadStream(path, { start: size - 1 })) return (chunk as Buffer).at(-1) === 0x0a;
  return true;
}

/** One line of an earlier output: a result, the CSV header, a blank line, or undefined for anything else. */
type Entry = { input: string; error: string | undefined } | 'header' | 'blank' | undefined;

function readJsonEntry(line: string): Entry {
  if (line.trim() === '') return 'blank';
  try {
    const parsed = JSON.parse(line) as { input?: unknown; error?: { code?: unknown } };
    if (typeof parsed.input !== 'string') return undefined;
    return { input: parsed.input, error: typeof parsed.error?.code === 'string' ? parsed.error.code : undefined };
  } catch {
    return undefined;
  }
}

const CSV_ERROR_COLUMN = CSV_COLUMNS.indexOf('error_code');

function readCsvEntry(line: string): Entry {
  if (line.trim() === '') return 'blank';
  const cells = parseCsvLine(line);
  if (cells === undefined || cells.length !== CSV_COLUMNS.length) return undefined;
  if (cells.join(',') === CSV_COLUMNS.join(',')) return 'header';
  return { input: cells[0]!, error: cells[CSV_ERROR_COLUMN] || undefined };
}

/** The cells of one CSV line (RFC 4180 §2), or undefined when a quoted cell does not close. */
export function parseCsvLine(line: string): string[] | undefined {
  const cells: string[] = [];
  let i = 0;
  for (;;) {
    if (line[i] === '"') {
      let cell = '';
      i++;
      for (;;) {
        const quote = line.indexOf('"', i);
        if (quote === -1) return undefined;
        cell += line.slice(i, quote);
        if (line[quote + 1] === '"') {
          cell += '"';
          i = quote + 2;
        } else {
          i = quote + 1;
          break;
        }
      }
      cells.push(cell);
      if (i === line.length) return cells;
      if (line[i] !== ',') return undefined;
      i++;
    } else {
      const comma = line.indexOf(',', i);
      if (comma === -1) {
        cells.push(line.slice(i));
        return cells;
      }
      cells.push(line.slice(i, comma));
      i = comma + 1;
    }
  }
}

/** Rewrites `path` with only the lines whose `keep` flag is set, atomically (src/cli/atomic-file.ts: a fresh temporary file, then a rename). */
async function rewriteKeeping(path: string, keep: boolean[]): Promise<void> {
  async function* kept(): AsyncIterable<string> {
    let index = 0;
    for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
      if (keep[index++]) yield `${line}\n`;
    }
  }
  await writeFileAtomically(path, kept());
}

async function hasContent(path: string | undefined): Promise<boolean> {
  if (path === undefined || !statSync(path, { throwIfNoEntry: false })?.isFile()) return false;
  for await (const chunk of createReadStream(path, { start: 0, end: 0 })) return (chunk as Buffer).length > 0;
  return false;
}

/** Names in a file still to check (for the ETA), counted in one streaming pass. */
async function countNames(path: string, done: ReadonlySet<string>): Promise<number | undefined> {
  try {
    let n = 0;
    for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
      const name = line.trim();
      if (name !== '' && !name.startsWith('#') && !done.has(name)) n++;
    }
    return n;
  } catch {
    return undefined;
  }
}

/** How a run ended, for the summary. */
interface RunEnd {
  previous: PreviousOutput;
  /** Names of the input skipped because the output already has them. */
  skipped: number;
  stoppedBy: string | undefined;
  linesRead: number;
  file: string;
  out: string | undefined;
}

/** Counts per verdict and per error code, the progress line on a terminal, and the summary. */
class Tally {
  readonly verdicts = new Map<string, number>();
  readonly errors = new Map<string, number>();
  checked = 0;
  failed = 0;
  private readonly started = Date.now();
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly io: CliIo,
    progress: boolean,
    private readonly total: number | undefined,
  ) {
    if (progress) this.timer = setInterval(() => this.draw(), PROGRESS_INTERVAL_MS).unref();
  }

  add(result: SpoofCheckResult | ErrorLine): void {
    this.checked++;
    if (this.checked === 1 && this.timer) this.draw(); // show the line at once, then every interval
    if ('error' in result) {
      this.failed++;
      this.errors.set(result.error.code, (this.errors.get(result.error.code) ?? 0) + 1);
    } else {
      this.verdicts.set(result.verdict, (this.verdicts.get(result.verdict) ?? 0) + 1);
    }
  }

  private draw(): void {
    this.io.err(`\r\x1b[K${progressLine({ checked: this.checked, failed: this.failed, total: this.total, elapsedMs: Date.now() - this.started })}`);
  }

  finish(end: RunEnd): void {
    if (this.timer) {
      clearInterval(this.timer);
      this.io.err('\r\x1b[K');
    }
    const seconds = (Date.now() - this.started) / 1000;
    const verdicts = ['spoofable', 'partially_protected', 'protected'].map((v) => `${v} ${this.verdicts.get(v) ?? 0}`).join(', ');
    const errors = [...this.errors].map(([code, n]) => `${code} ${n}`).join(', ');
    const { previous, skipped } = end;
    if (this.checked === 0 && skipped > 0 && !end.stoppedBy) {
      this.io.err(`scan: nothing left to check: all ${skipped} names are already in ${end.out ?? 'the output'}.\n`);
      return;
    }
    const stopped = end.stoppedBy
      ? `scan: stopped by ${end.stoppedBy} at line ${end.linesRead} of ${end.file === '-' ? 'stdin' : end.file} (the checks in flight were cancelled, not written)\n`
      : '';
    const resume = end.stoppedBy
      ? end.out
        ? `scan: run the same command again to resume: names already in ${end.out} are skipped.\n`
        : 'scan: to make a long scan resumable, write it with --out FILE.\n'
      : '';
    this.io.err(
      stopped +
        `scan: ${this.checked} checked in ${seconds.toFixed(1)} s: ${verdicts}; ${this.failed} failed${errors ? ` (${errors})` : ''}` +
        (skipped > 0 ? `; ${skipped} skipped (already in the output)` : '') +
        (previous.retried > 0 ? `; ${previous.retried} that failed before checked again` : '') +
        '\n' +
        resume,
    );
  }
}

/** The progress line: done/total, names per second, failures, and the time left when the total is known. */
export function progressLine(p: { checked: number; failed: number; total: number | undefined; elapsedMs: number }): string {
  const rate = p.checked / (Math.max(p.elapsedMs, 1) / 1000);
  const of = p.total === undefined ? '' : `/${p.total}`;
  const remaining = p.total === undefined ? undefined : Math.max(0, p.total - p.checked);
  const eta = remaining !== undefined && rate > 0 ? `, ETA ${formatDuration(remaining / rate)}` : '';
  return `scan: ${p.checked}${of} checked, ${rate.toFixed(0)} names/s, ${p.failed} failed${eta}`;
}

function formatDuration(seconds: number): string {
  if (seconds < 60) return `${Math.ceil(seconds)}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(Math.ceil(seconds % 60)).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}

