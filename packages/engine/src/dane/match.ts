/**
 * Matching TLSA records against the chain an SMTP server sent (RFC 6698 §2.1, RFC 7671 §5, RFC 7672
 * §3.1): only DANE-TA(2) and DANE-EE(3) count for SMTP (RFC 7672 §3.1.3: PKIX usages are unusable);
 * selectors 0/1, matching types 0/1/2, the strongest digest per usage and selector (RFC 7671 §9).
 * DANE-EE matches the leaf and ignores names and dates (RFC 7671 §5.1); DANE-TA needs the trust
 * anchor in the chain as sent (RFC 7672 §3.1.2), a verified path from the leaf up to it with valid
 * dates and CA certificates, and the leaf valid for a reference name (RFC 7672 §3.2.2: a wildcard
 * only as the whole left-most label).
 */
import { createHash, X509Certificate } from 'node:crypto';
import type { DaneMatch, RolloverScheme, TlsaRecord } from './types.js';

/** Certificates of a presented chain looked at, at most (a hostile server can send many). */
export const MAX_CHAIN_CERTIFICATES = 10;

/** RFC 7672 §3.1: the usages, selectors and matching types a DANE SMTP client uses. */
export function isUsable(record: TlsaRecord): boolean {
  return (record.usage === 2 || record.usage === 3) && (record.selector === 0 || record.selector === 1) && record.matchingType >= 0 && record.matchingType <= 2;
}

/** `usage selector matching hex`, as the record is written. */
export function formatTlsa(record: TlsaRecord): string {
  return `${record.usage} ${record.selector} ${record.matchingType} ${record.data.toString('hex')}`;
}

/** Reads a TLSA RDATA (RFC 6698 §2.1); undefined when shorter than its fixed part. */
export function parseTlsaRdata(rdata: Buffer): TlsaRecord | undefined {
  if (rdata.length < 3) return undefined;
  return { usage: rdata[0] as number, selector: rdata[1] as number, matchingType: rdata[2] as number, data: Buffer.from(rdata.subarray(3)) };
}

/** The octets a record's selector and matching type say to compare (RFC 6698 §2.1.2, §2.1.3). */
export function associationData(cert: X509Certificate, selector: number, matchingType: number): Buffer {
  const selected = selector === 0 ? cert.raw : cert.publicKey.export({ type: 'spki', format: 'der' });
  if (matchingType === 1) return createHash('sha256').update(selected).digest();
  if (matchingType === 2) return createHash('sha512').update(selected).digest();
  return Buffer.from(selected);
}

/** RFC 7671 §9: per usage and selector, only the strongest digest present (SHA-512 over SHA-256); exact matches stay. */
function agile(records: readonly TlsaRecord[]): TlsaRecord[] {
  return records.filter((r) => r.matchingType !== 1 || !records.some((o) => o.usage === r.usage && o.selector === r.selector && o.matchingType === 2));
}

/**
 * Matches `records` against `chain` (DER or X509Certificate, leaf first, exactly as the server sent
 * it) for the reference `names` (the TLSA base domain, then the MX name), at `now`.
 */
export function matchTlsa(records: readonly TlsaRecord[], chainAsSent: readonly (Buffer | X509Certificate)[], names: readonly string[], now: Date = new Date()): DaneMatch {
  const usable = agile(records.filter(isUsable));
  if (usable.length === 0) {
    return { outcome: 'no-usable-tlsa', matched: null, detail: records.length === 0 ? 'no TLSA records' : 'no usable TLSA record (only PKIX usages 0/1, or unknown selectors or matching types): DANE senders require TLS without authenticating it' };
  }
  let chain: X509Certificate[];
  try {
    chain = chainAsSent.slice(0, MAX_CHAIN_CERTIFICATES).map((c) => (c instanceof X509Certificate ? c : new X509Certificate(c)));
  } catch (error) {
    return { outcome: 'mismatch', matched: null, detail: `a certificate the server sent cannot be read: ${(error as Error).message}` };
  }
  const leaf = chain[0];
  if (!leaf) return { outcome: 'mismatch', matched: null, detail: 'the server sent no certificate' };
  const problems: string[] = [];
  for (const record of usable) {
    if (record.usage === 3) {
      // RFC 7671 §5.1: DANE-EE matches the leaf's data; names and validity dates do not matter.
      if (associationData(leaf, record.selector, record.matchingType).equals(record.data)) {
        return { outcome: 'match', matched: { record: formatTlsa(record), depth: 0 }, detail: `DANE-EE ${record.usage} ${record.selector} ${record.matchingType} matches the server's certificate` };
      }
      continue;
    }
    for (let depth = 0; depth < chain.length; depth++) {
      const anchor = chain[depth] as X509Certificate;
      if (!associationData(anchor, record.selector, record.matchingType).equals(record.data)) continue;
      const why = pathProblem(chain, depth, names, now);
      if (why === null) {
        return { outcome: 'match', matched: { record: formatTlsa(record), depth }, detail: `DANE-TA ${record.usage} ${record.selector} ${record.matchingType} matches the trust anchor at depth ${depth}, and the chain to it verifies for ${names[0]}` };
      }
      problems.push(`${formatTlsa(record).slice(0, 6)} matches the certificate at depth ${depth}, but ${why}`);
    }
  }
  const taOnly = usable.every((r) => r.usage === 2);
  return {
    outcome: 'mismatch',
    matched: null,
    detail: problems[0] ?? (taOnly ? 'no DANE-TA record matches a certificate the server sent (the trust anchor must be in the chain it sends, RFC 7672 §3.1.2)' : 'no TLSA record matches the certificate the server presents'),
  };
}

/** RFC 7671 §5.2: the path from the leaf to the anchor at `depth`, its dates, CA bits and the leaf's name. */
function pathProblem(chain: readonly X509Certificate[], depth: number, names: readonly string[], now: Date): string | null {
  for (let i = 0; i < depth; i++) {
    const child = chain[i] as X509Certificate;
    const issuer = chain[i + 1] as X509Certificate;
    if (!child.checkIssued(issuer) || !child.verify(issuer.publicKey)) return `the certificate at depth ${i} is not signed by the one at depth ${i + 1}`;
    if (!issuer.ca) return `the certificate at depth ${i + 1} is not a CA certificate`;
  }
  // The anchor's own dates are not checked (it is trusted as published, RFC 7671 §5.2.2); the rest are.
  for (let i = 0; i < depth; i++) {
    const cert = chain[i] as X509Certificate;
    if (now.getTime() < Date.parse(cert.validFrom) || now.getTime() > Date.parse(cert.validTo)) {
      return `the certificate at depth ${i} is outside its validity period (${cert.validFrom} – ${cert.validTo})`;
    }
  }
  const leaf = chain[0] as X509Certificate;
  // RFC 7672 §3.2.2: DNS names only (no subject CN fallback needed by DANE-TA), wildcard as the whole left-most label.
  if (!names.some((name) => leaf.checkHost(name, { wildcards: true, partialWildcards: false, subject: 'default' }) !== undefined)) {
    return `the leaf certificate is not valid for ${names.join(' or ')} (DANE-TA checks the name)`;
  }
  return null;
}

/** RFC 7671 §8.1, as internet.nl's rollover test reads it: `3 x x` twice, or `3 x x` beside `2 x x`. */
export function rolloverScheme(records: readonly TlsaRecord[]): RolloverScheme {
  const usable = records.filter(isUsable);
  const ee = usable.filter((r) => r.usage === 3).length;
  const ta = usable.filter((r) => r.usage === 2).length;
  if (ee > 1) return 'current+next';
  if (ee >= 1 && ta >= 1) return 'current+issuer';
  return 'none';
}
