/**
 * DANE for SMTP (RFC 7672, RFC 7671, RFC 6698): TLSA records and what matching them against the
 * certificate chain an MX presented says.
 */

/** One TLSA record (RFC 6698 §2.1). */
export interface TlsaRecord {
  /** 0 PKIX-TA, 1 PKIX-EE, 2 DANE-TA, 3 DANE-EE (RFC 7218 names). */
  usage: number;
  /** 0 the whole certificate, 1 its SubjectPublicKeyInfo. */
  selector: number;
  /** 0 exact, 1 SHA-256, 2 SHA-512. */
  matchingType: number;
  data: Buffer;
}

/**
 * Per MX address (RFC 7672 §2.2):
 * - `match`: a usable secure TLSA record matches the chain the server sent;
 * - `mismatch`: usable secure TLSA records exist and none matches: DANE senders refuse to deliver;
 * - `no-usable-tlsa`: TLSA records exist but none is usable (only usages 0/1, unknown selectors or
 *   matching types): DANE senders still require TLS, unauthenticated (RFC 7672 §2.2);
 * - `not-applicable`: DANE does not apply (the MX or its addresses are not secure, no secure TLSA).
 */
export type DaneOutcome = 'match' | 'mismatch' | 'no-usable-tlsa' | 'not-applicable';

/** What matching found: the outcome, the record and depth that matched, and why not otherwise. */
export interface DaneMatch {
  outcome: DaneOutcome;
  /** The record that matched, as `usage selector matching hex`, and the chain depth (0 = the leaf). */
  matched: { record: string; depth: number } | null;
  detail: string;
}

/** RFC 7671 §8.1 as internet.nl reads it: a set that survives a key or certificate change. */
export type RolloverScheme = 'current+next' | 'current+issuer' | 'none';
