/**
 * RFC 5280 §6.1 constraints on a mark certificate's path, beyond signatures and dates (which
 * ./certificate.ts checks): for every issuer on the path (each intermediate and the trust anchor,
 * as RFC 5937 §3 lets a relying party apply the anchor's own constraints):
 * - basic constraints: an issuer is a CA (§4.2.1.9, §6.1.4 (k)), and its `pathLenConstraint` bounds
 *   the non-self-issued intermediates below it (§4.2.1.9, §6.1.4 (l), (m)): a sub-CA under a
 *   `pathlen:0` CA is refused;
 * - key usage: an issuer that has the extension asserts `keyCertSign` (§4.2.1.3, §6.1.4 (n));
 * - name constraints (§4.2.1.10, §6.1.3 (b), (c), §6.1.4 (g)): the names of every certificate below
 *   an issuer that carries them (the subject's distinguished name, the subjectAltName DNS names)
 *   are within its permitted subtrees and outside its excluded ones. dNSName and directoryName are
 *   checked; a constraint of another type (email, URI, IP) fails closed when a certificate below
 *   carries a name of that type.
 * Every outcome is a problem sentence; a certificate whose extensions cannot be read is one too.
 */
import type { X509Certificate } from 'node:crypto';
import { certificateParts, childrenOf, DerError, stringOf, type Extension, type Tlv } from './der.js';

/** RFC 5280 §4.2.1.9, §4.2.1.3, §4.2.1.10, §4.2.1.6. */
const BASIC_CONSTRAINTS_OID = '2.5.29.19';
const KEY_USAGE_OID = '2.5.29.15';
const NAME_CONSTRAINTS_OID = '2.5.29.30';
const SUBJECT_ALT_NAME_OID = '2.5.29.17';
/** keyCertSign is bit 5 of KeyUsage (§4.2.1.3): in the first content octet after the unused-bits octet. */
const KEY_CERT_SIGN_MASK = 0x80 >> 5;
/** GeneralName tags (§4.2.1.6): [2] dNSName (IA5String, implicit), [4] directoryName (Name, explicit). */
const DNS_NAME_TAG = 0x82;
const DIRECTORY_NAME_TAG = 0xa4;
/** Names of the other GeneralName choices, for the sentence when one cannot be checked. */
const GENERAL_NAME_KINDS: Readonly<Record<number, string>> = { 0xa0: 'otherName', 0x81: 'rfc822Name (email)', 0x82: 'dNSName', 0xa3: 'x400Address', 0xa4: 'directoryName', 0xa5: 'ediPartyName', 0x86: 'URI', 0x87: 'iPAddress', 0x88: 'registeredID' };

/** What a certificate says about itself that the constraints need. */
interface Read {
  certificate: X509Certificate;
  der: Uint8Array;
  name: string;
  selfIssued: boolean;
  ca: boolean;
  pathLength: number | null;
  /** Whether keyUsage is present, and whether it asserts keyCertSign. */
  keyUsage: { present: boolean; keyCertSign: boolean };
  /** The subject Name's RDNs, each as its DER bytes (hex). */
  subjectRdns: string[];
  /** The subjectAltName entries, by GeneralName tag (DNS names lower case). */
  altNames: Map<number, string[]>;
  constraints: { permitted: Subtree[]; excluded: Subtree[] } | null;
}

interface Subtree {
  tag: number;
  /** dNSName: the name (lower case); directoryName: the RDNs as DER hex. */
  dns?: string;
  rdns?: string[];
}

const hex = (der: Uint8Array, tlv: Tlv): string => Buffer.from(der.subarray(tlv.start, tlv.end)).toString('hex');

function readCertificate(certificate: X509Certificate, name: string): Read {
  const der = new Uint8Array(certificate.raw);
  const parts = certificateParts(der);
  const ext = (oid: string): Extension | undefined => parts.extensions.find((e) => e.oid === oid);
  const read: Read = {
    certificate,
    der,
    name,
    selfIssued: certificate.subject === certificate.issuer,
    ca: false,
    pathLength: null,
    keyUsage: { present: false, keyCertSign: false },
    subjectRdns: parts.subjectName ? childrenOf(der, parts.subjectName).map((rdn) => hex(der, rdn)) : [],
    altNames: new Map(),
    constraints: null,
  };
  const basic = ext(BASIC_CONSTRAINTS_OID);
  if (basic) {
    for (const field of childrenOf(der, basic.value)) {
      if (field.tag === 0x01) read.ca = der[field.valueStart] !== 0;
      if (field.tag === 0x02) {
        let value = 0;
        for (let at = field.valueStart; at < field.end && at < field.valueStart + 4; at++) value = value * 256 + (der[at] as number);
        read.pathLength = value;
      }
    }
  }
  const usage = ext(KEY_USAGE_OID);
  if (usage) {
    if (usage.value.tag !== 0x03) throw new DerError('keyUsage is not a BIT STRING');
    const first = usage.value.end - usage.value.valueStart > 1 ? (der[usage.value.valueStart + 1] as number) : 0;
    read.keyUsage = { present: true, keyCertSign: (first & KEY_CERT_SIGN_MASK) !== 0 };
  }
  const alt = ext(SUBJECT_ALT_NAME_OID);
  if (alt) {
    for (const general of childrenOf(der, alt.value)) {
      const list = read.altNames.get(general.tag) ?? [];
      list.push(general.tag === DNS_NAME_TAG ? stringOf(der, general).toLowerCase().replace(/\.$/, '') : hex(der, general));
      read.altNames.set(general.tag, list);
    }
  }
  const constraints = ext(NAME_CONSTRAINTS_OID);
  if (constraints) {
    read.constraints = { permitted: [], excluded: [] };
    for (const list of childrenOf(der, constraints.value)) {
      const into = list.tag === 0xa0 ? read.constraints.permitted : list.tag === 0xa1 ? read.constraints.excluded : null;
      if (!into) continue;
      for (const subtree of childrenOf(der, list)) {
        const base = childrenOf(der, subtree)[0];
        if (!base) continue;
        if (base.tag === DNS_NAME_TAG) into.push({ tag: base.tag, dns: stringOf(der, base).toLowerCase() });
        else if (base.tag === DIRECTORY_NAME_TAG) {
          const inner = childrenOf(der, base)[0];
          into.push({ tag: base.tag, rdns: inner ? childrenOf(der, inner).map((rdn) => hex(der, rdn)) : [] });
        } else into.push({ tag: base.tag });
      }
    }
  }
  return read;
}

/** §4.2.1.10: a DNS name is within a constraint when labels added on the left make it (a leading dot: subdomains only). */
function dnsWithin(name: string, constraint: string): boolean {
  if (constraint === '') return true;
  if (constraint.startsWith('.')) return name.endsWith(constraint);
  return name === constraint || name.endsWith(`.${constraint}`);
}

/** §4.2.1.10: a distinguished name is within a directoryName subtree when it begins with its RDNs (compared as DER). */
const directoryWithin = (rdns: readonly string[], base: readonly string[]): boolean => base.length <= rdns.length && base.every((rdn, i) => rdns[i] === rdn);

/** The problems name constraints of `issuer` find in `subject`'s names. */
function nameConstraintProblems(issuer: Read, subject: Read): string[] {
  const problems: string[] = [];
  const constraints = issuer.constraints;
  if (!constraints) return problems;
  const names = (tag: number): string[] => (tag === DIRECTORY_NAME_TAG ? (subject.subjectRdns.length > 0 ? ['(the subject)'] : []).concat(subject.altNames.get(tag) ?? []) : (subject.altNames.get(tag) ?? []));
  const within = (tag: number, value: string, tree: Subtree): boolean =>
    tag === DNS_NAME_TAG ? dnsWithin(value, tree.dns ?? '') : value === '(the subject)' ? directoryWithin(subject.subjectRdns, tree.rdns ?? []) : false;
  const tags = new Set([...constraints.permitted, ...constraints.excluded].map((tree) => tree.tag));
  for (const tag of tags) {
    const held = names(tag);
    if (held.length === 0) continue;
    const kind = GENERAL_NAME_KINDS[tag] ?? `GeneralName tag 0x${tag.toString(16)}`;
    if (tag !== DNS_NAME_TAG && tag !== DIRECTORY_NAME_TAG) {
      problems.push(`${issuer.name} constrains ${kind} names, which are not checked here, and ${subject.name} carries one: not trusted`);
      continue;
    }
    const permitted = constraints.permitted.filter((tree) => tree.tag === tag);
    const excluded = constraints.excluded.filter((tree) => tree.tag === tag);
    for (const value of held) {
      const shown = tag === DNS_NAME_TAG ? `"${value}"` : value === '(the subject)' ? 'its subject name' : 'a directoryName';
      if (permitted.length > 0 && !permitted.some((tree) => within(tag, value, tree))) problems.push(`${subject.name} has ${shown}, outside the ${kind} subtrees ${issuer.name} permits (RFC 5280 §4.2.1.10)`);
      if (excluded.some((tree) => within(tag, value, tree))) problems.push(`${subject.name} has ${shown}, inside a ${kind} subtree ${issuer.name} excludes (RFC 5280 §4.2.1.10)`);
    }
  }
  return problems;
}

/**
 * The RFC 5280 §6.1 constraint problems of `path` (the leaf first, then the intermediates in order)
 * under `anchor` (the trust anchor's certificate, or null when the chain reached none). `names` gives
 * how each certificate is named in sentences. No problem: an empty list.
 */
export function pathConstraintProblems(path: readonly X509Certificate[], anchor: X509Certificate | null, names: (certificate: X509Certificate, index: number) => string): string[] {
  const all = anchor ? [...path, anchor] : [...path];
  let reads: Read[];
  try {
    reads = all.map((certificate, index) => readCertificate(certificate, names(certificate, index)));
  } catch (error) {
    return [`a certificate's constraints cannot be read (${error instanceof Error ? error.message : String(error)})`];
  }
  const problems: string[] = [];
  // Each issuer: the certificates at lower indexes are below it.
  for (let index = 1; index < reads.length; index++) {
    const issuer = reads[index]!;
    // §4.2.1.9: a key that is not a CA's never verifies certificate signatures.
    if (!issuer.ca) problems.push(`${issuer.name} is not a CA (its basic constraints do not assert cA), yet it issues ${reads[index - 1]!.name} (RFC 5280 §4.2.1.9)`);
    // §4.2.1.3, §6.1.4 (n).
    if (issuer.keyUsage.present && !issuer.keyUsage.keyCertSign) problems.push(`${issuer.name} may not sign certificates: its key usage lacks keyCertSign (RFC 5280 §4.2.1.3)`);
    // §4.2.1.9, §6.1.4 (l), (m): intermediates below it, not counting the self-issued ones nor the leaf.
    if (issuer.pathLength !== null) {
      const below = reads.slice(1, index).filter((read) => !read.selfIssued).length;
      if (below > issuer.pathLength) problems.push(`${issuer.name} allows ${issuer.pathLength} intermediate CA certificate(s) below it (pathLenConstraint), and the path has ${below} (RFC 5280 §4.2.1.9)`);
    }
    // §6.1.3 (b), (c): its name constraints bind every certificate below it (a self-issued intermediate's subject aside).
    for (let lower = 0; lower < index; lower++) {
      if (lower > 0 && reads[lower]!.selfIssued) continue;
      problems.push(...nameConstraintProblems(issuer, reads[lower]!));
    }
  }
  return problems;
}
