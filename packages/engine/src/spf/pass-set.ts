/**
 * The SPF pass set: every client address for which check_host() (RFC 7208 §4) of a domain gives
 * `pass`, computed over the whole tree (include, redirect, a, mx, ip4, ip6, exists, ptr) in evaluation
 * order. A `-`, `~` or `?` term that matches first takes its range away from the terms after it
 * (RFC 7208 §4.6.2); `+all` passes whatever is left.
 *
 * Each address ends up in one of these states, tracked as sets:
 * - pass: passes whatever the message (the address is reached for certain and matched by a `+` term);
 * - maybe: passes or not depending on a term only known at delivery (`exists` or `a`/`mx` with
 *   sender macros, `ptr`), or reached only if such a term did not match;
 * - temperror / permerror: the evaluation stops with an error for it (a failed lookup, an include
 *   without a record, a loop, a syntax error below the top);
 * - anything else gets fail, softfail or neutral.
 *
 * Terms that cannot be enumerated are settled with check_host() itself at probe addresses chosen
 * outside every range the tree names, spread across IPv4 and IPv6: if one passes, anyone can.
 *
 * The limits of RFC 7208 §4.6.4 are applied in evaluation order, counting what an address that
 * matches nothing spends on its way (an address that left an include early spent less; the count is
 * the worst case): from the 11th DNS term on, and from the 3rd void lookup on (per family: an `a`
 * term asks A for IPv4 clients and AAAA for IPv6 ones), what still reaches a term gets permerror.
 * Void lookups of terms only known at delivery cannot be counted.
 */
import { LRUCache } from 'lru-cache';
import { canonicalName } from '../dns/name.js';
import { allNow, describeAnswer } from '../dns/types.js';
import type { DnsAnswer, Now, RecordType, Resolver } from '../dns/types.js';
import type { FailedQuery } from '../errors.js';
import { formatIp4, formatIp6, parseClientAddress, parseIp4, parseIp6 } from './address.js';
import { MAX_DNS_TERMS, MAX_MX_NAMES, MAX_VOID_LOOKUPS, checkHost } from './evaluate.js';
import type { CheckHostResult } from './evaluate.js';
import { expandMacroString, toTargetName } from './macro.js';
import type { MacroContext } from './macro.js';
import { parseSpfRecordCached } from './parse-cache.js';
import { ALL_ADDRESSES, NO_ADDRESSES, RangeSet, bigIntToIp6Words, differenceOf, intersectionOf, ip6ToBigInt, isEmptySet, unionOf } from './ranges.js';
import type { AddressSet } from './ranges.js';
import { isVoidSpfLookup, lookupSpfRecordNow } from './record.js';
import type { SpfRecordLookup } from './record.js';
import { safeResolve } from './resolve.js';
import { truncateForMessage } from './text.js';
import type { MacroString, SpfTerm } from './types.js';

/** A pass set holding at least this many IPv4 addresses (1/8 of the space) lets anyone pass. */
export const OPEN_IPV4_ADDRESSES = 2n ** 29n;
/** A pass set holding an IPv6 block this wide or wider (/8) lets anyone pass. */
export const OPEN_IPV6_PREFIX = 8;
/** More IPv4 addresses than this (a /8) is a warning: far more than any sender needs. */
export const WIDE_IPV4_ADDRESSES = 2n ** 24n;
/** How many IPv4 probe addresses (one per /3 of the space) and IPv6 probes are evaluated. */
export const IPV4_PROBES = 8;
/** IPv6 probe addresses, spread over the global unicast space (2000::/3). */
export const IPV6_PROBES = 4;
/** How many include/redirect levels are followed; deeper is far past the 10-lookup limit anyway. */
export const MAX_PASS_SET_DEPTH = 20;
/** Records made only of ip4/ip6/all terms have a pass set that depends on their text alone: kept. */
export const STATIC_OUTCOME_CACHE_ENTRIES = 2000;
/** The MAIL FROM local part a forger is taken to use for the probes. */
const PROBE_LOCAL_PART = 'spoof-test';
/** The HELO name of a forger's client (RFC 6761 reserves `.invalid`). */
const PROBE_HELO = 'forger.invalid';
/** The %{…} letters known without a message: the current domain and the sender's domain. */
const STATIC_LETTERS = new Set(['d', 'o']);
/**
 * Macro letters whose value the forger chooses (RFC 7208 §7.3): the local part (`l`, which may hold
 * dots), the HELO name (`h`) and the client's validated PTR name (`p`: the forger runs the reverse DNS
 * of their own address). A name that ends in one of them ends where the forger says: in the forger's
 * own zone, where they publish whatever matches (an A record for their address, `v=spf1 +all`).
 */
const FORGER_CHOSEN_LETTERS = new Set(['l', 'h', 'p']);
const PLACEHOLDER_CLIENT = parseClientAddress('0.0.0.0')!;
const TWO_POW_32 = 2 ** 32;
const TWO_POW_128 = 2 ** 128;

/** The share of a family's address space, from 0 to 1. */
export interface FamilyShare {
  ipv4Share: number;
  ipv6Share: number;
}

/** One probe address evaluated with check_host(). */
export interface PassSetProbe {
  ip: string;
  result: CheckHostResult['result'];
  matchedTerm: string | null;
  problem: string | null;
}

/** Why anyone can pass: the pass set is huge, or a probe address outside every listed range passed. */
export interface SpfOpening {
  /** The term that lets them through, as a path from the top record (`include:x.example → +all`). */
  term: string | null;
  evidence: { kind: 'pass-set'; ipv4Share: number; ipv6WidestPrefix: number | null } | { kind: 'probe'; ip: string };
}

/** Part of the space whose result could not be determined because a lookup failed. */
export interface PassSetUnknown {
  /** What failed, in words. */
  problem: string;
  /** The lookup that failed, when one did (a bound of the analysis has none). */
  failedQuery: FailedQuery | null;
}

/** The pass set of a domain's SPF, summarised. */
export interface SpfPassSet {
  /** Addresses that pass whatever the message. */
  pass: FamilyShare & { ipv4Addresses: number; ipv4WidestPrefix: number | null; ipv6WidestPrefix: number | null };
  /** Addresses whose result depends on terms only known at delivery (see `runtimeTerms`). */
  maybe: FamilyShare;
  /** Addresses for which evaluation ends in temperror (a failed lookup): their result is unknown. */
  temperror: FamilyShare;
  /** Addresses for which evaluation ends in permerror: receivers give no pass to them. */
  permerror: FamilyShare;
  /** Terms that cannot be enumerated, as paths from the top record. */
  runtimeTerms: string[];
  /** The probe addresses evaluated with check_host() (only when there are runtime terms). */
  probes: PassSetProbe[];
  /** Set when anyone can pass. */
  open: SpfOpening | null;
  /** More than 2^24 IPv4 addresses pass (but not enough to be open). */
  wide: boolean;
  /** Set when a failed lookup leaves it open whether anyone can pass. */
  unknown: PassSetUnknown | null;
  /** Why parts of the space are unknown, each naming its term. */
  problems: string[];
}

/** What a match of one term (or the result of an included record) covers. */
interface Match {
  pass: AddressSet;
  maybe: AddressSet;
  temperror: AddressSet;
  permerror: AddressSet;
}

/** The outcome of evaluating one record for every address at once. */
interface Outcome extends Match {
  /** What each `+` term added to `pass`, with the term's path and the domain whose record holds it. */
  openers: PassOpener[];
  /**
   * What a forger can make pass through a `+` term whose name they choose (see
   * `FORGER_CHOSEN_LETTERS`), with the term's path. Kept apart from `pass`/`maybe`, which describe
   * one message: for a given HELO name and local part these terms are ordinary runtime terms.
   */
  forgerOpeners: { term: string; set: AddressSet }[];
  runtimeTerms: string[];
  /** Every range the record (and what it includes) names, for choosing probes outside them. */
  named: AddressSet;
  failedQuery: FailedQuery | null;
  /** The first failed lookup in words, with the path to it (the one `failedQuery` names). */
  temperrorProblem: string | null;
  problems: string[];
}

const NO_MATCH: Match = { pass: NO_ADDRESSES, maybe: NO_ADDRESSES, temperror: NO_ADDRESSES, permerror: NO_ADDRESSES };
/** What `all` matches, and what ends at a redirect (RFC 7208 §5.1, §6.1). */
const MATCH_ALL: Match = { pass: ALL_ADDRESSES, maybe: NO_ADDRESSES, temperror: NO_ADDRESSES, permerror: NO_ADDRESSES };

// Keyed by record text: an outcome of a record with only ip4/ip6/all terms is a function of the text.
// The domain is kept too: the openers name it, and another domain may publish the same text.
const staticOutcomes = new LRUCache<string, { domain: string; outcome: Outcome }>({ max: STATIC_OUTCOME_CACHE_ENTRIES });

/** What one `+` term lets pass: the term's path from the top record, the record that holds it, the addresses. */
export interface PassOpener {
  /** The path from the top record (`include:_spf.example.com → ip4:192.0.2.0/24`). */
  term: string;
  /** The domain whose SPF record holds the last term of the path. */
  domain: string;
  /** The addresses that pass through this term. */
  set: AddressSet;
  /**
   * Everything the term matches, of which `set` is the part that reaches it: for an `ip4`/`ip6` term
   * the same object every time the parsed record is evaluated, so facts about it can be kept.
   */
  origin: AddressSet;
}

/**
 * Where the passing addresses come from, kept beside the summary (never serialised): each `+` term's
 * share of `pass`, and the `maybe` set. Shared-infrastructure classification reads them.
 */
export interface PassSources {
  openers: readonly PassOpener[];
  /** Addresses whose result depends on the message (may overlap `pass`). */
  maybe: AddressSet;
  /** Addresses that pass whatever the message: the union of the openers' sets. */
  pass: AddressSet;
}

/** The address sets behind a pass set, before they are summarised (for tests and tools). */
export interface PassSetSets {
  pass: AddressSet;
  maybe: AddressSet;
  temperror: AddressSet;
  permerror: AddressSet;
  runtimeTerms: string[];
}

/** The raw sets of the SPF record `text` at `domain`: what passes, may pass, or ends in an error. */
export async function passSetSets(text: string, domain: string, resolver: Resolver): Promise<PassSetSets> {
  const top = canonicalName(domain);
  const walked = new PassSetWalk(resolver, top).record(text, top, [top], 0, { dnsTerms: 0, voids4: 0, voids6: 0 });
  const outcome = walked instanceof Promise ? await walked : walked;
  return { pass: outcome.pass, maybe: outcome.maybe, temperror: outcome.temperror, permerror: outcome.permerror, runtimeTerms: outcome.runtimeTerms };
}

/**
 * Computes the pass set of the SPF record `text` published at `domain`, asking `resolver` for what
 * the tree needs, then probes with check_host() when terms cannot be enumerated. Never rejects.
 */
export async function computePassSet(text: string, domain: string, resolver: Resolver): Promise<SpfPassSet> {
  return computePassSetNow(text, domain, resolver);
}

/** `computePassSet`, as a value when every answer is held and a promise only when one must wait. */
export function computePassSetNow(text: string, domain: string, resolver: Resolver): Now<SpfPassSet> {
  const top = canonicalName(domain);
  const walk = new PassSetWalk(resolver, top);
  const walked = walk.record(text, top, [top], 0, { dnsTerms: 0, voids4: 0, voids6: 0 });
  return walked instanceof Promise ? walked.then((outcome) => summarisePassSet(walk, top, outcome, resolver)) : summarisePassSet(walk, top, walked, resolver);
}

/** `computePassSetNow` with the sets behind the summary (`PassSources`), which the summary leaves out. */
export function computePassSetWithSourcesNow(text: string, domain: string, resolver: Resolver): Now<{ passSet: SpfPassSet; sources: PassSources }> {
  const top = canonicalName(domain);
  const walk = new PassSetWalk(resolver, top);
  const walked = walk.record(text, top, [top], 0, { dnsTerms: 0, voids4: 0, voids6: 0 });
  const withSources = (outcome: Outcome): Now<{ passSet: SpfPassSet; sources: PassSources }> => {
    const sources: PassSources = { openers: outcome.openers, maybe: outcome.maybe, pass: outcome.pass };
    const summary = summarisePassSet(walk, top, outcome, resolver);
    return summary instanceof Promise ? summary.then((passSet) => ({ passSet, sources })) : { passSet: summary, sources };
  };
  return walked instanceof Promise ? walked.then(withSources) : withSources(walked);
}

/** The pass set from the walk's outcome, probing with check_host() when terms cannot be enumerated. */
function summarisePassSet(walk: PassSetWalk, top: string, outcome: Outcome, resolver: Resolver): Now<SpfPassSet> {
  const pass = outcome.pass;
  const ipv6WidestPrefix = pass.v6.widestPrefix(6);
  let open: SpfOpening | null = null;
  if (isOpen(pass)) {
    open = { term: largestOpener(outcome.openers, pass), evidence: { kind: 'pass-set', ipv4Share: share(pass.v4, 4), ipv6WidestPrefix } };
  }
  if (open === null && outcome.forgerOpeners.length > 0) {
    // A forger who chooses their HELO name, local part or reverse DNS passes wherever these reach.
    const forgerPass = outcome.forgerOpeners.reduce<AddressSet>((set, opener) => unionOf(set, opener.set), NO_ADDRESSES);
    if (isOpen(forgerPass)) {
      open = {
        term: largestOpener(outcome.forgerOpeners, forgerPass),
        evidence: { kind: 'pass-set', ipv4Share: share(forgerPass.v4, 4), ipv6WidestPrefix: forgerPass.v6.widestPrefix(6) },
      };
    }
  }
  if (open === null && outcome.runtimeTerms.length > 0) {
    return runProbes(top, outcome.named, resolver).then((probes) => {
      const passed = probes.find((probe) => probe.result === 'pass');
      const opened: SpfOpening | null = passed ? { term: passed.matchedTerm, evidence: { kind: 'probe', ip: passed.ip } } : null;
      return passSetOf(walk, outcome, opened, probes);
    });
  }
  return passSetOf(walk, outcome, open, []);

  async function runProbes(domainName: string, named: AddressSet, dns: Resolver): Promise<PassSetProbe[]> {
    return Promise.all(
      probeAddresses(named).map(async (ip): Promise<PassSetProbe> => {
        const result = await checkHost({ ip, domain: domainName, sender: `${PROBE_LOCAL_PART}@${domainName}`, helo: PROBE_HELO }, { resolver: dns });
        if (result.failedQuery) walk.probeFailures.set(ip, result.failedQuery);
        return { ip, result: result.result, matchedTerm: result.matchedTerm ?? null, problem: result.problem ?? null };
      }),
    );
  }
}

/** The summary of a pass set once any probes have answered. */
function passSetOf(walk: PassSetWalk, outcome: Outcome, open: SpfOpening | null, probes: PassSetProbe[]): SpfPassSet {
  const pass = outcome.pass;
  const ipv4Addresses = pass.v4.size();
  const ipv4WidestPrefix = pass.v4.widestPrefix(4);
  const ipv6WidestPrefix = pass.v6.widestPrefix(6);
  let unknown: PassSetUnknown | null = null;
  if (open === null) {
    const probeFailure = probes.find((probe) => probe.result === 'temperror');
    if (!isEmptySet(differenceOf(outcome.temperror, pass)) && isOpen(unionOf(pass, unionOf(outcome.temperror, outcome.maybe)))) {
      unknown = { problem: outcome.temperrorProblem ?? 'a DNS lookup failed', failedQuery: outcome.failedQuery };
    } else if (probeFailure) {
      unknown = { problem: probeFailure.problem ?? 'a DNS lookup failed', failedQuery: walk.probeFailures.get(probeFailure.ip) ?? null };
    }
  }
  return {
    pass: { ipv4Addresses: Number(ipv4Addresses), ipv4Share: share(pass.v4, 4), ipv6Share: share(pass.v6, 6), ipv4WidestPrefix, ipv6WidestPrefix },
    maybe: shares(differenceOf(outcome.maybe, pass)),
    temperror: shares(differenceOf(outcome.temperror, pass)),
    permerror: shares(differenceOf(outcome.permerror, pass)),
    runtimeTerms: outcome.runtimeTerms,
    probes,
    open,
    wide: open === null && ipv4Addresses > WIDE_IPV4_ADDRESSES,
    unknown,
    problems: outcome.problems,
  };
}

/** RFC-free policy of this tool: 1/8 of IPv4, or an IPv6 /8, is "anyone". */
export function isOpen(set: AddressSet): boolean {
  if (set.v4.size() >= OPEN_IPV4_ADDRESSES) return true;
  const widest = set.v6.widestPrefix(6);
  return widest !== null && widest <= OPEN_IPV6_PREFIX;
}

/**
 * Probe addresses outside every range in `named`: one in each /3 of IPv4 and a few spread over the
 * IPv6 global unicast space, each moved past any named range it falls in.
 */
export function probeAddresses(named: AddressSet): string[] {
  const out: string[] = [];
  const slice4 = 2n ** 29n;
  for (let k = 0n; k < BigInt(IPV4_PROBES); k++) {
    const from = k * slice4 + slice4 / 2n + 0x4d4d4dn;
    const found = named.v4.firstOutside(from, (k + 1n) * slice4 - 1n);
    if (found !== null) out.push(formatIp4(Number(found)));
  }
  const slice6 = 2n ** 123n; // 2000::/3 in 2^(128-3) addresses, cut into IPV6_PROBES pieces
  for (let k = 0n; k < BigInt(IPV6_PROBES); k++) {
    const from = (0x2n << 124n) + k * slice6 + slice6 / 2n + 0x5eedn;
    const found = named.v6.firstOutside(from, (0x2n << 124n) + (k + 1n) * slice6 - 1n);
    if (found !== null) out.push(formatIp6(bigIntToIp6Words(found)));
  }
  return out;
}

function share(set: RangeSet, family: 4 | 6): number {
  return Number(set.size()) / (family === 4 ? TWO_POW_32 : TWO_POW_128);
}

function shares(set: AddressSet): FamilyShare {
  return { ipv4Share: share(set.v4, 4), ipv6Share: share(set.v6, 6) };
}

/**
 * The term that let the most addresses through, in the family that makes the set open (IPv4 when
 * its share alone does, else IPv6).
 */
function largestOpener(openers: readonly { term: string; set: AddressSet }[], pass: AddressSet): string | null {
  const byV4 = pass.v4.size() >= OPEN_IPV4_ADDRESSES;
  let best: { term: string; size: bigint } | null = null;
  for (const opener of openers) {
    const size = byV4 ? opener.set.v4.size() : opener.set.v6.size();
    if (best === null || size > best.size) best = { term: opener.term, size };
  }
  return best?.term ?? null;
}

/** The running state of one record's evaluation (RFC 7208 §4.6.2: terms in order, first match wins). */
class RecordState {
  constructor(
    /** The domain whose record this is (openers name it). */
    private readonly domain: string,
  ) {}

  /** Addresses certain to reach the next term. */
  private certain: AddressSet = ALL_ADDRESSES;
  /** Addresses that reach the next term only if a term known at delivery did not match. */
  private maybeReach: AddressSet = NO_ADDRESSES;
  readonly outcome: Outcome = {
    pass: NO_ADDRESSES,
    maybe: NO_ADDRESSES,
    temperror: NO_ADDRESSES,
    permerror: NO_ADDRESSES,
    openers: [],
    forgerOpeners: [],
    runtimeTerms: [],
    named: NO_ADDRESSES,
    failedQuery: null,
    temperrorProblem: null,
    problems: [],
  };

  /** True once no address reaches further terms. */
  get done(): boolean {
    return isEmptySet(this.certain) && isEmptySet(this.maybeReach);
  }

  /**
   * One term matched `match` (for an include: the included record's outcome, RFC 7208 §5.2). A `+`
   * term passes what it matches among the addresses still reaching it; any match stops them.
   */
  apply(label: string, plus: boolean, match: Match, childOpeners?: Outcome['openers']): void {
    const o = this.outcome;
    const reach = unionOf(this.certain, this.maybeReach);
    if (plus) {
      const hit = intersectionOf(this.certain, match.pass);
      if (!isEmptySet(hit)) {
        o.pass = unionOf(o.pass, hit);
        if (childOpeners === undefined) o.openers.push({ term: label, domain: this.domain, set: hit, origin: match.pass });
        else for (const opener of childOpeners) {
          const part = intersectionOf(opener.set, hit);
          if (!isEmptySet(part)) o.openers.push({ term: `${label} → ${opener.term}`, domain: opener.domain, set: part, origin: opener.origin });
        }
      }
      const maybeHit = unionOf(intersectionOf(this.certain, match.maybe), intersectionOf(this.maybeReach, unionOf(match.pass, match.maybe)));
      o.maybe = unionOf(o.maybe, maybeHit);
    }
    o.temperror = unionOf(o.temperror, intersectionOf(reach, match.temperror));
    o.permerror = unionOf(o.permerror, intersectionOf(reach, match.permerror));
    const decided = unionOf(match.pass, unionOf(match.temperror, match.permerror));
    const certainMaybe = differenceOf(intersectionOf(this.certain, match.maybe), decided);
    this.certain = differenceOf(differenceOf(this.certain, decided), match.maybe);
    this.maybeReach = unionOf(differenceOf(this.maybeReach, decided), certainMaybe);
  }

  /** A term known only at delivery: it may match any address still reaching it. */
  runtime(label: string, plus: boolean): void {
    this.outcome.runtimeTerms.push(label);
    this.apply(label, plus, { pass: NO_ADDRESSES, maybe: ALL_ADDRESSES, temperror: NO_ADDRESSES, permerror: NO_ADDRESSES });
  }

  /**
   * A term whose target the forger chooses: with `+` it matches every address that reaches it (the
   * forger points it at their own zone); with another qualifier the forger simply avoids matching it,
   * which is the same as a term known only at delivery.
   */
  forgerChosen(label: string, plus: boolean): void {
    if (plus) this.forgerVia(label, [{ term: '', set: ALL_ADDRESSES }]);
    this.runtime(label, plus);
  }

  /**
   * Records a term whose target cannot be resolved now ('forger' or 'runtime', see `target`); true
   * when it did, so the caller stops there, false for a name (or null) the caller goes on with.
   */
  unknownTarget(label: string, plus: boolean, target: string | 'runtime' | 'forger' | null): target is 'runtime' | 'forger' {
    if (target === 'forger') this.forgerChosen(label, plus);
    else if (target === 'runtime') this.runtime(label, plus);
    else return false;
    return true;
  }

  /**
   * A `+` include or redirect whose record has terms the forger points (`openers`): what still may
   * reach this term, the forger can make pass through them. Call before `apply`.
   */
  forgerVia(label: string, openers: Outcome['forgerOpeners']): void {
    const reach = unionOf(this.certain, this.maybeReach);
    for (const opener of openers) {
      const set = intersectionOf(reach, opener.set);
      if (!isEmptySet(set)) this.outcome.forgerOpeners.push({ term: opener.term === '' ? label : `${label} → ${opener.term}`, set });
    }
  }

  /** Evaluation stops here for every address still reaching this point ('' as label: the problem says where). */
  fail(label: string, kind: 'temperror' | 'permerror', problem: string, failedQuery?: FailedQuery, families: AddressSet = ALL_ADDRESSES): void {
    const text = label === '' ? problem : `${truncateForMessage(label)}: ${problem}`;
    if (kind === 'temperror') this.lookupFailed(text, failedQuery);
    else this.outcome.problems.push(text);
    this.apply(label, false, kind === 'temperror' ? { ...NO_MATCH, temperror: families } : { ...NO_MATCH, permerror: families });
  }

  /** Notes a failed lookup: the first one is the one a refusal names. */
  lookupFailed(problem: string, failedQuery: FailedQuery | undefined): void {
    const o = this.outcome;
    o.problems.push(problem);
    if (o.temperrorProblem === null) {
      o.temperrorProblem = problem;
      if (failedQuery) o.failedQuery = failedQuery;
    }
  }

  /** Remembers ranges the record names, so probes avoid them. */
  name(set: AddressSet): void {
    this.outcome.named = unionOf(this.outcome.named, set);
  }

  /** Adds what an included or redirected-to record learnt (its runtime terms, problems, named ranges). */
  absorb(label: string, child: Outcome): void {
    const o = this.outcome;
    for (const term of child.runtimeTerms) o.runtimeTerms.push(`${label} → ${term}`);
    for (const problem of child.problems) o.problems.push(`${truncateForMessage(label)} → ${problem}`);
    if (o.temperrorProblem === null && child.temperrorProblem !== null) {
      o.temperrorProblem = `${truncateForMessage(label)} → ${child.temperrorProblem}`;
      o.failedQuery = child.failedQuery;
    }
    this.name(child.named);
  }
}

/** DNS-querying terms and void lookups (per client family) counted so far on the evaluation path (RFC 7208 §4.6.4). */
interface LookupCount {
  dnsTerms: number;
  voids4: number;
  voids6: number;
}

/** A term's match, with whether its query came back empty for IPv4 and for IPv6 clients. */
type CountedMatch = Match & { void4: boolean; void6: boolean };

/** A child record's outcome, with the lookup count on leaving it. */
interface ChildOutcome {
  outcome: Outcome;
  exitCount: LookupCount;
}

/** One record's evaluation in progress: what `evaluateFrom` needs to go on from any term. */
interface Evaluation {
  terms: SpfTerm[];
  hasAll: boolean;
  stack: string[];
  depth: number;
  state: RecordState;
  count: LookupCount;
  context: MacroContext;
  /** The redirect met so far (RFC 7208 §6.1: applied after the last mechanism). */
  redirect: { text: string; domainSpec: MacroString } | null;
}

/**
 * One pass-set computation: records by target domain and lookup count on entry, so a repeated
 * include is evaluated once per count.
 *
 * Every step returns its result as a value when the resolver holds the answers it needs (`Now`), and
 * a promise only when one must wait: a warm walk allocates no promise and waits on no microtask. The
 * queries go out in the same order either way, one term after another.
 */
class PassSetWalk {
  /** A value when the child was known at once, a promise when it had to wait (later hits wait on it too). */
  private readonly children = new Map<string, Now<ChildOutcome>>();
  /** The failed query of each probe that ended in temperror. */
  readonly probeFailures = new Map<string, FailedQuery>();

  constructor(
    private readonly resolver: Resolver,
    private readonly topDomain: string,
  ) {}

  /** The outcome of the record `text` published at `domain`, evaluated for every address at once. */
  record(text: string, domain: string, stack: string[], depth: number, count: LookupCount): Now<Outcome> {
    const cached = staticOutcomes.get(text);
    if (cached !== undefined) return cached.domain === domain || cached.outcome.openers.length === 0 ? cached.outcome : withOpenersAt(cached.outcome, domain);
    const parsed = parseSpfRecordCached(text);
    const state = new RecordState(domain);
    if (!parsed.ok) {
      // RFC 7208 §4.6: a syntax error anywhere makes the whole record a permerror.
      state.fail(truncateForMessage(text), 'permerror', `the SPF record of ${domain} has a syntax error`);
      return state.outcome;
    }
    const terms = parsed.record.terms;
    const isStatic = terms.every((term) => term.type === 'modifier' ? term.name !== 'redirect' : term.mechanism.name === 'ip4' || term.mechanism.name === 'ip6' || term.mechanism.name === 'all');
    const run: Evaluation = { terms, hasAll: parsed.record.hasAll, stack, depth, state, count, context: this.context(domain), redirect: null };
    const evaluated = this.evaluateFrom(run, 0);
    // A static record asks nothing, so never waits; the promise branch is for the others.
    if (evaluated instanceof Promise) return evaluated.then(() => keepStatic(text, domain, isStatic, state.outcome));
    return keepStatic(text, domain, isStatic, state.outcome);
  }

  /**
   * RFC 7208 §4.6.2: the terms from `from` on, in order, until one matches every address still
   * reaching it. Goes on at once after a term whose answers are held; after one that must wait, the
   * rest runs in the promise's continuation (the state updates keep their order).
   */
  private evaluateFrom(run: Evaluation, from: number): Now<void> {
    const { terms, state, count, context } = run;
    for (let index = from; index < terms.length; index++) {
      if (state.done) return;
      const term = terms[index]!;
      if (term.type === 'modifier') {
        // RFC 7208 §6.1: redirect is ignored when the record has "all".
        if (term.name === 'redirect' && !run.hasAll) run.redirect = term;
        continue;
      }
      const plus = term.qualifier === '+';
      const label = term.text;
      const mechanism = term.mechanism;
      if (mechanism.name !== 'all' && mechanism.name !== 'ip4' && mechanism.name !== 'ip6' && overLimit(label, count, state)) return;
      switch (mechanism.name) {
        case 'all':
          state.apply(label, plus, MATCH_ALL); // RFC 7208 §5.1
          return;
        case 'ip4': {
          // RFC 7208 §5.6
          const set = termSet(mechanism);
          state.name(set);
          state.apply(label, plus, passing(set));
          break;
        }
        case 'ip6': {
          const set = termSet(mechanism);
          state.name(set);
          state.apply(label, plus, passing(set));
          break;
        }
        case 'ptr':
          // RFC 7208 §5.5: depends on the client's reverse DNS; `ptr:%{h}` on the forger's own.
          if (this.target(mechanism.domainSpec, context) === 'forger') state.forgerChosen(label, plus);
          else state.runtime(label, plus);
          break;
        case 'include': {
          const target = this.target(mechanism.domainSpec, context);
          if (state.unknownTarget(label, plus, target)) break;
          if (target === null) {
            state.fail(label, 'permerror', 'the target is not a valid domain name');
            break;
          }
          const child = this.child(label, target, run.stack, run.depth, state, count);
          if (child instanceof Promise) {
            return child.then((known) => {
              applyInclude(label, plus, known, state);
              return this.evaluateFrom(run, index + 1);
            });
          }
          applyInclude(label, plus, child, state);
          break;
        }
        case 'exists':
        case 'a':
        case 'mx': {
          const target = this.target(mechanism.domainSpec, context);
          if (state.unknownTarget(label, plus, target)) break;
          // RFC 7208 §4.8: a target no query can carry is a name that does not exist: no match.
          if (target === null) break;
          const match =
            mechanism.name === 'exists'
              ? this.exists(label, target, state)
              : this.addresses(label, mechanism.name, target, mechanism.ip4Prefix, mechanism.ip6Prefix, state);
          if (match instanceof Promise) {
            return match.then((known) => (applyCounted(label, plus, known, count, state) ? undefined : this.evaluateFrom(run, index + 1)));
          }
          if (applyCounted(label, plus, match, count, state)) return;
          break;
        }
      }
    }
    return this.followRedirect(run);
  }

  /** RFC 7208 §6.1: redirect applies only to what no mechanism matched; its result is final. */
  private followRedirect(run: Evaluation): Now<void> {
    const { redirect, state, count } = run;
    if (redirect === null || state.done) return; // RFC 7208 §4.7: no match gives neutral
    const label = redirect.text;
    if (overLimit(label, count, state)) return;
    const target = this.target(redirect.domainSpec, run.context);
    if (state.unknownTarget(label, true, target)) return;
    if (target === null) {
      state.fail(label, 'permerror', 'the target is not a valid domain name');
      return;
    }
    const child = this.child(label, target, run.stack, run.depth, state, count);
    if (child instanceof Promise) return child.then((known) => applyRedirect(label, known, state));
    applyRedirect(label, child, state);
  }

  /** The outcome of an included or redirected-to record, or null when `state` already took the failure. */
  private child(label: string, target: string, stack: string[], depth: number, state: RecordState, count: LookupCount): Now<Outcome | null> {
    if (stack.includes(target)) {
      // A loop runs into the 10-lookup limit at receivers: permerror (RFC 7208 §4.6.4).
      state.fail(label, 'permerror', `loops back to ${target}`);
      return null;
    }
    if (depth >= MAX_PASS_SET_DEPTH) {
      state.fail(label, 'permerror', `more than ${MAX_PASS_SET_DEPTH} nested includes/redirects`);
      return null;
    }
    const key = `${target} ${count.dnsTerms} ${count.voids4} ${count.voids6}`;
    let pending = this.children.get(key);
    if (pending === undefined) {
      pending = this.lookupChild(target, [...stack, target], depth + 1, copyCount(count));
      this.children.set(key, pending);
    }
    if (pending instanceof Promise) return pending.then((known) => enterChild(label, known, state, count));
    return enterChild(label, pending, state, count);
  }

  private lookupChild(target: string, stack: string[], depth: number, count: LookupCount): Now<ChildOutcome> {
    const entry = copyCount(count);
    const lookup = lookupSpfRecordNow(this.resolver, target);
    if (lookup instanceof Promise) return lookup.then((known) => this.readChild(known, target, stack, depth, count, entry));
    return this.readChild(lookup, target, stack, depth, count, entry);
  }

  /** The child's outcome from its record lookup: its record evaluated, or the failure to find one. */
  private readChild(lookup: SpfRecordLookup, target: string, stack: string[], depth: number, count: LookupCount, entry: LookupCount): Now<ChildOutcome> {
    if (lookup.status === 'found') {
      const outcome = this.record(lookup.text, target, stack, depth, count);
      if (outcome instanceof Promise) return outcome.then((known): ChildOutcome => ({ outcome: known, exitCount: count }));
      return { outcome, exitCount: count };
    }
    const state = new RecordState(target);
    switch (lookup.status) {
      case 'temperror': {
        // RFC 7208 §4.4: a failed lookup of the record is a temperror.
        const why = describeAnswer(lookup.detail === undefined ? { kind: 'error', reason: lookup.reason } : { kind: 'error', reason: lookup.reason, detail: lookup.detail });
        state.fail('', 'temperror', `the TXT lookup for ${target} failed: ${why}`, failed(target, 'TXT', lookup));
        break;
      }
      case 'none':
        // RFC 7208 §5.2, §6.1: an include or redirect target without SPF is a permerror.
        state.fail('', 'permerror', `${target} publishes no SPF record`);
        // RFC 7208 §4.6.4: an empty answer to its query is a void lookup for either family, counted as
        // analyze.ts and evaluate.ts count it (no client gets past the permerror, so it decides nothing).
        if (isVoidSpfLookup(lookup)) {
          entry.voids4++;
          entry.voids6++;
        }
        break;
      case 'multiple':
        state.fail('', 'permerror', `${target} publishes ${lookup.records.length} SPF records`); // RFC 7208 §4.5
        break;
    }
    return { outcome: state.outcome, exitCount: entry };
  }

  /** RFC 7208 §5.7: a literal `exists` matches everyone or no one. */
  private exists(label: string, target: string, state: RecordState): Now<CountedMatch> {
    const answer = safeResolve(this.resolver, target, 'A');
    if (answer instanceof Promise) return answer.then((known) => this.existsMatch(label, target, known, state));
    return this.existsMatch(label, target, answer, state);
  }

  private existsMatch(label: string, target: string, answer: DnsAnswer<'A'>, state: RecordState): CountedMatch {
    if (answer.kind === 'records') return countedMatch(ALL_ADDRESSES, NO_ADDRESSES, NO_ADDRESSES, false, false);
    if (answer.kind === 'error') {
      state.lookupFailed(`${truncateForMessage(label)}: the A lookup for ${target} failed: ${describeAnswer(answer)}`, failed(target, 'A', answer));
      return countedMatch(NO_ADDRESSES, ALL_ADDRESSES, NO_ADDRESSES, false, false);
    }
    // RFC 7208 §5.7: exists asks A whatever the client's family, so the void counts for both.
    return countedMatch(NO_ADDRESSES, NO_ADDRESSES, NO_ADDRESSES, true, true);
  }

  /**
   * RFC 7208 §5.3, §5.4: the addresses of the target (a) or of its MX hosts (mx), widened to the
   * term's CIDR lengths. A failed A lookup makes IPv4 clients temperror, a failed AAAA lookup IPv6 ones.
   */
  private addresses(label: string, kind: 'a' | 'mx', target: string, ip4Prefix: number, ip6Prefix: number, state: RecordState): Now<CountedMatch> {
    if (kind === 'a') return this.hostAddresses(label, [target], ip4Prefix, ip6Prefix, state);
    const mx = safeResolve(this.resolver, target, 'MX');
    if (mx instanceof Promise) return mx.then((known) => this.mxAddresses(label, target, known, ip4Prefix, ip6Prefix, state));
    return this.mxAddresses(label, target, mx, ip4Prefix, ip6Prefix, state);
  }

  /** RFC 7208 §5.4: the MX answer of `target`, and then the addresses of the hosts it names. */
  private mxAddresses(label: string, target: string, mx: DnsAnswer<'MX'>, ip4Prefix: number, ip6Prefix: number, state: RecordState): Now<CountedMatch> {
    if (mx.kind === 'error') {
      state.lookupFailed(`${truncateForMessage(label)}: the MX lookup for ${target} failed: ${describeAnswer(mx)}`, failed(target, 'MX', mx));
      return countedMatch(NO_ADDRESSES, ALL_ADDRESSES, NO_ADDRESSES, false, false);
    }
    if (mx.kind !== 'records') return countedMatch(NO_ADDRESSES, NO_ADDRESSES, NO_ADDRESSES, true, true); // RFC 7208 §5.4: no MX, no match
    if (mx.records.length > MAX_MX_NAMES) {
      state.outcome.problems.push(`${truncateForMessage(label)}: ${target} has ${mx.records.length} MX records (RFC 7208 §4.6.4 allows ${MAX_MX_NAMES})`);
      return countedMatch(NO_ADDRESSES, NO_ADDRESSES, ALL_ADDRESSES, false, false);
    }
    // A null MX (RFC 7505, exchange ".") names no host.
    const hosts = mx.records.map((record) => canonicalName(record.exchange)).filter((host) => host !== '' && toTargetName(host, false).ok);
    return this.hostAddresses(label, hosts, ip4Prefix, ip6Prefix, state);
  }

  /** Asks A and AAAA of every host at once (host by host, A first), then reads the answers. */
  private hostAddresses(label: string, hosts: string[], ip4Prefix: number, ip6Prefix: number, state: RecordState): Now<CountedMatch> {
    const asked: Now<DnsAnswer>[] = [];
    for (const host of hosts) asked.push(safeResolve(this.resolver, host, 'A'), safeResolve(this.resolver, host, 'AAAA'));
    const answers = allNow(asked);
    if (answers instanceof Promise) return answers.then((known) => this.readAddresses(label, hosts, known, ip4Prefix, ip6Prefix, state));
    return this.readAddresses(label, hosts, answers, ip4Prefix, ip6Prefix, state);
  }

  /** The match of an `a` or `mx` term from the A and AAAA answers of its hosts (`answers`: A, AAAA per host). */
  private readAddresses(label: string, hosts: string[], answers: DnsAnswer[], ip4Prefix: number, ip6Prefix: number, state: RecordState): CountedMatch {
    let v4 = RangeSet.EMPTY;
    let v6 = RangeSet.EMPTY;
    let failV4 = false;
    let failV6 = false;
    // RFC 7208 §4.6.4: an empty answer to the term's query (of the client's family) is a void lookup;
    // for mx, when no exchange has an address of that family (as check_host() counts it).
    let empty4 = 0;
    let empty6 = 0;
    for (let index = 0; index < hosts.length; index++) {
      const host = hosts[index]!;
      const a = answers[2 * index] as DnsAnswer<'A'>;
      const aaaa = answers[2 * index + 1] as DnsAnswer<'AAAA'>;
      if (a.kind === 'records') for (const text of a.records) {
        const value = parseIp4(text);
        if (value !== null) v4 = v4.union(RangeSet.cidr(4, BigInt(value), ip4Prefix));
      } else if (a.kind === 'error') {
        failV4 = true;
        this.noteFailure(label, host, 'A', a, state);
      } else {
        empty4++;
      }
      if (aaaa.kind === 'records') for (const text of aaaa.records) {
        const words = parseIp6(text);
        if (words !== null) v6 = v6.union(RangeSet.cidr(6, ip6ToBigInt(words), ip6Prefix));
      } else if (aaaa.kind === 'error') {
        failV6 = true;
        this.noteFailure(label, host, 'AAAA', aaaa, state);
      } else {
        empty6++;
      }
    }
    const set = { v4, v6 };
    state.name(set);
    const temperror = { v4: failV4 ? RangeSet.full(4).subtract(v4) : RangeSet.EMPTY, v6: failV6 ? RangeSet.full(6).subtract(v6) : RangeSet.EMPTY };
    const hostCount = hosts.length;
    return countedMatch(set, temperror, NO_ADDRESSES, hostCount > 0 && empty4 === hostCount, hostCount > 0 && empty6 === hostCount);
  }

  private noteFailure(label: string, host: string, type: RecordType, answer: DnsAnswer & { kind: 'error' }, state: RecordState): void {
    state.lookupFailed(`${truncateForMessage(label)}: the ${type} lookup for ${host} failed: ${describeAnswer(answer)}`, failed(host, type, answer));
  }

  /**
   * The term's target: a name, 'runtime' when it needs the message, 'forger' when the forger chooses
   * where it points (see `FORGER_CHOSEN_LETTERS`), null when it is not a valid name.
   */
  private target(spec: MacroString | null, context: MacroContext): string | 'runtime' | 'forger' | null {
    if (spec === null) return context.domain;
    if (spec.dynamic && endsInForgerChoice(spec)) return 'forger';
    if (spec.dynamic && !spec.letters.every((letter) => STATIC_LETTERS.has(letter))) return 'runtime';
    const target = toTargetName(expandMacroString(spec, context), spec.dynamic);
    return target.ok ? canonicalName(target.name) : null;
  }

  /** The macro facts known without a message: a forger's sender is at the top domain (for alignment). */
  private context(domain: string): MacroContext {
    return {
      sender: `${PROBE_LOCAL_PART}@${this.topDomain}`,
      localPart: PROBE_LOCAL_PART,
      senderDomain: this.topDomain,
      domain,
      client: PLACEHOLDER_CLIENT,
      helo: PROBE_HELO,
      validatedName: 'unknown',
      receiver: 'unknown',
      timestamp: 0,
    };
  }
}

/**
 * The addresses an `ip4`/`ip6` term names (RFC 7208 §5.6), one object per parsed term: parsed records
 * are kept by text, so a term met again gives the same set, and what is computed about it once (its
 * shared-infrastructure overlap, src/ranges/classify.ts) is kept with it.
 */
const termSets = new WeakMap<object, AddressSet>();

function termSet(mechanism: Extract<SpfTerm, { type: 'directive' }>['mechanism'] & { name: 'ip4' | 'ip6' }): AddressSet {
  let set = termSets.get(mechanism);
  if (set === undefined) {
    set =
      mechanism.name === 'ip4'
        ? { v4: RangeSet.cidr(4, BigInt(mechanism.network.value), mechanism.prefix), v6: RangeSet.EMPTY }
        : { v4: RangeSet.EMPTY, v6: RangeSet.cidr(6, ip6ToBigInt(mechanism.network.words), mechanism.prefix) };
    termSets.set(mechanism, set);
  }
  return set;
}

/** RFC 7208 §4.6.4: counts a DNS term; from the 11th on, whatever reaches it gets permerror. */
function overLimit(label: string, count: LookupCount, state: RecordState): boolean {
  count.dnsTerms++;
  if (count.dnsTerms <= MAX_DNS_TERMS) return false;
  state.fail(label, 'permerror', `DNS lookup number ${count.dnsTerms}: RFC 7208 §4.6.4 allows ${MAX_DNS_TERMS}, so receivers stop with a permerror here`);
  return true;
}

/** RFC 7208 §4.6.4: counts a term's void lookups; past 2, what reaches it in that family gets permerror. */
function overVoidLimit(label: string, count: LookupCount, match: CountedMatch, state: RecordState): boolean {
  if (match.void4) count.voids4++;
  if (match.void6) count.voids6++;
  const over4 = match.void4 && count.voids4 > MAX_VOID_LOOKUPS;
  const over6 = match.void6 && count.voids6 > MAX_VOID_LOOKUPS;
  if (!over4 && !over6) return false;
  const families = { v4: over4 ? RangeSet.full(4) : RangeSet.EMPTY, v6: over6 ? RangeSet.full(6) : RangeSet.EMPTY };
  state.fail(label, 'permerror', `void lookup number ${over4 ? count.voids4 : count.voids6}${over4 && over6 ? '' : over4 ? ' for IPv4 clients' : ' for IPv6 clients'}: RFC 7208 §4.6.4 allows ${MAX_VOID_LOOKUPS}, so receivers stop with a permerror here`, undefined, families);
  return state.done;
}

/** An include whose included record's outcome is `child`; null when `child()` already took the failure. */
function applyInclude(label: string, plus: boolean, child: Outcome | null, state: RecordState): void {
  if (child === null) return;
  if (plus) state.forgerVia(label, child.forgerOpeners);
  // RFC 7208 §5.2: the include matches where the included record passes.
  state.apply(label, plus, child, child.openers);
}

/** RFC 7208 §6.1: the redirected-to record decides everything still reaching the redirect. */
function applyRedirect(label: string, child: Outcome | null, state: RecordState): void {
  if (child === null) return;
  state.forgerVia(label, child.forgerOpeners);
  state.apply(label, true, child, child.openers);
  // Whatever the redirected-to record does not pass ends there (fail, softfail, neutral).
  state.apply(label, false, MATCH_ALL);
}

/** Applies an `exists`, `a` or `mx` match; true when the void limit stops the record there. */
function applyCounted(label: string, plus: boolean, match: CountedMatch, count: LookupCount, state: RecordState): boolean {
  state.apply(label, plus, match);
  return overVoidLimit(label, count, match, state);
}

/** Takes a child's exit count and what it learnt into the including record. */
function enterChild(label: string, child: ChildOutcome, state: RecordState, count: LookupCount): Outcome {
  count.dnsTerms = child.exitCount.dnsTerms;
  count.voids4 = child.exitCount.voids4;
  count.voids6 = child.exitCount.voids6;
  state.absorb(label, child.outcome);
  return child.outcome;
}

/** Keeps the outcome of a record made only of ip4/ip6/all terms (a function of its text). */
function keepStatic(text: string, domain: string, isStatic: boolean, outcome: Outcome): Outcome {
  if (isStatic) staticOutcomes.set(text, { domain, outcome });
  return outcome;
}

/** A kept static outcome for another domain publishing the same text: its openers name that domain. */
function withOpenersAt(outcome: Outcome, domain: string): Outcome {
  return { ...outcome, openers: outcome.openers.map((opener) => ({ term: opener.term, domain, set: opener.set, origin: opener.origin })) };
}

function copyCount(count: LookupCount): LookupCount {
  return { dnsTerms: count.dnsTerms, voids4: count.voids4, voids6: count.voids6 };
}

/** A match that passes `set` and nothing else (built without a spread: slow on Node 20). */
function passing(set: AddressSet): Match {
  return { pass: set, maybe: NO_ADDRESSES, temperror: NO_ADDRESSES, permerror: NO_ADDRESSES };
}

function countedMatch(pass: AddressSet, temperror: AddressSet, permerror: AddressSet, void4: boolean, void6: boolean): CountedMatch {
  return { pass, maybe: NO_ADDRESSES, temperror, permerror, void4, void6 };
}

function failed(name: string, type: RecordType, answer: { reason: FailedQuery['reason']; detail?: string | undefined }): FailedQuery {
  return answer.detail === undefined ? { name, type, reason: answer.reason } : { name, type, reason: answer.reason, detail: answer.detail };
}

/**
 * Whether the name `spec` expands to ends in a macro the forger chooses (`a:%{h}`, `exists:%{l}`,
 * `include:foo.%{h2}`, with one trailing dot allowed): the rightmost labels, and so the zone that
 * answers, are the forger's (RFC 7208 §7.3 lists `h` and `l` as sender-supplied).
 */
function endsInForgerChoice(spec: MacroString): boolean {
  const tokens = spec.tokens;
  let last = tokens.at(-1);
  if (last?.kind === 'literal' && last.text === '.') last = tokens.at(-2);
  return last?.kind === 'macro' && FORGER_CHOSEN_LETTERS.has(last.letter);
}
