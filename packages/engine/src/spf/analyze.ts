/**
 * A static, worst-case walk of a domain's SPF record and everything it includes or redirects to,
 * for the spoof checker: no client address is needed. It answers what check_host() would spend on
 * an address that matches nothing (the RFC 7208 §4.6.4 lookup count), where the record ends up
 * (its terminal `all`), and what is wrong with it, as a tree and as findings.
 *
 * Counting follows RFC 7208: include, a, mx, ptr, exists and redirect cost one lookup each; all,
 * ip4, ip6 and exp cost none (§4.6.4); terms after `all` are never reached and `redirect` is ignored
 * when the record has `all` (§5.1, §6.1); an include that appears twice is evaluated, and counted,
 * twice. A term whose target needs the sender's address or name (a macro other than %{d} / %{o})
 * costs its own lookup and is flagged: what it leads to is only known at delivery.
 *
 * The walk is bounded (MAX_ANALYSIS_DEPTH levels, MAX_ANALYSIS_QUERIES queries), so a hostile tree
 * cannot make it fan out, and it never throws: DNS failures below the top are errors in the tree.
 */
import { LRUCache } from 'lru-cache';
import { canonicalName } from '../dns/name.js';
import { allNow, describeAnswer, isVoid, thenNow } from '../dns/types.js';
import type { DnsAnswer, MxData, Now, RecordType, Resolver } from '../dns/types.js';
import type { FailedQuery } from '../errors.js';
import type { Finding } from '../findings.js';
import { parseClientAddress } from './address.js';
import { MAX_DNS_TERMS, MAX_MX_NAMES, MAX_VOID_LOOKUPS } from './evaluate.js';
import { expandMacroString, toTargetName } from './macro.js';
import type { MacroContext } from './macro.js';
import { describeSyntaxError } from './parse.js';
import { parseSpfRecordCached } from './parse-cache.js';
import { computePassSetWithSourcesNow } from './pass-set.js';
import { RangeSet } from './ranges.js';
import { deepFreeze } from '../text-cache.js';
import type { PassSources, SpfOpening, SpfPassSet } from './pass-set.js';
import { isVoidSpfLookup, lookupSpfRecordNow, selectSpfRecords, type SpfRecordLookup } from './record.js';
import { safeResolve } from './resolve.js';
import { termPathForMessage, truncateForMessage } from './text.js';
import type { MacroString, Qualifier, SpfTerm } from './types.js';

/** How many include/redirect levels the walk follows below the top record. */
export const MAX_ANALYSIS_DEPTH = 20;
/** How many DNS queries one analysis may send, whatever the tree looks like. */
export const MAX_ANALYSIS_QUERIES = 200;
/** RFC 7208 §3.4: keep the record under 450 octets so the whole answer fits a 512-octet UDP message. */
export const RECOMMENDED_SPF_OCTETS = 450;
/** RFC 1035 §4.2.1: a UDP DNS message carries 512 octets without EDNS; a longer answer may need TCP. */
export const UDP_MESSAGE_OCTETS = 512;

/** The `all` a record ends with, as written ("+all" for a bare `all`). */
export type TerminalAll = '+all' | '-all' | '~all' | '?all';

/** What the walk noticed about one term. */
export interface SpfTermFlags {
  /** After an `all`: a receiver never evaluates it (RFC 7208 §5.1). Not counted. */
  unreachable: boolean;
  /** A `redirect` in a record that has `all` (RFC 7208 §6.1). Not counted. */
  ignored: boolean;
  /** The target depends on the sender's address or name: not statically resolvable; counted once. */
  macro: boolean;
  /** Macros that only use %{d} / %{o} were expanded for the walk (sender taken to be at the top domain). */
  expanded: boolean;
  /** An include/redirect of a domain already walked: counted again, its subtree shown once. */
  repeated: boolean;
  /** The include/redirect leads back to a record already on the chain. */
  loop: boolean;
  /** The walk stopped here (depth or query budget); the count below is a minimum. */
  truncated: boolean;
}

/** One term of a record in the tree. */
export interface SpfTermNode {
  /** The term as written. */
  raw: string;
  kind: 'mechanism' | 'modifier';
  /** The qualifier of a mechanism ("+" when omitted); null for a modifier. */
  qualifier: Qualifier | null;
  /** The mechanism or modifier name, lower case ("include", "a", …, "redirect", "exp", or an unknown modifier's name). */
  mechanism: string;
  /** The name the term queries, when it can be known without a message; null otherwise. */
  target: string | null;
  /** Lookups this term costs a receiver, nested includes and redirects included. */
  lookups: number;
  /** Void lookups (NXDOMAIN or no records) this term and its subtree cause, worst case (a `ptr` counts one). */
  voidLookups: number;
  /** The terms of the included or redirected-to record. */
  children: SpfTermNode[];
  /** The text of the included or redirected-to record, when one was found. */
  record?: string | null;
  /** What is wrong with this term, in words. */
  errors: string[];
  flags: SpfTermFlags;
}

/** The analysis of a domain's SPF. */
export interface SpfAnalysis {
  domain: string;
  /** Of the record at `domain` itself. */
  status: 'found' | 'none' | 'multiple' | 'temperror';
  /** The joined text of the record (null unless status is 'found'). */
  record: string | null;
  /** Every v=spf1 record at the name. */
  records: string[];
  /** The query that failed, when status is 'temperror'. */
  failedQuery?: FailedQuery & { type: 'TXT' };
  /** The record's `all` as written, or its redirect target's when it has none; null when there is none. */
  terminalAll: TerminalAll | null;
  /** Lookups a receiver spends on an address that matches nothing (RFC 7208 §4.6.4), nested included. */
  lookupCount: number;
  /** True when macros or a bound of the walk mean `lookupCount` is a minimum. */
  lookupCountIsMinimum: boolean;
  voidLookups: number;
  tree: SpfTermNode[];
  /** Loops, include targets without SPF, syntax errors, DNS failures below the top: each names its term. */
  errors: string[];
  findings: Finding[];
  /** Octets in the record text (RFC 7208 §3.4). */
  sizeOctets: number;
  /** DNS queries the walk sent. */
  queries: number;
  /**
   * The addresses that get `pass` (RFC 7208 evaluation order over the whole tree), whether anyone
   * can pass, and what could not be determined; null unless status is 'found'.
   */
  passSet: SpfPassSet | null;
  /**
   * The sets behind `passSet` (each `+` term's share of the pass set, the maybe set), for
   * shared-infrastructure classification; null when `passSet` is. Not part of the JSON result.
   */
  passSources: PassSources | null;
}

/** Bounds of one analysis; the defaults are the named constants. */
export interface AnalyzeSpfOptions {
  maxDepth?: number;
  maxQueries?: number;
  /** Compute the pass set (who passes, whether anyone can); true unless set to false. */
  passSet?: boolean;
}

/** The summary of a walked record, kept per domain so a repeated include is not walked again. */
interface Subtree {
  nodes: SpfTermNode[];
  lookups: number;
  voids: number;
  terminalAll: TerminalAll | null;
  minimum: boolean;
}

/** Problems collected over the walk, turned into findings at the end. */
interface Observations {
  loops: string[];
  missingIncludes: string[];
  temperrors: string[];
  syntaxErrors: string[];
  multipleRecords: string[];
  mxOverLimit: string[];
  macroTerms: string[];
  ptrTerms: string[];
  unreachable: string[];
  ignoredRedirect: string | null;
  truncated: string[];
}

/** The %{…} letters the walk can expand without a message: the current domain and the sender's domain. */
const STATIC_LETTERS = new Set(['d', 'o']);
/** The client address used to build a macro context; never consulted, as only d and o are expanded. */
const PLACEHOLDER_CLIENT = parseClientAddress('192.0.2.0')!;

/**
 * Walks the SPF of `domain` and everything below it. Never rejects; DNS failures are in the result.
 */
export async function analyzeSpf(domain: string, resolver: Resolver, options: AnalyzeSpfOptions = {}): Promise<SpfAnalysis> {
  return analyzeSpfNow(domain, resolver, options);
}

/**
 * How many names' analyses are kept (see `KeptAnalysis`): re-checking a domain then asks the same
 * questions and compares the answers instead of walking the tree and computing the pass set again
 * (most of a warm check's SPF time). About as many domains as the service's default answer cache
 * holds; past that the answers are not warm either.
 */
export const SPF_ANALYSIS_MEMO_NAMES = 1024;

/** One lookup an analysis passed down, in the order it asked, with the answer it got. */
interface KeptLookup {
  readonly name: string;
  readonly type: RecordType;
  answer: DnsAnswer | undefined;
}

/**
 * A finished analysis with every lookup it passed down. The analysis is a function of those answers
 * (the walk, the pass set and its probes read nothing else: no clock, no TTL, no randomness), so when
 * the same questions, asked in the same order, get the same answers, it is the same analysis. Kept
 * only when every answer was an answer (no failure, no budget), and only from a name's second
 * analysis: a scan analyses most names once, and results kept for names never asked again would
 * reach V8's old space and die there. What is kept is handed to every later check of the name, so it
 * is frozen (the address sets behind the pass set excepted: they keep facts about themselves lazily).
 */
interface KeptAnalysis {
  readonly lookups: readonly KeptLookup[];
  readonly analysis: SpfAnalysis;
}

const keptAnalyses = new LRUCache<string, KeptAnalysis>({ max: SPF_ANALYSIS_MEMO_NAMES });
const analysedOnce = new Set<string>();

/** How many names' analyses are kept now (for tests of the admission rule). */
export function keptSpfAnalyses(): number {
  return keptAnalyses.size;
}

/** `analyzeSpf`, as a value when every answer is held and a promise only when one must wait. */
export function analyzeSpfNow(domain: string, resolver: Resolver, options: AnalyzeSpfOptions = {}): Now<SpfAnalysis> {
  const name = canonicalName(domain);
  // Only analyses with the default bounds are kept: the key is the name alone.
  const keepable = options.maxDepth === undefined && options.maxQueries === undefined && options.passSet === undefined;
  let asked: KeptLookup[] | undefined;
  if (keepable) {
    const kept = keptAnalyses.get(name);
    if (kept !== undefined) {
      const replayed = replayKept(kept, resolver);
      if (!Array.isArray(replayed)) return replayed;
      asked = replayed;
    }
  }
  const walk = new Walk(resolver, name, options.maxDepth ?? MAX_ANALYSIS_DEPTH, options.maxQueries ?? MAX_ANALYSIS_QUERIES, keepable ? [] : null);
  // The questions a replay already asked are the first the walk would ask (it asks in the same order
  // until an answer differs): they are its answers, so nothing is asked twice.
  if (asked !== undefined) for (const lookup of asked) walk.seed(lookup);
  const analysis: SpfAnalysis = {
    domain: name,
    status: 'none',
    record: null,
    records: [],
    terminalAll: null,
    lookupCount: 0,
    lookupCountIsMinimum: false,
    voidLookups: 0,
    tree: [],
    errors: [],
    findings: [],
    sizeOctets: 0,
    queries: 0,
    passSet: null,
    passSources: null,
  };
  const finish = (failure: string): SpfAnalysis => {
    analysis.queries = walk.queries;
    analysis.findings = findingsFor(analysis, walk.seen, failure);
    if (walk.log !== null) return keep(name, walk.log, analysis);
    return analysis;
  };
  // Nothing should throw here; if something does, say so rather than crash the check.
  const internalError = (error: unknown): SpfAnalysis => {
    walk.log = null;
    analysis.errors.push(`internal error while analysing SPF: ${error instanceof Error ? error.message : String(error)}`);
    return finish('');
  };
  try {
    const analysed = thenNow(walk.resolveNow(name, 'TXT'), (top) => readTopRecord(top, name, walk, analysis, options, finish));
    return analysed instanceof Promise ? analysed.catch(internalError) : analysed;
  } catch (error) {
    return internalError(error);
  }
}

/** The analysis once the TXT answer at the name itself is known. */
function readTopRecord(
  top: DnsAnswer<'TXT'>,
  name: string,
  walk: Walk,
  analysis: SpfAnalysis,
  options: AnalyzeSpfOptions,
  finish: (failure: string) => SpfAnalysis,
): Now<SpfAnalysis> {
  if (top.kind === 'error' && top.reason !== 'invalid-name') {
    // RFC 7208 §4.4: a failed lookup is a temperror, never "no record".
    analysis.status = 'temperror';
    analysis.failedQuery = top.detail === undefined ? { name, type: 'TXT', reason: top.reason } : { name, type: 'TXT', reason: top.reason, detail: top.detail };
    analysis.errors.push(`the TXT lookup for ${name} failed: ${describeAnswer(top)}`);
    return finish(describeAnswer(top));
  }
  analysis.records = top.kind === 'records' ? selectSpfRecords(top.records) : [];
  if (analysis.records.length > 1) {
    analysis.status = 'multiple';
    analysis.errors.push(`${name} publishes ${analysis.records.length} SPF records; RFC 7208 §4.5 makes that a permerror`);
    return finish('');
  }
  if (analysis.records.length === 0) return finish('');
  analysis.status = 'found';
  const text = analysis.records[0]!;
  analysis.record = text;
  analysis.sizeOctets = Buffer.byteLength(text, 'utf8');
  return thenNow(walk.record(text, name, [name], [], 0), (subtree) => {
    analysis.tree = subtree.nodes;
    analysis.lookupCount = subtree.lookups;
    analysis.voidLookups = subtree.voids;
    analysis.terminalAll = subtree.terminalAll;
    analysis.lookupCountIsMinimum = subtree.minimum;
    analysis.errors.push(...walk.errors);
    if (options.passSet === false) return finish('');
    return thenNow(computePassSetWithSourcesNow(text, name, walk), ({ passSet, sources }) => {
      analysis.passSet = passSet;
      analysis.passSources = sources;
      return finish('');
    });
  });
}

/** One analysis: a caching, budgeted resolver and the walk over records. */
class Walk implements Resolver {
  queries = 0;
  readonly errors: string[] = [];
  readonly seen: Observations = {
    loops: [],
    missingIncludes: [],
    temperrors: [],
    syntaxErrors: [],
    multipleRecords: [],
    mxOverLimit: [],
    macroTerms: [],
    ptrTerms: [],
    unreachable: [],
    ignoredRedirect: null,
    truncated: [],
  };
  private readonly answers = new Map<RecordType, Map<string, Now<DnsAnswer>>>();
  private readonly subtrees = new Map<string, Subtree>();

  constructor(
    private readonly resolver: Resolver,
    private readonly topDomain: string,
    private readonly maxDepth: number,
    private readonly maxQueries: number,
    /** Every lookup passed down, in order, for `KeptAnalysis`; null when the analysis is not to be kept. */
    public log: KeptLookup[] | null,
  ) {}

  /** A lookup a replay already asked (see `analyzeSpfNow`): taken as this walk's own. */
  seed(lookup: KeptLookup): void {
    this.remember(canonicalName(lookup.name), lookup.type, lookup.answer as Now<DnsAnswer>, lookup);
  }

  /** `resolveNow` as a promise (the `Resolver` port). */
  async resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    return this.resolveNow(name, type);
  }

  /**
   * A cached, budgeted query; past the budget the answer is a `budget` error. A known answer comes
   * back as a value, one still on its way as a promise (`ImmediateResolver`).
   */
  resolveNow<T extends RecordType>(name: string, type: T): Now<DnsAnswer<T>> {
    // Keyed by type, then canonical name: no "TYPE name" string is built and hashed per query.
    const canonical = canonicalName(name);
    let ofType = this.answers.get(type);
    if (ofType === undefined) {
      ofType = new Map();
      this.answers.set(type, ofType);
    }
    const cached = ofType.get(canonical);
    if (cached !== undefined) return cached as Now<DnsAnswer<T>>;
    if (this.queries >= this.maxQueries) {
      this.log = null; // a truncated analysis is not kept
      return { kind: 'error', reason: 'budget', detail: `the analysis stops after ${this.maxQueries} DNS queries` };
    }
    const answer = safeResolve(this.resolver, name, type);
    this.remember(canonical, type, answer, this.log === null ? null : { name, type, answer: undefined });
    return answer;
  }

  /** Counts a lookup passed down, holds its answer for later asks and logs it. */
  private remember(canonical: string, type: RecordType, answer: Now<DnsAnswer>, logged: KeptLookup | null): void {
    this.queries++;
    let ofType = this.answers.get(type);
    if (ofType === undefined) {
      ofType = new Map();
      this.answers.set(type, ofType);
    }
    ofType.set(canonical, answer);
    if (logged !== null) this.log?.push(logged);
    if (answer instanceof Promise) {
      // Once it arrives, later asks get the value itself.
      void answer.then((known) => {
        ofType.set(canonical, known);
        if (logged !== null) logged.answer = known;
      });
    } else if (logged !== null) {
      logged.answer = answer;
    }
  }

  /** Walks one record's text found at `domain`; `stack` holds the domains of the chain so far. */
  record(text: string, domain: string, stack: string[], path: string[], depth: number): Now<Subtree> {
    const parsed = parseSpfRecordCached(text);
    let terms: SpfTerm[];
    if (parsed.ok) {
      terms = parsed.record.terms;
    } else {
      terms = parsed.terms;
      const where = path.length === 0 ? 'your SPF record' : `the SPF record of ${domain} (reached through ${path.join(' → ')})`;
      for (const error of parsed.errors) {
        this.note(path, `syntax error in ${where}: ${describeSyntaxError(error)}`);
        this.seen.syntaxErrors.push(`${where}: ${describeSyntaxError(error)}`);
      }
    }
    return this.walkTerms(terms, domain, stack, path, depth);
  }

  /**
   * The terms of one record in order. While every answer is held the walk stays synchronous (a warm
   * check awaits nothing); from the first term that must wait, it goes on in a promise.
   */
  private walkTerms(terms: SpfTerm[], domain: string, stack: string[], path: string[], depth: number): Now<Subtree> {
    const context = this.context(domain);
    const nodes: SpfTermNode[] = [];
    const walk: TermWalk = {
      terms,
      hasAll: terms.some((term) => term.type === 'directive' && term.mechanism.name === 'all'),
      domain,
      stack,
      path,
      depth,
      context,
      subtree: { nodes, lookups: 0, voids: 0, terminalAll: null, minimum: false },
      reachable: true,
      redirect: null,
    };
    // Ask for every reachable static target at once, so a network resolver works in parallel;
    // the walk below reads the same cached answers in order, so the result stays deterministic.
    this.prefetch(terms, context);
    return thenNow(this.walkFrom(walk, 0), () => this.walkRedirect(walk));
  }

  /** The terms from `index` on. */
  private walkFrom(walk: TermWalk, index: number): Now<void> {
    for (let at = index; at < walk.terms.length; at++) {
      const pending = this.walkTerm(walk, walk.terms[at]!);
      if (pending instanceof Promise) return pending.then(() => this.walkFrom(walk, at + 1));
    }
  }

  /** One term: its node, and its cost added to the record's once any lookup it needs has answered. */
  private walkTerm(walk: TermWalk, term: SpfTerm): Now<void> {
    const { subtree, path } = walk;
    const node = newNode(term);
    subtree.nodes.push(node);
    if (term.type === 'modifier') {
      if (term.name === 'redirect') {
        if (walk.hasAll) {
          // RFC 7208 §6.1: ignored when the record has "all"; it costs nothing.
          node.flags.ignored = true;
          if (path.length === 0) this.seen.ignoredRedirect = term.text;
        } else {
          walk.redirect = { term, node };
        }
      }
      return;
    }
    if (!walk.reachable) {
      // RFC 7208 §5.1: mechanisms after "all" are never evaluated.
      node.flags.unreachable = true;
      if (path.length === 0) this.seen.unreachable.push(term.text);
      return;
    }
    const mechanism = term.mechanism;
    switch (mechanism.name) {
      case 'all':
        walk.reachable = false;
        subtree.terminalAll = `${term.qualifier}all` as TerminalAll;
        break;
      case 'ip4':
      case 'ip6':
        break;
      case 'include': {
        node.lookups = 1;
        const target = this.target(mechanism.domainSpec, walk.context, node);
        if (target === null) break;
        return thenNow(this.follow(term.text, target, node, walk.stack, path, walk.depth, 'include'), (child) => {
          if (child?.minimum) subtree.minimum = true;
          tally(subtree, node);
        });
      }
      case 'a':
      case 'mx':
      case 'exists':
      case 'ptr': {
        node.lookups = 1;
        const target = this.target(mechanism.domainSpec, walk.context, node);
        if (mechanism.name === 'ptr') {
          // RFC 7208 §5.5: "ptr" SHOULD NOT be used. Its PTR query is for the client's address; in the
          // worst case (an address without reverse DNS, as most forged mail has) it is a void lookup.
          this.seen.ptrTerms.push(term.text);
          node.voidLookups = 1;
          node.errors.push('a void lookup for any client without reverse DNS');
          break;
        }
        if (target === null) break;
        return thenNow(this.probe(mechanism.name, target, term.text, node, path), () => tally(subtree, node));
      }
    }
    tally(subtree, node);
  }

  /** The redirect, after the terms: RFC 7208 §6.1, used only when nothing matched and there is no "all"; it costs one lookup. */
  private walkRedirect(walk: TermWalk): Now<Subtree> {
    const { subtree, redirect } = walk;
    if (redirect === null || redirect.term.name !== 'redirect') return subtree;
    const node = redirect.node;
    node.lookups = 1;
    const target = this.target(redirect.term.domainSpec, walk.context, node);
    const child = target === null ? null : this.follow(redirect.term.text, target, node, walk.stack, walk.path, walk.depth, 'redirect');
    return thenNow(child, (known) => {
      if (known !== null) {
        if (known.minimum) subtree.minimum = true;
        subtree.terminalAll = known.terminalAll;
      }
      tally(subtree, node);
      return subtree;
    });
  }

  /**
   * Walks the record an include or redirect points to and folds its cost into `node`. Returns the
   * target's subtree, or null when there is none to follow.
   */
  private follow(term: string, target: string, node: SpfTermNode, stack: string[], path: string[], depth: number, kind: 'include' | 'redirect'): Now<Subtree | null> {
    const chain = [...path, term];
    if (stack.includes(target)) {
      node.flags.loop = true;
      const loop = `${[...stack, target].join(' → ')}`;
      node.errors.push(`loop: ${loop}`);
      this.note(path, `${truncateForMessage(term)}: ${kind} loop ${loop}; receivers stop with a permerror at the lookup limit`);
      this.seen.loops.push(loop);
      return null;
    }
    const known = this.subtrees.get(target);
    if (known !== undefined) {
      node.flags.repeated = true;
      return this.fold(node, known);
    }
    if (depth >= this.maxDepth) {
      node.flags.truncated = true;
      node.errors.push(`not followed: more than ${this.maxDepth} nested includes/redirects`);
      this.note(path, `${truncateForMessage(term)}: the chain is more than ${this.maxDepth} levels deep; the analysis stops there`);
      this.seen.truncated.push(chain.join(' → '));
      return null;
    }
    return thenNow(lookupSpfRecordNow(this, target), (lookup) => this.followRecord(lookup, term, target, node, stack, path, chain, depth));
  }

  /** The rest of `follow` once the target's TXT answer is known. */
  private followRecord(
    lookup: SpfRecordLookup,
    term: string,
    target: string,
    node: SpfTermNode,
    stack: string[],
    path: string[],
    chain: string[],
    depth: number,
  ): Now<Subtree | null> {
    switch (lookup.status) {
      case 'temperror': {
        const why = describeAnswer({ kind: 'error', reason: lookup.reason, ...(lookup.detail === undefined ? {} : { detail: lookup.detail }) });
        if (lookup.reason === 'budget') {
          node.flags.truncated = true;
          this.seen.truncated.push(chain.join(' → '));
        } else {
          this.seen.temperrors.push(`${chain.join(' → ')}: the TXT lookup for ${target} failed (${why})`);
        }
        node.errors.push(`the TXT lookup for ${target} failed: ${why}`);
        this.note(path, `${truncateForMessage(term)}: the TXT lookup for ${target} failed: ${why}`);
        return null;
      }
      case 'none':
        // RFC 7208 §5.2, §6.1: an include or redirect target without SPF is a permerror at receivers.
        node.record = null;
        node.errors.push(`${target} publishes no SPF record`);
        // RFC 7208 §4.6.4: a term whose query is answered NXDOMAIN, or NOERROR with no answers, is a
        // void lookup, include and redirect among them (TXT records that are not SPF are answers).
        if (isVoidSpfLookup(lookup)) node.voidLookups = 1;
        this.note(path, `${truncateForMessage(term)}: ${target} publishes no SPF record; receivers return permerror here`);
        this.seen.missingIncludes.push(chain.join(' → '));
        return null;
      case 'multiple':
        node.errors.push(`${target} publishes ${lookup.records.length} SPF records`);
        this.note(path, `${truncateForMessage(term)}: ${target} publishes ${lookup.records.length} SPF records; receivers return permerror here`);
        this.seen.multipleRecords.push(chain.join(' → '));
        return null;
      case 'found':
        break;
    }
    node.record = lookup.text;
    return thenNow(this.record(lookup.text, target, [...stack, target], chain, depth + 1), (subtree) => {
      this.subtrees.set(target, subtree);
      node.children = subtree.nodes;
      return this.fold(node, subtree);
    });
  }

  /** Adds a walked subtree's cost to the include/redirect node that leads to it. */
  private fold(node: SpfTermNode, subtree: Subtree): Subtree {
    node.lookups += subtree.lookups;
    node.voidLookups += subtree.voids;
    return subtree;
  }

  /** a / mx / exists with a known target: is it a void lookup (RFC 7208 §4.6.4)? True when it found records. */
  private probe(mechanism: 'a' | 'mx' | 'exists', target: string, term: string, node: SpfTermNode, path: string[]): Now<boolean> {
    const answers: Now<DnsAnswer[]> =
      mechanism === 'a'
        ? // Both families are asked (the pass set needs them); the void count below is an IPv4 client's.
          allNow<DnsAnswer>([this.resolveNow(target, 'A'), this.resolveNow(target, 'AAAA')])
        : thenNow(this.resolveNow(target, mechanism === 'mx' ? 'MX' : 'A'), (answer): DnsAnswer[] => [answer]);
    return thenNow(answers, (known) => this.readProbe(mechanism, known, target, term, node, path));
  }

  /** The rest of `probe` once its answers are known. */
  private readProbe(mechanism: 'a' | 'mx' | 'exists', answers: DnsAnswer[], target: string, term: string, node: SpfTermNode, path: string[]): Now<boolean> {
    const failed = answers.find((answer) => answer.kind === 'error');
    if (failed !== undefined && failed.kind === 'error') {
      const why = describeAnswer(failed);
      node.errors.push(`the lookup for ${target} failed: ${why}`);
      if (failed.reason === 'budget') {
        node.flags.truncated = true;
      } else {
        this.note(path, `${truncateForMessage(term)}: the lookup for ${target} failed (${why}); receivers return temperror here`);
        this.seen.temperrors.push(`${[...path, term].join(' → ')}: the lookup for ${target} failed (${why})`);
      }
      return false;
    }
    // RFC 7208 §4.6.4: a void lookup is an empty answer to the term's own query. For `a` that query is
    // of the client's family; the worst case described here is an IPv4 client (most forged mail).
    if (mechanism === 'a' ? isVoid(answers[0]!) : answers.every(isVoid)) {
      node.voidLookups = 1;
      node.errors.push(`${target} has no ${mechanism === 'mx' ? 'MX' : 'address'} records (a void lookup)`);
      return false;
    }
    const mx = answers[0];
    if (mechanism === 'mx' && mx?.kind === 'records' && mx.records.length > MAX_MX_NAMES) {
      node.errors.push(`${target} has ${mx.records.length} MX records; RFC 7208 §4.6.4 allows ${MAX_MX_NAMES}`);
      this.note(path, `${truncateForMessage(term)}: ${target} has ${mx.records.length} MX records; receivers return permerror here (RFC 7208 §4.6.4 allows ${MAX_MX_NAMES})`);
      this.seen.mxOverLimit.push(`${[...path, term].join(' → ')} (${mx.records.length} MX records)`);
    } else if (mechanism === 'mx' && mx?.kind === 'records') {
      // As check_host() counts it: an mx whose every exchange has no address of the client's family
      // (IPv4 here) is void too.
      const exchanges = (mx.records as MxData[]).map((record) => canonicalName(record.exchange)).filter((host) => host !== '');
      return thenNow(allNow<DnsAnswer>(exchanges.map((host) => this.resolveNow(host, 'A'))), (addresses) => {
        if (addresses.length > 0 && addresses.every(isVoid)) {
          node.voidLookups = 1;
          node.errors.push(`no MX host of ${target} has an IPv4 address (a void lookup)`);
          return false;
        }
        return true;
      });
    }
    return true;
  }

  /** Asks for the static targets of the reachable lookup terms ahead of the walk. */
  private prefetch(terms: SpfTerm[], context: MacroContext): void {
    const hasAll = terms.some((term) => term.type === 'directive' && term.mechanism.name === 'all');
    for (const term of terms) {
      if (term.type === 'modifier') {
        if (term.name === 'redirect' && !hasAll) this.prefetchName(this.staticTarget(term.domainSpec, context), 'TXT');
        continue;
      }
      const mechanism = term.mechanism;
      if (mechanism.name === 'all') break;
      if (mechanism.name === 'include') this.prefetchName(this.staticTarget(mechanism.domainSpec, context), 'TXT');
      else if (mechanism.name === 'exists') this.prefetchName(this.staticTarget(mechanism.domainSpec, context), 'A');
      else if (mechanism.name === 'mx') this.prefetchName(this.staticTarget(mechanism.domainSpec, context), 'MX');
      else if (mechanism.name === 'a') {
        const target = this.staticTarget(mechanism.domainSpec, context);
        this.prefetchName(target, 'A');
        this.prefetchName(target, 'AAAA');
      }
    }
  }

  private prefetchName(name: string | null, type: RecordType): void {
    if (name !== null) void this.resolveNow(name, type);
  }

  /** The target of a term when it is known without a message, else null. */
  private staticTarget(spec: MacroString | null, context: MacroContext): string | null {
    if (spec === null) return context.domain;
    if (spec.dynamic && !spec.letters.every((letter) => STATIC_LETTERS.has(letter))) return null;
    const target = toTargetName(expandMacroString(spec, context), spec.dynamic);
    return target.ok ? canonicalName(target.name) : null;
  }

  /** Like staticTarget, recording on the node why there is no target. */
  private target(spec: MacroString | null, context: MacroContext, node: SpfTermNode): string | null {
    if (spec !== null && spec.dynamic) {
      if (!spec.letters.every((letter) => STATIC_LETTERS.has(letter))) {
        node.flags.macro = true;
        this.seen.macroTerms.push(node.raw);
        return null;
      }
      node.flags.expanded = true;
    }
    if (spec === null) {
      node.target = context.domain;
      return node.target;
    }
    const target = toTargetName(expandMacroString(spec, context), spec.dynamic);
    if (!target.ok) {
      node.errors.push(`the target is not a valid domain name: ${target.problem}`);
      if (node.mechanism === 'include' || node.mechanism === 'redirect') {
        this.seen.missingIncludes.push(`${node.raw} (not a valid domain name)`);
      } else {
        // RFC 7208 §4.8, §5: treated as a name that does not exist, so a void lookup.
        node.voidLookups = 1;
      }
      return null;
    }
    node.target = canonicalName(target.name);
    return node.target;
  }

  private context(domain: string): MacroContext {
    return {
      sender: `postmaster@${this.topDomain}`,
      localPart: 'postmaster',
      senderDomain: this.topDomain,
      domain,
      client: PLACEHOLDER_CLIENT,
      helo: this.topDomain,
      validatedName: 'unknown',
      receiver: 'unknown',
      timestamp: 0,
    };
  }

  private note(path: string[], message: string): void {
    this.errors.push(path.length === 0 ? message : `${path.map(truncateForMessage).join(' → ')} → ${message}`);
  }
}

/** The state of one record's walk (`walkTerms`), carried across terms that wait. */
interface TermWalk {
  terms: SpfTerm[];
  hasAll: boolean;
  domain: string;
  stack: string[];
  path: string[];
  depth: number;
  context: MacroContext;
  subtree: Subtree;
  /** False after `all`: later mechanisms are never evaluated (RFC 7208 §5.1). */
  reachable: boolean;
  redirect: { term: SpfTerm & { type: 'modifier' }; node: SpfTermNode } | null;
}

/** Adds a walked term's cost to its record's. */
function tally(subtree: Subtree, node: SpfTermNode): void {
  subtree.lookups += node.lookups;
  subtree.voids += node.voidLookups;
  if (node.flags.macro || node.flags.truncated || node.flags.loop) subtree.minimum = true;
}

function newNode(term: SpfTerm): SpfTermNode {
  return {
    raw: term.text,
    kind: term.type === 'directive' ? 'mechanism' : 'modifier',
    qualifier: term.type === 'directive' ? term.qualifier : null,
    mechanism: term.type === 'directive' ? term.mechanism.name : term.name === 'unknown' ? term.key.toLowerCase() : term.name,
    target: null,
    lookups: 0,
    voidLookups: 0,
    children: [],
    errors: [],
    flags: { unreachable: false, ignored: false, macro: false, expanded: false, repeated: false, loop: false, truncated: false },
  };
}

/** The findings for an analysis, most serious problems first within each group. */
function findingsFor(analysis: SpfAnalysis, seen: Observations, topFailure: string): Finding[] {
  const findings: Finding[] = [];
  const add = (id: string, severity: Finding['severity'], title: string, detail: string): void => {
    findings.push({ id, severity, title, detail });
  };
  switch (analysis.status) {
    case 'none':
      add('spf-missing', 'warning', 'No SPF Record', `Your domain publishes no SPF record, so receiving servers have no list of the servers allowed to send as ${analysis.domain}. Publish one TXT record such as 'v=spf1 include:<your mail provider> -all'.`);
      return findings;
    case 'multiple':
      add('spf-multiple-records', 'warning', `Multiple SPF Records (${analysis.records.length})`, `Your domain publishes ${analysis.records.length} TXT records that start with 'v=spf1'. RFC 7208 §4.5 makes that a permanent error, so receivers ignore SPF for your domain entirely. Merge them into a single record.`);
      return findings;
    case 'temperror':
      add('spf-temperror', 'warning', 'SPF Lookup Failed', `The DNS query for the SPF record of ${analysis.domain} failed: ${topFailure}. Receivers answer 'temporary error' for as long as this lasts and may delay your mail. Check that your DNS servers answer TXT queries.`);
      return findings;
    case 'found':
      break;
  }
  const open = analysis.passSet?.open ?? null;
  if (open !== null) findings.push(openFinding(analysis.domain, open));
  else if (analysis.passSet?.wide) findings.push(widePassFinding(analysis.domain, analysis.passSet));
  if (seen.syntaxErrors.length > 0) {
    add('spf-syntax-error', 'warning', 'SPF Record Has a Syntax Error', `There is a syntax error in ${seen.syntaxErrors[0]}. Receivers treat a record with any syntax error as a permanent error (RFC 7208 §4.6) and ignore it.${seen.syntaxErrors.length > 1 ? ` ${seen.syntaxErrors.length - 1} more error(s) follow it.` : ''}`);
  }
  if (seen.loops.length > 0) {
    add('spf-include-loop', 'warning', 'SPF Include Loop', `Your SPF record runs into a loop of includes or redirects: ${seen.loops[0]}. Receivers follow the loop until the 10-lookup limit and then return a permanent error. Remove the include or redirect that closes the loop.`);
  }
  if (seen.missingIncludes.length > 0 || seen.multipleRecords.length > 0) {
    const first = seen.missingIncludes[0] ?? `${seen.multipleRecords[0]} (more than one SPF record)`;
    add('spf-include-missing', 'warning', 'Included Domain Has No SPF Record', `Your SPF record points to a domain without a usable SPF record: ${first}. Receivers return a permanent error when they reach it (RFC 7208 §5.2), so mail they check that far never passes SPF. Remove the term or fix the included domain.`);
  }
  if (seen.temperrors.length > 0) {
    add('spf-temperror', 'warning', 'SPF Lookup Failed Below the Top', `A DNS lookup your SPF record needs failed: ${seen.temperrors[0]}. Receivers answer 'temporary error' when they reach it. If this persists, the included domain's DNS is broken.`);
  }
  if (analysis.lookupCount > MAX_DNS_TERMS) {
    add('spf-permerror', 'warning', `SPF Exceeds 10 Lookups (${analysis.lookupCount}/10)`, `Checking your SPF record takes ${analysis.lookupCountIsMinimum ? 'at least ' : ''}${analysis.lookupCount} DNS lookups, and RFC 7208 §4.6.4 allows ${MAX_DNS_TERMS}. Receivers stop with a permanent error, so mail from servers listed late in the record fails SPF. Remove includes you no longer use, or replace them with ip4:/ip6: ranges.`);
  }
  if (analysis.voidLookups > MAX_VOID_LOOKUPS) {
    add('spf-void-lookups', 'warning', `Too Many SPF Lookups Find Nothing (${analysis.voidLookups}/${MAX_VOID_LOOKUPS})`, `${analysis.voidLookups} terms in your SPF record point to names that have no records. RFC 7208 §4.6.4 lets receivers stop with a permanent error after ${MAX_VOID_LOOKUPS}. Remove the terms for hosts that no longer exist.`);
  }
  if (seen.mxOverLimit.length > 0) {
    add('spf-mx-too-many', 'warning', 'SPF mx Names Too Many Hosts', `An 'mx' term in your SPF record points to more than ${MAX_MX_NAMES} mail servers: ${seen.mxOverLimit[0]}. RFC 7208 §4.6.4 makes that a permanent error. List the servers with ip4:/ip6: instead.`);
  }
  if (analysis.terminalAll === null && open === null) {
    add('spf-no-all', 'warning', "SPF Record Has No 'all'", `Your SPF record ends without an 'all' mechanism (and no redirect supplies one), so mail from servers it does not list gets a neutral result (RFC 7208 §4.7), which receivers treat like having no policy. End the record with '-all' or '~all'.`);
  } else if (analysis.terminalAll === '?all') {
    add('spf-neutral', 'warning', "SPF Set to Neutral ('?all')", `Your SPF record ends in '?all', which tells receivers to treat mail from servers it does not list as neither allowed nor forbidden. Use '~all' or '-all' so forged mail is marked or rejected.`);
  }
  if (seen.ptrTerms.length > 0) {
    add('spf-ptr-used', 'warning', "SPF Uses 'ptr'", `Your SPF record uses '${truncateForMessage(seen.ptrTerms[0]!)}'. RFC 7208 §5.5 says not to use 'ptr': it is slow, depends on reverse DNS you may not control, and some receivers skip it. List the servers with ip4:/ip6: or include: instead.`);
  }
  if (seen.macroTerms.length > 0) {
    add('spf-macro-unresolvable', 'info', 'SPF Uses Macros', `The term${seen.macroTerms.length > 1 ? 's' : ''} ${seen.macroTerms.slice(0, 3).map((term) => `'${truncateForMessage(term)}'`).join(', ')} depend${seen.macroTerms.length > 1 ? '' : 's'} on the sending server or address, so what ${seen.macroTerms.length > 1 ? 'they lead' : 'it leads'} to is only known at delivery. The lookup count (${analysis.lookupCount}) is a minimum.`);
  }
  if (seen.truncated.length > 0) {
    add('spf-analysis-truncated', 'info', 'SPF Tree Too Large to Walk', `Your SPF tree is deeper or larger than this check follows (${seen.truncated[0]}). The lookup count (${analysis.lookupCount}) is a minimum, and already says receivers will likely stop early.`);
  }
  if (seen.ignoredRedirect !== null) {
    add('spf-redirect-ignored', 'info', "SPF redirect Ignored", `Your SPF record has both an 'all' mechanism and '${truncateForMessage(seen.ignoredRedirect)}'. RFC 7208 §6.1 says receivers ignore the redirect when 'all' is present; remove one of them.`);
  }
  if (seen.unreachable.length > 0) {
    add('spf-unreachable-terms', 'info', 'SPF Terms After all', `Your SPF record has term${seen.unreachable.length > 1 ? 's' : ''} after 'all' (${seen.unreachable.slice(0, 3).map((term) => `'${truncateForMessage(term)}'`).join(', ')}). Receivers stop at 'all' (RFC 7208 §5.1), so ${seen.unreachable.length > 1 ? 'they are' : 'it is'} never used.`);
  }
  if (analysis.sizeOctets > UDP_MESSAGE_OCTETS) {
    add('spf-record-too-long', 'warning', `SPF Record Too Long (${analysis.sizeOctets} octets)`, `Your SPF record is ${analysis.sizeOctets} octets. RFC 7208 §3.4 advises staying under ${RECOMMENDED_SPF_OCTETS} so the answer fits a ${UDP_MESSAGE_OCTETS}-octet DNS message; past that some receivers fall back to TCP or fail the lookup. Shorten it or move parts into an include.`);
  } else if (analysis.sizeOctets > RECOMMENDED_SPF_OCTETS) {
    add('spf-record-too-long', 'info', `SPF Record Near the Size Limit (${analysis.sizeOctets} octets)`, `Your SPF record is ${analysis.sizeOctets} octets; RFC 7208 §3.4 advises staying under ${RECOMMENDED_SPF_OCTETS} so the DNS answer fits in ${UDP_MESSAGE_OCTETS} octets. Keep it from growing.`);
  }
  const broken =
    seen.syntaxErrors.length + seen.loops.length + seen.missingIncludes.length + seen.multipleRecords.length + seen.temperrors.length + seen.mxOverLimit.length > 0 ||
    analysis.lookupCount > MAX_DNS_TERMS ||
    analysis.voidLookups > MAX_VOID_LOOKUPS;
  if (!broken && open === null && !analysis.passSet?.wide && (analysis.terminalAll === '-all' || analysis.terminalAll === '~all')) {
    add('spf-valid', 'success', `SPF Configured ('${analysis.terminalAll}')`, `Your SPF record lists the servers allowed to send as ${analysis.domain} and ${analysis.terminalAll === '-all' ? 'tells receivers to reject' : 'asks receivers to mark'} mail from any other server, using ${analysis.lookupCount}/${MAX_DNS_TERMS} DNS lookups.`);
  }
  return findings;
}

/** Whether a term path is a plain `+all` (or bare `all`) at the top of the record. */
export function isPlainPlusAll(term: string | null): boolean {
  return term !== null && /^\+?all$/i.test(term);
}

/** How an opening reads in words: the term, and the evidence (share of IPv4, an IPv6 block, or a probe). */
export function describeOpening(open: SpfOpening): string {
  const via = open.term === null ? '' : ` through '${termPathForMessage(open.term)}'`;
  if (open.evidence.kind === 'probe') return `the address ${open.evidence.ip}, which no term of the record names, passes${via}`;
  const { ipv4Share, ipv6WidestPrefix } = open.evidence;
  const parts: string[] = [];
  if (ipv4Share > 0) parts.push(`${formatShare(ipv4Share)} of all IPv4 addresses`);
  if (ipv6WidestPrefix === 0) parts.push('every IPv6 address');
  else if (ipv6WidestPrefix !== null && ipv6WidestPrefix <= 64) parts.push(`an IPv6 /${ipv6WidestPrefix} block`);
  // A term whose name ends in %{h}, %{l} or %{p} points wherever the forger says (src/spf/pass-set.ts).
  const forgerChosen = open.term !== null && /%\{[lhpLHP][^}]*\}\.?$/.test(open.term.split(' → ').at(-1)!.replace(/^[+?~-]/, '').split('/')[0]!);
  const why = forgerChosen ? ', because the forger chooses the name it looks up (their HELO name, local part or reverse DNS) and points it at their own DNS' : '';
  return `${parts.join(' and ') || 'a huge range of addresses'} pass${via}${why}`;
}

/** A share as a percentage with at most one decimal ("100%", "87.5%", "0.4%"); never rounds up to 100%. */
export function formatShare(share: number): string {
  const percent = Math.round(share * 1000) / 10;
  return percent === 100 && share < 1 ? 'over 99.9%' : `${percent}%`;
}

/** The critical finding for a record anyone can pass. */
function openFinding(domain: string, open: SpfOpening): Finding {
  if (isPlainPlusAll(open.term)) {
    return {
      id: 'spf-plus-all',
      severity: 'critical',
      title: "SPF Allows Any Server ('+all')",
      detail: `Your SPF record ends in '+all' (a bare 'all' means the same), which tells receivers that every server on the internet may send mail as ${domain}. Replace it with '-all' or '~all'.`,
    };
  }
  return {
    id: 'spf-open-to-anyone',
    severity: 'critical',
    title: 'Anyone Can Pass SPF',
    detail: `In your SPF record ${describeOpening(open)}, so practically any server on the internet may send mail as ${domain}. Remove that term or narrow it to the servers you use.`,
  };
}

/** The warning for a record that passes more than a /8 of IPv4 without being open to anyone. */
function widePassFinding(domain: string, passSet: SpfPassSet): Finding {
  return {
    id: 'spf-wide-pass',
    severity: 'warning',
    title: 'SPF Authorises a Huge Range',
    detail: `Your SPF record lets ${passSet.pass.ipv4Addresses.toLocaleString('en-US')} IPv4 addresses (${formatShare(passSet.pass.ipv4Share)} of the space) send as ${domain}; no sender needs more than a few thousand. Anyone renting a server in those ranges passes SPF. List only the addresses and includes your mail services give you.`,
  };
}

/**
 * The kept analysis when `resolver` gives the same answers to the same questions, in order; else
 * the lookups asked so far (the caller's walk takes them as its own). Stops at the first answer that
 * differs or must be waited for: from there the walk decides what to ask.
 */
function replayKept(kept: KeptAnalysis, resolver: Resolver): SpfAnalysis | KeptLookup[] {
  const { lookups } = kept;
  for (let index = 0; index < lookups.length; index++) {
    const lookup = lookups[index]!;
    const answer = safeResolve(resolver, lookup.name, lookup.type);
    if (answer instanceof Promise || !sameAnswer(answer, lookup.answer!)) {
      // The answers before this one were the kept ones (the same, compared), this one is new.
      const asked = lookups.slice(0, index).map((same) => ({ name: same.name, type: same.type, answer: same.answer }));
      asked.push({ name: lookup.name, type: lookup.type, answer: answer as DnsAnswer });
      return asked;
    }
  }
  return kept.analysis;
}

/** Keeps `analysis` under `name` when every lookup got an answer (see `KeptAnalysis`), from the name's second analysis. */
function keep(name: string, log: KeptLookup[], analysis: SpfAnalysis): SpfAnalysis {
  if (analysis.status === 'temperror') return analysis;
  for (const lookup of log) if (lookup.answer === undefined || lookup.answer.kind === 'error') return analysis;
  // Walked again only because an answer had to be waited for (a cold cache), and every answer the
  // same: the kept analysis stands, and nothing is frozen or stored again.
  const kept = keptAnalyses.get(name);
  if (kept !== undefined && sameLookups(kept.lookups, log)) return kept.analysis;
  if (!analysedOnce.delete(name)) {
    if (analysedOnce.size >= SPF_ANALYSIS_MEMO_NAMES) analysedOnce.clear();
    analysedOnce.add(name);
    return analysis;
  }
  freezeAnalysis(analysis);
  keptAnalyses.set(name, { lookups: log, analysis });
  return analysis;
}

/** Whether two logs asked the same questions in the same order and got the same answers. */
function sameLookups(a: readonly KeptLookup[], b: readonly KeptLookup[]): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) {
    const x = a[index]!;
    const y = b[index]!;
    if (x.type !== y.type || x.name !== y.name || !sameAnswer(x.answer!, y.answer!)) return false;
  }
  return true;
}

/** Freezes what a kept analysis hands out; the address sets keep their lazily computed facts. */
function freezeAnalysis(analysis: SpfAnalysis): void {
  deepFreeze(analysis, (value) => value instanceof RangeSet);
}

/** Whether two answers say the same (kind, aliases, records; TTLs aside: nothing here reads them). */
function sameAnswer(a: DnsAnswer, b: DnsAnswer): boolean {
  if (a === b) return true;
  if (a.kind !== b.kind || a.kind === 'error' || b.kind === 'error') return false;
  if (!sameValue(a.cnames ?? [], b.cnames ?? [])) return false;
  return a.kind !== 'records' || sameValue(a.records, (b as typeof a).records);
}

/** Structural equality of record data (strings, arrays of them, flat objects such as MX or SOA data). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let index = 0; index < a.length; index++) if (!sameValue(a[index], b[index])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) if (!sameValue((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  return true;
}
