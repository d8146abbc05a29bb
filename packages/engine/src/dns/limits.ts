/**
 * Bounds on DNS work. Two kinds:
 * - `ConcurrencyLimitedResolver`: a cap on queries outstanding at once across every check, so a
 *   burst of checks cannot flood the upstream resolver or exhaust sockets.
 * - `createCheckResolver`: the budget of one check. A hostile domain can publish records that fan
 *   out (SPF includes, long CNAME chains, many MX hosts) or that answer slowly; the budget caps how
 *   many lookups one check makes and how long it may take, answering `budget` after that, so the
 *   analyzers stop with a temperror instead of running without bound.
 */
import type { CacheAwareResolver, CachedLookupResolver } from './cache.js';
import { canonicalName, canonicalNameProblem } from './name.js';
import { checkSourceOf, hasResolveThen, type CallbackResolver, type CheckSource, type DnsAnswer, type ImmediateResolver, type RecordType, type Resolver, type ResolverStats } from './types.js';

/**
 * Lookups one check may make (the one default; `checkDomain` uses it). The analyzers bound
 * themselves (SPF analysis 200 with its pass-set probes, the organizational domain's SPF as much again,
 * the DMARC walk 8, the DKIM list about 45 plus 50 caller selectors, MX 21); this is the safety net.
 */
export const DEFAULT_CHECK_MAX_QUERIES = 500;
/** Wall time one check may spend on DNS, in milliseconds. */
export const DEFAULT_CHECK_DEADLINE_MS = 10_000;
/** Lookups answered from memory between two reads of the clock for the deadline (see `createCheckResolver`). */
export const CLOCK_READ_EVERY = 16;
/** Queries outstanding at once across all checks of one process. */
export const DEFAULT_MAX_OUTSTANDING_QUERIES = 64;

/**
 * Caps the number of queries `inner` has in flight; the rest wait their turn in arrival order.
 * A counter and a queue rather than a general task limiter: this sits under every cold lookup, and
 * each query then costs one promise of its own.
 */
export class ConcurrencyLimitedResolver implements CallbackResolver {
  private active = 0;
  /** Queries waiting for a slot, oldest first from `head` (a queue without shifting the array). */
  private queue: (() => void)[] = [];
  private head = 0;

  /** Throws a `TypeError` unless `maxOutstanding` is a whole number ≥ 1 (a configuration error). */
  constructor(
    private readonly inner: Resolver,
    private readonly maxOutstanding: number = DEFAULT_MAX_OUTSTANDING_QUERIES,
  ) {
    if (!Number.isInteger(maxOutstanding) || maxOutstanding < 1) {
      throw new TypeError(`maxOutstanding must be a whole number ≥ 1, not ${maxOutstanding}`);
    }
  }

  /** Where the answers come from: the wrapped resolver's source. */
  get source(): CheckSource {
    return checkSourceOf(this.inner);
  }

  resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    // A free slot: the inner answer itself, with the slot given back as it settles (one promise
    // per query, not a wrapper promise around it as well).
    if (this.active < this.maxOutstanding) return this.run(name, type);
    return new Promise<DnsAnswer<T>>((resolve, reject) => {
      this.queue.push(() => this.run(name, type).then(resolve, reject));
    });
  }

  /**
   * `resolve` with the answer handed to `done` (`CallbackResolver`): with an inner resolver that
   * has `resolveThen` too (`NetworkResolver`), no promise at all between the two.
   */
  resolveThen<T extends RecordType>(name: string, type: T, done: (answer: DnsAnswer<T>) => void, failed: (error: unknown) => void): void {
    if (this.active < this.maxOutstanding) return this.runThen(name, type, done, failed);
    this.queue.push(() => this.runThen(name, type, done, failed));
  }

  /** `run` for `resolveThen`: the slot is given back before the answer is handed on, as `run` does. */
  private runThen<T extends RecordType>(name: string, type: T, done: (answer: DnsAnswer<T>) => void, failed: (error: unknown) => void): void {
    this.active++;
    let settled = false;
    const answered = (answer: DnsAnswer<T>): void => {
      if (settled) return;
      settled = true;
      this.release();
      done(answer);
    };
    const rejected = (error: unknown): void => {
      if (settled) return;
      settled = true;
      this.release();
      failed(error);
    };
    const { inner } = this;
    try {
      if (hasResolveThen(inner)) inner.resolveThen(name, type, answered, rejected);
      else inner.resolve(name, type).then(answered, rejected);
    } catch (error) {
      rejected(error);
    }
  }

  /** Asks `inner` in a slot, given back when the answer (or a rejection) comes. */
  private run<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    this.active++;
    let answer: Promise<DnsAnswer<T>>;
    try {
      answer = this.inner.resolve(name, type);
    } catch (error) {
      answer = Promise.reject(error);
    }
    return answer.then(
      (value) => {
        this.release();
        return value;
      },
      (error: unknown) => {
        this.release();
        throw error;
      },
    );
  }

  /** Queries in flight now. */
  get outstanding(): number {
    return this.active;
  }

  /** Queries waiting for a slot. */
  get waiting(): number {
    return this.queue.length - this.head;
  }

  /** A query ended: the oldest waiting one takes its slot. */
  private release(): void {
    this.active--;
    if (this.head === this.queue.length) return;
    const next = this.queue[this.head]!;
    this.queue[this.head++] = NOOP;
    // Drop the consumed front now and then, so a long burst does not keep a long array.
    if (this.head >= QUEUE_COMPACT_AT && this.head * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    next();
  }
}

/** Consumed queue slots above which the front of the queue is dropped. */
const QUEUE_COMPACT_AT = 1024;
const NOOP = (): void => undefined;

/** The budget of one check. */
export interface CheckBudget {
  /** Distinct lookups the check may make (answers from the shared cache count too). */
  maxQueries?: number;
  /** Wall time from the creation of the check resolver, in milliseconds. */
  deadlineMs?: number;
  /** Aborting it ends the check's DNS work: every lookup from then on answers `budget`. */
  signal?: AbortSignal;
  /** The clock, in milliseconds; `Date.now` unless a test injects one. */
  now?: () => number;
}

/**
 * What one check did. `queries` are the distinct lookups it passed down (each charged to the
 * budget); `cacheHits` are those the shared cache answered without an upstream query;
 * `memoHits` are repeats of a lookup the check had already made; `refused` are lookups refused
 * for budget, deadline or cancellation.
 */
export interface CheckStats extends ResolverStats {
  memoHits: number;
  refused: number;
  elapsedMs: number;
}

/** The resolver one check uses, with its counters. Answers it holds come back without a promise (`resolveNow`). */
export interface CheckResolver extends ImmediateResolver {
  resolveOnceNow<T extends RecordType>(canonical: string, type: T): DnsAnswer<T> | Promise<DnsAnswer<T>>;
  stats(): CheckStats;
}

/**
 * Wraps `inner` for one check: each name and type is asked at most once (later asks share the
 * first answer), at most `maxQueries` distinct lookups are made, and none after `signal` aborts or
 * after `deadlineMs` (nothing is asked upstream after it; answers held in memory stop within
 * `CLOCK_READ_EVERY` lookups); those answer `{ kind: 'error', reason: 'budget' }`. A lookup still in flight
 * when the deadline passes answers `budget` at the deadline. When `inner` can tell cache hits
 * (a `CachingResolver`), they are counted.
 *
 * Answers `inner` already holds (a `CachingResolver` hit, a `ZoneResolver`) are taken synchronously:
 * nothing can be waiting on them, so they need no race against the deadline. Lookups that do wait
 * share one deadline timer and one abort listener, armed while any is in flight and cleared when
 * none is, so a warm check sets no timer at all and a finished check leaves none behind.
 */
export function createCheckResolver(inner: Resolver, budget: CheckBudget = {}): CheckResolver {
  const maxQueries = budget.maxQueries ?? DEFAULT_CHECK_MAX_QUERIES;
  const deadlineMs = budget.deadlineMs ?? DEFAULT_CHECK_DEADLINE_MS;
  const now = budget.now ?? Date.now;
  const { signal } = budget;
  const startedAt = now();
  // Keyed by type, then canonical name: no "TYPE name" string is built (and hashed) per lookup.
  // An answer is held as a value once it is known, as a promise while it is on its way.
  const memo = new Map<RecordType, Map<string, DnsAnswer | Promise<DnsAnswer>>>();
  const counts = { queries: 0, cacheHits: 0, memoHits: 0, refused: 0 };
  const cacheAware = isCacheAware(inner) ? inner : undefined;
  const peek = hasCachedLookup(inner) ? inner : undefined;
  const synchronous = hasResolveSync(inner) ? inner : undefined;
  // The names passed down are canonical and checked already: a resolver that can skip doing that
  // again is asked that way.
  const synchronousCanonical = synchronous && hasResolveCanonicalSync(synchronous) ? synchronous : undefined;

  const refuse = <T extends RecordType>(detail: string): DnsAnswer<T> => {
    counts.refused++;
    return { kind: 'error', reason: 'budget', detail };
  };
  // The clock is read before every lookup that must wait, and before every CLOCK_READ_EVERY-th one
  // answered from memory: reading it costs more than such a lookup itself, and those answers spend
  // no DNS time. A check past its deadline still stops within that many lookups, and always before
  // anything is asked upstream.
  let sinceClockRead = CLOCK_READ_EVERY - 1; // the first lookup reads it
  let expired: string | undefined; // once passed, the deadline stays passed
  const spent = (mustWait: boolean): string | undefined => {
    if (signal?.aborted) return 'the check was cancelled';
    if (expired !== undefined || (!mustWait && ++sinceClockRead < CLOCK_READ_EVERY)) return expired;
    sinceClockRead = 0;
    if (now() - startedAt >= deadlineMs) expired = `the check's ${deadlineMs} ms DNS deadline has passed`;
    return expired;
  };

  // The lookups in flight, each by the function that ends it early with why it must stop. One
  // deadline timer and one abort listener serve them all: armed while any lookup waits, cleared when
  // none does. Each lookup is one promise settled once, by its answer or by the stop, whichever
  // comes first (a race of promises would allocate several per lookup; at 64 checks in flight that
  // garbage was a fifth of a cold check's time).
  const waiting = new Set<(why: string) => void>();
  let timer: NodeJS.Timeout | undefined;
  const stopAll = (why: string): void => {
    const stopped = [...waiting];
    disarm();
    for (const stop of stopped) stop(why);
  };
  const onAbort = (): void => stopAll('the check was cancelled');
  const arm = (): void => {
    if (timer !== undefined) return;
    timer = setTimeout(() => stopAll(`the check's ${deadlineMs} ms DNS deadline passed while waiting`), deadlineMs - (now() - startedAt));
    signal?.addEventListener('abort', onAbort, { once: true });
  };
  const disarm = (): void => {
    waiting.clear();
    if (timer === undefined) return;
    clearTimeout(timer);
    timer = undefined;
    signal?.removeEventListener('abort', onAbort);
  };

  const callbacks = !cacheAware && hasResolveThen(inner) ? inner : undefined;
  /**
   * Asks `inner`; once known, the answer replaces its promise in `table` (when given), so later asks
   * get it without waiting. That is done here, where the answer arrives, rather than by a `.then`
   * of its own on the promise: one promise per lookup, and with a `CallbackResolver` below, the only
   * one between the socket and the check. A rejection reaches the caller and leaves the table as is.
   */
  const ask = <T extends RecordType>(name: string, type: T, table: Map<string, DnsAnswer | Promise<DnsAnswer>> | undefined): Promise<DnsAnswer<T>> => {
    let pending: Promise<DnsAnswer<T>> | undefined;
    pending = new Promise<DnsAnswer<T>>((resolve, reject) => {
      let settled = false;
      const settle = (answer: DnsAnswer<T>): void => {
        if (table !== undefined && pending !== undefined && table.get(name) === pending) table.set(name, answer);
        resolve(answer);
      };
      const stop = (why: string): void => {
        if (settled) return;
        settled = true;
        settle(refuse(why));
      };
      const done = (): boolean => {
        if (waiting.delete(stop) && waiting.size === 0) disarm();
        if (settled) return false;
        settled = true;
        return true;
      };
      const answered = (answer: DnsAnswer<T>): void => {
        if (done()) settle(answer);
      };
      const failed = (error: unknown): void => {
        if (done()) reject(error);
      };
      waiting.add(stop);
      arm();
      if (cacheAware) {
        cacheAware.lookup(name, type).then((result) => {
          if (!done()) return;
          if (result.fromCache) counts.cacheHits++;
          settle(result.answer);
        }, failed);
      } else if (callbacks) {
        callbacks.resolveThen(name, type, answered, failed);
      } else {
        inner.resolve(name, type).then(answered, failed);
      }
    });
    return pending;
  };

  /** The answer `inner` can give without waiting, or undefined when it would have to ask. */
  const immediate = <T extends RecordType>(canonical: string, type: T): DnsAnswer<T> | undefined => {
    if (synchronousCanonical) return synchronousCanonical.resolveCanonicalSync(canonical, type);
    return synchronous ? synchronous.resolveSync(canonical, type) : peek?.heldAnswer(canonical, type);
  };

  const resolveNow = <T extends RecordType>(name: string, type: T): DnsAnswer<T> | Promise<DnsAnswer<T>> => {
    const canonical = canonicalName(name);
    let ofType = memo.get(type);
    if (ofType === undefined) {
      ofType = new Map();
      memo.set(type, ofType);
    }
    const earlier = ofType.get(canonical);
    if (earlier !== undefined) {
      counts.memoHits++;
      return earlier as DnsAnswer<T> | Promise<DnsAnswer<T>>;
    }
    // Checked after the memo: a name with a problem is never stored there, so the order changes nothing.
    const problem = canonicalNameProblem(canonical, name);
    if (problem) return { kind: 'error', reason: 'invalid-name', detail: problem };
    return lookup(canonical, type, ofType);
  };

  /**
   * A lookup past the memo: charged to the budget, answered from what `inner` holds or asked, and
   * remembered in `table` when one is given. The canonical name goes down: every layer below keys
   * on it, and DNS names are case-insensitive.
   */
  const lookup = <T extends RecordType>(
    canonical: string,
    type: T,
    table: Map<string, DnsAnswer | Promise<DnsAnswer>> | undefined,
  ): DnsAnswer<T> | Promise<DnsAnswer<T>> => {
    if (counts.queries >= maxQueries) return refuse(`the check has made its ${maxQueries} DNS lookups`);
    const ready = immediate(canonical, type);
    const over = spent(ready === undefined);
    if (over) return refuse(over);
    counts.queries++;
    if (ready !== undefined) {
      if (peek) counts.cacheHits++;
      table?.set(canonical, ready);
      return ready;
    }
    const pending = ask(canonical, type, table);
    // An answer known at once (a name the resolver below refuses) stays here as its settled promise.
    table?.set(canonical, pending);
    return pending;
  };

  return {
    resolveNow,
    // The DKIM probe's selector names: built from checked, canonical parts, each asked once per
    // check. Case folding, the name check and the memo would be spent on about 40 names per check
    // that can never fail them or hit it.
    resolveOnceNow: (canonical, type) => lookup(canonical, type, undefined),
    resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
      const answer = resolveNow(name, type);
      return answer instanceof Promise ? answer : Promise.resolve(answer);
    },
    // Field by field: `{ ...counts, elapsedMs }` costs about 1 µs on Node 20 (V8 11.3).
    stats: () => ({ queries: counts.queries, cacheHits: counts.cacheHits, memoHits: counts.memoHits, refused: counts.refused, elapsedMs: now() - startedAt }),
  };
}

/** A resolver that answers from memory without waiting (`ZoneResolver`). */
interface SynchronousResolver extends Resolver {
  resolveSync<T extends RecordType>(name: string, type: T): DnsAnswer<T>;
}

function hasResolveSync(resolver: Resolver): resolver is SynchronousResolver {
  return typeof (resolver as Partial<SynchronousResolver>).resolveSync === 'function';
}

/** `resolveSync` for a name already canonical and checked (`ZoneResolver.resolveCanonicalSync`). */
interface CanonicalSynchronousResolver extends SynchronousResolver {
  resolveCanonicalSync<T extends RecordType>(canonical: string, type: T): DnsAnswer<T>;
}

function hasResolveCanonicalSync(resolver: SynchronousResolver): resolver is CanonicalSynchronousResolver {
  return typeof (resolver as Partial<CanonicalSynchronousResolver>).resolveCanonicalSync === 'function';
}

function hasCachedLookup(resolver: Resolver): resolver is CachedLookupResolver {
  return typeof (resolver as Partial<CachedLookupResolver>).heldAnswer === 'function';
}

function isCacheAware(resolver: Resolver): resolver is CacheAwareResolver {
  return typeof (resolver as Partial<CacheAwareResolver>).lookup === 'function';
}
