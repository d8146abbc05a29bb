/**
 * check_host() (RFC 7208 §4): the SPF result for one client address, domain and sender, with the
 * DNS limits of §4.6.4, the mechanisms of §5, the modifiers of §6 and the macros of §7.
 *
 * Every outcome is a value. A DNS failure is a temperror, never "no record"; bad record text is a
 * permerror naming the term; an unexpected internal failure is a permerror with a message. Nothing
 * throws out of `checkHost`.
 */
import { MAX_LABEL_OCTETS, MAX_NAME_OCTETS, canonicalName, isAtOrBelow } from '../dns/name.js';
import { describeAnswer } from '../dns/types.js';
import type { DnsAnswer, DnsErrorReason, RecordType, Resolver } from '../dns/types.js';
import type { FailedQuery } from '../errors.js';
import { addressTextMatches, inNetwork, parseClientAddress, reverseName } from './address.js';
import { expandMacroString, isTopLabel, literalText, parseMacroString, toTargetName } from './macro.js';
import type { MacroContext } from './macro.js';
import { describeSyntaxError } from './parse.js';
import { parseSpfRecordCached } from './parse-cache.js';
import { isVoidSpfLookup, joinTxt, lookupSpfRecord } from './record.js';
import { safeResolve } from './resolve.js';
import { truncateForMessage } from './text.js';
import { QUALIFIER_RESULT } from './types.js';
import type { Directive, MacroString, SpfRecord, SpfResult } from './types.js';

/** RFC 7208 §4.6.4: at most 10 terms that query DNS (include, a, mx, ptr, exists, redirect) per check. */
export const MAX_DNS_TERMS = 10;
/** RFC 7208 §4.6.4: at most 2 "void lookups" (NXDOMAIN or an empty answer) per check. */
export const MAX_VOID_LOOKUPS = 2;
/** RFC 7208 §4.6.4: an `mx` may name at most 10 hosts; more is a permerror. */
export const MAX_MX_NAMES = 10;
/** RFC 7208 §4.6.4: a `ptr` (or %{p}) looks at the first 10 PTR names and ignores the rest. */
export const MAX_PTR_NAMES = 10;
/** RFC 7208 §7.3: %{r} when the receiving host's name is not configured. */
export const UNKNOWN_RECEIVER = 'unknown';
/** %{h} when the caller gives no HELO name. */
export const UNKNOWN_HELO = 'unknown';
/** RFC 7208 §7.3: %{p} when no validated name is found. */
export const UNKNOWN_VALIDATED_NAME = 'unknown';

/** The limits of one check (RFC 7208 §4.6.4); the RFC's values are the defaults. */
export interface SpfLimits {
  /** DNS-querying terms (include, a, mx, ptr, exists, redirect, and each %{p} expansion). */
  dnsTerms: number;
  /** Void lookups: NXDOMAIN or empty answers to a term's own query. */
  voidLookups: number;
  /** MX names one `mx` may return. */
  mxNames: number;
  /** PTR names one `ptr` or %{p} looks at. */
  ptrNames: number;
}

/** The RFC 7208 §4.6.4 limits. */
export const DEFAULT_SPF_LIMITS: Readonly<SpfLimits> = {
  dnsTerms: MAX_DNS_TERMS,
  voidLookups: MAX_VOID_LOOKUPS,
  mxNames: MAX_MX_NAMES,
  ptrNames: MAX_PTR_NAMES,
};

/** The arguments of check_host() (RFC 7208 §4.1). */
export interface CheckHostInput {
  /** The SMTP client's address, IPv4 or IPv6 text. An IPv4-mapped IPv6 address is taken as IPv4. */
  ip: string;
  /** The domain whose record is checked: the MAIL FROM domain, or the HELO name. */
  domain: string;
  /** The MAIL FROM address. "" or a missing local part means "postmaster" (RFC 7208 §4.3). */
  sender: string;
  /** The HELO/EHLO name, for %{h}. */
  helo?: string;
}

/** How to run a check. */
export interface CheckHostOptions {
  resolver: Resolver;
  /** Explanation given with a fail when the record has no usable `exp` (RFC 7208 §6.2). */
  explanationDefault?: string;
  limits?: Partial<SpfLimits>;
  /** The receiving host's name, for %{r} in explanations. */
  receiver?: string;
  /** Seconds since the epoch, for %{t} in explanations; the current time when omitted. */
  timestamp?: number;
}

/** What check_host() concluded, and what it spent getting there. */
export interface CheckHostResult {
  result: SpfResult;
  /** With `fail` only: the domain's explanation (RFC 7208 §6.2), or `explanationDefault`. */
  explanation?: string;
  /** The top-level term that decided the result, as written. */
  matchedTerm?: string;
  /** What went wrong or why there is no record, naming the term and the domain. */
  problem?: string;
  /** With `temperror`: the DNS query that failed (RFC 7208 §5), as a value. */
  failedQuery?: SpfFailedQuery;
  lookups: { dns: number; void: number };
}

/** A DNS query that failed during check_host(): the one `FailedQuery` type of src/errors.ts. */
export type SpfFailedQuery = FailedQuery;

/** A result that ends the whole check (RFC 7208 §4.6.4, §5: permerror and temperror propagate). */
interface Abort {
  result: 'permerror' | 'temperror';
  problem: string;
  failedQuery?: SpfFailedQuery;
}

/** The outcome of evaluating one domain's record (a recursive check_host() call). */
interface DomainOutcome {
  result: SpfResult;
  problem?: string;
  failedQuery?: SpfFailedQuery;
  matchedTerm?: string;
  /** The `exp` of the record that produced a fail, and the domain it belongs to (RFC 7208 §6.2). */
  explainWith?: { spec: MacroString; domain: string };
  /** With "none": the TXT query was void (NXDOMAIN or no answers, RFC 7208 §4.6.4). */
  voidLookup?: boolean;
}

/** One check's state: the counters and the facts macros need. */
class Session {
  dnsTerms = 0;
  voids = 0;

  constructor(
    readonly resolver: Resolver,
    readonly limits: SpfLimits,
    readonly base: Omit<MacroContext, 'domain' | 'validatedName'>,
  ) {}

  /** RFC 7208 §4.6.4: counts a DNS-querying term; past the limit the check is a permerror. */
  countTerm(term: string): Abort | null {
    this.dnsTerms++;
    if (this.dnsTerms <= this.limits.dnsTerms) return null;
    return {
      result: 'permerror',
      problem: `${truncateForMessage(term)}: more than ${this.limits.dnsTerms} terms that query DNS (include, a, mx, ptr, exists, redirect); RFC 7208 §4.6.4 makes that a permerror`,
    };
  }

  /** RFC 7208 §4.6.4: counts a void lookup; past the limit the check is a permerror. */
  countVoid(term: string): Abort | null {
    this.voids++;
    if (this.voids <= this.limits.voidLookups) return null;
    return {
      result: 'permerror',
      problem: `${truncateForMessage(term)}: more than ${this.limits.voidLookups} lookups found no records (void lookups); RFC 7208 §4.6.4 makes that a permerror`,
    };
  }

  context(domain: string, validatedName = UNKNOWN_VALIDATED_NAME): MacroContext {
    const base = this.base;
    return {
      sender: base.sender,
      localPart: base.localPart,
      senderDomain: base.senderDomain,
      domain,
      client: base.client,
      helo: base.helo,
      validatedName,
      receiver: base.receiver,
      timestamp: base.timestamp,
    };
  }
}

/**
 * Runs check_host() (RFC 7208 §4) for `input`. Resolves to the result with what it spent; never
 * rejects.
 */
export async function checkHost(input: CheckHostInput, options: CheckHostOptions): Promise<CheckHostResult> {
  let session: Session | undefined;
  try {
    const client = parseClientAddress(input.ip);
    if (client === null) {
      return { result: 'permerror', problem: `"${truncateForMessage(input.ip)}" is not an IP address`, lookups: { dns: 0, void: 0 } };
    }
    const domain = input.domain.endsWith('.') ? input.domain.slice(0, -1) : input.domain;
    // RFC 7208 §4.3: a malformed or single-label domain gives "none" without any lookup.
    const domainProblem = initialDomainProblem(domain);
    if (domainProblem !== null) {
      return { result: 'none', problem: `"${truncateForMessage(input.domain)}" is not a domain SPF can check: ${domainProblem}`, lookups: { dns: 0, void: 0 } };
    }
    const sender = normaliseSender(input.sender, domain);
    const limits = options?.limits === undefined ? DEFAULT_SPF_LIMITS : { ...DEFAULT_SPF_LIMITS, ...options.limits };
    session = new Session(resolverOf(options), limits, {
      sender: sender.address,
      localPart: sender.localPart,
      senderDomain: sender.domain,
      client,
      helo: input.helo ?? UNKNOWN_HELO,
      receiver: options.receiver ?? UNKNOWN_RECEIVER,
      timestamp: options.timestamp ?? Math.floor(Date.now() / 1000),
    });
    const outcome = await evaluateDomain(session, domain);
    const result: CheckHostResult = { result: outcome.result, lookups: { dns: session.dnsTerms, void: session.voids } };
    if (outcome.matchedTerm !== undefined) result.matchedTerm = outcome.matchedTerm;
    if (outcome.problem !== undefined) result.problem = outcome.problem;
    if (outcome.failedQuery !== undefined) result.failedQuery = outcome.failedQuery;
    if (outcome.result === 'fail') {
      const explanation = outcome.explainWith ? await explain(session, outcome.explainWith.spec, outcome.explainWith.domain) : null;
      if (explanation !== null) result.explanation = explanation;
      else if (options.explanationDefault !== undefined) result.explanation = options.explanationDefault;
    }
    return result;
  } catch (error) {
    return {
      result: 'permerror',
      problem: `internal error while checking SPF: ${error instanceof Error ? error.message : String(error)}`,
      lookups: { dns: session?.dnsTerms ?? 0, void: session?.voids ?? 0 },
    };
  }
}

function resolverOf(options: CheckHostOptions): Resolver {
  if (!options || typeof options.resolver?.resolve !== 'function') throw new Error('checkHost needs a resolver');
  return options.resolver;
}

/**
 * RFC 7208 §4.3: what makes <domain> unusable, or null: visible ASCII only, at most 253 octets,
 * at least two labels of 1-63 octets, and a top label as RFC 7208 §7.1 `toplabel` allows.
 */
function initialDomainProblem(domain: string): string | null {
  const length = domain.length;
  if (length === 0) return 'it is empty';
  if (length > MAX_NAME_OCTETS) return `it is ${length} octets long; DNS allows at most ${MAX_NAME_OCTETS}`;
  let labelStart = 0;
  for (let index = 0; index <= length; index++) {
    const code = index < length ? domain.charCodeAt(index) : 46;
    if (code === 46) {
      const labelLength = index - labelStart;
      if (labelLength === 0) return 'it has an empty label';
      if (labelLength > MAX_LABEL_OCTETS) return `the label "${truncateForMessage(domain.slice(labelStart, index))}" is longer than ${MAX_LABEL_OCTETS} octets`;
      if (index < length) labelStart = index + 1;
    } else if (code < 0x21 || code > 0x7e) {
      return 'it holds a space, a control or a non-ASCII character';
    }
  }
  if (labelStart === 0) return 'it has a single label; SPF needs a fully qualified domain';
  const top = domain.slice(labelStart);
  if (!isTopLabel(top)) return `"${truncateForMessage(top)}" is not a valid top-level label`;
  return null;
}

/** RFC 7208 §4.3: the sender's parts, with "postmaster" for a missing local part. */
function normaliseSender(sender: string, domain: string): { address: string; localPart: string; domain: string } {
  const at = sender.lastIndexOf('@');
  const localPart = at > 0 ? sender.slice(0, at) : 'postmaster';
  const senderDomain = at === -1 ? (sender === '' ? domain : sender) : sender.slice(at + 1) || domain;
  return { address: `${localPart}@${senderDomain}`, localPart, domain: senderDomain };
}

/** One recursive check_host() call: record lookup (§4.4), selection (§4.5), evaluation (§4.6). */
async function evaluateDomain(session: Session, domain: string): Promise<DomainOutcome> {
  const lookup = await lookupSpfRecord(session.resolver, domain);
  switch (lookup.status) {
    case 'temperror':
      // RFC 7208 §4.4: a DNS failure fetching the record is a temperror.
      return {
        result: 'temperror',
        problem: `the TXT lookup for ${domain} failed: ${describeAnswer({ kind: 'error', reason: lookup.reason, ...(lookup.detail === undefined ? {} : { detail: lookup.detail }) })}`,
        failedQuery: failedQuery(domain, 'TXT', lookup.reason, lookup.detail),
      };
    case 'none':
      // RFC 7208 §4.5: no SPF record gives "none".
      return { result: 'none', problem: `${domain} publishes no SPF record`, voidLookup: isVoidSpfLookup(lookup) };
    case 'multiple':
      // RFC 7208 §4.5: more than one SPF record is a permerror.
      return { result: 'permerror', problem: `${domain} publishes ${lookup.records.length} SPF records; there must be exactly one` };
    case 'found':
      break;
  }
  const parsed = parseSpfRecordCached(lookup.text);
  if (!parsed.ok) {
    // RFC 7208 §4.6: a syntax error anywhere in the record is a permerror.
    return { result: 'permerror', problem: `the SPF record of ${domain} is invalid: ${describeSyntaxError(parsed.errors[0]!)}` };
  }
  return evaluateRecord(session, parsed.record, domain);
}

async function evaluateRecord(session: Session, record: SpfRecord, domain: string): Promise<DomainOutcome> {
  // RFC 7208 §4.6.2: directives in order; the first match decides.
  for (const directive of record.directives) {
    const matched = await matchDirective(session, directive, domain);
    if (matched === false) continue;
    if (matched !== true) return matched;
    const result = QUALIFIER_RESULT[directive.qualifier];
    const outcome: DomainOutcome = { result, matchedTerm: directive.text };
    // RFC 7208 §6.2: the explanation comes from the record that produced the fail.
    if (result === 'fail' && record.exp) outcome.explainWith = { spec: record.exp.domainSpec, domain };
    return outcome;
  }
  // RFC 7208 §6.1: redirect applies when nothing matched, and is ignored when the record has "all".
  if (record.redirect && !record.hasAll) {
    const term = record.redirect.text;
    const over = session.countTerm(term);
    if (over) return over;
    const target = await targetOf(session, record.redirect.domainSpec, domain, term);
    if ('result' in target) return target;
    if (!target.ok) return { result: 'permerror', problem: `${truncateForMessage(term)}: the target is not a valid domain name (${target.problem})` };
    const inner = await evaluateDomain(session, target.name);
    // RFC 7208 §6.1: a redirect target without an SPF record is a permerror, not "none".
    if (inner.result === 'none') {
      // RFC 7208 §4.6.4: an empty answer to the redirect's query is a void lookup (counted; the permerror decides).
      if (inner.voidLookup === true) session.voids++;
      return { result: 'permerror', problem: `${truncateForMessage(term)}: ${target.name} publishes no SPF record` };
    }
    if (inner.problem !== undefined) inner.problem = `${truncateForMessage(term)} → ${inner.problem}`;
    // The term that decided, as seen from this record, is the redirect itself.
    if (inner.matchedTerm !== undefined) inner.matchedTerm = term;
    return inner;
  }
  // RFC 7208 §4.7: no match and no redirect gives neutral.
  return { result: 'neutral' };
}

/** A directive's match: true, false, or an abort (permerror / temperror) for the whole check. */
async function matchDirective(session: Session, directive: Directive, domain: string): Promise<boolean | Abort> {
  const mechanism = directive.mechanism;
  const client = session.base.client;
  switch (mechanism.name) {
    case 'all':
      return true; // RFC 7208 §5.1
    case 'ip4':
    case 'ip6':
      // RFC 7208 §5.6: an address of the other family never matches.
      return inNetwork(client, mechanism.network, mechanism.prefix);
    case 'include':
      return matchInclude(session, directive, mechanism.domainSpec, domain);
    case 'a':
    case 'mx':
    case 'ptr':
    case 'exists': {
      const over = session.countTerm(directive.text);
      if (over) return over;
      const target = await targetOf(session, mechanism.domainSpec, domain, directive.text);
      if ('result' in target) return target;
      if (!target.ok) {
        // RFC 7208 §4.8, §5: a target no query can carry is treated as a name that does not exist:
        // no match, and it counts as a void lookup.
        return session.countVoid(directive.text) ?? false;
      }
      if (mechanism.name === 'a') return matchA(session, directive, target.name, mechanism.ip4Prefix, mechanism.ip6Prefix);
      if (mechanism.name === 'mx') return matchMx(session, directive, target.name, mechanism.ip4Prefix, mechanism.ip6Prefix);
      if (mechanism.name === 'ptr') return matchPtr(session, directive, target.name);
      return matchExists(session, directive, target.name);
    }
  }
}

/** RFC 7208 §5.2: include evaluates the target's record; only its pass is a match. */
async function matchInclude(session: Session, directive: Directive, spec: MacroString, domain: string): Promise<boolean | Abort> {
  const term = directive.text;
  const over = session.countTerm(term);
  if (over) return over;
  const target = await targetOf(session, spec, domain, term);
  if ('result' in target) return target;
  if (!target.ok) return { result: 'permerror', problem: `${truncateForMessage(term)}: the target is not a valid domain name (${target.problem})` };
  const inner = await evaluateDomain(session, target.name);
  switch (inner.result) {
    case 'pass':
      return true;
    case 'fail':
    case 'softfail':
    case 'neutral':
      return false;
    case 'none':
      // RFC 7208 §4.6.4: an empty answer to the include's query is a void lookup (counted; the
      // permerror below decides either way).
      if (inner.voidLookup === true) session.voids++;
      // RFC 7208 §5.2: an included domain without an SPF record is a permerror.
      return { result: 'permerror', problem: `${truncateForMessage(term)}: ${target.name} publishes no SPF record` };
    case 'temperror':
    case 'permerror':
      return inner.failedQuery
        ? { result: inner.result, problem: `${truncateForMessage(term)} → ${inner.problem ?? inner.result}`, failedQuery: inner.failedQuery }
        : { result: inner.result, problem: `${truncateForMessage(term)} → ${inner.problem ?? inner.result}` };
  }
}

/** RFC 7208 §5.3: any address of the client's family at the target, within the prefix. */
async function matchA(session: Session, directive: Directive, name: string, ip4Prefix: number, ip6Prefix: number): Promise<boolean | Abort> {
  const client = session.base.client;
  const type = client.version === 4 ? 'A' : 'AAAA';
  const answer = await safeResolve(session.resolver, name, type);
  if (answer.kind === 'records') {
    for (const text of answer.records) if (addressTextMatches(text, client, ip4Prefix, ip6Prefix)) return true;
    return false;
  }
  if (answer.kind === 'error') return dnsFailure(directive, name, type, answer);
  // RFC 7208 §4.6.4: an empty answer (NODATA) or NXDOMAIN to the term's query is a void lookup. The
  // query is for the client's family only, so an empty AAAA counts even when the host has A records.
  return session.countVoid(directive.text) ?? false;
}

/** RFC 7208 §5.4: the addresses of each MX host; more than 10 MX names is a permerror (§4.6.4). */
async function matchMx(session: Session, directive: Directive, name: string, ip4Prefix: number, ip6Prefix: number): Promise<boolean | Abort> {
  const answer = await safeResolve(session.resolver, name, 'MX');
  if (answer.kind === 'error') return dnsFailure(directive, name, 'MX', answer);
  // RFC 7208 §5.4: no MX records means no match; the name's own A record is never used instead.
  if (answer.kind !== 'records') return session.countVoid(directive.text) ?? false;
  if (answer.records.length > session.limits.mxNames) {
    return {
      result: 'permerror',
      problem: `${truncateForMessage(directive.text)}: ${name} has ${answer.records.length} MX records; RFC 7208 §4.6.4 allows at most ${session.limits.mxNames}`,
    };
  }
  const client = session.base.client;
  const type = client.version === 4 ? 'A' : 'AAAA';
  let addressLookups = 0;
  let voidAddressLookups = 0;
  for (const mx of answer.records) {
    const exchange = canonicalName(mx.exchange);
    // A null MX (RFC 7505, exchange ".") names no host.
    if (exchange === '' || !toTargetName(exchange, false).ok) continue;
    const addresses = await safeResolve(session.resolver, exchange, type);
    addressLookups++;
    if (addresses.kind === 'error') return dnsFailure(directive, exchange, type, addresses);
    if (addresses.kind !== 'records') {
      voidAddressLookups++;
      continue;
    }
    for (const text of addresses.records) if (addressTextMatches(text, client, ip4Prefix, ip6Prefix)) return true;
  }
  // RFC 7208 §4.6.4 limits the "terms" whose queries come back empty: an mx whose every exchange has
  // no address of the client's family (an empty AAAA for an IPv6 client) counts once, like an empty MX.
  if (addressLookups > 0 && voidAddressLookups === addressLookups) return session.countVoid(directive.text) ?? false;
  return false;
}

/**
 * RFC 7208 §5.5: the client's PTR names (the first 10, §4.6.4) that equal or lie below the target
 * and whose addresses include the client. A DNS error on the PTR lookup is no match; on a name's
 * address lookup, that name is skipped.
 */
async function matchPtr(session: Session, directive: Directive, target: string): Promise<boolean | Abort> {
  const names = await ptrNames(session);
  if (names === 'void') return session.countVoid(directive.text) ?? false;
  if (names === 'error') return false;
  const wanted = canonicalName(target);
  for (const name of names) {
    if (!isAtOrBelow(name, wanted)) continue;
    if (await isValidated(session, name)) return true;
  }
  return false;
}

/** The first PTR names of the client, canonical; 'void' or 'error' when there are none. */
async function ptrNames(session: Session): Promise<string[] | 'void' | 'error'> {
  const answer = await safeResolve(session.resolver, reverseName(session.base.client), 'PTR');
  if (answer.kind === 'error') return 'error';
  if (answer.kind !== 'records') return 'void';
  // RFC 7208 §4.6.4: records past the first 10 MUST be ignored.
  return answer.records.slice(0, session.limits.ptrNames).map(canonicalName);
}

/** RFC 7208 §5.5: a PTR name is validated when one of its addresses is the client's. */
async function isValidated(session: Session, name: string): Promise<boolean> {
  if (!toTargetName(name, false).ok) return false;
  const client = session.base.client;
  const answer = await safeResolve(session.resolver, name, client.version === 4 ? 'A' : 'AAAA');
  if (answer.kind !== 'records') return false;
  for (const text of answer.records) if (addressTextMatches(text, client, 32, 128)) return true;
  return false;
}

/**
 * RFC 7208 §7.3 "p": the client's validated name, preferring <domain> itself, then a name below it,
 * then any; "unknown" when none validates or DNS fails.
 */
async function validatedName(session: Session, domain: string): Promise<string> {
  const names = await ptrNames(session);
  if (typeof names === 'string') return UNKNOWN_VALIDATED_NAME;
  const wanted = canonicalName(domain);
  let below: string | null = null;
  let any: string | null = null;
  for (const name of names) {
    if (!(await isValidated(session, name))) continue;
    if (name === wanted) return name;
    if (below === null && isAtOrBelow(name, wanted)) below = name;
    if (any === null) any = name;
  }
  return below ?? any ?? UNKNOWN_VALIDATED_NAME;
}

/** RFC 7208 §5.7: the target has at least one A record (A even for an IPv6 client). */
async function matchExists(session: Session, directive: Directive, name: string): Promise<boolean | Abort> {
  const answer = await safeResolve(session.resolver, name, 'A');
  if (answer.kind === 'records') return true;
  if (answer.kind === 'error') return dnsFailure(directive, name, 'A', answer);
  return session.countVoid(directive.text) ?? false;
}

/** RFC 7208 §5: a DNS error (not NXDOMAIN) during a mechanism makes the whole check a temperror. */
function dnsFailure(directive: Directive, name: string, type: RecordType, answer: DnsAnswer & { kind: 'error' }): Abort {
  return {
    result: 'temperror',
    problem: `${truncateForMessage(directive.text)}: the ${type} lookup for ${name} failed: ${describeAnswer(answer)}`,
    failedQuery: failedQuery(name, type, answer.reason, answer.detail),
  };
}

function failedQuery(name: string, type: RecordType, reason: DnsErrorReason, detail: string | undefined): SpfFailedQuery {
  return detail === undefined ? { name, type, reason } : { name, type, reason, detail };
}

/**
 * The target-name of a term (RFC 7208 §4.8): the current domain when the term names none, else the
 * expanded domain-spec. A %{p} in it costs one DNS-querying term (RFC 7208 §4.6.4).
 */
async function targetOf(session: Session, spec: MacroString | null, domain: string, term: string): Promise<{ ok: true; name: string } | { ok: false; problem: string } | Abort> {
  if (spec === null) return { ok: true, name: domain };
  if (!spec.dynamic) return toTargetName(literalText(spec), false);
  let pName: string | undefined;
  if (spec.letters.includes('p')) {
    const over = session.countTerm(`${term} (%{p})`);
    if (over) return over;
    pName = await validatedName(session, domain);
  }
  return toTargetName(expandMacroString(spec, session.context(domain, pName)), true);
}

/**
 * RFC 7208 §6.2: the explanation for a fail. Any problem (a bad target, a DNS error, no record or
 * more than one, a syntax error in the text) means "no explanation"; nothing here counts towards
 * the limits.
 */
async function explain(session: Session, spec: MacroString, domain: string): Promise<string | null> {
  const pName = spec.letters.includes('p') ? await validatedName(session, domain) : undefined;
  const target = toTargetName(expandMacroString(spec, session.context(domain, pName)), spec.dynamic);
  if (!target.ok) return null;
  const answer = await safeResolve(session.resolver, target.name, 'TXT');
  if (answer.kind !== 'records' || answer.records.length !== 1) return null;
  const text = parseMacroString(joinTxt(answer.records[0]!), 'explain');
  if (!text.ok) return null;
  const textName = text.value.letters.includes('p') ? await validatedName(session, domain) : pName;
  return expandMacroString(text.value, session.context(domain, textName));
}
