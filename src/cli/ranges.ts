/**
 * `spoof-checker ranges`: the provider data behind the shared-infrastructure finding.
 *   ranges show [--ranges FILE] [--json]       its date, sources and per-provider counts, and the file in use
 *   ranges update [--out FILE] [--from DIR]     rebuild it from the official feeds (HTTPS) or local copies;
 *                                               without --out, the installation's own data file (userRangesFile)
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { buildRangesFile, decodeRangesFile, isStale, PROVIDERS, rangesAgeDays, RANGES_STALE_AFTER_DAYS, readFeedDirectory, SHIPPED_RANGES_FILE, shippedRanges } from '@spoof-checker/engine';
import type { BuildResult, FeedText, RangeData, RangesFile } from '@spoof-checker/engine';
import { formatIpv6Count } from '@spoof-checker/engine';
import { integerOption, parseCommandArgs, UsageError } from './args.js';
import { writeFileAtomically } from './atomic-file.js';
import { EXIT_FAILED, EXIT_OK, type CliIo, type Command } from './io.js';
import { runSubcommand } from './subcommands.js';
import { fetchFeeds, FEED_TIMEOUT_MS, MAX_FEED_BYTES, type FetchFeedsOptions } from './ranges-fetch.js';
import { rangesInUse, userRangesFile } from './ranges-options.js';

const USAGE = `Usage: spoof-checker ranges show [--ranges FILE] [--json]
       spoof-checker ranges update [--out FILE] [--from DIR] [--timeout MS]

The published address ranges of shared infrastructure (cloud compute, CI runners, CDN edges) that
checks compare SPF pass sets with.

  show                 print the data in use: its file, date, sources and the addresses per provider service
    --ranges FILE      show FILE instead [SPOOF_CHECKER_RANGES]
    --json             as JSON ("source": the file in use)
  update               build the data from the providers' official feeds, fetched over HTTPS, and write it
                       to the data file this installation reads: $XDG_DATA_HOME/spoof-checker/shared-infrastructure.json,
                       else ~/.local/share/spoof-checker/shared-infrastructure.json; every command reads it in
                       preference to the shipped snapshot (a running serve after a restart)
    --out FILE         write FILE instead (atomically: a fresh temporary file beside it, then a rename); use it with --ranges FILE
    --from DIR         read local copies in the official formats instead of fetching
                       (file names as in fixtures/provider-ranges/README.md)
    --timeout MS       per-feed timeout (default ${FEED_TIMEOUT_MS}); feeds over ${MAX_FEED_BYTES} bytes are refused
  -h, --help           this text

A feed that cannot be fetched, fails to parse, or has shrunk to less than half of the previous data
is refused: the previous data for that provider (FILE if it exists, else the shipped snapshot) is
kept.

Exit status: 0 written (or shown), 1 written with some provider's previous data kept, or nothing
could be built, 2 on a usage error.
`;

/** `spoof-checker ranges`. */
export const ranges: Command = async (args, io) =>
  runSubcommand('ranges', USAGE, args, io, (sub, rest) => {
    if (sub === 'show') return show(rest, io);
    if (sub === 'update') return update(rest, io);
    throw new UsageError(`unknown subcommand '${sub}': use show or update`);
  });

function show(args: string[], io: CliIo): number {
  const { values, positionals } = parseCommandArgs(args, { ranges: { type: 'string' }, json: { type: 'boolean' } }, false);
  if (values.help) {
    io.out(USAGE);
    return EXIT_OK;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const inUse = rangesInUse(values.ranges, io.env);
  const data = inUse.data ?? shippedRanges();
  const now = new Date();
  const summary = { ...summarise(data, now), source: inUse.source };
  if (values.json) {
    io.out(`${JSON.stringify(summary)}\n`);
    return EXIT_OK;
  }
  const lines = [
    `Provider data: ${summary.origin}`,
    `File: ${summary.source}`,
    `Dated ${summary.date} (${summary.ageDays} days old${summary.stale ? `: STALE, over ${RANGES_STALE_AFTER_DAYS} days; run 'spoof-checker ranges update'` : ''}); built ${summary.generatedAt}`,
    '',
    'Sources:',
    ...summary.sources.map((s) => `  ${s.provider.padEnd(13)} ${(s.date ?? `read ${s.readAt}`).padEnd(16)} ${String(s.prefixes).padStart(6)} prefixes  ${s.url}`),
    '',
    'Provider services (addresses after merging; Microsoft 365 mail ranges taken out):',
    ...summary.categories.map((c) => `  ${c.label.padEnd(30)} ${c.kind.padEnd(7)} ${c.ipv4Addresses.toLocaleString('en-US').padStart(14)} IPv4  ${formatIpv6Count(c.ipv6Addresses).padStart(10)} IPv6`),
  ];
  io.out(`${lines.join('\n')}\n`);
  return EXIT_OK;
}

/** What `ranges show --json` prints (with `source`, the file in use). */
export interface RangesSummary {
  origin: string;
  /** The file the data was read from: `--ranges FILE`, the user data file, or the shipped snapshot. */
  source?: string;
  date: string;
  ageDays: number;
  stale: boolean;
  generatedAt: string;
  sources: RangeData['sources'];
  categories: { provider: string; service: string; label: string; kind: string; ipv4Addresses: number; ipv6Addresses: number }[];
}

export function summarise(data: RangeData, now: Date): RangesSummary {
  return {
    origin: data.origin,
    date: data.date,
    ageDays: rangesAgeDays(data, now),
    stale: isStale(data, now),
    generatedAt: data.generatedAt,
    sources: data.sources,
    categories: data.categories.map((c) => ({
      provider: c.provider,
      service: c.service,
      label: PROVIDERS.find((p) => p.id === c.provider)?.services.find((s) => s.service === c.service)?.label ?? c.service,
      kind: c.kind,
      ipv4Addresses: c.ipv4Addresses,
      ipv6Addresses: c.ipv6Addresses,
    })),
  };
}

async function update(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, { out: { type: 'string' }, from: { type: 'string' }, timeout: { type: 'string' } }, false);
  if (values.help) {
    io.out(USAGE);
    return EXIT_OK;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  // Without --out: the installation's own data file, which every command reads before the snapshot.
  const out = values.out ?? userRangesFile(io.env);
  if (out === undefined) throw new UsageError('neither XDG_DATA_HOME nor HOME is set, so there is no user data directory: give --out FILE');
  if (values.from !== undefined && values.timeout !== undefined) throw new UsageError('--timeout applies to fetching, not to --from');
  if (values.from !== undefined && !existsSync(values.from)) throw new UsageError(`--from ${values.from}: no such directory`);
  const timeoutMs = integerOption(values.timeout, 'timeout', FEED_TIMEOUT_MS, 1, 600_000);
  const result = await updateRanges({ out, from: values.from, fetch: { timeoutMs }, makeDirectory: values.out === undefined });
  const code = report(result, out, io);
  if (result.written && values.out === undefined) io.out(`every command now reads it in preference to the shipped snapshot (a running serve after a restart)\n`);
  return code;
}

/** What `updateRanges` needs: where to write, and where the feeds come from. */
export interface UpdateRangesOptions {
  out: string;
  /** A directory of local copies; fetched over HTTPS when absent. */
  from?: string | undefined;
  fetch?: FetchFeedsOptions | undefined;
  now?: Date | undefined;
  /** Create `out`'s directory (the user data directory) when there is something to write; never before. */
  makeDirectory?: boolean | undefined;
}

/** The build's outcome and whether a file was written. */
export type UpdateRangesResult = BuildResult & { written: boolean; previousFrom: string };

/**
 * Builds the data from the feeds and writes it to `out` atomically (a temporary file with an
 * unpredictable name, created exclusively beside `out`, then a rename),
 * keeping the previous data (`out` if it holds a data file, else the shipped snapshot) for any
 * provider whose feed is refused. Nothing is written when some provider has neither, nor when no
 * feed at all gave new data (every source failed: the file would be the old data re-dated).
 */
export async function updateRanges(options: UpdateRangesOptions): Promise<UpdateRangesResult> {
  const { previous, previousFrom } = previousData(options.out);
  const feeds: Map<string, FeedText> = options.from !== undefined ? readFeedDirectory(options.from) : await fetchFeeds(options.fetch);
  const result = buildRangesFile(feeds, { previous, now: options.now ?? new Date() });
  if (result.file === null) return { ...result, written: false, previousFrom };
  // Every source failed (offline, say): the file would only be the previous data again, re-dated
  // and moved in front of the shipped snapshot. Nothing is written; the data in use stays as it was.
  if (!result.providers.some((p) => p.outcome === 'updated')) return { ...result, written: false, previousFrom };
  if (options.makeDirectory) {
    try {
      mkdirSync(dirname(options.out), { recursive: true });
    } catch (error) {
      throw new UsageError(`cannot create ${dirname(options.out)}: ${(error as Error).message}; give --out FILE`);
    }
  }
  try {
    // A fresh, unguessable temporary file beside `out`, then a rename (src/cli/atomic-file.ts).
    await writeFileAtomically(options.out, `${JSON.stringify(result.file, null, 1)}\n`);
  } catch (error) {
    throw new UsageError(`cannot write ${options.out}: ${(error as Error).message}`);
  }
  return { ...result, written: true, previousFrom };
}

/** The data to keep for refused feeds: `out` when it holds a valid data file, else the shipped snapshot. */
function previousData(out: string): { previous: RangesFile | null; previousFrom: string } {
  for (const path of [out, SHIPPED_RANGES_FILE]) {
    try {
      const value = JSON.parse(readFileSync(path, 'utf8')) as unknown;
      if (decodeRangesFile(value, path).ok) return { previous: value as RangesFile, previousFrom: path };
    } catch {
      // Not there or not a data file: try the next.
    }
  }
  return { previous: null, previousFrom: 'none' };
}

function report(result: UpdateRangesResult, out: string, io: CliIo): number {
  for (const p of result.providers) io.err(`  ${p.provider.padEnd(13)} ${p.outcome.padEnd(8)} ${p.detail}\n`);
  if (!result.written) {
    const noneUpdated = !result.providers.some((p) => p.outcome === 'updated');
    io.err(
      noneUpdated
        ? `spoof-checker ranges: nothing written to ${out}: every source failed, so there is no new data; the data in use is unchanged ('spoof-checker ranges show' names it).\n`
        : `spoof-checker ranges: nothing written to ${out}: some provider has neither usable new data nor previous data.\n`,
    );
    return EXIT_FAILED;
  }
  const kept = result.providers.filter((p) => p.outcome === 'kept');
  io.out(`wrote ${out}: provider data dated ${result.file!.date}${kept.length > 0 ? `; previous data (from ${result.previousFrom}) kept for ${kept.map((p) => p.provider).join(', ')}` : ''}\n`);
  return kept.length > 0 ? EXIT_FAILED : EXIT_OK;
}
