/**
 * Probing, cheap first. One MX query per candidate (RFC 5321 §5.1: what a sender asks first); an
 * NXDOMAIN ends it there. Only for a name that exists: its SPF (apex TXT, RFC 7208 §4.4), its DMARC
 * (`_dmarc` TXT, RFC 9989 §4.10), its name servers (for the "probably yours" hint), and A and AAAA
 * only when it has no MX (the implicit MX, RFC 5321 §5.1). A failed lookup is `unknown`, never
 * absent; an NXDOMAIN is "not resolving", never "available" (a registered name on hold has no DNS).
 */
import { getPublicSuffix } from 'tldts';
import { isAtOrBelow } from '../dns/name.js';
import type { DnsAnswer, MxData, RecordType, Resolver } from '../dns/types.js';
import { parseDmarcRecord } from '../dmarc/parse.js';
import { providerForMxHost } from '../mx/providers.js';
import { isSpfRecordText, parseSpfRecord } from '../spf/parse.js';
import type { LookalikeDmarc, LookalikeMx, LookalikeSpf } from './types.js';

/** Lookups a default run may make: one per candidate (500 at most) plus five for each that exists, and the wildcard tests. */
export const DEFAULT_LOOKALIKE_MAX_QUERIES = 1500;
/** Lookups a deep run may make (2,500 candidates at most). */
export const DEEP_LOOKALIKE_MAX_QUERIES = 6000;
/** Wall time of a default run's DNS, in milliseconds. */
export const DEFAULT_LOOKALIKE_DEADLINE_MS = 30_000;
/** Wall time of a deep run's DNS, in milliseconds. */
export const DEEP_LOOKALIKE_DEADLINE_MS = 120_000;
/** Candidates probed at once (each waits on at most three lookups at a time after its first). */
export const DEFAULT_PROBE_CONCURRENCY = 16;

/** What the original publishes that a defensive registration would share. */
export interface OriginalFacts {
  domain: string;
  mxHosts: string[];
  nameServers: string[];
}

/** What the probe of one candidate found. */
export interface ProbeFacts {
  /** `no` on NXDOMAIN, `unknown` when the MX lookup failed. */
  exists: 'yes' | 'no' | 'unknown';
  /** Why `unknown` (the failed lookup, in words). */
  failure: string | null;
  mx: LookalikeMx;
  spf: LookalikeSpf;
  dmarc: LookalikeDmarc;
  nameServers: string[];
  /** The MX answer, to compare with the suffix's wildcard answer. */
  mxAnswer: DnsAnswer<'MX'>;
}

/** A lookup's failure in words. */
function failureOf(name: string, type: RecordType, answer: DnsAnswer & { kind: 'error' }): string {
  return `${type} ${name}: ${answer.reason}${answer.detail ? ` (${answer.detail})` : ''}`;
}

/** The original's MX hosts and name servers (two lookups); failures leave a list empty. */
export async function probeOriginal(resolver: Resolver, domain: string): Promise<OriginalFacts> {
  const [mx, ns] = await Promise.all([resolver.resolve(domain, 'MX'), resolver.resolve(domain, 'NS')]);
  return {
    domain,
    mxHosts: mx.kind === 'records' ? mx.records.map((r) => r.exchange).filter((h) => h !== '') : [],
    nameServers: ns.kind === 'records' ? ns.records : [],
  };
}

/** Probes one candidate, cheap first. Never rejects for a DNS condition. */
export async function probeCandidate(resolver: Resolver, domain: string): Promise<ProbeFacts> {
  const mxAnswer = await resolver.resolve(domain, 'MX');
  const unknownSpf: LookalikeSpf = { status: 'unknown', record: null };
  const unknownDmarc: LookalikeDmarc = { status: 'unknown', record: null };
  if (mxAnswer.kind === 'nxdomain') {
    return { exists: 'no', failure: null, mx: { status: 'none', hosts: [] }, spf: { status: 'none', record: null }, dmarc: { status: 'absent', record: null }, nameServers: [], mxAnswer };
  }
  if (mxAnswer.kind === 'error') {
    return { exists: 'unknown', failure: failureOf(domain, 'MX', mxAnswer), mx: { status: 'unknown', hosts: [] }, spf: unknownSpf, dmarc: unknownDmarc, nameServers: [], mxAnswer };
  }
  // The name exists (records or NODATA).
  const hasMx = mxAnswer.kind === 'records';
  const [txt, dmarcTxt, ns, a, aaaa] = await Promise.all([
    resolver.resolve(domain, 'TXT'),
    resolver.resolve(`_dmarc.${domain}`, 'TXT'),
    resolver.resolve(domain, 'NS'),
    hasMx ? undefined : resolver.resolve(domain, 'A'),
    hasMx ? undefined : resolver.resolve(domain, 'AAAA'),
  ]);
  const failures: string[] = [];
  const mx = mailOf(mxAnswer, a, aaaa);
  if (mx.status === 'unknown') {
    for (const [type, answer] of [['A', a], ['AAAA', aaaa]] as const) if (answer?.kind === 'error') failures.push(failureOf(domain, type, answer));
  }
  const spf = spfOf(txt);
  if (txt.kind === 'error') failures.push(failureOf(domain, 'TXT', txt));
  const dmarc = dmarcOf(dmarcTxt);
  if (dmarcTxt.kind === 'error') failures.push(failureOf(`_dmarc.${domain}`, 'TXT', dmarcTxt));
  return {
    exists: 'yes',
    failure: failures.length > 0 ? failures.join('; ') : null,
    mx,
    spf,
    dmarc,
    nameServers: ns.kind === 'records' ? ns.records : [],
    mxAnswer,
  };
}

/** RFC 7505 null MX: one record, preference 0, exchange the root. */
function isNullMx(records: readonly MxData[]): boolean {
  return records.length === 1 && records[0]!.exchange === '';
}

function mailOf(mx: DnsAnswer<'MX'>, a: DnsAnswer<'A'> | undefined, aaaa: DnsAnswer<'AAAA'> | undefined): LookalikeMx {
  if (mx.kind === 'records') {
    if (isNullMx(mx.records)) return { status: 'null', hosts: [] };
    // RFC 7505 §3: a null MX among other MX records is an error; the others still receive mail.
    return { status: 'receives', hosts: [...new Set(mx.records.map((r) => r.exchange).filter((h) => h !== ''))] };
  }
  const addresses = [...(a?.kind === 'records' ? a.records : []), ...(aaaa?.kind === 'records' ? aaaa.records : [])];
  // RFC 5321 §5.1: no MX, but an address: mail goes there (the implicit MX).
  if (addresses.length > 0) return { status: 'implicit', hosts: addresses };
  if (a?.kind === 'error' || aaaa?.kind === 'error') return { status: 'unknown', hosts: [] };
  return { status: 'none', hosts: [] };
}

/** The name's own SPF: whether any term can give `pass` (RFC 7208 §4.6.2: a `+` mechanism matched, or `redirect`). */
export function spfOf(txt: DnsAnswer<'TXT'>): LookalikeSpf {
  if (txt.kind === 'error') return { status: 'unknown', record: null };
  if (txt.kind !== 'records') return { status: 'none', record: null };
  const records = txt.records.map((strings) => strings.join('')).filter(isSpfRecordText);
  if (records.length === 0) return { status: 'none', record: null };
  // RFC 7208 §4.5: more than one record is a permerror.
  if (records.length > 1) return { status: 'invalid', record: records[0]! };
  const record = records[0]!;
  const parsed = parseSpfRecord(record);
  if (!parsed.ok) return { status: 'invalid', record };
  const passes = parsed.record.directives.some((d) => d.qualifier === '+') || (!parsed.record.hasAll && parsed.record.redirect !== null);
  return { status: passes ? 'authorises' : 'fail-all', record };
}

/** The name's DMARC policy (RFC 9989 §4.10: one record at `_dmarc`; none or several ⇒ no policy). */
export function dmarcOf(txt: DnsAnswer<'TXT'>): LookalikeDmarc {
  if (txt.kind === 'error') return { status: 'unknown', record: null };
  if (txt.kind !== 'records') return { status: 'absent', record: null };
  const parsed = txt.records.map((strings) => parseDmarcRecord(strings)).filter((p) => p.kind === 'record');
  if (parsed.length !== 1) return { status: 'absent', record: null };
  const record = parsed[0]!.record;
  return { status: record.policy ?? 'none', record: record.raw };
}

/**
 * Whether a lookalike looks like the original's own defensive registration: the same set of name
 * servers (a DNS host gives each account its own pair), a name server or an MX host inside the
 * original's domain, or an MX host in common that is not a shared mail provider's (every customer
 * of a large provider has the same MX hosts).
 */
export function sharesWithOriginal(original: OriginalFacts, facts: ProbeFacts): boolean {
  const sameSet = (a: readonly string[], b: readonly string[]): boolean => a.length > 0 && a.length === b.length && a.every((h) => b.includes(h));
  if (sameSet(original.nameServers, facts.nameServers)) return true;
  if (facts.nameServers.some((h) => isAtOrBelow(h, original.domain))) return true;
  if (facts.mx.status !== 'receives') return false;
  return facts.mx.hosts.some((h) => isAtOrBelow(h, original.domain) || (original.mxHosts.includes(h) && providerForMxHost(h) === null));
}

/** The public suffix a candidate's wildcard test is asked under (ICANN section). */
export function suffixOf(domain: string): string {
  return getPublicSuffix(domain, { allowPrivateDomains: false }) ?? domain.slice(domain.lastIndexOf('.') + 1);
}

/** Whether two MX answers are the same (a name answered by the suffix's wildcard gets the wildcard's answer). */
export function sameMxAnswer(a: DnsAnswer<'MX'>, b: DnsAnswer<'MX'>): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind !== 'records' || b.kind !== 'records') return true;
  const key = (r: MxData): string => `${r.preference} ${r.exchange}`;
  const left = a.records.map(key).sort();
  const right = b.records.map(key).sort();
  return left.length === right.length && left.every((k, i) => k === right[i]);
}
