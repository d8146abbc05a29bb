import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { CheckOptions } from '../check.js';
import type { SpoofCheckResult } from '../result.js';
import { integerOption, parseCommandArgs, RESOLVER_OPTIONS, UsageError } from './args.js';
import { checkOne, splitList, type ErrorLine } from './check.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, type CliIo, type Command } from './io.js';
import { resolverFromFlags } from './resolver-options.js';

/** Checks in flight at once unless --concurrency says otherwise. */
export const DEFAULT_SCAN_CONCURRENCY = 32;
export const MAX_SCAN_CONCURRENCY = 1024;
/** How often the progress line is redrawn on a terminal. */
const PROGRESS_INTERVAL_MS = 250;

const USAGE = `Usage: spoof-checker scan <file|-> [options]

Checks one name per line (blank lines and lines starting with # are skipped) and streams one result
per name, in completion order, in constant memory. A summary goes to stderr at the end.

Options:
  --concurrency N      checks in flight at once (default ${DEFAULT_SCAN_CONCURRENCY}, at most ${MAX_SCAN_CONCURRENCY})
  --format jsonl|csv   output format (default jsonl)
  --out FILE           write to FILE; if it exists, names already in it are skipped (resume)
  --details            keep each result's details (the SPF tree, DKIM probes…) in JSON lines
  --zones DIR          answer from the *.zone files in DIR
  --resolver IP[:PORT] ask this DNS server instead of the system's resolvers
  --timeout MS         per-query timeout for real DNS servers
  --selectors a,b      DKIM selectors to probe before the built-in list
  -h, --help           this text

Exit status: 0 when every name was checked, 1 when any could not be, 2 on a usage error.
`;

type Format = 'jsonl' | 'csv';

/** The CSV columns, in order: the spec's summary fields of each result. */
export const CSV_COLUMNS = [
  'input',
  'domain',
  'verdict',
  'spoofable',
  'inbox_outcome',
  'dmarc_policy',
  'dmarc_subdomain_policy',
  'dmarc_percentage',
  'spf_qualifier',
  'spf_lookup_count',
  'dkim_selector',
  'dkim_key_length',
  'mx_provider',
  'reasons',
  'error_code',
  'error_message',
] as const;

/** `spoof-checker scan`: bulk checks from a file or stdin, streamed, resumable. */
export const scan: Command = async (args, io) => {
  let settings;
  try {
    settings = readSettings(args);
  } catch (error) {
    io.err(`spoof-checker scan: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (settings === 'help') {
    io.out(USAGE);
    return EXIT_OK;
  }
  let built;
  try {
    built = await resolverFromFlags(settings.resolverFlags);
  } catch (error) {
    io.err(`spoof-checker scan: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_USAGE;
  }
  const options: CheckOptions = { resolver: built.resolver, selectors: settings.selectors };

  const done = settings.out && existsSync(settings.out) ? await namesAlreadyIn(settings.out, settings.format) : new Set<string>();
  const sink = settings.out ? createWriteStream(settings.out, { flags: 'a' }) : undefined;
  const write = async (text: string) => {
    if (!sink) return io.out(text);
    if (!sink.write(text)) await once(sink, 'drain');
  };
  if (settings.format === 'csv' && !(await hasContent(settings.out))) {
    await write(`${CSV_COLUMNS.join(',')}\n`);
  }

  const input = (settings.file === '-' ? io.stdin : createReadStream(settings.file)) as Readable;
  const total = io.stderrIsTTY && settings.file !== '-' ? await countNames(settings.file) : undefined;
  const tally = new Tally(io, total, done.size);
  let failedToRead: string | undefined;
  input.on('error', (error: Error) => (failedToRead = error.message));

  const inFlight = new Set<Promise<void>>();
  try {
    for await (const raw of createInterface({ input, crlfDelay: Infinity })) {
      const name = raw.trim();
      if (name === '' || name.startsWith('#') || done.has(name)) continue;
      const job = checkOne(name, options).then(async (result) => {
        tally.add(result);
        await write(settings.format === 'csv' ? csvLine(name, result) : jsonLine(name, result, settings.details));
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
  if (sink) {
    sink.end();
    await once(sink, 'close');
  }
  tally.finish();
  if (failedToRead) {
    io.err(`spoof-checker scan: cannot read ${settings.file}: ${failedToRead}\n`);
    return EXIT_USAGE;
  }
  return tally.failed > 0 ? EXIT_FAILED : EXIT_OK;
};

function readSettings(args: string[]) {
  const { values, positionals } = parseCommandArgs(
    args,
    {
      ...RESOLVER_OPTIONS,
      concurrency: { type: 'string' },
      format: { type: 'string' },
      out: { type: 'string' },
      details: { type: 'boolean' },
      selectors: { type: 'string' },
    },
    true,
  );
  if (values.help) return 'help' as const;
  if (positionals.length !== 1) throw new UsageError('give exactly one input: a file with one name per line, or - for stdin');
  if (positionals[0] !== '-' && !existsSync(positionals[0]!)) throw new UsageError(`cannot read "${positionals[0]}": no such file`);
  const format = values.format ?? 'jsonl';
  if (format !== 'jsonl' && format !== 'csv') throw new UsageError(`--format must be jsonl or csv, not "${format}"`);
  return {
    file: positionals[0]!,
    concurrency: integerOption(values.concurrency, 'concurrency', DEFAULT_SCAN_CONCURRENCY, 1, MAX_SCAN_CONCURRENCY),
    format: format as Format,
    out: values.out,
    details: values.details ?? false,
    selectors: splitList(values.selectors),
    resolverFlags: { zones: values.zones, resolver: values.resolver, timeout: values.timeout },
  };
}

/** One JSON line: the input, then the result (without `details` unless asked) or the error. */
export function jsonLine(input: string, result: SpoofCheckResult | ErrorLine, details: boolean): string {
  if ('error' in result) return `${JSON.stringify(result)}\n`;
  const { details: behind, ...summary } = result;
  return `${JSON.stringify(details ? { input, ...summary, details: behind } : { input, ...summary })}\n`;
}

/** One CSV line (RFC 4180 quoting). */
export function csvLine(input: string, result: SpoofCheckResult | ErrorLine): string {
  const cells: (string | number | boolean | null)[] =
    'error' in result
      ? [input, '', '', '', '', '', '', '', '', '', '', '', '', '', result.error.code, result.error.message]
      : [
          input,
          result.domain,
          result.verdict,
          result.spoofable,
          result.inboxOutcome,
          result.dmarc.policy,
          result.dmarc.subdomainPolicy,
          result.dmarc.percentage,
          result.spf.qualifier,
          result.spf.lookupCount,
          result.dkim.selector,
          result.dkim.keyLength,
          result.mx.provider,
          result.reasons.map((r) => r.id).join(' '),
          '',
          '',
        ];
  return `${cells.map(csvCell).join(',')}\n`;
}

function csvCell(value: string | number | boolean | null): string {
  const text = value === null ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The inputs already written to an output file: the first column of CSV, the `input` of JSON lines. */
async function namesAlreadyIn(path: string, format: Format): Promise<Set<string>> {
  const names = new Set<string>();
  for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
    if (line === '') continue;
    if (format === 'csv') {
      const first = line.startsWith('"') ? line.slice(1, line.indexOf('",')).replace(/""/g, '"') : line.split(',', 1)[0]!;
      if (first !== 'input') names.add(first);
    } else {
      try {
        const parsed = JSON.parse(line) as { input?: unknown };
        if (typeof parsed.input === 'string') names.add(parsed.input);
      } catch {
        // A line cut short by an interrupted run: that name is checked again.
      }
    }
  }
  return names;
}

async function hasContent(path: string | undefined): Promise<boolean> {
  if (path === undefined || !existsSync(path)) return false;
  for await (const chunk of createReadStream(path, { start: 0, end: 0 })) return (chunk as Buffer).length > 0;
  return false;
}

/** Names in a file (for the ETA), counted in one streaming pass. */
async function countNames(path: string): Promise<number | undefined> {
  try {
    let n = 0;
    for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
      const name = line.trim();
      if (name !== '' && !name.startsWith('#')) n++;
    }
    return n;
  } catch {
    return undefined;
  }
}

/** Counts per verdict and per error code, and the progress line on a terminal. */
class Tally {
  readonly verdicts = new Map<string, number>();
  readonly errors = new Map<string, number>();
  checked = 0;
  failed = 0;
  private readonly started = Date.now();
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly io: CliIo,
    private readonly total: number | undefined,
    private readonly skipped: number,
  ) {
    if (io.stderrIsTTY) this.timer = setInterval(() => this.draw(), PROGRESS_INTERVAL_MS).unref();
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
    const seconds = Math.max(Date.now() - this.started, 1) / 1000;
    const rate = this.checked / seconds;
    const remaining = this.total === undefined ? undefined : Math.max(0, this.total - this.skipped - this.checked);
    const eta = remaining !== undefined && rate > 0 ? ` ETA ${formatDuration(remaining / rate)}` : '';
    const of = this.total === undefined ? '' : `/${this.total - this.skipped}`;
    this.io.err(`\r\x1b[Kscan: ${this.checked}${of} checked, ${rate.toFixed(0)}/s, ${this.failed} failed${eta}`);
  }

  finish(): void {
    if (this.timer) {
      clearInterval(this.timer);
      this.io.err('\r\x1b[K');
    }
    const seconds = (Date.now() - this.started) / 1000;
    const verdicts = ['spoofable', 'partially_protected', 'protected'].map((v) => `${v} ${this.verdicts.get(v) ?? 0}`).join(', ');
    const errors = [...this.errors].map(([code, n]) => `${code} ${n}`).join(', ');
    this.io.err(
      `scan: ${this.checked} checked in ${seconds.toFixed(1)} s: ${verdicts}; ${this.failed} failed${errors ? ` (${errors})` : ''}` +
        (this.skipped > 0 ? `; ${this.skipped} skipped (already in the output)` : '') +
        '\n',
    );
  }
}

function formatDuration(seconds: number): string {
  if (seconds < 60) return `${Math.ceil(seconds)}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(Math.ceil(seconds % 60)).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}

