/**
 * The resolver port. Every analyzer takes a `Resolver` as an argument; nothing reads DNS through a
 * global. An answer is a closed union of values: callers decide "void lookup", "temperror" and
 * "not published" from `kind` alone, and a resolver never throws for a DNS condition.
 */

/** The record types the engine asks for (RFC 1035 §3.2.2, RFC 3596 for AAAA). */
/** How many CNAMEs one answer may follow before it is treated as a loop (BIND uses 16; so do we). */
export const MAX_CNAME_CHAIN = 16;

export type RecordType = 'A' | 'AAAA' | 'MX' | 'TXT' | 'CNAME' | 'PTR' | 'NS' | 'SOA';

/** RFC 1035 §3.3.9 */
export interface MxData {
  preference: number;
  /** Absolute name, lower case, no trailing dot; '' is the root (null MX, RFC 7505). */
  exchange: string;
}

/** RFC 1035 §3.3.13 */
export interface SoaData {
  mname: string;
  rname: string;
  serial: number;
  refresh: number;
  retry: number;
  expire: number;
  minimum: number;
}

/** What one record of each type carries. Names are absolute, lower case, without the trailing dot. */
export interface RecordDataMap {
  A: string;
  AAAA: string;
  MX: MxData;
  /** The record's character-strings as published (RFC 1035 §3.3.14); callers join them (RFC 7208 §3.3). */
  TXT: string[];
  CNAME: string;
  PTR: string;
  NS: string;
  SOA: SoaData;
}

export type RecordData<T extends RecordType = RecordType> = RecordDataMap[T];

/**
 * The words every lookup ended by a socket error carries in its `detail` (a server that never
 * answered, not one that answered with an error): the check's fix tells the two apart by them.
 */
export const SERVER_UNREACHABLE = 'cannot be reached';

/** Why a lookup produced no usable answer. `budget` means the per-check budget refused to ask. */
export type DnsErrorReason =
  | 'servfail'
  | 'refused'
  | 'timeout'
  | 'malformed'
  | 'budget'
  | 'invalid-name';

/**
 * One answer. `records` is never empty (an empty answer is `nodata`, RFC 2308 §2.2).
 * `ttl` is the time the answer may be cached, in seconds, where the source says: the smallest TTL
 * of the RRset and of the CNAMEs followed; for negative answers min(SOA TTL, SOA MINIMUM) of the
 * authority section (RFC 2308 §5), 0 (do not cache) when the server sent no SOA.
 * `cnames` lists the aliases followed.
 */
export type DnsAnswer<T extends RecordType = RecordType> =
  | { kind: 'records'; records: RecordData<T>[]; ttl?: number; cnames?: string[] }
  | { kind: 'nodata'; ttl?: number; cnames?: string[] }
  | { kind: 'nxdomain'; ttl?: number; cnames?: string[] }
  | { kind: 'error'; reason: DnsErrorReason; detail?: string };

/**
 * Where a resolver's answers come from, as a result reports it (`SpoofCheckResult.source`):
 * - `dns`: the DNS itself (real servers, the system's resolvers, or a DNS server a test runs);
 * - `fixture-zones`: zone files loaded in memory (`ZoneResolver`, `--zones`): stand-in records, which
 *   may be written for real names (`fixtures/zones/google.com.zone`) and say nothing of their live DNS.
 */
export type CheckSource = 'dns' | 'fixture-zones';

/** The port every analyzer depends on. Implementations never reject for a DNS condition. */
export interface Resolver {
  resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>>;
  /**
   * Where the answers come from; `dns` when left out. Zone resolvers say `fixture-zones`, and a
   * resolver that wraps another (cache, concurrency cap, faults) says what its inner one says.
   */
  readonly source?: CheckSource | undefined;
}

/**
 * A resolver that can hand its answer to callbacks instead of a promise: the cold path's layers
 * (`NetworkResolver`, `ConcurrencyLimitedResolver`, the per-check resolver) pass one query's answer
 * up through them with one promise in all, at the top, where each layer's `.then` cost a promise
 * and a microtask per query. Exactly one of `done` and `failed` is called, once (possibly before
 * `resolveThen` returns, for an answer known at once); the answers are the ones `resolve` gives.
 * `done` and `failed` must not throw (they settle a promise or hand the answer on).
 */
export interface CallbackResolver extends Resolver {
  resolveThen<T extends RecordType>(name: string, type: T, done: (answer: DnsAnswer<T>) => void, failed: (error: unknown) => void): void;
}

/** True when `resolver` has `resolveThen`. */
export function hasResolveThen(resolver: Resolver): resolver is CallbackResolver {
  return typeof (resolver as Partial<CallbackResolver>).resolveThen === 'function';
}

/** Where `resolver`'s answers come from (`dns` unless it says otherwise). */
export function checkSourceOf(resolver: Resolver): CheckSource {
  return resolver.source ?? 'dns';
}

/**
 * A resolver that hands over an answer it already holds as a plain value, and a promise only when it
 * must wait. The per-check resolver is one: on a warm cache, a check's 50 lookups then cost no
 * promise and no microtask each. The answers are the same as `resolve` gives.
 */
export interface ImmediateResolver extends Resolver {
  resolveNow<T extends RecordType>(name: string, type: T): DnsAnswer<T> | Promise<DnsAnswer<T>>;
  /**
   * `resolveNow` for a name the caller has built from checked parts, already canonical and valid
   * (`canonicalName`, `dnsNameProblem`), that it asks once: no case folding, no name check, and not
   * remembered for a later ask (which would be charged again).
   */
  resolveOnceNow?<T extends RecordType>(canonical: string, type: T): DnsAnswer<T> | Promise<DnsAnswer<T>>;
}

/** `resolver.resolveNow(name, type)` where the resolver has it, else `resolver.resolve(name, type)`. */
export function resolveNow<T extends RecordType>(resolver: Resolver, name: string, type: T): DnsAnswer<T> | Promise<DnsAnswer<T>> {
  return isImmediate(resolver) ? resolver.resolveNow(name, type) : resolver.resolve(name, type);
}

/** `resolver.resolveOnceNow(canonical, type)` where the resolver has it, else `resolveNow`. */
export function resolveOnceNow<T extends RecordType>(resolver: Resolver, canonical: string, type: T): DnsAnswer<T> | Promise<DnsAnswer<T>> {
  if (!isImmediate(resolver)) return resolver.resolve(canonical, type);
  return resolver.resolveOnceNow ? resolver.resolveOnceNow(canonical, type) : resolver.resolveNow(canonical, type);
}

/** A value known now, or a promise of it when it had to wait (what `resolveNow` gives). */
export type Now<T> = T | Promise<T>;

/** `fn(value)` at once when `value` is known, after it settles when it is a promise. */
export function thenNow<T, R>(value: Now<T>, fn: (known: T) => Now<R>): Now<R> {
  return value instanceof Promise ? value.then(fn) : fn(value);
}

/**
 * `Promise.all(values)`, but the array itself when no value is a promise: a warm check's fan-outs
 * (MX hosts, SPF includes) then allocate no promise and wait on no microtask.
 */
export function allNow<T>(values: readonly Now<T>[]): Now<T[]> {
  for (const value of values) if (value instanceof Promise) return Promise.all(values);
  return values as T[];
}

function isImmediate(resolver: Resolver): resolver is ImmediateResolver {
  return typeof (resolver as Partial<ImmediateResolver>).resolveNow === 'function';
}

/** Counters a check reports: how many queries it sent and how many came from the cache. */
export interface ResolverStats {
  queries: number;
  cacheHits: number;
}

/** True for the two answers RFC 7208 §4.6.4 calls a void lookup: NXDOMAIN and an empty answer. */
export function isVoid(answer: DnsAnswer): boolean {
  return answer.kind === 'nxdomain' || answer.kind === 'nodata';
}

/** A short human description of an answer that is not a set of records, for findings and errors. */
export function describeAnswer(answer: DnsAnswer): string {
  switch (answer.kind) {
    case 'records':
      return `${answer.records.length} record(s)`;
    case 'nodata':
      return 'no records of that type (NODATA)';
    case 'nxdomain':
      return 'the name does not exist (NXDOMAIN)';
    case 'error':
      return DNS_ERROR_TEXT[answer.reason] + (answer.detail ? ` (${answer.detail})` : '');
  }
}

const DNS_ERROR_TEXT: Record<DnsErrorReason, string> = {
  servfail: 'the DNS server failed (SERVFAIL)',
  refused: 'the DNS server refused the query (REFUSED)',
  timeout: 'the DNS query timed out',
  malformed: 'the DNS response was malformed',
  budget: 'the per-check DNS budget was exhausted',
  'invalid-name': 'the name is not a valid DNS name',
};
