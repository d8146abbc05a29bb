/**
 * `checkTransport(domain, options)`: is mail sent TO this domain protected in transit, and will it
 * still arrive? Reads `_mta-sts` and `_smtp._tls` (RFC 8461 §3.1, RFC 8460 §3) and the MX hosts
 * through the injected resolver, fetches the policy (RFC 8461 §3.3), probes STARTTLS on every MX
 * address (bounded), and judges (./judge.ts). Host names come only from DNS answers; the input is
 * only the domain. Nothing throws for a DNS or network condition: every outcome is a value.
 */
import pLimit from 'p-limit';
import { describeAnswer, type DnsAnswer, type Resolver } from '../dns/types.js';
import { SpoofCheckError } from '../errors.js';
import { normaliseDomainInput, type NormaliseOptions } from '../input.js';
import { isIpLiteral, lookupMx } from '../mx/index.js';
import { classifyAddress } from '../net/address-guard.js';
import { fetchPolicy, HTTPS_PORT, policyLocation } from './fetch-policy.js';
import { judgeTransport, type MxFacts, type TransportFacts } from './judge.js';
import { certificateNameMatches, mxCovered } from './mx-pattern.js';
import { parseStsPolicy, parseStsRecord, parseTlsRptRecord, selectRecord } from './parse.js';
import { probeStarttls, SMTP_PORT } from './starttls.js';
import { tlsTrust, type TlsTrust } from '../net/tls-peer.js';
import type { ConnectPorts, ProbeResult, StsPolicy, TransportResult } from './types.js';
import { checkDane } from './dane.js';
import type { CheckDnssecOptions } from '../dnssec/check.js';

/** Most MX hosts probed (in preference order); the rest are listed but not probed. */
export const MAX_MX_HOSTS_PROBED = 10;
/** Most addresses probed per MX host (IPv4 first, then IPv6). */
export const MAX_ADDRESSES_PER_HOST = 4;
/** Most addresses probed for one domain, all hosts together. */
export const MAX_ADDRESSES_PROBED = 20;
/** Probes of one check running at once. */
export const MAX_PARALLEL_PROBES = 4;
/**
 * Most connections one check opens to one IP address (issue 29: twelve MX names on one address
 * gave ten connections to it). The first MX names on an address get a probe each (their own SNI);
 * later names on the same address share the first probe, its certificate judged for their own name.
 */
export const MAX_CONNECTIONS_PER_ADDRESS = 2;
/** Longest time a probe result is kept, whatever the address record's TTL (seconds). */
export const MAX_PROBE_CACHE_SECONDS = 3600;
/** Most probe results a cache holds; the oldest is dropped first. */
export const MAX_CACHED_PROBES = 10_000;

/** Options of `checkTransport`. */
export interface TransportOptions {
  /** Where DNS answers come from (the same port as `checkDomain`). */
  resolver: Resolver;
  /** Ports to connect to instead of 25 and 443 (test labs). */
  connectPorts?: ConnectPorts | undefined;
  /** Extra trusted roots, PEM text, added to Node's bundled roots. */
  tlsCa?: string | undefined;
  /** Connect to loopback, private and other non-public addresses (test labs only; default false). */
  allowPrivateAddresses?: boolean | undefined;
  /** Deadline of each connection in milliseconds (default 10 s). */
  timeoutMs?: number | undefined;
  /** The EHLO name (default: this machine's name when it is a domain). */
  ehloName?: string | undefined;
  /** Probe results kept between checks (for the address record's TTL); default: one per check. */
  cache?: TransportCache | undefined;
  /** Input rules (special-use names). */
  input?: NormaliseOptions | undefined;
  /** The clock certificates are judged against. */
  now?: (() => Date) | undefined;
  /** DNSSEC validation (the check's): with it, DANE (RFC 7672) is checked for every MX. */
  dnssec?: CheckDnssecOptions | undefined;
}

/**
 * Probe results by (host, address, port, trusted roots), each kept for the TTL of the address
 * record it came from (at most `MAX_PROBE_CACHE_SECONDS`), in-flight probes shared. Bounded.
 */
export class TransportCache {
  readonly #entries = new Map<string, { expires: number; result: Promise<ProbeResult> }>();
  readonly #maxEntries: number;
  constructor(maxEntries = MAX_CACHED_PROBES) {
    this.#maxEntries = maxEntries;
  }
  /** The cached probe for `key`, or runs `probe` and keeps its result for `ttlSeconds`. */
  get(key: string, ttlSeconds: number, probe: () => Promise<ProbeResult>): Promise<ProbeResult> {
    const now = Date.now();
    const held = this.#entries.get(key);
    if (held && held.expires > now) return held.result;
    const result = probe();
    const seconds = Math.min(Math.max(ttlSeconds, 0), MAX_PROBE_CACHE_SECONDS);
    this.#entries.delete(key);
    // While it runs it is shared (single flight); once settled it stays for the TTL.
    this.#entries.set(key, { expires: now + Math.max(seconds * 1000, 1), result });
    void result.then(() => {
      if (seconds === 0) this.#entries.delete(key);
    });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
    return result;
  }
  /** How many results are held. */
  get size(): number {
    return this.#entries.size;
  }
}

/**
 * The probe of `address` made for `from`, as it reads for `host` on the same address: what the
 * connection, STARTTLS and the chain showed is the same; the certificate's names are judged for
 * `host` (RFC 8461 §4.2, RFC 6125 §6.4 via {@link certificateNameMatches}).
 */
function sharedProbe(result: ProbeResult, from: string, host: string): ProbeResult {
  // Nothing was connected to (a private address): the same words for every name.
  if (result.outcome === 'refused-private') return result;
  const via = `(probed once for ${from}, which has the same address)`;
  const certificate = result.certificate;
  if ((result.outcome === 'ok' || result.outcome === 'cert-name-mismatch') && certificate !== null) {
    if (certificateNameMatches(certificate.san, host)) return { ...result, outcome: 'ok', detail: `${result.tlsVersion ?? 'TLS'}, certificate valid for ${host} until ${certificate.notAfter} ${via}` };
    const names = certificate.san.length > 0 ? certificate.san.join(', ') : 'none (a subject CN does not count)';
    return { ...result, outcome: 'cert-name-mismatch', detail: `the certificate is not valid for ${host}: its DNS names are ${names} ${via}` };
  }
  return { ...result, detail: `${result.detail} ${via}` };
}

/**
 * Checks how mail to `domain` travels: MTA-STS, TLS-RPT, STARTTLS and certificates of every MX
 * address, and the transport verdict. Throws `SpoofCheckError('invalid_domain')` for input that is
 * not a domain, and `Error` for unusable `tlsCa` PEM; never for DNS or network conditions.
 */
export async function checkTransport(domain: string, options: TransportOptions): Promise<TransportResult> {
  const normalised = normaliseDomainInput(domain, options.input);
  if (!normalised.ok) {
    throw new SpoofCheckError('invalid_domain', normalised.message, { why: 'Checking how mail reaches a domain needs a domain name.', fix: normalised.fix });
  }
  const name = normalised.domain;
  const { resolver } = options;
  const trust = tlsTrust(options.tlsCa);
  const cache = options.cache ?? new TransportCache();
  const now = options.now ?? (() => new Date());

  const [stsTxt, rptTxt, mx] = await Promise.all([resolver.resolve(`_mta-sts.${name}`, 'TXT'), resolver.resolve(`_smtp._tls.${name}`, 'TXT'), lookupMx(name, resolver, { resolveHosts: false })]);

  // MTA-STS record, then the policy (RFC 8461 §3.1, §3.3), alongside the MX probes.
  const stsPart = readMtaSts(name, stsTxt, resolver, trust, options);
  const tlsRpt = readTlsRpt(name, rptTxt);

  // MX hosts: from the MX answer; with none, the domain itself (RFC 5321 §5.1 implicit MX).
  let mxProblem: TransportFacts['mxProblem'] = null;
  let hosts: { host: string; preference: number }[] = [];
  if (mx.status === 'found') {
    hosts = mx.hosts.filter((h) => h.exchange !== '' && !isIpLiteral(h.exchange)).map((h) => ({ host: h.exchange, preference: h.preference }));
    if (hosts.length === 0) mxProblem = { kind: 'none', detail: `The MX records of ${name} name no host that can be probed.` };
  } else if (mx.status === 'null-mx') {
    mxProblem = { kind: 'null-mx', detail: `${name} publishes a null MX (RFC 7505): it accepts no mail, so there is no transport to protect.` };
  } else if (mx.status === 'temperror') {
    mxProblem = { kind: 'temperror', detail: `The MX lookup of ${name} failed (${mx.failedQuery?.reason ?? 'error'}); which hosts receive its mail is unknown, so none was probed.` };
  } else if (mx.absence === 'nodata') {
    hosts = [{ host: name, preference: 0 }];
  } else {
    mxProblem = { kind: 'none', detail: `${name} has no MX records and does not exist as a host.` };
  }
  const notes: string[] = [];
  if (hosts.length > MAX_MX_HOSTS_PROBED) notes.push(`${hosts.length} MX hosts are published; only the first ${MAX_MX_HOSTS_PROBED} by preference were probed.`);
  const probed = hosts.slice(0, MAX_MX_HOSTS_PROBED);
  const skipped = hosts.slice(MAX_MX_HOSTS_PROBED);

  const limit = pLimit(MAX_PARALLEL_PROBES);
  let budget = MAX_ADDRESSES_PROBED;
  // Per address: the connections planned so far, and the first probe (which later names share).
  const perAddress = new Map<string, { connections: number; first: Promise<ProbeResult>; firstHost: string }>();
  const addressSets = await Promise.all(probed.map(({ host }) => hostAddresses(host, resolver)));
  const mxFacts: Promise<MxFacts>[] = probed.map(({ host, preference }, index) => {
    const found = addressSets[index] as Awaited<ReturnType<typeof hostAddresses>>;
    if (found.addresses.length === 0) return Promise.resolve({ host, preference, covered: null, probes: [], unprobed: found.problem });
    let take = found.addresses.slice(0, MAX_ADDRESSES_PER_HOST);
    if (found.addresses.length > MAX_ADDRESSES_PER_HOST) notes.push(`${host} has ${found.addresses.length} addresses; only ${MAX_ADDRESSES_PER_HOST} were probed.`);
    if (take.length > budget) {
      notes.push(`${host}: ${take.length - budget} address(es) not probed: at most ${MAX_ADDRESSES_PROBED} addresses are probed per domain.`);
      take = take.slice(0, budget);
    }
    budget -= take.length;
    if (take.length === 0) return Promise.resolve({ host, preference, covered: null, probes: [], unprobed: `not probed: at most ${MAX_ADDRESSES_PROBED} addresses are probed per domain` });
    const port = options.connectPorts?.smtp ?? SMTP_PORT;
    const probes = take.map((address) => {
      const seen = perAddress.get(address);
      if (seen && seen.connections >= MAX_CONNECTIONS_PER_ADDRESS) return seen.first.then((result) => sharedProbe(result, seen.firstHost, host));
      const probe = limit(() =>
        cache.get(`${host}|${address}|${port}|${trust.key}|${options.allowPrivateAddresses ? 'p' : ''}`, found.ttl, () =>
          probeStarttls(address, host, { port, trust, allowPrivateAddresses: options.allowPrivateAddresses, timeoutMs: options.timeoutMs, ehloName: options.ehloName, now }),
        ),
      );
      if (seen) seen.connections++;
      else perAddress.set(address, { connections: 1, first: probe, firstHost: host });
      return probe;
    });
    return Promise.all(probes).then((results) => ({ host, preference, covered: null, probes: results, unprobed: null }));
  });
  const [sts, mxDone] = await Promise.all([stsPart, Promise.all(mxFacts)]);
  const allMx: MxFacts[] = [...mxDone, ...skipped.map(({ host, preference }) => ({ host, preference, covered: null, probes: [], unprobed: `not probed: at most ${MAX_MX_HOSTS_PROBED} MX hosts are probed` }))];
  // RFC 8461 §4.1: each MX against the policy's patterns (not under mode none, which is no policy).
  const policy = sts.policy;
  for (const entry of allMx) entry.covered = policy && sts.mtaSts.status !== 'none' ? mxCovered(policy.mx, entry.host) : null;

  const judged = judgeTransport({ domain: name, mtaSts: sts.mtaSts, policy, tlsRpt: tlsRpt.result, tlsRptProblem: tlsRpt.problem, mx: allMx, mxProblem, notes, now: now() });
  const dane = options.dnssec
    ? await checkDane(name, mxDone.map((entry) => ({ host: entry.host, addresses: entry.probes.map((p) => p.address) })), options.dnssec, {
        port: options.connectPorts?.smtp ?? SMTP_PORT,
        allowPrivateAddresses: options.allowPrivateAddresses === true,
        timeoutMs: options.timeoutMs,
        now,
      })
    : null;
  // RFC 7672: a secure TLSA set that matches nothing is mail refused by every DANE sender (broken);
  // DANE valid on every MX makes TLS required and authenticated (enforced), with or without MTA-STS.
  const verdict = dane?.dane === 'broken' ? 'broken' : dane?.dane === 'valid' && judged.verdict !== 'broken' ? 'enforced' : judged.verdict;
  return {
    verdict,
    mtaSts: sts.mtaSts,
    tlsRpt: tlsRpt.result,
    mx: allMx.map((entry) => {
      const mxDane = dane?.mx.get(entry.host);
      return {
        host: entry.host,
        preference: entry.preference,
        mtaStsCovered: entry.covered,
        ...(dane ? { tlsa: mxDane?.tlsa ?? { status: 'not-applicable' as const, records: [], usable: false, rollover: 'none' as const } } : {}),
        addresses: entry.probes.map((probe) => ({
          address: probe.address,
          outcome: probe.outcome,
          addressClass: classifyAddress(probe.address),
          tlsVersion: probe.tlsVersion,
          certificate: probe.certificate,
          ...(dane ? { dane: mxDane?.addresses.get(probe.address)?.dane ?? ('not-applicable' as const) } : {}),
        })),
      };
    }),
    ...(dane ? { dane: dane.dane } : {}),
    findings: dane ? [...judged.findings, ...dane.findings] : judged.findings,
  };
}

/** The A and AAAA addresses of a host (IPv4 first), the smallest TTL, or why there are none. */
async function hostAddresses(host: string, resolver: Resolver): Promise<{ addresses: string[]; ttl: number; problem: string }> {
  const [a, aaaa] = await Promise.all([resolver.resolve(host, 'A'), resolver.resolve(host, 'AAAA')]);
  const answers: DnsAnswer<'A' | 'AAAA'>[] = [a, aaaa];
  const addresses = answers.flatMap((answer) => (answer.kind === 'records' ? (answer.records as string[]) : []));
  const ttl = Math.min(...answers.map((answer) => (answer.kind === 'records' ? (answer.ttl ?? 0) : Number.POSITIVE_INFINITY)));
  const broken = answers.find((answer) => answer.kind === 'error');
  const problem = broken ? `its address lookup failed (${describeAnswer(broken)}), so it was not probed` : `it has no A or AAAA record (${describeAnswer(a)}), so senders cannot reach it`;
  return { addresses, ttl: Number.isFinite(ttl) ? ttl : 0, problem };
}

/** `_mta-sts` record, then the policy when the record is valid. */
async function readMtaSts(domain: string, answer: DnsAnswer<'TXT'>, resolver: Resolver, trust: TlsTrust, options: TransportOptions): Promise<{ mtaSts: TransportResult['mtaSts']; policy: StsPolicy | null }> {
  const invalid = (problems: string[], record: string | null = null, id: string | null = null, fetch: TransportResult['mtaSts']['fetch'] = null) => ({
    mtaSts: { status: 'invalid' as const, record, id, policy: null, fetch, problems },
    policy: null,
  });
  if (answer.kind === 'error') {
    // A DNS failure is never a missing record (RFC 8461 §5: senders then use a cached policy or none).
    return invalid([`the lookup of _mta-sts.${domain} failed: ${describeAnswer(answer)}; whether a policy is published cannot be told`]);
  }
  if (answer.kind !== 'records') return { mtaSts: { status: 'absent', record: null, id: null, policy: null, fetch: null, problems: [] }, policy: null };
  const selection = selectRecord(answer.records, 'mta-sts');
  if (selection.kind === 'absent') return { mtaSts: { status: 'absent', record: null, id: null, policy: null, fetch: null, problems: [] }, policy: null };
  if (selection.kind === 'invalid') return invalid([selection.problem], selection.text);
  const record = parseStsRecord(selection.text);
  if (!record.ok) return invalid([record.problem], selection.text);
  const port = options.connectPorts?.https ?? HTTPS_PORT;
  const fetched = await fetchPolicy(domain, resolver, { port, trust, allowPrivateAddresses: options.allowPrivateAddresses, timeoutMs: options.timeoutMs, now: options.now });
  const { url } = policyLocation(domain);
  if (!fetched.ok) {
    return invalid([`the policy could not be fetched: ${fetched.detail}`], selection.text, record.id, { url, httpStatus: fetched.httpStatus, error: fetched.error });
  }
  const parsed = parseStsPolicy(fetched.body);
  const fetch = { url, httpStatus: 200, error: null };
  if (!parsed.ok) return invalid([`the policy at ${url} is not valid: ${parsed.problem}`], selection.text, record.id, fetch);
  const problems = parsed.ignored.length > 0 ? [`unknown policy field(s) ignored: ${parsed.ignored.join(', ')}`] : [];
  return {
    mtaSts: { status: parsed.policy.mode, record: selection.text, id: record.id, policy: { mode: parsed.policy.mode, maxAge: parsed.policy.maxAge, mx: parsed.policy.mx }, fetch, problems },
    policy: parsed.policy,
  };
}

/** `_smtp._tls` (RFC 8460 §3). */
function readTlsRpt(domain: string, answer: DnsAnswer<'TXT'>): { result: TransportResult['tlsRpt']; problem: string | null } {
  if (answer.kind === 'error') {
    return { result: { status: 'invalid', record: null, rua: [] }, problem: `the lookup of _smtp._tls.${domain} failed: ${describeAnswer(answer)}; whether TLS reporting is set up cannot be told` };
  }
  if (answer.kind !== 'records') return { result: { status: 'absent', record: null, rua: [] }, problem: null };
  const selection = selectRecord(answer.records, 'tlsrpt');
  if (selection.kind === 'absent') return { result: { status: 'absent', record: null, rua: [] }, problem: null };
  if (selection.kind === 'invalid') return { result: { status: 'invalid', record: selection.text, rua: [] }, problem: selection.problem };
  const parsed = parseTlsRptRecord(selection.text);
  if (!parsed.ok) return { result: { status: 'invalid', record: selection.text, rua: [] }, problem: parsed.problem };
  return { result: { status: 'valid', record: selection.text, rua: parsed.rua }, problem: null };
}
