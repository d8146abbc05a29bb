/**
 * Whether a report message was authenticated, with `mailauth`, through the service's own resolver
 * (never a global one: the zones or `--resolver` the operator configured).
 *
 * Reports are attacker-controlled: anyone can mail a `rua` address. RFC 7489 §7.2.1.1 (and RFC 9990)
 * require the report message to pass DMARC; RFC 8460 §3 requires a TLS report to carry a DKIM
 * signature of the reporting domain. A report that fails is kept and marked (counted as
 * unauthenticated), not dropped, and the reporter is the authenticated domain, never the
 * `org_name` written inside the report.
 */
import { authenticate, type DNSResolver } from 'mailauth';
import type { RecordType, Resolver } from '@spoof-checker/engine';

/** How the message arrived: the SMTP connection when there was one (SPF needs it). */
export interface MessageConnection {
  /** The client's address (SMTP); absent for IMAP and files, whose connection this service never saw. */
  ip?: string;
  helo?: string;
  /** MAIL FROM. */
  sender?: string;
}

/** The outcome of {@link authenticateReportMessage}. */
export interface MessageAuthentication {
  /** `pass` when any DKIM signature verified, else the first result (`fail`, `neutral`, …), `none` when unsigned. */
  dkim: string;
  /** The SPF result of MAIL FROM (`none` without a connection). */
  spf: string;
  /** The DMARC result of the From domain (`none` when it has no record). */
  dmarc: string;
  /**
   * The domain that authenticated the message: the From domain when DMARC passed, else the `d=` of a
   * passing DKIM signature aligned with From (RFC 8460 §3: a TLS report's signature by the reporting
   * domain), else null.
   */
  authenticatedDomain: string | null;
}

/**
 * DKIM signatures verified per report message (RFC 6376 §6.1 lets a verifier stop: "Verifiers MAY
 * limit the number of signatures they tries to verify"): the first ones in header order; the rest are
 * never looked up (1,000 signatures made 1,000 key lookups).
 */
export const MAX_DKIM_SIGNATURES = 10;

/**
 * The message with at most `max` DKIM-Signature header fields (the first ones, RFC 5322 §2.2.3
 * folding kept); the body is untouched. `dropped` counts the fields left out.
 */
export function limitDkimSignatures(raw: Buffer, max: number = MAX_DKIM_SIGNATURES): { raw: Buffer; dropped: number } {
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  const end = crlf >= 0 && (lf < 0 || crlf < lf) ? crlf + 2 : lf >= 0 ? lf + 1 : raw.length;
  const header = raw.subarray(0, end).toString('latin1');
  const lines = header.split(/(?<=\n)/);
  const kept: string[] = [];
  let seen = 0;
  let dropped = 0;
  let dropping = false;
  for (const line of lines) {
    const continuation = line.startsWith(' ') || line.startsWith('\t');
    if (!continuation) {
      dropping = false;
      if (/^dkim-signature\s*:/i.test(line) && ++seen > max) {
        dropping = true;
        dropped += 1;
      }
    }
    if (!dropping) kept.push(line);
  }
  if (dropped === 0) return { raw, dropped };
  return { raw: Buffer.concat([Buffer.from(kept.join(''), 'latin1'), raw.subarray(end)]), dropped };
}

/** The RR types mailauth asks for, as the engine's resolver names them. */
const SUPPORTED: ReadonlySet<string> = new Set<RecordType>(['A', 'AAAA', 'MX', 'TXT', 'CNAME', 'PTR', 'NS']);

/** Our DNS error reasons as node:dns names them (what mailauth expects in `.code`). */
const NODE_DNS_CODES: Partial<Record<string, string>> = {
  timeout: 'ETIMEOUT',
  refused: 'EREFUSED',
  'invalid-name': 'EBADNAME',
  malformed: 'EBADRESP',
  servfail: 'ESERVFAIL',
};

function dnsError(code: string, name: string): Error & { code: string } {
  return Object.assign(new Error(`${code} ${name}`), { code });
}

/**
 * mailauth's resolver contract over the engine's Resolver: records as `dns.promises.resolve` returns
 * them; NXDOMAIN is ENOTFOUND, NODATA ENODATA, and a failure keeps its kind (a DNS failure is never
 * a missing record: mailauth turns it into `temperror`).
 */
export function mailauthResolver(resolver: Resolver): DNSResolver {
  return async (name, rrtype) => {
    if (!SUPPORTED.has(rrtype)) throw dnsError('ENODATA', name);
    const answer = await resolver.resolve(name, rrtype as RecordType);
    switch (answer.kind) {
      case 'records':
        if (rrtype === 'MX') {
          return (answer.records as { preference: number; exchange: string }[]).map((mx) => ({ exchange: mx.exchange, priority: mx.preference })) as unknown as string[];
        }
        return answer.records as string[] | string[][];
      case 'nxdomain':
        throw dnsError('ENOTFOUND', name);
      case 'nodata':
        throw dnsError('ENODATA', name);
      case 'error':
        throw dnsError(NODE_DNS_CODES[answer.reason] ?? 'ESERVFAIL', name);
    }
  };
}

/** Authenticates a report message (DKIM, SPF when the connection is known, DMARC; no ARC sealing, no BIMI). */
export async function authenticateReportMessage(raw: Buffer, resolver: Resolver, connection: MessageConnection = {}): Promise<MessageAuthentication> {
  // At most MAX_DKIM_SIGNATURES signatures are verified: the others are not shown to mailauth.
  const result = await authenticate(limitDkimSignatures(raw).raw, {
    resolver: mailauthResolver(resolver),
    ...(connection.ip ? { ip: connection.ip, helo: connection.helo ?? connection.ip, sender: connection.sender ?? '' } : {}),
    mta: 'spoof-checker',
    disableBimi: true,
    disableArc: true,
  });
  const signatures = result.dkim?.results ?? [];
  const passing = signatures.filter((s) => s.status?.result === 'pass');
  const dkim = passing.length > 0 ? 'pass' : (signatures[0]?.status?.result ?? 'none');
  const spf = result.spf ? result.spf.status.result : 'none';
  const dmarc = result.dmarc ? result.dmarc.status.result : 'none';
  let authenticatedDomain: string | null = null;
  if (result.dmarc && result.dmarc.status.result === 'pass') {
    authenticatedDomain = (result.dmarc.status.header?.from ?? result.dmarc.domain ?? '').toLowerCase() || null;
  }
  if (authenticatedDomain === null) {
    // No DMARC record at the reporter, but a signature of its own domain (aligned with From, no l=).
    const aligned = passing.find((s) => typeof s.status.aligned === 'string' && !s.status.underSized && s.signingDomain);
    authenticatedDomain = aligned?.signingDomain?.toLowerCase() ?? null;
  }
  return { dkim, spf, dmarc, authenticatedDomain };
}
