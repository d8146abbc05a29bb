/**
 * A bounded answer cache shared by every check, with single-flight: identical queries that arrive
 * while one is on its way upstream wait for that one instead of sending their own.
 *
 * What is kept, and for how long:
 * - Records: the answer's TTL, else `defaultTtlSeconds`; never longer than `maxTtlSeconds`.
 *   A TTL of 0 is not cached (RFC 1035 §3.2.1: "only for the transaction in progress").
 * - NXDOMAIN and NODATA (RFC 2308 §5): the answer's TTL (the SOA minimum), else
 *   `negativeTtlSeconds`; also capped by `maxTtlSeconds`.
 * - Errors (SERVFAIL, REFUSED, timeout, malformed, …) are not cached at all. RFC 2308 §7.1 allows
 *   caching a server failure for up to five minutes, but here a cached failure would turn one lost
 *   packet into minutes of "temperror" verdicts for every user checking that domain. The load a
 *   failing server could otherwise see is already bounded: single-flight merges concurrent
 *   identical queries, and each check asks a name once (`createCheckResolver` memoises).
 */
import { AnswerLru, type Held } from './answer-lru.js';
import { canonicalName } from './name.js';
import { checkSourceOf, type CheckSource, type DnsAnswer, type RecordType, type Resolver } from './types.js';

/** Defaults for a service: enough entries for a busy hour of checks, TTLs as resolvers cap them. */
export const DEFAULT_CACHE_MAX_ENTRIES = 50_000;
/** TTL for answers that carry none (NetworkResolver always gives one; other resolvers may not): five minutes. */
export const DEFAULT_CACHE_TTL_SECONDS = 300;
/** RFC 2308 §5 suggests one to three hours at most for negative answers; we keep them shorter. */
export const DEFAULT_NEGATIVE_TTL_SECONDS = 300;
/** Upper bound on any cached TTL: one hour, so a changed record is seen within the hour. */
export const DEFAULT_MAX_TTL_SECONDS = 3600;

/**
 * Options of `CachingResolver`. Each may be left out: `new CachingResolver(r, { maxEntries: 1000 })`
 * takes the defaults above for the rest.
 */
export interface CacheOptions {
  /** Entries kept at most; the least recently used goes first. Default `DEFAULT_CACHE_MAX_ENTRIES` (50,000). */
  maxEntries?: number;
  /** TTL for positive answers that carry none. Default `DEFAULT_CACHE_TTL_SECONDS` (300). */
  defaultTtlSeconds?: number;
  /**
   * TTL for NXDOMAIN/NODATA answers that carry none: `defaultTtlSeconds` when that is given, else
   * `DEFAULT_NEGATIVE_TTL_SECONDS` (300).
   */
  negativeTtlSeconds?: number;
  /** No answer is kept longer than this. Default `DEFAULT_MAX_TTL_SECONDS` (3600). */
  maxTtlSeconds?: number;
  /** The clock, in milliseconds; `Date.now` unless a test injects one. */
  now?: () => number;
}

/** Where an answer came from: the cache, another caller's query in flight, or a new upstream query. */
export type AnswerSource = 'cache' | 'inflight' | 'upstream';

/** An answer and whether it cost an upstream query. `fromCache` is true for 'cache' and 'inflight'. */
export interface LookupResult<T extends RecordType = RecordType> {
  answer: DnsAnswer<T>;
  fromCache: boolean;
  source: AnswerSource;
}

/** A resolver that can say whether an answer came from its cache (what a per-check wrapper counts). */
export interface CacheAwareResolver extends Resolver {
  lookup<T extends RecordType>(name: string, type: T): Promise<LookupResult<T>>;
}

/**
 * A resolver that can answer from what it holds without waiting: the per-check wrapper takes such
 * answers at once instead of racing them against its deadline.
 */
export interface CachedLookupResolver extends Resolver {
  /** The answer if it is held now (same as `lookup` would give), or undefined when it would have to ask. */
  lookupCached<T extends RecordType>(name: string, type: T): LookupResult<T> | undefined;
  /**
   * `lookupCached(name, type)?.answer` for a name already in canonical form (`canonicalName`), the
   * per-check resolver's path: it has lowered the case once, and a warm check makes about 50 of these.
   */
  heldAnswer<T extends RecordType>(canonical: string, type: T): DnsAnswer<T> | undefined;
}

/** The cache's counters since it was made. */
export interface CacheStats {
  hits: number;
  misses: number;
  inflightJoins: number;
  size: number;
}


/** Caches answers from `inner`; see the file comment for what is kept and for how long. */
export class CachingResolver implements CacheAwareResolver, CachedLookupResolver {
  private readonly entries: AnswerLru<DnsAnswer>;
  private readonly inflight = new Map<string, Promise<DnsAnswer>>();
  private readonly now: () => number;
  private readonly defaultTtl: number;
  private readonly negativeTtl: number;
  private readonly maxTtl: number;
  private hits = 0;
  private misses = 0;
  /** The system clock's reading for the current synchronous stretch (see `systemTime`). */
  private clockReading: number | undefined;
  private inflightJoins = 0;

  /**
   * Options left out take their defaults (see `CacheOptions`). Throws a `TypeError` for a size or
   * TTL that is given but is not a non-negative number (a configuration error).
   */
  constructor(
    private readonly inner: Resolver,
    options: CacheOptions = {},
  ) {
    const maxEntries = options.maxEntries ?? DEFAULT_CACHE_MAX_ENTRIES;
    const defaultTtlSeconds = options.defaultTtlSeconds ?? DEFAULT_CACHE_TTL_SECONDS;
    const maxTtlSeconds = options.maxTtlSeconds ?? DEFAULT_MAX_TTL_SECONDS;
    const negativeTtlSeconds = options.negativeTtlSeconds ?? options.defaultTtlSeconds ?? DEFAULT_NEGATIVE_TTL_SECONDS;
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new TypeError(`maxEntries must be a whole number ≥ 1, not ${maxEntries}`);
    for (const [label, value] of Object.entries({ defaultTtlSeconds, negativeTtlSeconds, maxTtlSeconds })) {
      if (!(value >= 0)) throw new TypeError(`${label} must be ≥ 0, not ${value}`);
    }
    this.entries = new AnswerLru(maxEntries);
    this.now = options.now ?? this.systemTime;
    this.defaultTtl = defaultTtlSeconds;
    this.negativeTtl = negativeTtlSeconds;
    this.maxTtl = maxTtlSeconds;
  }

  /** Where the answers come from: the wrapped resolver's source. */
  get source(): CheckSource {
    return checkSourceOf(this.inner);
  }

  async resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    return (await this.lookup(name, type)).answer;
  }

  /** The answer and where it came from. Answers from the cache carry their remaining TTL. */
  async lookup<T extends RecordType>(name: string, type: T): Promise<LookupResult<T>> {
    const canonical = canonicalName(name);
    const cached = this.fromEntries<T>(canonical, type);
    if (cached) return cached;
    const key = `${type} ${canonical}`;
    const pending = this.inflight.get(key);
    if (pending) {
      this.inflightJoins++;
      return { answer: (await pending) as DnsAnswer<T>, fromCache: true, source: 'inflight' };
    }
    this.misses++;
    const request = this.fetch(key, canonical, name, type);
    this.inflight.set(key, request);
    return { answer: await request, fromCache: false, source: 'upstream' };
  }

  /** The cached answer, counted as a hit, or undefined (a miss is counted only when `lookup` asks). */
  lookupCached<T extends RecordType>(name: string, type: T): LookupResult<T> | undefined {
    return this.fromEntries<T>(canonicalName(name), type);
  }

  /** The held answer for a canonical name, counted as a hit, without `LookupResult`'s wrapper. */
  heldAnswer<T extends RecordType>(canonical: string, type: T): DnsAnswer<T> | undefined {
    const entry = this.entries.held(canonical, type);
    if (entry === undefined) return undefined;
    const now = this.now();
    if (entry.expiresAt > now) {
      this.hits++;
      return answerAt(entry, now) as DnsAnswer<T>;
    }
    this.entries.delete(canonical, type);
    return undefined;
  }

  /**
   * The system clock, read once per synchronous stretch of work: the first hit reads it and a
   * microtask forgets the reading. A warm check takes about 50 answers in a few such stretches, and
   * one read costs more than a hit (74 ns on a kvm-clock VM); within one stretch time moves by
   * microseconds, against TTLs counted in seconds. An injected clock (`options.now`) is read every time.
   */
  private readonly systemTime = (): number => {
    if (this.clockReading === undefined) {
      this.clockReading = Date.now();
      queueMicrotask(this.forgetClockReading);
    }
    return this.clockReading;
  };

  private readonly forgetClockReading = (): void => {
    this.clockReading = undefined;
  };

  /** Counters and the current number of entries. */
  stats(): CacheStats {
    return { hits: this.hits, misses: this.misses, inflightJoins: this.inflightJoins, size: this.entries.size };
  }

  /** Forgets every entry (queries in flight still complete and are stored). */
  clear(): void {
    this.entries.clear();
  }

  /** A fresh entry as a hit; an expired one is dropped. */
  private fromEntries<T extends RecordType>(canonical: string, type: T): LookupResult<T> | undefined {
    const answer = this.heldAnswer(canonical, type);
    return answer === undefined ? undefined : { answer, fromCache: true, source: 'cache' };
  }

  private async fetch<T extends RecordType>(key: string, canonical: string, name: string, type: T): Promise<DnsAnswer<T>> {
    try {
      const answer = await this.inner.resolve(name, type);
      const ttl = this.ttlFor(answer);
      if (ttl > 0) this.entries.set(canonical, type, answer, this.now() + ttl * 1000);
      return answer;
    } finally {
      this.inflight.delete(key);
    }
  }

  /** Seconds to keep `answer`; 0 means not at all. */
  private ttlFor(answer: DnsAnswer): number {
    switch (answer.kind) {
      case 'records':
        return Math.min(answer.ttl ?? this.defaultTtl, this.maxTtl);
      case 'nodata':
      case 'nxdomain':
        return Math.min(answer.ttl ?? this.negativeTtl, this.maxTtl); // RFC 2308 §5
      case 'error':
        return 0;
    }
  }
}

/**
 * The held answer with its remaining TTL at `now`. Every hit within the same second of remaining
 * TTL gets the same copy (kept in the entry as its `view`, keyed by that TTL) instead of a new one:
 * a warm check makes about 50 hits. Answers are read-only for everyone who receives them; their
 * `records` were already shared.
 */
function answerAt(entry: Held<DnsAnswer>, now: number): DnsAnswer {
  const ttl = Math.ceil((entry.expiresAt - now) / 1000);
  if (entry.view === undefined || entry.viewKey !== ttl) {
    entry.view = withRemainingTtl(entry.value, ttl);
    entry.viewKey = ttl;
  }
  return entry.view;
}

/**
 * The stored answer with its TTL counted down to what is left, in whole seconds (rounded up).
 * Built field by field rather than as `{ ...answer, ttl }`: on Node 20 (V8 11.3) a literal that
 * starts with a spread and adds a property costs about 0.8 µs, and this runs for every cache hit.
 */
function withRemainingTtl(answer: DnsAnswer, ttl: number): DnsAnswer {
  if (answer.kind === 'error') return answer;
  const copy: Exclude<DnsAnswer, { kind: 'error' }> =
    answer.kind === 'records' ? { kind: 'records', records: answer.records, ttl } : { kind: answer.kind, ttl };
  if (answer.cnames !== undefined) copy.cnames = answer.cnames;
  return copy;
}
