import { canonicalName, dnsNameProblem, MAX_NAME_OCTETS } from '../dns/name.js';
import { resolveNow, thenNow, type DnsAnswer, type DnsErrorReason, type Now, type Resolver } from '../dns/types.js';
import type { Finding } from '../findings.js';
import { destinationUncheckedFinding, destinationUnverifiedFinding } from './findings.js';
import { pslOrganizationalDomain } from './orgdomain.js';
import { parseDmarcRecordCached } from './parse.js';
import type { DmarcRecord } from './types.js';

/** RFC 7489 §7.1: the labels between the source domain and the destination host. */
export const REPORT_AUTHORIZATION_LABELS = '_report._dmarc';

/**
 * The state of one external report destination:
 * - `same-organization`: the destination shares the source's organizational domain; no check needed.
 * - `verified`: a TXT record starting with v=DMARC1 answers at `<source>._report._dmarc.<destination>`.
 * - `unverified`: no such record, so receivers drop reports to it (RFC 7489 §7.1 step 7).
 * - `error`: the lookup failed; we cannot tell (not the same as unverified).
 * - `not-checkable`: the URI has no host name to check.
 */
export type DestinationStatus = 'same-organization' | 'verified' | 'unverified' | 'error' | 'not-checkable';

/** One destination host and what we found about it. */
export interface ReportDestination {
  /** The destination host, e.g. `thirdparty.example.net`. */
  destination: string | null;
  /** The URIs that send to it, with the tag each came from. */
  uris: { tag: 'rua' | 'ruf'; uri: string }[];
  status: DestinationStatus;
  /** The authorization record name, e.g. `example.com._report._dmarc.thirdparty.example.net`. */
  recordName: string | null;
  /**
   * A TXT record with v=DMARC1 sits at the literal `*._report._dmarc.<destination>` name although the
   * exact query got none: the wildcard is shadowed by an existing name (RFC 4592 §2.2), so receivers,
   * which ask for the exact name, do not see it.
   */
  wildcardShadowed?: boolean;
  failure?: { name: string; type: 'TXT'; reason: DnsErrorReason; detail?: string };
}

/** The outcome of checking every external destination of a record. */
export interface ReportDestinationCheck {
  destinations: ReportDestination[];
  /** Every TXT name queried, in order. */
  queries: string[];
  findings: Finding[];
}

/**
 * Checks that every `rua`/`ruf` destination outside the source's organization has agreed to receive
 * its reports (RFC 7489 §7.1; the same procedure in RFC 9990/9991): a TXT record starting with
 * `v=DMARC1` at `<sourceDomain>._report._dmarc.<destination host>`. A wildcard
 * `*._report._dmarc.<destination>` answers that query through the DNS itself (RFC 4592); when the exact
 * query finds nothing we also ask the literal wildcard name, to explain a wildcard that is shadowed.
 *
 * `sourceDomain` is the domain the policy record was published for (`discovery.policyDomain`).
 * Organizations are compared by the RFC 7489 public-suffix-list organizational domain (ICANN section),
 * which keeps this check to one query per destination.
 */
export async function verifyReportDestinations(sourceDomain: string, record: DmarcRecord, resolver: Resolver): Promise<ReportDestinationCheck> {
  return verifyReportDestinationsNow(sourceDomain, record, resolver);
}

/**
 * `verifyReportDestinations`, as a plain value while every answer is held (`resolveNow`), and a promise
 * from the first query that must wait: the same queries, one after the other, in the same order.
 */
export function verifyReportDestinationsNow(sourceDomain: string, record: DmarcRecord, resolver: Resolver): Now<ReportDestinationCheck> {
  const source = canonicalName(sourceDomain);
  const byDestination = new Map<string | null, ReportDestination>();
  for (const [tag, uris] of [['rua', record.rua], ['ruf', record.ruf]] as const) {
    for (const uri of uris) {
      const destination = uri.domain;
      let entry = byDestination.get(destination);
      if (!entry) {
        entry = { destination, uris: [], status: 'not-checkable', recordName: null };
        byDestination.set(destination, entry);
      }
      entry.uris.push({ tag, uri: uri.uri });
    }
  }
  const check: DestinationCheck = { source, sourceOrg: pslOrganizationalDomain(source), resolver, queries: [], findings: [] };
  return destinationsFrom([...byDestination.values()], 0, check);
}

/** What the destination checks of one record share. */
interface DestinationCheck {
  source: string;
  sourceOrg: string;
  resolver: Resolver;
  /** Every TXT name queried, in order. */
  queries: string[];
  findings: Finding[];
}

/**
 * Checks `entries[first]` and those after it, one after the other: a loop while answers are held; at
 * the first that must wait, the rest continue from that destination's promise.
 */
function destinationsFrom(entries: ReportDestination[], first: number, check: DestinationCheck): Now<ReportDestinationCheck> {
  for (let index = first; index < entries.length; index++) {
    const pending = checkDestination(entries[index] as ReportDestination, check);
    if (pending instanceof Promise) return pending.then(() => destinationsFrom(entries, index + 1, check));
  }
  return { destinations: entries, queries: check.queries, findings: check.findings };
}

/** Checks one destination, setting its status; a promise only when a query must wait. */
function checkDestination(entry: ReportDestination, check: DestinationCheck): Now<void> {
  const destination = entry.destination;
  if (destination === null) return;
  if (pslOrganizationalDomain(destination) === check.sourceOrg) {
    entry.status = 'same-organization';
    return;
  }
  // RFC 7489 §7.1 steps 1-4: <source domain> "._report._dmarc." <destination host>.
  const recordName = `${check.source}.${REPORT_AUTHORIZATION_LABELS}.${destination}`;
  entry.recordName = recordName;
  if (dnsNameProblem(recordName)) {
    // The name is too long to query, so no receiver can confirm the destination either.
    entry.status = 'unverified';
    const note = `That name is longer than DNS allows (${MAX_NAME_OCTETS} octets), so no receiver can look it up; use a report address with a shorter domain.`;
    check.findings.push(destinationUnverifiedFinding(tagsOf(entry), destination, recordName, note));
    return;
  }
  check.queries.push(recordName);
  const exact = authorizationAt(recordName, check.resolver);
  // Not thenNow: a held answer then allocates no closure.
  return exact instanceof Promise
    ? exact.then((known) => afterExact(entry, destination, recordName, known, check))
    : afterExact(entry, destination, recordName, exact, check);
}

/** Settles a destination from its exact authorization answer; asks the literal wildcard name when it is absent. */
function afterExact(entry: ReportDestination, destination: string, recordName: string, exact: Authorization, check: DestinationCheck): Now<void> {
  if (exact.kind === 'error') {
    entry.status = 'error';
    entry.failure = { name: recordName, type: 'TXT', reason: exact.reason, ...(exact.detail ? { detail: exact.detail } : {}) };
    check.findings.push(destinationUncheckedFinding(destination, recordName, exact.reason, exact.detail));
    return;
  }
  if (exact.kind === 'authorized') {
    entry.status = 'verified';
    return;
  }
  entry.status = 'unverified';
  const wildcardName = `*.${REPORT_AUTHORIZATION_LABELS}.${destination}`;
  check.queries.push(wildcardName);
  return thenNow(authorizationAt(wildcardName, check.resolver), (wildcard) => {
    let note: string | undefined;
    if (wildcard.kind === 'authorized') {
      entry.wildcardShadowed = true;
      note = `A wildcard record at ${wildcardName} exists, but it does not answer for ${recordName} because that name, or one between them, exists in the DNS with other records (RFC 4592 §2.2).`;
    }
    check.findings.push(destinationUnverifiedFinding(tagsOf(entry), destination, recordName, note));
  });
}

function tagsOf(entry: ReportDestination): string {
  const tags = [...new Set(entry.uris.map((uri) => uri.tag))];
  return tags.join(' and ');
}

/** What one authorization query found. */
type Authorization = { kind: 'authorized' } | { kind: 'absent' } | { kind: 'error'; reason: DnsErrorReason; detail?: string };

/**
 * RFC 7489 §7.1 steps 5-8: the destination agrees when at least one TXT record at `name` parses as a
 * DMARC record (starts with v=DMARC1; `p` is not needed). Other TXT records are discarded. A plain
 * value when the answer is held.
 */
function authorizationAt(name: string, resolver: Resolver): Now<Authorization> {
  return thenNow(resolveNow(resolver, name, 'TXT'), authorizationOf);
}

function authorizationOf(answer: DnsAnswer<'TXT'>): Authorization {
  if (answer.kind === 'error') return { kind: 'error', reason: answer.reason, ...(answer.detail ? { detail: answer.detail } : {}) };
  if (answer.kind !== 'records') return ABSENT;
  const authorized = answer.records.some((strings) => parseDmarcRecordCached(strings).kind === 'record');
  return authorized ? AUTHORIZED : ABSENT;
}

// Read only, so shared: a held answer then allocates nothing.
const AUTHORIZED: Authorization = { kind: 'authorized' };
const ABSENT: Authorization = { kind: 'absent' };
