import { isIP } from 'node:net';
import { canonicalName, dnsNameProblem, isAtOrBelow } from '../dns/name.js';
import { resolveNow, type DnsAnswer, type DnsErrorReason, type Now, type Resolver } from '../dns/types.js';
import type { FailedQuery } from '../errors.js';
import type { Finding } from '../findings.js';
import {
  lookalikeFinding,
  multipleRecordsFinding,
  orgDomainMismatchFinding,
  recordFindings,
  spOnSubdomainFinding,
  temperrorFinding,
} from './findings.js';
import { pslOrganizationalDomain, selectOrganizationalDomain, treeWalkTargets } from './orgdomain.js';
import { parseDmarcRecordCached } from './parse.js';
import type { DmarcRecord, DmarcWarning, NotDmarcReason } from './types.js';

/** The DNS label DMARC records live under (RFC 9989 §4.5). */
export const DMARC_LABEL = '_dmarc';

/** A TXT query that failed, which makes the discovery a temperror: the one `FailedQuery` type. */
export type DmarcFailedQuery = FailedQuery & { type: 'TXT' };

/** What one tree-walk query found. */
export interface TreeWalkStep {
  /** The domain whose record was asked for, e.g. `example.com`. */
  domain: string;
  /** The name queried, e.g. `_dmarc.example.com`. */
  name: string;
  /** `record`: exactly one DMARC record; `none`: zero (other TXT records are ignored); `multiple`: more than one. */
  outcome: 'record' | 'none' | 'multiple' | 'error';
  /** The DNS answer kind behind the outcome. */
  answer: 'records' | 'nodata' | 'nxdomain' | 'error';
  record: DmarcRecord | null;
  /** Parse warnings of `record`. */
  warnings: DmarcWarning[];
  /** How many TXT records started with v=DMARC1. */
  dmarcRecords: number;
  /** TXT records at the name that are not DMARC records, with why. */
  ignored: { raw: string; reason: NotDmarcReason }[];
  /** Aliases followed to reach the answer (RFC 1034 §3.6.2). */
  cnames?: string[];
}

/** Where the applicable record was published relative to the name checked (RFC 9989 §4.10.1). */
export type PolicySource = 'author-domain' | 'organizational-domain' | 'public-suffix-domain';

/** The outcome of DMARC policy discovery for one name. */
export interface DmarcDiscovery {
  /** The name checked, canonical. */
  name: string;
  /**
   * `found`: one record applies (see `record.outcome` for whether its policy is usable); `none`: no record
   * applies; `multiple`: the closest records are several at one name, so none applies; `temperror`: a
   * query failed, so we cannot tell (never read this as "no DMARC").
   */
  status: 'found' | 'none' | 'multiple' | 'temperror';
  /** The applicable record, with effective values. */
  record: DmarcRecord | null;
  rawRecord: string | null;
  /** The name the record was read from, e.g. `_dmarc.example.com`. */
  foundAt: string | null;
  /** The domain whose record applies, e.g. `example.com`. */
  policyDomain: string | null;
  policySource: PolicySource | null;
  /** RFC 9989 §4.10.2: the organizational domain from the tree walk (best effort when `temperror`). */
  organizationalDomain: string;
  /** RFC 7489 §3.2: the organizational domain from the public suffix list (ICANN section only). */
  pslOrganizationalDomain: string;
  /** Every TXT name queried, in order. */
  queries: string[];
  walk: TreeWalkStep[];
  failedQuery?: DmarcFailedQuery;
  findings: Finding[];
}

/** The result of an organizational-domain tree walk for any name (RFC 9989 §4.10.2). */
export type OrganizationalDomainResult =
  | { status: 'ok'; organizationalDomain: string; queries: string[]; walk: TreeWalkStep[] }
  | { status: 'temperror'; organizationalDomain: string; queries: string[]; walk: TreeWalkStep[]; failedQuery: DmarcFailedQuery };

/** The steps of one tree walk, and the query that stopped it if one failed. */
export interface TreeWalkResult {
  steps: TreeWalkStep[];
  failure?: DmarcFailedQuery;
}

/**
 * Runs the RFC 9989 §4.10 DNS tree walk from `start`: queries `_dmarc.<target>` for each target of
 * `treeWalkTargets(start)` (at most eight), stopping after a single record with psd=y or psd=n, or at
 * the first DNS failure.
 */
export async function treeWalk(start: string, resolver: Resolver): Promise<TreeWalkResult> {
  return treeWalkNow(start, resolver);
}

/**
 * `treeWalk`, as a plain value while every answer is held (`resolveNow`), and a promise from the first
 * query that must wait: the same queries, one after the other, in the same order.
 */
export function treeWalkNow(start: string, resolver: Resolver): Now<TreeWalkResult> {
  return walkFrom(treeWalkTargets(start), 0, pslOrganizationalDomain(start), [], resolver);
}

/**
 * The walk from `targets[first]` on, `steps` holding those before. A loop while answers are held; at
 * the first that must wait, the rest of the walk continues from that answer's promise.
 */
function walkFrom(targets: readonly string[], first: number, registrable: string, steps: TreeWalkStep[], resolver: Resolver): Now<TreeWalkResult> {
  for (let index = first; index < targets.length; index++) {
    const domain = targets[index] as string;
    const name = `${DMARC_LABEL}.${domain}`;
    const aboveRegistrable = !isAtOrBelow(domain, registrable);
    const answer = resolveNow(resolver, name, 'TXT');
    if (answer instanceof Promise) {
      return answer.then((known) => takeStep(dmarcStep(domain, name, known, aboveRegistrable), steps) ?? walkFrom(targets, index + 1, registrable, steps, resolver));
    }
    const end = takeStep(dmarcStep(domain, name, answer, aboveRegistrable), steps);
    if (end) return end;
  }
  return { steps };
}

/** Adds one step to `steps`; the walk's result when that step ends it, undefined when it goes on. */
function takeStep(step: { step: TreeWalkStep; failure?: DmarcFailedQuery }, steps: TreeWalkStep[]): TreeWalkResult | undefined {
  steps.push(step.step);
  if (step.failure) return { steps, failure: step.failure };
  // RFC 9989 §4.10 steps 2 and 6: a single record with psd=n or psd=y ends the walk.
  if (step.step.outcome === 'record' && step.step.record && step.step.record.psd !== 'u') return { steps };
  return undefined;
}

/**
 * What one tree-walk query's answer says. `aboveRegistrable`: `domain` is a public suffix above the
 * registrable domain (`test`, `co.uk`), where only a public suffix operator could publish (RFC 9091 psd=y).
 */
function dmarcStep(domain: string, name: string, answer: DnsAnswer<'TXT'>, aboveRegistrable: boolean): { step: TreeWalkStep; failure?: DmarcFailedQuery } {
  // Steps are written out field by field: `{ ...base, … }` costs about 1 µs on Node 20 (V8 11.3).
  const step = (outcome: TreeWalkStep['outcome']): TreeWalkStep => ({
    domain,
    name,
    answer: answer.kind,
    record: null,
    warnings: [],
    dmarcRecords: 0,
    ignored: [],
    outcome,
  });
  // REFUSED for a public suffix, from a server that answered for the registrable domain (the walk
  // reaches the suffix last), is a server that does not serve that part of the tree: an authoritative
  // server given only the owner's zones, as in a test bed. It has no record to give there, so the step
  // reads as none (kept visible: `answer: 'error'`). Any other failure, and REFUSED at or below the
  // registrable domain, stops the walk.
  if (answer.kind === 'error' && answer.reason === 'refused' && aboveRegistrable) return { step: step('none') };
  if (answer.kind === 'error') {
    // A failure is never "no record": the walk stops and the discovery is a temperror.
    const failure: DmarcFailedQuery = { name, type: 'TXT', reason: answer.reason, ...(answer.detail ? { detail: answer.detail } : {}) };
    return { step: step('error'), failure };
  }
  const cnames = answer.cnames && answer.cnames.length > 0 ? answer.cnames : undefined;
  if (answer.kind !== 'records') {
    const none = step('none');
    if (cnames) none.cnames = cnames;
    return { step: none };
  }

  const ignored: TreeWalkStep['ignored'] = [];
  const parsed: { record: DmarcRecord; warnings: DmarcWarning[] }[] = [];
  for (const strings of answer.records) {
    const result = parseDmarcRecordCached(strings);
    // RFC 9989 §4.10 step 2: records that do not start with v=DMARC1 are discarded.
    if (result.kind === 'not-dmarc') ignored.push({ raw: result.raw, reason: result.reason });
    else parsed.push({ record: result.record, warnings: result.warnings });
  }
  const single = parsed.length === 1 ? parsed[0] : undefined;
  // RFC 9989 §4.10 step 2, RFC 7489 §6.6.3 step 5: several DMARC records at one name are all discarded.
  const found = step(single ? 'record' : parsed.length > 1 ? 'multiple' : 'none');
  found.record = single?.record ?? null;
  found.warnings = single?.warnings ?? [];
  found.dmarcRecords = parsed.length;
  found.ignored = ignored;
  if (cnames) found.cnames = cnames;
  return { step: found };
}

/**
 * The RFC 9989 §4.10.2 organizational domain of any name (for example an SPF or DKIM domain being
 * aligned), by tree walk. A DNS failure gives `temperror`, with the best answer from what was seen.
 */
export async function findOrganizationalDomain(name: string, resolver: Resolver): Promise<OrganizationalDomainResult> {
  return findOrganizationalDomainNow(name, resolver);
}

/** `findOrganizationalDomain`, as a plain value when every answer is held (see `treeWalkNow`). */
export function findOrganizationalDomainNow(name: string, resolver: Resolver): Now<OrganizationalDomainResult> {
  const start = canonicalName(name);
  const walk = treeWalkNow(start, resolver);
  // Not thenNow: a held walk then allocates no closure.
  return walk instanceof Promise ? walk.then((known) => organizationalDomainOf(start, known)) : organizationalDomainOf(start, walk);
}

function organizationalDomainOf(start: string, walk: TreeWalkResult): OrganizationalDomainResult {
  const organizationalDomain = selectOrganizationalDomain(start, walkRecords(walk.steps));
  const queries = walk.steps.map((step) => step.name);
  if (walk.failure) return { status: 'temperror', organizationalDomain, queries, walk: walk.steps, failedQuery: walk.failure };
  return { status: 'ok', organizationalDomain, queries, walk: walk.steps };
}

function walkRecords(steps: readonly TreeWalkStep[]) {
  // A loop, not flatMap: this runs for every check, and flatMap allocates an array per step.
  const records: { domain: string; psd: DmarcRecord['psd'] }[] = [];
  for (const step of steps) if (step.outcome === 'record' && step.record) records.push({ domain: step.domain, psd: step.record.psd });
  return records;
}

/**
 * RFC 9989 §4.5: a policy is published at `_dmarc.<domain name>`; an IP literal ("192.0.2.1",
 * "[2001:db8::1]") is not a domain and is refused before any query ("_dmarc.192.0.2.1" would be a
 * lookup in a reverse-looking name nobody publishes under).
 */
function ipLiteralProblem(domain: string): string | null {
  const bare = domain.startsWith('[') && domain.endsWith(']') ? domain.slice(1, -1) : domain;
  // Only text with a colon (IPv6) or ending in a digit (IPv4) can be an address: a domain name,
  // nearly always, skips `isIP`, whose IPv6 pattern ran on every check's name.
  const last = bare.charCodeAt(bare.length - 1);
  if (!bare.includes(':') && !(last >= 0x30 && last <= 0x39)) return null;
  return isIP(bare) === 0 ? null : `"${domain}" is an IP address, not a domain name; DMARC policies are published for domain names`;
}

/**
 * Discovers the DMARC policy record that applies to `name` (RFC 9989 §4.10.1): the record at the name
 * itself, else the one at its organizational domain (found by the §4.10 tree walk), else the one at
 * its public suffix domain (a record with psd=y). The walk always runs, so the organizational domain
 * is reported too, next to the RFC 7489 one from the public suffix list.
 *
 * Choices where the specifications leave room:
 * - Several DMARC records at the name itself give `multiple` with no policy, as RFC 7489 §6.6.3
 *   requires; RFC 9989 §4.10 would discard them and keep walking. The finding names the record such a
 *   receiver might use instead.
 * - Any failed query makes the whole discovery a `temperror`.
 * - An IP literal is refused like a name no query can carry (`invalid-name`), before any query.
 */
export async function discoverDmarc(name: string, resolver: Resolver): Promise<DmarcDiscovery> {
  return discoverDmarcNow(name, resolver);
}

/**
 * `discoverDmarc`, as a plain value when every answer is held (`resolveNow`), a promise only when a
 * query must wait. The engine's warm checks call this one.
 */
export function discoverDmarcNow(name: string, resolver: Resolver): Now<DmarcDiscovery> {
  const domain = canonicalName(name);
  const problem = domain === '' ? 'the root has no DMARC record' : ipLiteralProblem(domain) ?? dnsNameProblem(domain);
  // A name that cannot be queried gives no answer at all; report it like a failed query, never as "none".
  const walk: Now<TreeWalkResult> = problem
    ? { steps: [], failure: { name: `${DMARC_LABEL}.${domain}`, type: 'TXT', reason: 'invalid-name', detail: problem } }
    : treeWalkNow(domain, resolver);
  // Not thenNow: a held walk then allocates no closure.
  return walk instanceof Promise ? walk.then((known) => discoveryOf(domain, known)) : discoveryOf(domain, walk);
}

/** The discovery for `domain` from its tree walk (RFC 9989 §4.10.1; see `discoverDmarc`). */
function discoveryOf(domain: string, walk: TreeWalkResult): DmarcDiscovery {
  const psl = pslOrganizationalDomain(domain);
  const steps = walk.steps;
  const queries = steps.map((step) => step.name);
  const organizationalDomain = selectOrganizationalDomain(domain, walkRecords(steps));
  // The outcomes are written out in full: `{ ...base, … }` costs about 1 µs on Node 20 (V8 11.3).
  const noPolicy = (status: 'temperror' | 'none' | 'multiple', findings: Finding[], failedQuery?: DmarcFailedQuery): DmarcDiscovery => {
    const outcome: DmarcDiscovery = {
      name: domain,
      organizationalDomain,
      pslOrganizationalDomain: psl,
      queries,
      walk: steps,
      record: null,
      rawRecord: null,
      foundAt: null,
      policyDomain: null,
      policySource: null,
      status,
      findings,
    };
    if (failedQuery) outcome.failedQuery = failedQuery;
    return outcome;
  };

  if (walk.failure) {
    const failed = walk.failure;
    const consequence =
      failed.reason === 'invalid-name'
        ? 'We cannot look up a DMARC policy for a name DNS does not allow; check how the domain is spelled.'
        : 'We cannot tell whether a DMARC policy applies to this domain. A failed lookup is not the same as a missing record; check again later.';
    return noPolicy('temperror', [temperrorFinding(failed.name, 'TXT', failed.reason, failed.detail, consequence)], failed);
  }

  const findings: Finding[] = [];
  const author = steps[0];
  const policyStep = choosePolicyStep(domain, organizationalDomain, steps);

  for (const step of steps) {
    if (step.outcome === 'multiple') {
      const fallback = step === author && policyStep === undefined ? fallbackName(domain, organizationalDomain, steps) : null;
      findings.push(multipleRecordsFinding(step.name, step.dmarcRecords, fallback));
    }
    // Look-alike records only where the owner publishes: at or below the registered domain.
    if (isAtOrBelow(step.domain, psl)) {
      for (const other of step.ignored) {
        const reason = lookalikeReason(other.raw, other.reason);
        if (reason) findings.push(lookalikeFinding(step.name, other.raw, reason));
      }
    }
  }

  const anyRecord = steps.some((step) => step.outcome === 'record');
  if (anyRecord && organizationalDomain !== psl) findings.push(orgDomainMismatchFinding(domain, organizationalDomain, psl));

  if (!policyStep || !policyStep.record) {
    // Several records at the name, or at the name whose record would have applied: no policy either way.
    const multiple = steps.some((step) => step.outcome === 'multiple');
    return noPolicy(multiple ? 'multiple' : 'none', findings);
  }

  const record = policyStep.record;
  findings.unshift(...recordFindings(record, policyStep.warnings, policyStep.name));
  if (policyStep === author) findings.push(...subdomainTagFindings(domain, record, policyStep.name, organizationalDomain, psl));

  const policySource: PolicySource =
    policyStep === author ? 'author-domain' : policyStep.domain === organizationalDomain ? 'organizational-domain' : 'public-suffix-domain';
  return {
    name: domain,
    organizationalDomain,
    pslOrganizationalDomain: psl,
    queries,
    walk: steps,
    status: 'found',
    record,
    rawRecord: record.raw,
    foundAt: policyStep.name,
    policyDomain: policyStep.domain,
    policySource,
    findings,
  };
}

/**
 * RFC 9989 §4.10.1: the author domain's own record; else the organizational domain's; else the public
 * suffix domain's (a psd=y record). Several records at the author domain mean no policy (RFC 7489
 * §6.6.3 step 5; see `discoverDmarc`).
 */
function choosePolicyStep(domain: string, organizationalDomain: string, steps: readonly TreeWalkStep[]): TreeWalkStep | undefined {
  const author = steps[0];
  if (!author || author.outcome === 'multiple') return undefined;
  if (author.outcome === 'record') return author;
  const org = steps.find((step) => step.domain === organizationalDomain && step.outcome === 'record');
  if (org && organizationalDomain !== domain) return org;
  return steps.find((step) => step.domain !== domain && step.outcome === 'record' && step.record?.psd === 'y');
}

/** Where an RFC 9989 receiver would look when the author's own records are discarded as duplicates. */
function fallbackName(domain: string, organizationalDomain: string, steps: readonly TreeWalkStep[]): string | null {
  const rest = steps.slice(1);
  const step =
    rest.find((candidate) => candidate.domain === organizationalDomain && candidate.outcome === 'record') ??
    rest.find((candidate) => candidate.outcome === 'record' && candidate.record?.psd === 'y');
  return step && step.domain !== domain ? step.name : null;
}

/**
 * sp and np in a record at a name that is not its organizational domain have no effect: names below
 * it take their policy from the organizational domain's record (RFC 9989 §4.7 `sp`, §4.10.1; under
 * RFC 7489 §6.6.3 from the public-suffix-list organizational domain).
 */
function subdomainTagFindings(domain: string, record: DmarcRecord, location: string, walkOrg: string, psl: string): Finding[] {
  const ignoredBy9989 = domain !== walkOrg;
  const ignoredBy7489 = domain !== psl;
  const tags: string[] = [];
  if (record.published.sp && (ignoredBy9989 || ignoredBy7489)) tags.push(`sp=${record.published.sp}`);
  if (record.published.np && ignoredBy9989) tags.push(`np=${record.published.np}`); // RFC 7489 has no np at all
  if (tags.length === 0) return [];
  const ignoredBy = ignoredBy9989 && ignoredBy7489 ? 'all' : ignoredBy9989 ? 'rfc9989' : 'rfc7489';
  return [spOnSubdomainFinding(location, tags.join(' and '), ignoredBy, ignoredBy9989 ? walkOrg : psl)];
}

/** Why a discarded TXT record that mentions DMARC1 is ignored, or null when it is plainly something else. */
function lookalikeReason(raw: string, reason: NotDmarcReason): string | null {
  if (!/dmarc1/i.test(raw)) return null;
  switch (reason) {
    case 'bad-version':
      return /^[vV][ \t]*=[ \t]*DMARC1/.test(raw) ? 'the version is followed by something other than ";"' : 'the version value must be exactly "DMARC1" (upper case)';
    case 'no-separator':
      return 'the version is not followed by ";"';
    case 'version-not-first':
      return /^[ \t]/.test(raw) ? 'it starts with whitespace' : 'v=DMARC1 is not the first tag';
    case 'no-version':
    case 'empty':
      return 'it does not start with v=DMARC1';
  }
}
