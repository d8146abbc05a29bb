/**
 * NSEC3 denial proofs (RFC 5155): the record read from its RDATA (§3.2: hash algorithm, flags with
 * Opt-Out, iterations, salt, next hashed owner, type bit maps), hashed owner names compared in
 * base32hex order (§3.3, §7.1 ordering of hashes), a hash covered by a span (§8.3 "covers"), the
 * closest-encloser proof and next closer name (§8.3, §7.2.1), delegations and DNAMEs refused as
 * enclosers (§8.3), Opt-Out spans (§6, §9.2) and the work caps: hashes per denial (CVE-2023-50868)
 * and the iteration ceiling above which a proof is insecure (RFC 9276 §3.2). The validator
 * (validate.ts) asks these helpers; the hash itself is `nsec3Hash` (verify.ts, RFC 5155 §5).
 */
import { base32hexEncode, isSubdomain, parentOf, splitLabels, TYPE, type RawRRset } from '../dns/canonical.js';
import { nsec3Hash } from './verify.js';
import { EDE, type DnssecReason } from './types.js';

/** NSEC3 hashes computed for one denial (unbound's MAX_NSEC3_CALCULATIONS is 8 per round; CVE-2023-50868). */
export const MAX_NSEC3_HASHES = 32;
/** RFC 9276 §3.2, unbound `val-nsec3-keysize-iterations`, Knot Resolver: above this, NSEC3 proofs are insecure. */
export const MAX_NSEC3_ITERATIONS = 150;

/** RFC 4034 §4.1.2 (RFC 5155 §3.2.1): does a type bit map list `type`? */
export function hasType(bitmap: Buffer, type: number): boolean {
  // RFC 4034 §4.1.2: window, length, bits.
  let at = 0;
  while (at + 2 <= bitmap.length) {
    const window = bitmap[at] as number;
    const length = bitmap[at + 1] as number;
    if (window === type >> 8) {
      const octet = (type & 0xff) >> 3;
      if (octet >= length) return false;
      return (((bitmap[at + 2 + octet] as number) >> (7 - (type & 7))) & 1) === 1;
    }
    at += 2 + length;
  }
  return false;
}

/** RFC 5155 §3.2: one NSEC3 record, its owner's hash and zone split off. */
export interface Nsec3 {
  hash: string;
  zone: string;
  hashAlgorithm: number;
  optOut: boolean;
  iterations: number;
  salt: Buffer;
  next: string;
  bitmap: Buffer;
}

/** RFC 5155 §3.2: reads an NSEC3 RRset's first record; undefined when its RDATA is short. */
export function readNsec3(set: RawRRset): Nsec3 | undefined {
  const rdata = set.rdatas[0];
  if (!rdata || rdata.length < 6) return undefined;
  const saltLength = rdata[4] as number;
  const hashAt = 5 + saltLength;
  const hashLength = rdata[hashAt] as number | undefined;
  if (hashLength === undefined || hashAt + 1 + hashLength > rdata.length) return undefined;
  const labels = splitLabels(set.name);
  return {
    hash: (labels[0] ?? '').toLowerCase(),
    zone: labels.slice(1).join('.'),
    hashAlgorithm: rdata[0] as number,
    optOut: ((rdata[1] as number) & 1) === 1,
    iterations: rdata.readUInt16BE(2),
    salt: rdata.subarray(5, hashAt),
    next: base32hexEncode(rdata.subarray(hashAt + 1, hashAt + 1 + hashLength)),
    bitmap: rdata.subarray(hashAt + 1 + hashLength),
  };
}

/** RFC 5155 §8.3: does the span (hash, next) cover `hash`, the last one wrapping round? */
export function nsec3Covers(record: Nsec3, hash: string): boolean {
  const wraps = record.next <= record.hash;
  return wraps ? hash > record.hash || hash < record.next : hash > record.hash && hash < record.next;
}

/** Hashing helpers over one zone's NSEC3 records, within `MAX_NSEC3_HASHES`; or why they cannot be used. */
export function nsec3Proofs(records: readonly Nsec3[], zone: string):
  | { status: 'insecure' | 'bogus'; reason: DnssecReason }
  | {
      match: (name: string) => Nsec3 | undefined | 'budget';
      cover: (name: string) => Nsec3 | undefined | 'budget';
      closestEncloser: (name: string) => { encloser: string; next: string; cover: Nsec3 } | undefined | 'budget';
    } {
  const first = records[0];
  if (!first) return { status: 'bogus', reason: { code: EDE.NSEC_MISSING, text: 'No usable NSEC3 record.' } };
  // RFC 9276 §3.2: too many iterations ⇒ insecure (unbound, Knot Resolver; EDE 27).
  const iterations = Math.max(...records.map((r) => r.iterations));
  if (iterations > MAX_NSEC3_ITERATIONS) {
    return { status: 'insecure', reason: { code: EDE.UNSUPPORTED_NSEC3_ITERATIONS, text: `${zone} uses NSEC3 with ${iterations} iterations; above ${MAX_NSEC3_ITERATIONS} the denial is treated as insecure (RFC 9276 §3.2).` } };
  }
  let hashes = 0;
  const hashOf = (name: string): string | 'budget' => {
    if (++hashes > MAX_NSEC3_HASHES) return 'budget';
    return base32hexEncode(nsec3Hash(name, first.salt, first.iterations));
  };
  const match = (name: string): Nsec3 | undefined | 'budget' => {
    const hash = hashOf(name);
    return hash === 'budget' ? hash : records.find((r) => r.hash === hash);
  };
  const cover = (name: string): Nsec3 | undefined | 'budget' => {
    const hash = hashOf(name);
    return hash === 'budget' ? hash : records.find((r) => nsec3Covers(r, hash));
  };
  const closestEncloser = (name: string): { encloser: string; next: string; cover: Nsec3 } | undefined | 'budget' => {
    // RFC 5155 §8.3: the closest provable encloser and the next closer name.
    let next = name;
    for (let candidate = parentOf(name); isSubdomain(candidate, zone); candidate = parentOf(candidate)) {
      const found = match(candidate);
      if (found === 'budget') return found;
      if (found) {
        // RFC 5155 §8.3: the encloser's NSEC3 must not be a delegation's (NS without SOA) or a DNAME.
        if ((hasType(found.bitmap, TYPE.NS) && !hasType(found.bitmap, TYPE.SOA)) || hasType(found.bitmap, TYPE.DNAME)) return undefined;
        const covering = cover(next);
        if (covering === 'budget') return covering;
        return covering ? { encloser: candidate, next, cover: covering } : undefined;
      }
      next = candidate;
      if (candidate === zone || candidate === '') break;
    }
    return undefined;
  };
  return { match, cover, closestEncloser };
}

/** The reason an NSEC3 proof that ran out of `MAX_NSEC3_HASHES` gives. */
export function budgetReason(): DnssecReason {
  return { code: EDE.DNSSEC_INDETERMINATE, text: `The NSEC3 proof needed more than ${MAX_NSEC3_HASHES} hashes.` };
}

/** RFC 5155 §9.2: the reason an Opt-Out span gives. */
export function optOutReason(name: string): DnssecReason {
  return { code: null, text: `${name} is covered by an NSEC3 opt-out span: the denial proves only that no signed delegation exists there (RFC 5155 §9.2), so it is insecure, as unbound says.` };
}
