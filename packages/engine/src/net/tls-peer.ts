/**
 * The certificate checks both connections make (the policy host, RFC 8461 §3.3; each MX, RFC 8461
 * §4.2): the chain reaches a trusted root, the leaf is inside its validity period, and a
 * subjectAltName DNS-ID matches the host name the connection was made for (sent as SNI). TLS 1.2
 * is the least version accepted (RFC 8996 deprecates TLS 1.0 and 1.1).
 *
 * Connections are made with `rejectUnauthorized: false` and judged here, so that each failure gets
 * its own outcome (checkdmarc reports every certificate error as "no STARTTLS").
 */
import { rootCertificates, createSecureContext, type PeerCertificate, type SecureContext, type TLSSocket } from 'node:tls';
import { certificateNameMatches } from './host-names.js';

/** What the server's certificate says (the leaf). */
export interface CertificateSummary {
  /** The subject as `CN=…, O=…`. */
  subject: string;
  /** The DNS names of its subjectAltName. */
  san: string[];
  issuer: string;
  /** ISO 8601. */
  notBefore: string;
  notAfter: string;
}

/** How a TLS peer was judged: `ok`, or the first check it failed. */
export type PeerOutcome = 'ok' | 'tls-failed' | 'cert-expired' | 'cert-untrusted' | 'cert-name-mismatch';

/** RFC 8996: TLS 1.2 or later. */
export const MIN_TLS_VERSION = 'TLSv1.2';

/** The roots a connection trusts: Node's bundled roots, plus extra PEM roots (`--tls-ca`). */
export interface TlsTrust {
  /** Undefined for the defaults alone. */
  secureContext: SecureContext | undefined;
  /** A short key telling trust sets apart in caches ('' for the defaults). */
  key: string;
}

/** Trust sets built lately, by their PEM: building one parses every bundled root (milliseconds, and memory). */
const TRUST_MEMO = new Map<string, TlsTrust>();
/** Distinct extra-root sets remembered (a process has one or two: its flags). */
export const MAX_TRUST_SETS = 8;

/** Extra roots added to the defaults; none gives the defaults. Throws for PEM that does not load. */
export function tlsTrust(extraPem?: string | undefined): TlsTrust {
  if (extraPem === undefined || extraPem.trim() === '') return { secureContext: undefined, key: '' };
  const held = TRUST_MEMO.get(extraPem);
  if (held) return held;
  const built = buildTrust(extraPem);
  TRUST_MEMO.set(extraPem, built);
  if (TRUST_MEMO.size > MAX_TRUST_SETS) TRUST_MEMO.delete(TRUST_MEMO.keys().next().value as string);
  return built;
}

function buildTrust(extraPem: string): TlsTrust {
  if (!/-----BEGIN CERTIFICATE-----/.test(extraPem)) throw new Error('the extra trusted roots hold no PEM certificate ("-----BEGIN CERTIFICATE-----")');
  const secureContext = createSecureContext({ ca: [...rootCertificates, extraPem], minVersion: MIN_TLS_VERSION });
  let hash = 0;
  for (let i = 0; i < extraPem.length; i++) hash = (hash * 31 + extraPem.charCodeAt(i)) | 0;
  return { secureContext, key: `ca:${extraPem.length}:${hash >>> 0}` };
}

/** What a finished handshake says about the peer. */
export interface PeerJudgement {
  outcome: PeerOutcome;
  tlsVersion: string | null;
  certificate: CertificateSummary | null;
  detail: string;
}

/** OpenSSL verification errors that mean the validity period, not the chain (RFC 5280 §4.1.2.5). */
const VALIDITY_ERRORS = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'ERROR_IN_CERT_NOT_BEFORE_FIELD', 'ERROR_IN_CERT_NOT_AFTER_FIELD']);

/** Judges a TLS socket after 'secureConnect' for `host` (the SNI name and the name to match). */
export function judgePeer(socket: TLSSocket, host: string, now: Date): PeerJudgement {
  const tlsVersion = socket.getProtocol() ?? null;
  const peer = socket.getPeerCertificate(false);
  if (!peer || Object.keys(peer).length === 0) return { outcome: 'tls-failed', tlsVersion, certificate: null, detail: 'the server presented no certificate' };
  const certificate = summarise(peer);
  const notBefore = Date.parse(certificate.notBefore);
  const notAfter = Date.parse(certificate.notAfter);
  const error = socket.authorizationError ? String(socket.authorizationError) : null;
  if (now.getTime() > notAfter || now.getTime() < notBefore || (error !== null && VALIDITY_ERRORS.has(error))) {
    const leafOutside = now.getTime() > notAfter || now.getTime() < notBefore;
    const detail = !leafOutside
      ? `a certificate in the chain is outside its validity period (${error})`
      : now.getTime() < notBefore
        ? `the certificate is not valid before ${certificate.notBefore}`
        : `the certificate expired on ${certificate.notAfter}`;
    return { outcome: 'cert-expired', tlsVersion, certificate, detail };
  }
  if (!socket.authorized) {
    return { outcome: 'cert-untrusted', tlsVersion, certificate, detail: `the certificate chain does not reach a trusted root (${error ?? 'not verified'}; issuer ${certificate.issuer})` };
  }
  if (!certificateNameMatches(certificate.san, host)) {
    const names = certificate.san.length > 0 ? certificate.san.join(', ') : 'none (a subject CN does not count)';
    return { outcome: 'cert-name-mismatch', tlsVersion, certificate, detail: `the certificate is not valid for ${host}: its DNS names are ${names}` };
  }
  return { outcome: 'ok', tlsVersion, certificate, detail: `${tlsVersion ?? 'TLS'}, certificate valid for ${host} until ${certificate.notAfter}` };
}

/** The leaf's subject, DNS SANs, issuer and validity. */
export function summarise(peer: PeerCertificate): CertificateSummary {
  return {
    subject: distinguishedName(peer.subject),
    san: dnsNames(peer.subjectaltname),
    issuer: distinguishedName(peer.issuer),
    notBefore: isoDate(peer.valid_from),
    notAfter: isoDate(peer.valid_to),
  };
}

function distinguishedName(name: PeerCertificate['subject'] | undefined): string {
  if (!name) return '';
  return Object.entries(name)
    .map(([key, value]) => `${key}=${Array.isArray(value) ? value.join('+') : String(value)}`)
    .join(', ');
}

/** `DNS:a.example, IP Address:192.0.2.1, DNS:*.b.example` → ['a.example', '*.b.example']. */
function dnsNames(subjectAltName: string | undefined): string[] {
  if (!subjectAltName) return [];
  return subjectAltName
    .split(/,\s*/)
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4).toLowerCase());
}

function isoDate(text: string | undefined): string {
  const ms = text ? Date.parse(text) : Number.NaN;
  return Number.isNaN(ms) ? '' : new Date(ms).toISOString();
}
