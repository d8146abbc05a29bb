/**
 * Mark certificates (VMC and CMC): draft-fetch-validation-vmc-wchuang ("Validation of VMC
 * Evidence Document"), the AuthIndicators Minimum Security Requirements (MCR), RFC 5280 §6.1
 * path validation by signature, RFC 9399 (logotype, which obsoletes RFC 3709 and RFC 6170).
 *
 * The chain is checked with signatures, never names: `checkIssued` only compares names and key
 * identifiers (OpenSSL X509_check_issued), so each link is also `verify`-ed with the issuer's
 * public key. Only the shipped Mark Verifying Authority roots (data/bimi-roots/) and roots the
 * caller injects are anchors: a root sent inside the served bundle never is.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { certificateParts, childrenOf, DerError, findAll, oidOf, stringOf, type CertificateParts, type Tlv } from './der.js';
import { pathConstraintProblems } from './path-constraints.js';
import type { BimiCertificate } from './types.js';

/** id-kp-BrandIndicatorforMessageIdentification (IANA SMI id-kp 31; draft-fetch-validation-vmc-wchuang): the BIMI EKU. */
export const BIMI_EKU = '1.3.6.1.5.5.7.3.31';
/** RFC 9399 §4.1: id-pe-logotype. */
export const LOGOTYPE_OID = '1.3.6.1.5.5.7.1.12';
/** MCR §7.1.4.2.2: the mark type subject attribute. */
export const MARK_TYPE_OID = '1.3.6.1.4.1.53087.1.13';
/** RFC 6962 §3.3: the embedded SCT list. */
const SCT_OID = '1.3.6.1.4.1.11129.2.4.2';
/** RFC 5280 §4.2.1.12, §4.2.1.13. */
const EKU_OID = '2.5.29.37';
const CRL_DP_OID = '2.5.29.31';
/** Certificates read from one bundle at most (real bundles hold 2 or 3). */
export const MAX_BUNDLE_CERTIFICATES = 8;
/** Links followed from the leaf at most (checkdmarc verifies to depth 5). */
export const MAX_CHAIN_DEPTH = 5;

/** Mark types (MCR §7.1.4.2.2) and the certificate kind each gives. */
export const MARK_TYPES: Readonly<Record<string, 'VMC' | 'CMC'>> = {
  'Registered Mark': 'VMC',
  'Government Mark': 'VMC',
  'Prior Use Mark': 'CMC',
  'Modified Registered Mark': 'CMC',
};

/** Hash algorithms a logotype may name (RFC 9399 §4.1 HashAlgAndValue), by OID. */
const HASH_ALGORITHMS: Record<string, string> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};

/** A trust anchor: a Mark Verifying Authority root. */
export interface BimiRoot {
  name: string;
  certificate: X509Certificate;
  /** Accepted with a warning (an authority no longer listed). */
  legacy: boolean;
}

interface RootsFile {
  version: string;
  roots: { name: string; file: string; sha256: string; legacy: boolean }[];
}

/** The folder of the shipped roots (roots.json and one PEM per root). */
export const BIMI_ROOTS_DIR = fileURLToPath(new URL('../../data/bimi-roots/', import.meta.url));

let shipped: BimiRoot[] | null = null;

/**
 * The shipped Mark Verifying Authority roots (data/bimi-roots/roots.json), each file's SHA-256
 * fingerprint checked against the list. Throws when a file is missing or its fingerprint differs
 * (a packaging error, never a stranger's input).
 */
export function shippedBimiRoots(): BimiRoot[] {
  if (shipped) return shipped;
  const list = JSON.parse(readFileSync(`${BIMI_ROOTS_DIR}roots.json`, 'utf8')) as RootsFile;
  shipped = list.roots.map((entry) => {
    const certificate = new X509Certificate(readFileSync(`${BIMI_ROOTS_DIR}${entry.file}`));
    const fingerprint = certificate.fingerprint256.replace(/:/g, '').toUpperCase();
    if (fingerprint !== entry.sha256.toUpperCase()) throw new Error(`data/bimi-roots/${entry.file}: SHA-256 ${fingerprint} is not the listed ${entry.sha256}`);
    return { name: entry.name, certificate, legacy: entry.legacy };
  });
  return shipped;
}

/** Splits PEM text into certificates; what does not parse is returned as a problem. */
export function parsePemBundle(pem: string): { certificates: X509Certificate[]; problems: string[] } {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  const problems: string[] = [];
  const certificates: X509Certificate[] = [];
  if (blocks.length === 0) problems.push('the document holds no PEM certificate ("-----BEGIN CERTIFICATE-----")');
  if (blocks.length > MAX_BUNDLE_CERTIFICATES) problems.push(`the document holds ${blocks.length} certificates; only the first ${MAX_BUNDLE_CERTIFICATES} were read`);
  blocks.slice(0, MAX_BUNDLE_CERTIFICATES).forEach((block, index) => {
    try {
      certificates.push(new X509Certificate(block));
    } catch (error) {
      problems.push(`certificate ${index + 1} of the document does not parse (${error instanceof Error ? error.message : String(error)})`);
    }
  });
  return { certificates, problems };
}

/** Extra roots given by the caller (PEM text), for labs and private authorities. */
export function bimiRootsFromPem(pem: string, label = 'extra root'): BimiRoot[] {
  const parsed = parsePemBundle(pem);
  if (parsed.problems.length > 0) throw new Error(`the extra BIMI roots: ${parsed.problems.join('; ')}`);
  return parsed.certificates.map((certificate) => ({ name: `${label}: ${commonName(certificate.subject)}`, certificate, legacy: false }));
}

/** What the certificate check needs beside the bundle. */
export interface MarkCertificateInput {
  /** The PEM document served at `a=`. */
  pem: string;
  url: string;
  /** The domain checked, its organizational domain, and the selector (for the SAN rule). */
  domain: string;
  organizationalDomain: string;
  selector: string;
  /** The served logo, inflated if it was an SVGZ; null when it could not be fetched. */
  logo: Uint8Array | null;
  roots: readonly BimiRoot[];
  now: Date;
}

/**
 * A certificate result with nothing judged: the document was not fetched (`fetch`), held no usable
 * certificate, or its leaf could not be read. `problems` says why, and the chain is not trusted.
 */
export function unjudgedCertificate(url: string, fetch: BimiCertificate['fetch'], problems: string[]): BimiCertificate {
  return {
    url,
    fetch,
    kind: null,
    markType: null,
    subject: null,
    issuer: null,
    serial: null,
    notBefore: null,
    notAfter: null,
    daysLeft: null,
    chain: { trusted: false, anchor: null, problems },
    bimiEku: false,
    san: [],
    sanMatch: false,
    logotype: null,
    sct: { present: false, count: 0 },
    crl: { present: false, urls: [] },
  };
}

/**
 * Judges a mark certificate bundle. Every outcome is a value: a bundle that does not parse gives
 * `chain.trusted: false` with the reason in `chain.problems`.
 */
export function checkMarkCertificate(input: MarkCertificateInput): BimiCertificate {
  const { certificates, problems } = parsePemBundle(input.pem);
  const empty = unjudgedCertificate(input.url, null, problems);
  const leaf = certificates[0];
  if (!leaf) return empty;
  let parts: CertificateParts;
  try {
    parts = certificateParts(new Uint8Array(leaf.raw));
  } catch (error) {
    problems.push(`the mark certificate's extensions cannot be read (${error instanceof DerError ? error.message : String(error)})`);
    return empty;
  }
  const der = new Uint8Array(leaf.raw);
  const notBefore = new Date(leaf.validFrom);
  const notAfter = new Date(leaf.validTo);
  const markType = parts.subject.get(MARK_TYPE_OID) ?? null;
  // MCR: CMCs (2024) always carry the mark type; a VMC issued before it existed has none.
  const kind = markType === null ? 'VMC' : (MARK_TYPES[markType] ?? null);
  if (markType !== null && kind === null) problems.push(`the mark type "${markType}" is none of ${Object.keys(MARK_TYPES).join(', ')}`);
  if (leaf.ca) problems.push('the first certificate of the document is a CA certificate; the mark certificate must come first (leaf first, then its issuers)');

  const chain = verifyChain(leaf, certificates.slice(1), input.roots, input.now, problems);
  const ext = (oid: string) => parts.extensions.find((e) => e.oid === oid);

  const eku = ext(EKU_OID);
  const ekus = eku ? readOids(der, eku.value) : [];
  const san = dnsNames(leaf.subjectAltName);
  const accepted = new Set([input.domain, input.organizationalDomain, `${input.selector}._bimi.${input.domain}`, `${input.selector}._bimi.${input.organizationalDomain}`]);
  const sanMatch = san.some((name) => accepted.has(name));

  let logotype: BimiCertificate['logotype'] = null;
  const logo = ext(LOGOTYPE_OID);
  if (logo) {
    try {
      logotype = readLogotype(der, logo.value, input.logo);
    } catch (error) {
      problems.push(`the logotype extension cannot be read (${error instanceof Error ? error.message : String(error)})`);
    }
  }
  const sct = ext(SCT_OID);
  const crl = ext(CRL_DP_OID);
  return {
    ...empty,
    kind,
    markType,
    subject: leaf.subject.replace(/\n/g, ', '),
    issuer: leaf.issuer.replace(/\n/g, ', '),
    serial: leaf.serialNumber,
    notBefore: notBefore.toISOString(),
    notAfter: notAfter.toISOString(),
    daysLeft: Math.floor((notAfter.getTime() - input.now.getTime()) / 86_400_000),
    chain,
    bimiEku: ekus.includes(BIMI_EKU),
    san,
    sanMatch,
    logotype,
    sct: { present: sct !== undefined, count: sct ? countScts(der, sct.value) : 0 },
    crl: { present: crl !== undefined, urls: crl ? findAll(der, crl.value, 0x86).map((t) => stringOf(der, t)) : [] },
  };
}

/**
 * RFC 5280 §6.1, by signature: from the leaf, each certificate's issuer is a trusted root whose key
 * verifies its signature, or a CA certificate of the bundle that does. Validity dates of every
 * certificate on the path are checked at `now`; a BIMI issuing CA must carry the BIMI EKU; path
 * length, key usage and name constraints of every issuer, the anchor's included (./path-constraints.ts).
 */
function verifyChain(leaf: X509Certificate, bundle: X509Certificate[], roots: readonly BimiRoot[], now: Date, problems: string[]): BimiCertificate['chain'] {
  const rootPrints = new Set(roots.map((root) => root.certificate.fingerprint256));
  const used = new Set<X509Certificate>([leaf]);
  let current = leaf;
  let anchor: BimiRoot | null = null;
  const path: X509Certificate[] = [leaf];
  for (let depth = 0; depth <= MAX_CHAIN_DEPTH && !anchor; depth++) {
    // A trusted root first: its key, never the bundle's copy of its name.
    const root = roots.find((candidate) => issuedBy(current, candidate.certificate));
    if (root) {
      anchor = root;
      break;
    }
    const next = bundle.find((candidate) => !used.has(candidate) && !rootPrints.has(candidate.fingerprint256) && issuedBy(current, candidate));
    if (!next) {
      const lookalike = [...roots.map((r) => r.certificate), ...bundle].find((candidate) => candidate !== current && current.checkIssued(candidate) && !current.verify(candidate.publicKey));
      const name = commonName(current.subject);
      if (lookalike) problems.push(`the signature of "${name}" does not verify with the key of "${commonName(lookalike.subject)}", whose name it carries as issuer: a forged or altered certificate`);
      else if (current.checkIssued(current) && current.verify(current.publicKey)) problems.push(`the chain ends at the self-signed "${name}", which is not a recognised Mark Verifying Authority root (a root sent in the document is never trusted)`);
      // An issuing CA of the bundle whose root is not trusted here: a missing root, not a missing certificate (issue 42).
      else if (current !== leaf && current.ca) problems.push(`the chain reaches the issuing CA "${name}", but its root "${commonName(current.issuer)}" is not among the Mark Verifying Authority roots trusted here (${roots.length} shipped or given): receivers that do not know that authority will not show the logo; if you trust it, add its root with --bimi-roots`);
      else problems.push(`no issuer of "${name}" (issued by "${commonName(current.issuer)}") is in the document or among the Mark Verifying Authority roots: append the issuing CA certificate after yours`);
      break;
    }
    used.add(next);
    path.push(next);
    current = next;
  }
  if (!anchor && problems.length === 0) problems.push(`the chain is longer than ${MAX_CHAIN_DEPTH} certificates`);
  for (const [index, certificate] of [...path, ...(anchor ? [anchor.certificate] : [])].entries()) {
    const from = new Date(certificate.validFrom);
    const to = new Date(certificate.validTo);
    const which = index === 0 ? 'the mark certificate' : `"${commonName(certificate.subject)}"`;
    if (now < from) problems.push(`${which} is not valid before ${from.toISOString().slice(0, 10)}`);
    if (now > to) problems.push(`${which} expired on ${to.toISOString().slice(0, 10)}`);
  }
  // draft-fetch-validation: the issuing CA MUST carry the BIMI EKU too.
  const issuing = path[1] ?? null;
  if (issuing) {
    try {
      const raw = new Uint8Array(issuing.raw);
      const eku = certificateParts(raw).extensions.find((e) => e.oid === EKU_OID);
      if (!eku || !readOids(raw, eku.value).includes(BIMI_EKU)) problems.push(`the issuing CA "${commonName(issuing.subject)}" does not carry the BIMI key usage ${BIMI_EKU}`);
    } catch {
      problems.push(`the issuing CA "${commonName(issuing.subject)}" cannot be read`);
    }
  }
  // RFC 5280 §6.1: path length, key usage and name constraints of every issuer (./path-constraints.ts).
  if (anchor) problems.push(...pathConstraintProblems(path, anchor.certificate, (certificate, index) => (index === 0 ? 'the mark certificate' : `"${commonName(certificate.subject)}"`)));
  if (anchor?.legacy) problems.push(`the chain ends at "${anchor.name}", an authority some receivers no longer trust`);
  const trusted = anchor !== null && problems.length === 0;
  return { trusted, anchor: anchor ? anchor.name : null, problems };
}

/**
 * RFC 5280 §6.1.3 (a) (iv): `child` names `parent` as its issuer and `parent`'s key verifies its
 * signature. Not `checkIssued` nor `.ca`: they also refuse an issuer without keyCertSign, which
 * ./path-constraints.ts reports by name (with an issuer that is no CA) instead of "no issuer".
 */
function issuedBy(child: X509Certificate, parent: X509Certificate): boolean {
  return child.issuer === parent.subject && child.verify(parent.publicKey);
}

/** RFC 9399 §4.1: subjectLogo [2] → direct [0] → image[0].imageDetails: media type, hash, and the served logo compared. */
function readLogotype(der: Uint8Array, value: Tlv, served: Uint8Array | null): { mediaType: string; hashAlg: string; hashOk: boolean } | null {
  const subjectLogo = childrenOf(der, value).find((t) => t.tag === 0xa2);
  if (!subjectLogo) return null;
  const direct = childrenOf(der, subjectLogo).find((t) => t.tag === 0xa0);
  if (!direct) return null; // indirect logotypes are not used by mark certificates
  const images = childrenOf(der, direct)[0];
  const image = images ? childrenOf(der, images)[0] : undefined;
  const details = image ? childrenOf(der, image)[0] : undefined;
  if (!details) throw new DerError('no image details');
  const [mediaTlv, hashes] = childrenOf(der, details);
  if (!mediaTlv || !hashes) throw new DerError('incomplete image details');
  const mediaType = stringOf(der, mediaTlv);
  const first = childrenOf(der, hashes)[0];
  if (!first) throw new DerError('no logotype hash');
  const [algorithm, hashValue] = childrenOf(der, first);
  if (!algorithm || !hashValue) throw new DerError('incomplete logotype hash');
  const algorithmOid = childrenOf(der, algorithm)[0];
  const hashAlg = algorithmOid ? (HASH_ALGORITHMS[oidOf(der, algorithmOid)] ?? oidOf(der, algorithmOid)) : 'unknown';
  const expected = Buffer.from(der.subarray(hashValue.valueStart, hashValue.end));
  let hashOk = false;
  if (served && Object.values(HASH_ALGORITHMS).includes(hashAlg)) hashOk = createHash(hashAlg).update(served).digest().equals(expected);
  return { mediaType, hashAlg, hashOk };
}

function readOids(der: Uint8Array, value: Tlv): string[] {
  return childrenOf(der, value)
    .filter((t) => t.tag === 0x06)
    .map((t) => oidOf(der, t));
}

/** RFC 6962 §3.3: the SignedCertificateTimestampList (an OCTET STRING holding u16 length, then u16-prefixed SCTs). */
function countScts(der: Uint8Array, value: Tlv): number {
  const inner = value.tag === 0x04 ? der.subarray(value.valueStart, value.end) : der.subarray(value.start, value.end);
  if (inner.length < 2) return 0;
  const total = ((inner[0] as number) << 8) | (inner[1] as number);
  let count = 0;
  for (let pos = 2; pos + 2 <= Math.min(inner.length, total + 2); count++) pos += 2 + (((inner[pos] as number) << 8) | (inner[pos + 1] as number));
  return count;
}

function dnsNames(subjectAltName: string | undefined): string[] {
  if (!subjectAltName) return [];
  return subjectAltName
    .split(/,\s*/)
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4).toLowerCase().replace(/\.$/, ''));
}

function commonName(name: string): string {
  return /(?:^|\n)CN=([^\n]*)/.exec(name)?.[1] ?? name.replace(/\n/g, ', ');
}
