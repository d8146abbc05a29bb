/**
 * Mail sent TO a domain: is it protected in transit, and will it still arrive? MTA-STS (RFC 8461),
 * TLS reporting (RFC 8460) and a STARTTLS probe (RFC 3207) of every MX address, judged into a
 * transport verdict apart from the spoof verdict.
 *
 * The `_mta-sts` TXT record (RFC 8461 §3.1; `%s` = case-sensitive, RFC 7405):
 *
 *   sts-text-record = sts-version 1*(sts-field-delim sts-field) [sts-field-delim]
 *   sts-field       = sts-id / sts-extension
 *   sts-field-delim = *WSP ";" *WSP
 *   sts-version     = %s"v=STSv1"
 *   sts-id          = %s"id=" 1*32(ALPHA / DIGIT)
 *   sts-extension   = sts-ext-name "=" sts-ext-value
 *   sts-ext-name    = (ALPHA / DIGIT) *31(ALPHA / DIGIT / "_" / "-" / ".")
 *   sts-ext-value   = 1*(%x21-3A / %x3C / %x3E-7E)   ; VCHAR except "=" and ";"
 *
 * The policy at https://mta-sts.<domain>/.well-known/mta-sts.txt (RFC 8461 §3.2):
 *
 *   sts-policy-record   = sts-policy-field *(sts-policy-term sts-policy-field) [sts-policy-term]
 *   sts-policy-field    = sts-policy-version / sts-policy-mode / sts-policy-max-age / sts-policy-mx / sts-policy-extension
 *   field-delim         = ":" *WSP
 *   sts-policy-version  = %s"version" field-delim %s"STSv1"
 *   sts-policy-mode     = %s"mode" field-delim ( %s"testing" / %s"enforce" / %s"none" )
 *   sts-policy-max-age  = %s"max_age" field-delim 1*10DIGIT        ; at most 31557600
 *   sts-policy-mx       = %s"mx" field-delim ["*."] Domain         ; Domain: RFC 5321 §4.1.2, A-labels
 *   sts-policy-extension= sts-policy-ext-name field-delim sts-policy-ext-value
 *   sts-policy-term     = LF / CRLF
 *
 * The `_smtp._tls` TXT record (RFC 8460 §3):
 *
 *   tlsrpt-record   = tlsrpt-version 1*(field-delim tlsrpt-field) [field-delim]
 *   field-delim     = *WSP ";" *WSP
 *   tlsrpt-field    = tlsrpt-rua / tlsrpt-extension
 *   tlsrpt-version  = %s"v=TLSRPTv1"
 *   tlsrpt-rua      = %s"rua=" tlsrpt-uri *(*WSP "," *WSP tlsrpt-uri)
 *   tlsrpt-uri      = URI   ; "mailto:" or "https:"; ",", "!" and ";" percent-encoded
 *   tlsrpt-extension= tlsrpt-ext-name "=" tlsrpt-ext-value
 *   tlsrpt-ext-name = (ALPHA / DIGIT) *31(ALPHA / DIGIT / "_" / "-" / ".")
 *   tlsrpt-ext-value= 1*(%x21-3A / %x3C / %x3E-7E)
 */
import type { HttpsFetchError } from '../net/https-fetch.js';
import type { CertificateSummary } from '../net/tls-peer.js';
import type { Finding, SectionEnvelope } from '../findings.js';
import type { DaneOutcome } from '../dane/types.js';
import type { DaneVerdict, MxTlsa } from './dane.js';
import type { AddressClass } from '../net/address-guard.js';

/** RFC 8461 §3.2 policy modes. */
export type StsMode = 'enforce' | 'testing' | 'none';

/** A parsed `_mta-sts` TXT record, or why it is not one. */
export type StsRecordParse = { ok: true; id: string } | { ok: false; problem: string };

/** A parsed policy body, or why it is not one. */
export type StsPolicyParse =
  | { ok: true; policy: StsPolicy; ignored: string[] }
  | { ok: false; problem: string };

/** The policy fields a sender uses (RFC 8461 §3.2). */
export interface StsPolicy {
  mode: StsMode;
  /** Seconds a sender may cache the policy, 0..31557600. */
  maxAge: number;
  /** The mx patterns as published (lower case, no trailing dot). */
  mx: string[];
}

/** A parsed `_smtp._tls` record, or why it is not one. */
export type TlsRptParse = { ok: true; rua: string[] } | { ok: false; problem: string };

/**
 * Which of the TXT records at a name is THE record (RFC 8461 §3.1, RFC 8460 §3): those not starting
 * with the version are discarded; anything but exactly one is no record.
 * - `absent`: nothing resembling the record is published.
 * - `one`: exactly one candidate (`text`), still to be parsed.
 * - `invalid`: candidates that cannot be used (several, or a look-alike that senders discard).
 */
export type RecordSelection = { kind: 'absent' } | { kind: 'one'; text: string } | { kind: 'invalid'; problem: string; text: string | null };

/**
 * Why a policy fetch gave no policy (RFC 8461 §3.3).
 * - `dns-failure`: the address lookup of the policy host failed (not the same as no host).
 * - `no-address`: the policy host has no A or AAAA record.
 * - `refused-private`: it resolves only to addresses the probe may not reach (see the address guard).
 * - `unreachable`: no TCP connection (refused, timed out).
 * - `tls-failed`, `cert-expired`, `cert-untrusted`, `cert-name-mismatch`: the HTTPS certificate check failed.
 * - `redirect`: a 3xx answer (never followed, RFC 8461 §3.3).
 * - `http-status`: any other answer than 200.
 * - `content-type`: not `text/plain`.
 * - `too-large`: the body exceeded `MAX_POLICY_BYTES`.
 * - `timeout`: the whole fetch exceeded its deadline.
 * - `http-error`: the HTTP exchange broke (reset, malformed answer).
 */
export type PolicyFetchError = HttpsFetchError;

/** What one policy fetch did. */
export type PolicyFetch =
  | { ok: true; url: string; httpStatus: 200; body: string; address: string }
  | { ok: false; url: string; httpStatus: number | null; error: PolicyFetchError; detail: string; address: string | null };

/**
 * The one outcome of a STARTTLS probe of one MX address (RFC 3207, RFC 8461 §4.2).
 * - `ok`: STARTTLS offered, TLS 1.2 or later (RFC 8996), chain trusted, unexpired, a SAN DNS-ID matches the MX host.
 * - `unreachable`: no SMTP session (connection refused or timed out, no 220 greeting).
 * - `no-starttls`: the server does not offer STARTTLS, or refuses it.
 * - `tls-failed`: STARTTLS offered but the TLS handshake failed.
 * - `cert-expired`: the certificate is outside its validity period.
 * - `cert-untrusted`: the chain does not reach a trusted root (self-signed, unknown CA).
 * - `cert-name-mismatch`: trusted, but no SAN DNS-ID matches the MX host name.
 * - `refused-private`: not probed: the address is not public (see the address guard).
 */
export type ProbeOutcome =
  | 'ok'
  | 'unreachable'
  | 'no-starttls'
  | 'tls-failed'
  | 'cert-expired'
  | 'cert-untrusted'
  | 'cert-name-mismatch'
  | 'refused-private';

/** The outcomes where TLS was negotiated but the certificate failed a check. */
export const CERTIFICATE_FAILURES: ReadonlySet<ProbeOutcome> = new Set(['cert-expired', 'cert-untrusted', 'cert-name-mismatch']);

/** What the server's certificate says (the leaf): ../net/tls-peer.ts. */
export type { CertificateSummary } from '../net/tls-peer.js';

/** One MX address probed. */
export interface AddressProbe {
  address: string;
  outcome: ProbeOutcome;
  /**
   * The address guard's class of the address (`classifyAddress`): `public` for every address the
   * probe may reach; for `refused-private`, the one word that says why (`documentation`, `private`,
   * `loopback`…), the same class the finding and the MX list name.
   */
  addressClass: AddressClass;
  /** `TLSv1.3`, `TLSv1.2`…; null when no TLS session was set up. */
  tlsVersion: string | null;
  certificate: CertificateSummary | null;
}

/** What a probe found, with its detail for findings (not part of the JSON, nor is the class, added from the address). */
export interface ProbeResult extends Omit<AddressProbe, 'addressClass'> {
  /** Plain words on what happened (the error, the banner). */
  detail: string;
}

/**
 * The transport verdict, separate from the spoof verdict:
 * - `enforced`: a valid MTA-STS policy in enforce mode, every MX covered and `ok`.
 * - `opportunistic`: TLS offered, but nothing makes senders require it (no policy, testing, none),
 *   or it could not be confirmed for every MX.
 * - `at-risk`: some MX offers no TLS (and no enforce policy is published).
 * - `broken`: an enforce policy under which compliant senders must refuse to deliver (an MX not
 *   covered, or failing STARTTLS or its certificate): mail to this domain is being lost.
 * - `untested`: no MX address could be probed (every one private, unreachable or refused, or no MX
 *   host to probe): whether mail to the domain is protected in transit is not known. Never
 *   `opportunistic`, which says TLS was seen.
 * - `no-mail`: the domain publishes a null MX (RFC 7505): it accepts no mail, so there is no
 *   transport to protect and nothing to publish for it.
 */
export type TransportVerdict = 'enforced' | 'opportunistic' | 'at-risk' | 'broken' | 'untested' | 'no-mail';

/** `transport` of a result: the JSON shape the issue fixes, exactly. */
export interface TransportResult {
  verdict: TransportVerdict;
  mtaSts: {
    /**
     * `enforce` / `testing` / `none`: a valid record and policy in that mode. `absent`: nothing published
     * at `_mta-sts`. `invalid`: something is published but no valid record or policy results.
     */
    status: StsMode | 'absent' | 'invalid';
    /** The `_mta-sts` TXT record (strings joined), or null. */
    record: string | null;
    id: string | null;
    policy: { mode: StsMode; maxAge: number; mx: string[] } | null;
    /** The policy fetch; null when there was no record to fetch a policy for. */
    fetch: { url: string; httpStatus: number | null; error: PolicyFetchError | null } | null;
    /** Why the record or policy is not usable, or what is wrong with it, in plain words. */
    problems: string[];
  };
  tlsRpt: {
    status: 'valid' | 'absent' | 'invalid';
    record: string | null;
    rua: string[];
  };
  mx: {
    host: string;
    preference: number;
    /** Whether a policy mx pattern matches the host (RFC 8461 §4.1); null without a policy. */
    mtaStsCovered: boolean | null;
    /** DANE (RFC 7672): the TLSA records at `_25._tcp.<host>` and their DNSSEC state; only when DNSSEC was validated. */
    tlsa?: MxTlsa;
    addresses: (AddressProbe & { /** DANE for this address; only when DNSSEC was validated. */ dane?: DaneOutcome })[];
  }[];
  /** DANE over every MX (RFC 7672); only when DNSSEC was validated (`CheckOptions.dnssec`). */
  dane?: DaneVerdict;
  findings: Finding[];
}

/**
 * `transport` of a spoof check result: the transport check's result with the section envelope
 * (`SectionEnvelope`, added by sections.ts): `status` is the verdict, `nextSteps` the findings' own.
 */
export interface TransportSection extends TransportResult, SectionEnvelope<TransportVerdict> {}

/** Ports to connect to instead of the standard ones (test labs, relays): ../net/ports.ts. */
export type { ConnectPorts } from '../net/ports.js';
