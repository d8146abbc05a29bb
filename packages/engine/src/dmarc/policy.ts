import { canonicalName } from '../dns/name.js';
import { resolveNow, thenNow, type DnsAnswer, type DnsErrorReason, type Now, type RecordType, type Resolver } from '../dns/types.js';
import type { Finding } from '../findings.js';
import type { DmarcDiscovery } from './discover.js';
import { temperrorFinding } from './findings.js';
import type { DmarcPolicy, DmarcRecord } from './types.js';

/**
 * The record types asked, in order, to tell whether a name exists (RFC 9989 §3.2.13 and App. A.4:
 * NXDOMAIN per RFC 8020). One definite answer settles it: NXDOMAIN means the name and everything below
 * it do not exist; records or NODATA mean it exists. The next type is asked only after a failure.
 */
export const EXISTENCE_QUERY_TYPES: readonly RecordType[] = ['A', 'AAAA', 'MX'];

/** Which policy tag governs the name checked (RFC 9989 §4.10.1). */
export type PolicyTag = 'p' | 'sp' | 'np';

/** One existence query and what it answered. */
export interface ExistenceQuery {
  name: string;
  type: RecordType;
  answer: 'records' | 'nodata' | 'nxdomain' | 'error';
  reason?: DnsErrorReason;
  /** What the resolver said of a failed lookup (e.g. that the DNS server cannot be reached). */
  detail?: string;
}

/** The policy a receiver applies to failing mail from the exact name checked. */
export interface EffectivePolicy {
  /** The policy applied to failing mail, after `t=y` lowers it one level; null when no DMARC applies. */
  policy: DmarcPolicy | null;
  /** The policy as published for this name, before `t=y`. */
  publishedPolicy: DmarcPolicy | null;
  /**
   * The rule that chose it: `p` for a record at the name itself, `sp` for an existing subdomain of the
   * policy domain, `np` for a non-existent one (its value falls back to sp, then p, when np is absent).
   */
  source: PolicyTag | null;
  /** The record has `t=y` (RFC 9989 §4.7). */
  testing: boolean;
  /** Legacy `pct` (RFC 7489 §6.3), null when absent. */
  pct: number | null;
  /** A legacy `pct` under 100 (0 included): RFC 7489 receivers apply the policy to part of the mail only. */
  partial: boolean;
  /** Whether the name exists (RFC 8020); null when not asked or the lookups failed. */
  nameExists: boolean | null;
  /** The applied policy (after `t=y`) for existing subdomains of the name checked. */
  subdomainPolicy: DmarcPolicy | null;
  /** The applied policy (after `t=y`) for non-existent subdomains of the name checked. */
  nonExistentSubdomainPolicy: DmarcPolicy | null;
  /** The record is treated as p=none because p (or sp/np) is unusable while a valid rua exists. */
  asNone: boolean;
  /** The domain whose record supplied the policy. */
  policyDomain: string | null;
  /**
   * The tag each value was read from as published (RFC 9989 §4.7: an absent `sp` is `p`'s value, an
   * absent `np` is `sp`'s, then `p`'s): for the name itself, its existing and its non-existent subdomains.
   */
  sources: PolicySources;
  /** `aspf` of the record (RFC 7489 §3.1.2): relaxed unless the record says strict. */
  spfAlignment: 'r' | 's';
  existenceQueries: ExistenceQuery[];
  findings: Finding[];
}

/** Where each policy value came from, as published. */
export interface PolicySources {
  applied: PolicyTag | null;
  subdomain: 'p' | 'sp' | null;
  nonExistent: PolicyTag | null;
}

/** RFC 9989 §4.7: `sp` defaults to `p`; `np` to `sp`, then `p`. The tag a value was really read from. */
export function sourceOf(tag: PolicyTag, record: DmarcRecord): PolicyTag {
  if (tag === 'np' && record.published.np !== null) return 'np';
  if (tag !== 'p' && record.published.sp !== null) return 'sp';
  return 'p';
}

/** RFC 9989 §4.7 `t=y`: one level lower: reject → quarantine, quarantine → none; none stays none. */
export function lowerOneLevel(policy: DmarcPolicy): DmarcPolicy {
  return policy === 'reject' ? 'quarantine' : 'none';
}

function applied(policy: DmarcPolicy | null, record: DmarcRecord): DmarcPolicy | null {
  return policy !== null && record.testing ? lowerOneLevel(policy) : policy;
}

/**
 * The DMARC policy for the exact `name` checked, from its discovery (RFC 9989 §4.10.1):
 * `p` when the record sits at the name itself; otherwise `sp` when the name exists and `np` when it does
 * not, existence decided by NXDOMAIN (RFC 8020) on an A, then AAAA, then MX query. When every existence
 * query fails we assume the name exists (the `sp` rule) and say so in a finding. `t=y` lowers the
 * result one level; a legacy `pct` under 100 marks it `partial`.
 *
 * The subdomain policies are those names below `name` would get: from the same record when it is the
 * organizational domain's or comes from above; from the organizational domain's record when `name`
 * has its own record but is not the organizational domain (its own sp/np do not apply, RFC 9989 §4.7).
 */
export async function effectivePolicy(name: string, discovery: DmarcDiscovery, resolver: Resolver): Promise<EffectivePolicy> {
  return effectivePolicyNow(name, discovery, resolver);
}

/**
 * `effectivePolicy`, as a plain value when the existence answers are held (or not needed), a promise
 * only when a query must wait. The engine's warm checks call this one.
 */
export function effectivePolicyNow(name: string, discovery: DmarcDiscovery, resolver: Resolver): Now<EffectivePolicy> {
  const domain = canonicalName(name);
  const record = discovery.status === 'found' ? discovery.record : null;
  const none: EffectivePolicy = {
    policy: null,
    publishedPolicy: null,
    source: null,
    testing: false,
    pct: null,
    partial: false,
    nameExists: null,
    subdomainPolicy: null,
    nonExistentSubdomainPolicy: null,
    asNone: false,
    policyDomain: null,
    sources: { applied: null, subdomain: null, nonExistent: null },
    spfAlignment: record?.aspf ?? 'r',
    existenceQueries: [],
    findings: [],
  };
  if (!record) return none;
  const legacy = { testing: record.testing, pct: record.pct, partial: record.pct !== null && record.pct < 100, policyDomain: discovery.policyDomain };
  // RFC 9989 §4.10.1: a record whose policy is unusable and that has no valid rua means no DMARC.
  // (Object.assign, not `{ ...none, … }`: a literal that starts with a spread and adds properties costs
  // about 1 µs a property on Node 20, V8 11.3.)
  if (record.outcome === 'no-dmarc') return Object.assign(none, legacy);

  const subdomainRecord = recordForSubdomains(domain, discovery) ?? record;
  const subdomains = {
    subdomainPolicy: applied(subdomainRecord.subdomainPolicy, subdomainRecord),
    nonExistentSubdomainPolicy: applied(subdomainRecord.nonExistentSubdomainPolicy, subdomainRecord),
    asNone: record.outcome === 'as-none',
  };
  const sourcesFor = (tag: PolicyTag): PolicySources => ({
    applied: sourceOf(tag, record),
    subdomain: sourceOf('sp', subdomainRecord) as 'p' | 'sp',
    nonExistent: sourceOf('np', subdomainRecord),
  });

  if (discovery.policyDomain === domain) {
    // RFC 9989 §4.10.1: the record at the name itself supplies p. A record below the name (at _dmarc)
    // also shows the name exists: NXDOMAIN would cover everything below it (RFC 8020).
    return Object.assign(none, legacy, subdomains, {
      policy: applied(record.policy, record),
      publishedPolicy: record.policy,
      source: 'p' as const,
      sources: sourcesFor('p'),
      nameExists: true,
    });
  }

  // RFC 9989 §4.10.1: sp for an existing subdomain, np for a non-existent one.
  return thenNow(nameExistsNow(domain, resolver), (existence) => {
    const findings: Finding[] = [];
    if (existence.exists === null) {
      const last = existence.queries.at(-1);
      findings.push(
        temperrorFinding(
          domain,
          EXISTENCE_QUERY_TYPES.join('/'),
          last?.reason ?? 'servfail',
          undefined,
          `We could not tell whether ${domain} exists, so we assumed it does and used the subdomain policy (sp) of ${discovery.foundAt}. If it does not exist, receivers that follow RFC 9989 apply np instead.`,
        ),
      );
    }
    const source: PolicyTag = existence.exists === false ? 'np' : 'sp';
    const publishedPolicy = source === 'np' ? record.nonExistentSubdomainPolicy : record.subdomainPolicy;
    return Object.assign(none, legacy, subdomains, {
      policy: applied(publishedPolicy, record),
      publishedPolicy,
      source,
      sources: sourcesFor(source),
      nameExists: existence.exists,
      existenceQueries: existence.queries,
      findings,
    });
  });
}

/**
 * The record names below `domain` take their policy from: the organizational domain's record when
 * `domain` has its own record but is not the organizational domain; otherwise the discovered record.
 */
function recordForSubdomains(domain: string, discovery: DmarcDiscovery): DmarcRecord | null {
  if (discovery.policySource !== 'author-domain' || discovery.organizationalDomain === domain) return discovery.record;
  const org = discovery.walk.find((step) => step.domain === discovery.organizationalDomain && step.outcome === 'record');
  return org?.record ?? discovery.record;
}

/** Whether a name exists, and the queries that told (see `nameExists`). */
export interface NameExistence {
  exists: boolean | null;
  queries: ExistenceQuery[];
}

/**
 * Whether `name` exists (RFC 8020: NXDOMAIN means it does not). Asks A, then AAAA, then MX, stopping at
 * the first definite answer; `exists: null` when all of them fail, or at the first that times out.
 */
export async function nameExists(name: string, resolver: Resolver): Promise<NameExistence> {
  return nameExistsNow(name, resolver);
}

/**
 * `nameExists`, as a plain value while the answers are held, and a promise from the first query that
 * must wait: the same queries, one after the other, in the same order.
 */
export function nameExistsNow(name: string, resolver: Resolver): Now<NameExistence> {
  return existenceFrom(name, 0, [], resolver);
}

/** The existence queries from `EXISTENCE_QUERY_TYPES[first]` on, `queries` holding those before. */
function existenceFrom(name: string, first: number, queries: ExistenceQuery[], resolver: Resolver): Now<NameExistence> {
  for (let index = first; index < EXISTENCE_QUERY_TYPES.length; index++) {
    const type = EXISTENCE_QUERY_TYPES[index] as RecordType;
    const answer = resolveNow(resolver, name, type);
    if (answer instanceof Promise) {
      return answer.then((known) => existenceAnswer(name, type, known, queries) ?? existenceFrom(name, index + 1, queries, resolver));
    }
    const settled = existenceAnswer(name, type, answer, queries);
    if (settled) return settled;
  }
  return { exists: null, queries };
}

/** Notes one existence answer in `queries`; the outcome when it settles the question, undefined to ask on. */
function existenceAnswer(name: string, type: RecordType, answer: DnsAnswer, queries: ExistenceQuery[]): NameExistence | undefined {
  if (answer.kind === 'error') {
    queries.push({ name, type, answer: 'error', reason: answer.reason, ...(answer.detail !== undefined ? { detail: answer.detail } : {}) });
    // A server that did not answer in time will not answer the next type either: asking on would
    // multiply the configured wait by the number of types before the check can say so.
    if (answer.reason === 'timeout' || answer.reason === 'budget') return { exists: null, queries };
    return undefined;
  }
  queries.push({ name, type, answer: answer.kind });
  return { exists: answer.kind !== 'nxdomain', queries };
}
