/**
 * Builds the data file from the providers' feeds (their official formats): keeps the rentable
 * services of each (see `PROVIDERS`), merges their prefixes into sorted intervals, and takes
 * Microsoft's own mail ranges (`FIRST_PARTY_MAIL_TAGS`) out of every one. Used by
 * `scripts/build-ranges.ts` for the shipped snapshot and by `spoof-checker ranges update`.
 *
 * A provider whose feed is missing, fails to parse, is implausible (a block wider than any provider
 * holds, a date present but not a day, or later than the build's day: see `parse.ts`), or shrank to
 * less than half of what the previous data held (`MAX_SHRINK_RATIO`) keeps its previous data; without
 * previous data the build fails.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { RANGES_FILE_FORMAT, encodeIntervals, decodeIntervals } from './codec.js';
import type { EncodedCategory, Intervals, RangesFile } from './codec.js';
import { parseFeed, SINGLE_LIST } from './parse.js';
import type { Cidr } from './parse.js';
import { FIRST_PARTY_MAIL_TAGS, PROVIDERS } from './providers.js';
import type { ProviderSpec } from './providers.js';
import type { ProviderId, RangeSource } from './types.js';

/** A feed may not shrink below this share of the prefixes the previous data had from it. */
export const MAX_SHRINK_RATIO = 0.5;

/** What was read for one feed file: its text, or why it could not be read (a fetch error, a missing file). */
/** `readAt` (YYYY-MM-DD) dates a feed that carries no date of its own; the build's day when absent. */
export type FeedText = { text: string; url: string; readAt?: string | undefined } | { error: string; url: string };

/** What happened to one provider's data. */
export interface ProviderOutcome {
  provider: ProviderId;
  outcome: 'updated' | 'kept' | 'failed';
  /** In words: the prefix count, or why the previous data was kept or nothing could be built. */
  detail: string;
}

/** The built file (null when a provider has neither new nor previous data) and each provider's outcome. */
export interface BuildResult {
  file: RangesFile | null;
  providers: ProviderOutcome[];
}

interface ProviderBuild {
  sources: RangeSource[];
  categories: { service: string; kind: EncodedCategory['kind']; v4: Intervals; v6: Intervals }[];
  /** Azure only: the first-party mail ranges. */
  excluded?: { v4: Intervals; v6: Intervals };
}

/**
 * Builds the data file from feed texts keyed by file name (`FeedSpec.file`). `previous` is the data
 * to keep for a provider whose feed is refused; `now` dates the file and the sources without a date.
 */
export function buildRangesFile(feeds: ReadonlyMap<string, FeedText>, options: { previous?: RangesFile | null; now: Date }): BuildResult {
  const readAt = options.now.toISOString().slice(0, 10);
  const previous = options.previous ?? null;
  const outcomes: ProviderOutcome[] = [];
  const built = new Map<ProviderId, ProviderBuild>();
  for (const spec of PROVIDERS) {
    const fresh = buildProvider(spec, feeds, readAt);
    const before = previous?.sources.filter((s) => s.provider === spec.id) ?? [];
    const beforePrefixes = before.reduce((n, s) => n + s.prefixes, 0);
    let refusal: string | null = null;
    if (typeof fresh === 'string') refusal = fresh;
    else {
      const now = fresh.sources.reduce((n, s) => n + s.prefixes, 0);
      if (beforePrefixes > 0 && now < beforePrefixes * MAX_SHRINK_RATIO) refusal = `it shrank from ${beforePrefixes} to ${now} prefixes (more than half gone)`;
    }
    if (refusal === null && typeof fresh !== 'string') {
      built.set(spec.id, fresh);
      outcomes.push({ provider: spec.id, outcome: 'updated', detail: `${fresh.sources.reduce((n, s) => n + s.prefixes, 0)} prefixes` });
      continue;
    }
    const kept = previous ? fromPrevious(spec, previous) : null;
    if (kept) {
      built.set(spec.id, kept);
      outcomes.push({ provider: spec.id, outcome: 'kept', detail: `refused (${refusal}); the previous data is kept` });
    } else {
      outcomes.push({ provider: spec.id, outcome: 'failed', detail: `refused (${refusal}) and there is no previous data to keep` });
    }
  }
  if (outcomes.some((o) => o.outcome === 'failed')) return { file: null, providers: outcomes };

  const excluded = built.get('azure')?.excluded ?? { v4: [], v6: [] };
  const categories: EncodedCategory[] = [];
  const sources: RangeSource[] = [];
  for (const spec of PROVIDERS) {
    const provider = built.get(spec.id)!;
    sources.push(...provider.sources);
    for (const category of provider.categories) {
      const v4 = subtractIntervals(category.v4, excluded.v4);
      const v6 = subtractIntervals(category.v6, excluded.v6);
      categories.push({ provider: spec.id, service: category.service, kind: category.kind, ipv4Addresses: Number(count(v4)), ipv6Addresses: Number(count(v6)), v4: encodeIntervals(v4, 4), v6: encodeIntervals(v6, 16) });
    }
  }
  const dates = sources.map((s) => s.date ?? s.readAt).sort();
  return {
    file: {
      format: RANGES_FILE_FORMAT,
      generatedAt: options.now.toISOString(),
      date: dates[0] ?? readAt,
      sources,
      excluded: { tags: [...FIRST_PARTY_MAIL_TAGS], v4: encodeIntervals(excluded.v4, 4), v6: encodeIntervals(excluded.v6, 16) },
      categories,
    },
    providers: outcomes,
  };
}

/** One provider's categories from its feeds, or why they were refused. */
function buildProvider(spec: ProviderSpec, feeds: ReadonlyMap<string, FeedText>, today: string): ProviderBuild | string {
  const byService = new Map<string, Cidr[]>();
  const firstParty: Cidr[] = [];
  const sources: RangeSource[] = [];
  const wanted = new Map(spec.services.map((s) => [s.service, s]));
  for (const feed of spec.feeds) {
    const input = feeds.get(feed.file);
    if (input === undefined) return `${feed.file} is missing`;
    if ('error' in input) return `${feed.file}: ${input.error}`;
    const parsed = parseFeed(feed.format, input.text);
    if (!parsed.ok) return `${feed.file} does not parse: ${parsed.error}`;
    // A feed dated after the build's day (UTC) claims a future it cannot have seen: its clock or its content is wrong.
    if (parsed.date !== null && parsed.date > today) return `${feed.file} is dated ${parsed.date}, later than today (${today})`;
    let kept = 0;
    for (const prefix of parsed.prefixes) {
      if (FIRST_PARTY_MAIL_TAGS.includes(prefix.service)) firstParty.push(prefix.cidr);
      const service = prefix.service === SINGLE_LIST ? spec.services[0]!.service : prefix.service;
      if (!wanted.has(service)) continue;
      kept++;
      let list = byService.get(service);
      if (list === undefined) byService.set(service, (list = []));
      list.push(prefix.cidr);
    }
    if (kept === 0) return `${feed.file} holds none of ${spec.services.map((s) => s.service).join(', ')}`;
    sources.push({ provider: spec.id, url: input.url, date: parsed.date, readAt: parsed.date ?? (input.readAt !== undefined && input.readAt < today ? input.readAt : today), prefixes: kept });
  }
  const categories = spec.services
    .filter((s) => byService.has(s.service))
    .map((s) => {
      const list = byService.get(s.service)!;
      return { service: s.service, kind: s.kind, v4: mergeCidrs(list.filter((c) => c.family === 4)), v6: mergeCidrs(list.filter((c) => c.family === 6)) };
    });
  const build: ProviderBuild = { sources, categories };
  if (spec.id === 'azure') {
    if (firstParty.length === 0) return `${spec.feeds[0]!.file} has no ${FIRST_PARTY_MAIL_TAGS.join(' / ')} tag: Microsoft 365's own mail ranges could not be taken out`;
    build.excluded = { v4: mergeCidrs(firstParty.filter((c) => c.family === 4)), v6: mergeCidrs(firstParty.filter((c) => c.family === 6)) };
  }
  return build;
}

/** A provider's data as the previous file holds it (null when it holds none). */
function fromPrevious(spec: ProviderSpec, previous: RangesFile): ProviderBuild | null {
  const sources = previous.sources.filter((s) => s.provider === spec.id);
  const categories = previous.categories.filter((c) => c.provider === spec.id);
  if (sources.length === 0 || categories.length === 0) return null;
  const build: ProviderBuild = {
    sources,
    categories: categories.map((c) => ({ service: c.service, kind: c.kind, v4: decodeIntervals(c.v4, 4) ?? [], v6: decodeIntervals(c.v6, 16) ?? [] })),
  };
  if (spec.id === 'azure') build.excluded = { v4: decodeIntervals(previous.excluded.v4, 4) ?? [], v6: decodeIntervals(previous.excluded.v6, 16) ?? [] };
  return build;
}

/** Blocks as sorted, merged intervals (overlapping and touching blocks joined). */
export function mergeCidrs(blocks: readonly Cidr[]): [bigint, bigint][] {
  const sorted = [...blocks].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const out: [bigint, bigint][] = [];
  for (const { start, end } of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && start <= last[1] + 1n) {
      if (end > last[1]) last[1] = end;
    } else out.push([start, end]);
  }
  return out;
}

/** `a` minus `b`, both sorted and merged. */
export function subtractIntervals(a: Intervals, b: Intervals): [bigint, bigint][] {
  const out: [bigint, bigint][] = [];
  let j = 0;
  for (const [rangeStart, end] of a) {
    let start = rangeStart;
    while (j < b.length && b[j]![1] < start) j++;
    let k = j;
    while (k < b.length && b[k]![0] <= end && start <= end) {
      if (b[k]![0] > start) out.push([start, b[k]![0] - 1n]);
      start = b[k]![1] + 1n;
      k++;
    }
    if (start <= end) out.push([start, end]);
  }
  return out;
}

function count(intervals: Intervals): bigint {
  let total = 0n;
  for (const [start, end] of intervals) total += end - start + 1n;
  return total;
}

/**
 * Every feed file of `PROVIDERS` read from `dir` (a missing or unreadable file is an error entry).
 * A feed without a date of its own is dated `readAt`, or by its file's modification day.
 */
export function readFeedDirectory(dir: string, readAt?: string): Map<string, FeedText> {
  const feeds = new Map<string, FeedText>();
  for (const spec of PROVIDERS) {
    for (const feed of spec.feeds) {
      const path = join(dir, feed.file);
      try {
        // A copy is as old as its file, unless the caller knows better.
        feeds.set(feed.file, { text: readFileSync(path, 'utf8'), url: feed.url, readAt: readAt ?? statSync(path).mtime.toISOString().slice(0, 10) });
      } catch (error) {
        feeds.set(feed.file, { error: `cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, url: feed.url });
      }
    }
  }
  return feeds;
}
