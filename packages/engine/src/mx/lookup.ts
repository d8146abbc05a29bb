/**
 * MX lookup and analysis: sorted hosts, null MX (RFC 7505), duplicates, IP literals, aliases,
 * hosts that do not resolve, and the mail provider. Never throws for a DNS condition: a failed MX
 * lookup is `status: 'temperror'` with a finding, and a failed address lookup is a finding.
 */
import { isIP } from 'node:net';
import { canonicalName } from '../dns/name.js';
import { allNow, describeAnswer, resolveNow, thenNow, type DnsAnswer, type MxData, type Now, type Resolver } from '../dns/types.js';
import type { Finding } from '../findings.js';
import { providerForMxHost } from './providers.js';
import type { MxAnalysis, MxHost, MxHostAddresses, MxLookupOptions } from './types.js';

/** RFC 7505 §3: a null MX has preference 0. */
export const NULL_MX_PREFERENCE = 0;
/** At most this many distinct MX hosts get address lookups (two queries each); the rest are not resolved. */
export const MAX_MX_HOSTS_RESOLVED = 10;
/**
 * How many hosts one analysis resolves at a time: all it resolves (at most MAX_MX_HOSTS_RESOLVED,
 * all started at once), so a cold check waits one round trip for them (the resolver below carries
 * the global limits).
 */
export const MAX_PARALLEL_HOST_LOOKUPS = MAX_MX_HOSTS_RESOLVED;

/**
 * Looks up and analyses the MX records of `domain`. MX is an enrichment: every outcome, including a
 * DNS failure, is a value with findings.
 */
export async function lookupMx(domain: string, resolver: Resolver, options: MxLookupOptions = {}): Promise<MxAnalysis> {
  return lookupMxNow(domain, resolver, options);
}

/** `lookupMx`, as a value when every answer is held and a promise only when one must wait. */
export function lookupMxNow(domain: string, resolver: Resolver, options: MxLookupOptions = {}): Now<MxAnalysis> {
  const apex = canonicalName(domain);
  return thenNow(resolveNow(resolver, apex, 'MX'), (answer) => readMxAnswer(apex, answer, resolver, options));
}

function readMxAnswer(apex: string, answer: DnsAnswer<'MX'>, resolver: Resolver, options: MxLookupOptions): Now<MxAnalysis> {
  switch (answer.kind) {
    case 'error': {
      const failedQuery: NonNullable<MxAnalysis['failedQuery']> = { name: apex, type: 'MX', reason: answer.reason };
      if (answer.detail !== undefined) failedQuery.detail = answer.detail;
      return {
        domain: apex,
        status: 'temperror',
        hosts: [],
        provider: null,
        providers: [],
        failedQuery,
        findings: [
          {
            id: 'mx-temperror',
            severity: 'info',
            title: 'MX Lookup Failed',
            detail: `We could not look up the MX records of ${apex}: ${describeAnswer(answer)}. We cannot tell where this domain receives mail; this is not the same as having no MX. Try again later.`,
          },
        ],
      };
    }
    case 'nxdomain':
    case 'nodata':
      return {
        domain: apex,
        status: 'none',
        hosts: [],
        provider: null,
        providers: [],
        absence: answer.kind,
        findings: [missingFinding(apex, answer.kind)],
      };
    case 'records':
      return analyseRecords(apex, answer.records, resolver, options);
  }
}

/** True for an IPv4 or IPv6 address written where a host name belongs (with or without brackets). */
export function isIpLiteral(exchange: string): boolean {
  const bare = exchange.startsWith('[') && exchange.endsWith(']') ? exchange.slice(1, -1) : exchange;
  if (bare.includes(':')) return true;
  // An IPv4 address ends in a digit: a host name that does not (almost every one) needs no parse.
  const last = bare.charCodeAt(bare.length - 1);
  return last >= 0x30 && last <= 0x39 && isIP(bare) !== 0;
}

function analyseRecords(apex: string, records: MxData[], resolver: Resolver, options: MxLookupOptions): Now<MxAnalysis> {
  // RFC 5321 §5.1: lower preference first; ties are ordered by name so the output is stable.
  const sorted = [...records].sort((a, b) => a.preference - b.preference || (a.exchange < b.exchange ? -1 : a.exchange > b.exchange ? 1 : 0));
  const findings: Finding[] = [];
  const hosts: MxHost[] = sorted.map((record) => ({
    preference: record.preference,
    exchange: record.exchange,
    provider: providerForMxHost(record.exchange),
    problems: [],
  }));

  const nullHosts = hosts.filter((host) => host.exchange === '');
  const mailHosts = hosts.filter((host) => host.exchange !== '');

  for (const host of nullHosts) {
    if (host.preference !== NULL_MX_PREFERENCE) host.problems.push(`A null MX should have preference ${NULL_MX_PREFERENCE}, not ${host.preference} (RFC 7505 §3).`);
    if (mailHosts.length > 0) host.problems.push('A null MX must be the only MX record of the domain (RFC 7505 §3).');
  }
  if (nullHosts.length > 0 && mailHosts.length > 0) {
    findings.push({
      id: 'mx-null-mixed',
      severity: 'warning',
      title: 'Null MX Mixed With Other MX Records',
      detail: `Your domain publishes a null MX ("this domain accepts no mail") alongside ${mailHosts.length} other MX record(s). RFC 7505 §3 forbids that, and senders may bounce mail or deliver it, depending on their software. Remove the null MX if you receive mail; otherwise remove the other MX records.`,
    });
  }

  // Duplicates: the same host listed more than once (at the same or another preference).
  const firstPreference = new Map<string, number>();
  const duplicated = new Set<string>();
  for (const host of hosts) {
    const earlier = firstPreference.get(host.exchange);
    if (earlier === undefined) {
      firstPreference.set(host.exchange, host.preference);
      continue;
    }
    duplicated.add(host.exchange);
    host.problems.push(`This host is listed more than once (also at preference ${earlier}).`);
  }
  for (const exchange of duplicated) {
    const count = hosts.filter((host) => host.exchange === exchange).length;
    findings.push({
      id: 'mx-duplicate',
      severity: 'info',
      title: `Duplicate MX Record (${displayHost(exchange)})`,
      detail: `Your MX records list ${displayHost(exchange)} ${count} times. The extra entries add nothing; keep one.`,
    });
  }

  if (mailHosts.length === 0) {
    findings.push({
      id: 'mx-null',
      severity: 'info',
      title: 'Null MX Published',
      detail: `This domain says it accepts no mail (RFC 7505 null MX), so senders reject mail to it at once instead of retrying. For a domain that sends no mail either, this is good practice.${nullHosts.some((host) => host.preference !== NULL_MX_PREFERENCE) ? ` The record should use preference ${NULL_MX_PREFERENCE} (RFC 7505 §3).` : ''}`,
    });
    return { domain: apex, status: 'null-mx', hosts, provider: null, providers: [], findings };
  }

  for (const host of mailHosts) {
    if (!isIpLiteral(host.exchange)) continue;
    host.problems.push('An MX must name a host, not an IP address (RFC 1035 §3.3.9, RFC 5321 §5.1).');
  }
  for (const exchange of uniqueExchanges(mailHosts.filter((host) => isIpLiteral(host.exchange)))) {
    findings.push({
      id: 'mx-ip-literal',
      severity: 'warning',
      title: `MX Points to an IP Address (${exchange})`,
      detail: `Your MX record points to ${exchange}, which is an IP address. An MX must name a host (RFC 5321 §5.1); senders look ${exchange} up as a name, find nothing, and cannot deliver. Point the MX at a host name whose A/AAAA record holds that address.`,
    });
  }

  if (options.resolveHosts === false) return finishAnalysis(apex, hosts, mailHosts, findings);
  const toResolve = uniqueExchanges(mailHosts.filter((host) => !isIpLiteral(host.exchange))).slice(0, MAX_MX_HOSTS_RESOLVED);
  return thenNow(allNow(toResolve.map((exchange) => resolveHost(exchange, resolver))), (resolved) => {
    for (const [index, exchange] of toResolve.entries()) {
      const addresses = resolved[index] as MxHostAddresses;
      const verdict = addressFindings(exchange, addresses);
      findings.push(...verdict.findings);
      for (const host of mailHosts) {
        if (host.exchange !== exchange) continue;
        host.addresses = addresses;
        host.problems.push(...verdict.problems);
      }
    }
    return finishAnalysis(apex, hosts, mailHosts, findings);
  });
}

/** The providers, once the hosts' addresses are known. */
function finishAnalysis(apex: string, hosts: MxHost[], mailHosts: MxHost[], findings: Finding[]): MxAnalysis {
  const topPreference = mailHosts[0]?.preference;
  const topProviders = distinct(mailHosts.filter((host) => host.preference === topPreference).map((host) => host.provider));
  const provider = topProviders.length > 0 ? topProviders.join(' + ') : null;
  const providers = distinct(mailHosts.map((host) => host.provider));
  if (provider !== null) findings.push(providerFinding(provider, providers, mailHosts));

  return { domain: apex, status: 'found', hosts, provider, providers, findings };
}

/** A and AAAA of one MX host, in parallel; without a promise when the answers are held. */
function resolveHost(exchange: string, resolver: Resolver): Now<MxHostAddresses> {
  // The CNAME query finds an alias whatever the resolver reports of the chains it follows (c-ares
  // reports none); a failure there only loses that finding.
  const answers = allNow<DnsAnswer>([resolveNow(resolver, exchange, 'A'), resolveNow(resolver, exchange, 'AAAA'), resolveNow(resolver, exchange, 'CNAME')]);
  return thenNow(answers, ([a, aaaa, alias]) => hostAddresses(a as DnsAnswer<'A'>, aaaa as DnsAnswer<'AAAA'>, alias as DnsAnswer<'CNAME'>));
}

/** What the A, AAAA and CNAME answers of one MX host say. */
function hostAddresses(a: DnsAnswer<'A'>, aaaa: DnsAnswer<'AAAA'>, alias: DnsAnswer<'CNAME'>): MxHostAddresses {
  const failures: MxHostAddresses['failures'] = [];
  for (const [type, answer] of [['A', a], ['AAAA', aaaa]] as const) {
    if (answer.kind !== 'error') continue;
    const failure: MxHostAddresses['failures'][number] = { type, reason: answer.reason };
    if (answer.detail !== undefined) failure.detail = answer.detail;
    failures.push(failure);
  }
  const ipv4 = a.kind === 'records' ? a.records : [];
  const ipv6 = aaaa.kind === 'records' ? aaaa.records : [];
  const addresses: MxHostAddresses = { status: 'resolved', ipv4, ipv6, failures, cnameTarget: lastAlias(a) ?? lastAlias(aaaa) ?? (alias.kind === 'records' ? (alias.records[0] ?? null) : null) };
  if (ipv4.length > 0 || ipv6.length > 0) return addresses;
  if (failures.length > 0) return { ...addresses, status: 'temperror' };
  // Both answered with no address; NXDOMAIN on either means the name does not exist at all.
  return { ...addresses, status: 'unresolvable', absence: a.kind === 'nxdomain' || aaaa.kind === 'nxdomain' ? 'nxdomain' : 'nodata' };
}

/** The findings, and the problems to note on the host, that one host's address lookups reveal. */
function addressFindings(exchange: string, addresses: MxHostAddresses): { findings: Finding[]; problems: string[] } {
  const findings: Finding[] = [];
  const problems: string[] = [];
  if (addresses.cnameTarget !== null) {
    problems.push(`This host is an alias (CNAME) of ${addresses.cnameTarget}; an MX must name the host itself (RFC 2181 §10.3).`);
    findings.push({
      id: 'mx-cname',
      severity: 'warning',
      title: `MX Host Is an Alias (${exchange})`,
      detail: `Your MX host ${exchange} is a CNAME for ${addresses.cnameTarget}. RFC 2181 §10.3 and RFC 5321 §5.1 say an MX must name the host directly; most senders cope, but some do not. Point the MX at ${addresses.cnameTarget} instead.`,
    });
  }
  if (addresses.status === 'unresolvable') {
    const why = addresses.absence === 'nxdomain' ? 'the name does not exist' : 'the name has no A or AAAA record';
    problems.push(`This host does not resolve: ${why}.`);
    findings.push({
      id: 'mx-host-unresolvable',
      severity: 'warning',
      title: `MX Host Does Not Resolve (${exchange})`,
      detail: `Your MX host ${exchange} has no address: ${why}. Senders cannot deliver to it and move on to the next MX, or bounce the mail if none is left. Fix the host name or publish its A/AAAA records.`,
    });
  }
  if (addresses.status === 'temperror') {
    const reasons = addresses.failures.map((failure) => `${failure.type}: ${describeAnswer({ kind: 'error', reason: failure.reason })}`).join('; ');
    problems.push(`Its address could not be looked up (${reasons}).`);
    findings.push({
      id: 'mx-host-temperror',
      severity: 'info',
      title: `MX Host Lookup Failed (${exchange})`,
      detail: `We could not look up the address of your MX host ${exchange} (${reasons}), so we cannot say whether it resolves. Try again later.`,
    });
  }
  return { findings, problems };
}

function providerFinding(provider: string, providers: readonly string[], mailHosts: readonly MxHost[]): Finding {
  const topHosts = mailHosts.filter((host) => host.preference === mailHosts[0]?.preference).map((host) => host.exchange);
  const others = providers.filter((name) => !provider.split(' + ').includes(name));
  const backup = others.length > 0 ? ` Lower-priority MX hosts belong to ${others.join(', ')}.` : '';
  return {
    id: 'mx-provider',
    severity: 'info',
    title: `Mail Handled by ${provider}`,
    detail: `Your mail is received by ${provider} (${uniqueStrings(topHosts).join(', ')}).${backup}`,
  };
}

function missingFinding(apex: string, absence: 'nxdomain' | 'nodata'): Finding {
  const why = absence === 'nxdomain' ? `The domain ${apex} does not exist (NXDOMAIN), so it` : `${apex} publishes no MX record, so it`;
  return {
    id: 'mx-missing',
    severity: 'info',
    title: 'No MX Records',
    detail: `${why} does not receive mail through a mail exchanger. Senders may still try the domain's own address (RFC 5321 §5.1 implicit MX). If the domain should take no mail, publish a null MX ("0 .", RFC 7505) to say so.`,
  };
}

function lastAlias(answer: DnsAnswer): string | null {
  if (answer.kind === 'error' || !answer.cnames || answer.cnames.length === 0) return null;
  return answer.cnames.at(-1) ?? null;
}

function uniqueExchanges(hosts: readonly MxHost[]): string[] {
  return uniqueStrings(hosts.map((host) => host.exchange));
}

function uniqueStrings(values: readonly string[]): string[] {
  return [...new Set(values)];
}

function distinct(values: readonly (string | null)[]): string[] {
  return uniqueStrings(values.filter((value): value is string => value !== null));
}

function displayHost(exchange: string): string {
  return exchange === '' ? '"." (null MX)' : exchange;
}
