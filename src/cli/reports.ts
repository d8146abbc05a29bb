/**
 * `spoof-checker reports`: DMARC aggregate and TLS reports in, and what they say out.
 *   reports import <file|dir|->... [--data DIR | --database URL] [--org ID] [--zones DIR | --demo-zones | --resolver ADDR]
 *   reports fetch --imap URL [--tls-ca FILE] [--data DIR | --database URL] [--org ID] [--zones DIR | --demo-zones | --resolver ADDR]
 *   reports show <domain> [--days N] [--until DATE] [--json] [--html FILE] [--data DIR | --database URL] [--org ID] [--zones DIR | --demo-zones | --resolver ADDR]
 *
 * The CLI works on one organisation at a time (`--org`, else `default`, which is not an API
 * organisation) and takes reports for any domain.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { describeConnectFailure, describeFetch, fetchReportsFromImap, IMAP_PASSWORD_ENV, parseImapUrl } from '../ingest/imap.js';
import { countTally, reportSink, type IngestTally } from '../ingest/ingest.js';
import { importPaths } from '../ingest/files.js';
import { DEFAULT_DATA_DIR, MEMORY_DATA_DIR, type StorageChoice } from '../store/open.js';
import { isStoreUnavailable } from '../store/errors.js';
import type { Stores } from '../store/types.js';
import { integerOption, parseCommandArgs, RESOLVER_OPTIONS, UsageError } from './args.js';
import { limitHeapGrowth } from './heap-growth.js';
import { EXIT_FAILED, EXIT_OK, type CliIo, type Command } from './io.js';
import { runSubcommand, withStores } from './subcommands.js';
import { resolverFromFlags } from './resolver-options.js';

/** The window `show` takes without `--days`, and the longest (as src/summaries/summary.ts; the analysis is loaded only by `show`). */
const DEFAULT_REPORT_DAYS = 30;
const MAX_REPORT_DAYS = 366;

/** The organisation the CLI files reports under when `--org` is not given (not an API organisation). */
export const DEFAULT_CLI_ORGANIZATION = 'default';

/**
 * V8's heap growing factor while `reports import` runs (src/cli/heap-growth.ts), as a percentage over
 * the live heap. An import's live heap is small and flat (about 45 MB: the files in flight,
 * REPORT_INGEST_IN_FLIGHT, and the store), but each report's stored form waits for its parse's
 * neighbours and its transaction long enough to be promoted, then dies in the old space: with V8's
 * own factor the old space grew to four times the live heap between full collections and the RSS
 * from 169 to 306 MiB over 10,000 reports of 100 records (SQLite); at 50 % it stayed at 178–190 MiB,
 * for about 0.05 ms more of full collections a report (docs/benchmarks.md, "Ingestion memory").
 */
export const IMPORT_HEAP_GROWING_PERCENT = 50;

const USAGE = `Usage: spoof-checker reports import <file|dir|->... [options]
       spoof-checker reports fetch --imap imap://user[:password]@host[:port]/MAILBOX [options]
       spoof-checker reports show <domain> [--days N] [--until DATE] [--json] [--html FILE] [options]

DMARC aggregate reports (RFC 7489, RFC 9990) and SMTP TLS reports (RFC 8460): who sends as the
domain, and what p=quarantine or p=reject would break.

  import               read report files (.xml, .xml.gz, .zip, TLS-RPT .json, .json.gz), messages
                       (.eml) and mailboxes (.mbox) with reports attached, directories of them, or
                       standard input (-)
  fetch                take every message of an IMAP mailbox, then move it to a folder, so that a
                       second fetch adds nothing; a message without a report is moved aside
    --imap URL         imap:// (STARTTLS, required) or imaps:// (TLS); the password may come from
                       ${IMAP_PASSWORD_ENV} instead of the URL
    --tls-ca FILE      extra trusted root certificates (PEM) for the IMAP server, added to the system's
    --processed NAME   the folder processed messages go to (default spoof-checker-processed)
    --aside NAME       the folder messages without a report go to (default spoof-checker-no-report)
  show <domain>        senders, what enforcement would break, SPF tightening, TLS results
    --days N           reports whose own date range falls in the last N days (default ${DEFAULT_REPORT_DAYS}; at most ${MAX_REPORT_DAYS})
    --until DATE       the window ends at DATE (YYYY-MM-DD, end of that UTC day) instead of now
    --json             one JSON document
    --html FILE        also write one self-contained page with a daily chart of pass and fail

  --data DIR           SQLite in DIR (default ${DEFAULT_DATA_DIR}) [SPOOF_CHECKER_DATA]
  --database URL       PostgreSQL: postgresql://user:pw@host/db [DATABASE_URL]
  --org ID             the organisation (import, fetch: default '${DEFAULT_CLI_ORGANIZATION}'; show: default the one
                       organisation holding reports about the domain; with several, an error lists them)
  --zones DIR          answer DNS from zone files (show: the SPF record; import/fetch: authenticate messages)
  --demo-zones         answer DNS from the fixture zones shipped with spoof-checker (nothing is sent to
                       any DNS server)
  --resolver IP[:PORT] DNS servers to ask instead of the system's
  -h, --help           this text

import goes on after a refused file (as make's --keep-going does; there is no stopping at the first):
every file gets its own line (stored, duplicate, refused with the reason, or no report for a mail
message that carries none), then a total. A file that is not a report (empty, random bytes, a
truncated archive) is refused whatever its name or extension.

Exit status: 0 done (import: every file read and none refused; a duplicate, or a mail message without
a report, is not a failure), 1 some file was refused (each is named with its reason) or the store
failed, 2 on a usage error.
`;

/** `spoof-checker reports`. */
export const reports: Command = async (args, io) =>
  runSubcommand('reports', USAGE, args, io, (sub, rest) => {
    if (sub === 'import') return importCommand(rest, io);
    if (sub === 'fetch') return fetchCommand(rest, io);
    if (sub === 'show') return showCommand(rest, io);
    throw new UsageError(`unknown subcommand '${sub}': use import, fetch or show`);
  });

const STORE_OPTIONS = {
  data: { type: 'string' },
  database: { type: 'string' },
  org: { type: 'string' },
  ...RESOLVER_OPTIONS,
} as const;

/** `--data` / `--database` as `serve` reads them (a flag beats the variables; DATABASE_URL beats SPOOF_CHECKER_DATA). */
export function reportStorage(data: string | undefined, database: string | undefined, env: NodeJS.ProcessEnv): StorageChoice {
  if (data !== undefined && database !== undefined) throw new UsageError('give --data or --database, not both');
  const url = data !== undefined ? undefined : (database ?? (env['DATABASE_URL'] || undefined));
  if (url !== undefined) return { kind: 'postgres', url };
  const dir = data ?? (env['SPOOF_CHECKER_DATA'] || undefined) ?? DEFAULT_DATA_DIR;
  if (dir.trim() === '') throw new UsageError('--data needs a directory');
  if (dir === MEMORY_DATA_DIR) throw new UsageError('--data :memory: would lose the reports at exit; give a directory');
  return { kind: 'sqlite', dir };
}

function organizationOf(org: string | undefined): string {
  const id = org ?? DEFAULT_CLI_ORGANIZATION;
  if (!/^[A-Za-z0-9._:-]{1,128}$/.test(id)) throw new UsageError(`--org must be an organisation id (letters, digits, . _ : -), not "${id}"`);
  return id;
}

/**
 * The organisation `show` reads without `--org`: the one whose reports are about `domain`. With none,
 * the CLI's default; with several, a usage error that lists them (reading one of them silently would
 * show the wrong reports).
 */
async function organizationHolding(stores: Stores, domain: string): Promise<string> {
  const holding = await stores.reports.organizationsWithReports(domain);
  if (holding.length === 0) return DEFAULT_CLI_ORGANIZATION;
  if (holding.length === 1) return holding[0]!;
  throw new UsageError(`${holding.length} organisations hold reports about ${domain}: ${holding.join(', ')}. Say which with --org ID (e.g. --org ${holding[0]})`);
}

async function optionalResolver(values: { zones?: string | undefined; 'demo-zones'?: boolean | undefined; resolver?: string | undefined; timeout?: string | undefined }) {
  if (values.zones === undefined && !values['demo-zones'] && values.resolver === undefined) return undefined;
  return (await resolverFromFlags({ zones: values.zones, demoZones: values['demo-zones'], resolver: values.resolver, timeout: values.timeout })).resolver;
}

function printTally(io: CliIo, label: string, tally: IngestTally, noReport: boolean): void {
  for (const r of tally.reports) {
    const what = r.kind === 'aggregate' ? `aggregate report ${r.reportId} for ${r.domain} (${r.records} records, ${r.messages} messages)` : `TLS report ${r.reportId} for ${r.domain}`;
    const reporter = r.reporter === 'unauthenticated' ? 'reporter not authenticated' : `from ${r.reporter}`;
    io.out(`${r.outcome === 'stored' ? 'stored   ' : 'duplicate'} ${label}: ${what}, ${reporter}\n`);
  }
  for (const x of tally.rejected) io.out(`refused   ${label}${x.fileName && !label.endsWith(x.fileName) ? ` (${x.fileName})` : ''}: ${x.reason}: ${x.detail}\n`);
  if (noReport) io.out(`no report ${label}: the message carries no report\n`);
}

async function importCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, STORE_OPTIONS, true);
  if (values.help) {
    io.out(USAGE);
    return EXIT_OK;
  }
  if (positionals.length === 0) throw new UsageError('name the files or directories to import (or - for standard input)');
  limitHeapGrowth(IMPORT_HEAP_GROWING_PERCENT);
  const organizationId = organizationOf(values.org);
  const storage = reportStorage(values.data, values.database, io.env);
  const resolver = await optionalResolver(values);
  return withStores(storage, async (stores) => {
    const total = await importPaths(positionals, {
      sink: await reportSink(stores.reports, { organizationId }, { failures: stores.failureReports }),
      ...(resolver ? { resolver } : {}),
      stdin: io.stdin as NodeJS.ReadableStream & AsyncIterable<Buffer>,
      onInput: (result) => printTally(io, result.input, result.tally, result.noReport),
    } as Parameters<typeof importPaths>[1]);
    const c = countTally(total);
    io.err(`${total.inputs} input(s): ${c.stored} report(s) stored, ${c.duplicates} duplicate(s), ${c.rejected} refused, ${total.noReport} message(s) without a report (organisation ${organizationId})\n`);
    return c.rejected > 0 ? EXIT_FAILED : EXIT_OK;
  });
}

async function fetchCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    args,
    { ...STORE_OPTIONS, imap: { type: 'string' }, 'tls-ca': { type: 'string' }, processed: { type: 'string' }, aside: { type: 'string' } },
    false,
  );
  if (values.help) {
    io.out(USAGE);
    return EXIT_OK;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  if (values.imap === undefined) throw new UsageError('fetch needs --imap imap://user@host/MAILBOX');
  const parsed = parseImapUrl(values.imap, io.env[IMAP_PASSWORD_ENV] || undefined);
  if (!parsed.ok) throw new UsageError(parsed.problem);
  let tlsCa: string | undefined;
  if (values['tls-ca'] !== undefined) {
    try {
      tlsCa = await readFile(values['tls-ca'], 'utf8');
    } catch (error) {
      throw new UsageError(`--tls-ca ${values['tls-ca']}: cannot read it (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
    if (!tlsCa.includes('-----BEGIN CERTIFICATE-----')) throw new UsageError(`--tls-ca ${values['tls-ca']}: holds no PEM certificate ("-----BEGIN CERTIFICATE-----")`);
  }
  const organizationId = organizationOf(values.org);
  const storage = reportStorage(values.data, values.database, io.env);
  const resolver = await optionalResolver(values);
  return withStores(storage, async (stores) => {
    let result;
    const where = `${parsed.target.secure ? 'imaps' : 'imap'}://${parsed.target.user}@${parsed.target.host}:${parsed.target.port}/${parsed.target.mailbox}`;
    try {
      result = await fetchReportsFromImap({
        target: parsed.target,
        sink: await reportSink(stores.reports, { organizationId }, { failures: stores.failureReports }),
        ...(resolver ? { resolver } : {}),
        ...(tlsCa ? { tlsCa } : {}),
        ...(values.processed ? { processedFolder: values.processed } : {}),
        ...(values.aside ? { asideFolder: values.aside } : {}),
        onMessage: (uid, _outcome, tally) => printTally(io, `uid ${uid}`, tally, _outcome === 'no-report'),
      });
    } catch (error) {
      if (isStoreUnavailable(error)) throw error;
      const detail = error instanceof Error ? ((error as { responseText?: string }).responseText ?? error.message) : String(error);
      io.err(`spoof-checker reports fetch: ${where}: ${detail}\n`);
      return EXIT_FAILED;
    }
    if (result.outcome === 'connect-failed') {
      io.err(`spoof-checker reports fetch: ${where}: ${describeConnectFailure(parsed.target, result)} [${result.kind}]\n`);
      return EXIT_FAILED;
    }
    io.err(`${describeFetch(result.fetched)} (organisation ${organizationId})\n`);
    return EXIT_OK;
  });
}

async function showCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, { ...STORE_OPTIONS, days: { type: 'string' }, until: { type: 'string' }, json: { type: 'boolean' }, html: { type: 'string' } }, true);
  if (values.help) {
    io.out(USAGE);
    return EXIT_OK;
  }
  if (positionals.length !== 1) throw new UsageError('show takes one domain');
  const domain = positionals[0]!.trim().toLowerCase().replace(/\.$/, '');
  const days = integerOption(values.days, 'days', DEFAULT_REPORT_DAYS, 1, MAX_REPORT_DAYS);
  let now: Date | undefined;
  if (values.until !== undefined) {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(values.until) || Number.isNaN(Date.parse(`${values.until}T23:59:59Z`))) throw new UsageError(`--until must be a date such as 2026-11-30, not "${values.until}"`);
    now = new Date(`${values.until}T23:59:59Z`);
  }
  const storage = reportStorage(values.data, values.database, io.env);
  const resolver = await optionalResolver(values);
  const { showReports } = await import('../summaries/summary.js');
  const { renderReportHtml, renderReportText } = await import('./reports-show.js');
  return withStores(storage, async (stores) => {
    const organizationId = values.org !== undefined ? organizationOf(values.org) : await organizationHolding(stores, domain);
    const shown = await showReports({ store: stores.reports, organizationId, domain, days, ...(now ? { now } : {}), ...(resolver ? { resolver } : {}) });
    if (values.html !== undefined) await writeFile(values.html, renderReportHtml(shown));
    io.out(values.json ? `${JSON.stringify(shown.summary)}\n` : renderReportText(shown));
    return EXIT_OK;
  });
}
