import { canonicalName, dnsNameProblem, MAX_NAME_OCTETS } from '../dns/name.js';
import { resolveNow, type DnsErrorReason, type Resolver } from '../dns/types.js';
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
  const source = canonicalName(sourceDomain);
  const sourceOrg = pslOrganizationalDomain(source);
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

  const queries: string[] = [];
  const findings: Finding[] = [];
  for (const entry of byDestination.values()) {
    const destination = entry.destination;
    if (destination === null) continue;
    if (pslOrganizationalDomain(destination) === sourceOrg) {
      entry.status = 'same-organization';
      continue;
    }
    // RFC 7489 §7.1 steps 1-4: <source domain> "._report._dmarc." <destination host>.
    const recordName = `${source}.${REPORT_AUTHORIZATION_LABELS}.${destination}`;
    entry.recordName = recordName;
    if (dnsNameProblem(recordName)) {
      // The name is too long to query, so no receiver can confirm the destination either.
      entry.status = 'unverified';
      const note = `That name is longer than DNS allows (${MAX_NAME_OCTETS} octets), so no receiver can look it up; use a report address with a shorter domain.`;
      findings.push(destinationUnverifiedFinding(tagsOf(entry), destination, recordName, note));
      continue;
    }
    queries.push(recordName);
    const exact = await authorizationAt(recordName, resolver);
    if (exact.kind === 'error') {
      entry.status = 'error';
      entry.failure = { name: recordName, type: 'TXT', reason: exact.reason, ...(exact.detail ? { detail: exact.detail } : {}) };
      findings.push(destinationUncheckedFinding(destination, recordName, exact.reason, exact.detail));
      continue;
    }
    if (exact.kind === 'authorized') {
      entry.status = 'verified';
      continue;
    }
    entry.status = 'unverified';
    const wildcardName = `*.${REPORT_AUTHORIZATION_LABELS}.${destination}`;
    queries.push(wildcardName);
    const wildcard = await authorizationAt(wildcardName, resolver);
    let note: string | undefined;
    if (wildcard.kind === 'authorized') {
      entry.wildcardShadowed = true;
      note = `A wildcard record at ${wildcardName} exists, but it does not answer for ${recordName} because that name, or one between them, exists in the DNS with other records (RFC 4592 §2.2).`;
    }
    findings.push(destinationUnverifiedFinding(tagsOf(entry), destination, recordName, note));
  }
  return { destinations: [...byDestination.values()], queries, findings };
}

function tagsOf(entry: ReportDestination): string {
  const tags = [...new Set(entry.uris.map((uri) => uri.tag))];
  return tags.join(' and ');
}

/**
 * RFC 7489 §7.1 steps 5-8: the destination agrees when at least one TXT record at `name` parses as a
 * DMARC record (starts with v=DMARC1; `p` is not needed). Other TXT records are discarded.
 */
async function authorizationAt(
  name: string,
  resolver: Resolver,
): Promise<{ kind: 'authorized' } | { kind: 'absent' } | { kind: 'error'; reason: DnsErrorReason; detail?: string }> {
  const answer = await resolveNow(resolver, name, 'TXT');
  if (answer.kind === 'error') return { kind: 'error', reason: answer.reason, ...(answer.detail ? { detail: answer.detail } : {}) };
  if (answer.kind !== 'records') return { kind: 'absent' };
  const authorized = answer.records.some((strings) => parseDmarcRecordCached(strings).kind === 'record');
  return authorized ? { kind: 'authorized' } : { kind: 'absent' };
}
