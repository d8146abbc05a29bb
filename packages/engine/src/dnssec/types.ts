/**
 * The DNSSEC validator's vocabulary: the four states of RFC 4033 §5 / RFC 4035 §4.3, the reasons as
 * RFC 8914 Extended DNS Error codes (the code unbound gives for the same case) with a sentence, and
 * the raw query port the validator asks through.
 */
import type { RawRRset } from '../dns/canonical.js';

/**
 * `secure`: an unbroken chain from a trust anchor; `insecure`: a proven absence of one (a signed
 * denial of the DS, or only unsupported algorithms); `bogus`: a chain should exist and does not
 * hold; `indeterminate`: the material could not be had (never shown as secure).
 */
export type DnssecStatus = 'secure' | 'insecure' | 'bogus' | 'indeterminate';

/** RFC 8914 §4: the Extended DNS Error codes this validator gives. */
export const EDE = {
  OTHER: 0,
  UNSUPPORTED_DNSKEY_ALGORITHM: 1,
  UNSUPPORTED_DS_DIGEST: 2,
  DNSSEC_INDETERMINATE: 5,
  DNSSEC_BOGUS: 6,
  SIGNATURE_EXPIRED: 7,
  SIGNATURE_NOT_YET_VALID: 8,
  DNSKEY_MISSING: 9,
  RRSIGS_MISSING: 10,
  NO_ZONE_KEY_BIT: 11,
  NSEC_MISSING: 12,
  NO_REACHABLE_AUTHORITY: 22,
  UNSUPPORTED_NSEC3_ITERATIONS: 27,
} as const;

/** Why a state is what it is: the RFC 8914 code (null when nothing went wrong) and a sentence. */
export interface DnssecReason {
  code: number | null;
  text: string;
}

/** One RRset's (or one denial's) validation. */
export interface RRsetValidation {
  name: string;
  /** The type's mnemonic (`MX`, `TXT`, `CNAME`, …). */
  type: string;
  status: DnssecStatus;
  reason: DnssecReason;
}

/** What one question's validation found. */
export interface ValidationResult {
  /** The question. */
  name: string;
  type: string;
  /** The weakest link of the chain (RFC 4035 §5: any bogus ⇒ bogus; else any insecure ⇒ insecure). */
  status: DnssecStatus;
  reason: DnssecReason;
  /** What the answer was: the records (their RRset), no data, no such name, or a failure to ask. */
  answer: 'records' | 'nodata' | 'nxdomain' | 'error';
  /** The final RRset when `answer` is `records`. */
  rrset: RawRRset | undefined;
  /** Each link: the CNAMEs followed and the final RRset or denial. */
  links: RRsetValidation[];
}

/** The raw query port (defined with the raw codec in the DNS layer, which asks through it). */
export type { RawQuery, RawResponse } from '../dns/canonical.js';

/** A trust anchor: a zone and its DS records or DNSKEY RDATAs (RFC 4033 §2, RFC 7958). */
export interface TrustAnchor {
  zone: string;
  /** DS RDATAs. */
  ds: Buffer[];
  /** DNSKEY RDATAs. */
  dnskeys: Buffer[];
}
