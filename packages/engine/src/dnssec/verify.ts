/**
 * The cryptography of DNSSEC on `node:crypto`: key tags (RFC 4034 App. B), DNSKEY public keys as
 * KeyObjects (RFC 3110 RSA, RFC 6605 ECDSA, RFC 8080 EdDSA), the signed data of an RRSIG
 * (RFC 4034 §3.1.8.1, §6; RFC 4035 §5.3.2), signature checks, DS digests (RFC 4034 §5.1.4,
 * RFC 4509, RFC 6605) and NSEC3 hashes (RFC 5155 §5).
 */
import { createHash, createPublicKey, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { canonicalRdata, labelCount, lastLabels, lowerName, nameToWire, readName, type RawRRset } from '../dns/canonical.js';

/** RFC 8624 §3.1 (IANA registry since RFC 9904): the signature algorithms this validator verifies. */
export const SUPPORTED_ALGORITHMS: ReadonlySet<number> = new Set([5, 7, 8, 10, 13, 14, 15, 16]);
/** RFC 8624 §3.3: the DS digest types this validator computes (SHA-1, SHA-256, SHA-384). */
export const SUPPORTED_DIGESTS: ReadonlySet<number> = new Set([1, 2, 4]);
/** RFC 4034 App. A.1 algorithm mnemonics, for sentences. */
export const ALGORITHM_NAMES: Readonly<Record<number, string>> = {
  1: 'RSAMD5', 3: 'DSA', 5: 'RSASHA1', 6: 'DSA-NSEC3-SHA1', 7: 'RSASHA1-NSEC3-SHA1', 8: 'RSASHA256', 10: 'RSASHA512',
  12: 'ECC-GOST', 13: 'ECDSAP256SHA256', 14: 'ECDSAP384SHA384', 15: 'ED25519', 16: 'ED448',
};

/**
 * The largest RSA public exponent this validator verifies with. A huge exponent makes each
 * verification cost as much as a signing (a 3,064-bit one: 20 ms instead of 0.15 ms), and no signer
 * needs one: RFC 3110 §2 suggests 3 or 65537. A key beyond it is treated as an unsupported algorithm
 * (RFC 4035 §5.2), as unbound and OpenSSL's own limits do for RSA verification.
 */
export const MAX_RSA_PUBLIC_EXPONENT = 2n ** 32n;
/** The largest RSA modulus this validator verifies with, in bits (RFC 3110 §2 allows 4096; beyond: unsupported). */
export const MAX_RSA_MODULUS_BITS = 4096;

/** RFC 4034 §2.1.1: bit 7 of the flags, the Zone Key flag. */
export const DNSKEY_FLAG_ZONE = 0x0100;
/** RFC 5011 §3: bit 8, REVOKE. */
export const DNSKEY_FLAG_REVOKE = 0x0080;
/** RFC 4034 §2.1.1: bit 15, Secure Entry Point (a hint only). */
export const DNSKEY_FLAG_SEP = 0x0001;

/** A DNSKEY's fields. */
export interface DnskeyData {
  flags: number;
  protocol: number;
  algorithm: number;
  publicKey: Buffer;
  /** The RDATA as published, for digests and tags. */
  rdata: Buffer;
  keyTag: number;
}

/** An RRSIG's fields (RFC 4034 §3.1). */
export interface RrsigData {
  typeCovered: number;
  algorithm: number;
  labels: number;
  originalTtl: number;
  expiration: number;
  inception: number;
  keyTag: number;
  signer: string;
  signature: Buffer;
  /** The RDATA up to and including the signer's name (RFC 4034 §3.1.8.1). */
  signedPart: Buffer;
}

/** A DS's fields (RFC 4034 §5.1). */
export interface DsData {
  keyTag: number;
  algorithm: number;
  digestType: number;
  digest: Buffer;
}

/** RFC 4034 Appendix B: the key tag of a DNSKEY RDATA (algorithm 1 has its own rule, B.1). */
export function keyTag(rdata: Buffer): number {
  if (rdata[3] === 1) return rdata.length >= 4 ? rdata.readUInt16BE(rdata.length - 3) : 0;
  let ac = 0;
  for (let i = 0; i < rdata.length; i++) ac += i & 1 ? (rdata[i] as number) : (rdata[i] as number) << 8;
  ac += (ac >> 16) & 0xffff;
  return ac & 0xffff;
}

/** Reads a DNSKEY RDATA; undefined when it is too short. */
export function parseDnskey(rdata: Buffer): DnskeyData | undefined {
  if (rdata.length < 4) return undefined;
  return { flags: rdata.readUInt16BE(0), protocol: rdata[2] as number, algorithm: rdata[3] as number, publicKey: rdata.subarray(4), rdata, keyTag: keyTag(rdata) };
}

/** Reads an RRSIG RDATA; undefined when it is malformed. */
export function parseRrsig(rdata: Buffer): RrsigData | undefined {
  if (rdata.length < 19) return undefined;
  try {
    const signer = readName(rdata, 18);
    return {
      typeCovered: rdata.readUInt16BE(0),
      algorithm: rdata[2] as number,
      labels: rdata[3] as number,
      originalTtl: rdata.readUInt32BE(4),
      expiration: rdata.readUInt32BE(8),
      inception: rdata.readUInt32BE(12),
      keyTag: rdata.readUInt16BE(16),
      signer: lowerName(signer.name),
      signature: rdata.subarray(signer.end),
      signedPart: rdata.subarray(0, signer.end),
    };
  } catch {
    return undefined;
  }
}

/** Reads a DS RDATA; undefined when it is too short. */
export function parseDs(rdata: Buffer): DsData | undefined {
  if (rdata.length < 5) return undefined;
  return { keyTag: rdata.readUInt16BE(0), algorithm: rdata[2] as number, digestType: rdata[3] as number, digest: rdata.subarray(4) };
}

const keyCache = new WeakMap<Buffer, KeyObject | null>();

/** The KeyObject of a DNSKEY, or null when the algorithm is unsupported or the key malformed. */
export function publicKeyOf(key: DnskeyData): KeyObject | null {
  const cached = keyCache.get(key.rdata);
  if (cached !== undefined) return cached;
  let made: KeyObject | null = null;
  try {
    made = unsupportedKeyReason(key) === undefined ? buildKey(key.algorithm, key.publicKey) : null;
  } catch {
    made = null;
  }
  keyCache.set(key.rdata, made);
  return made;
}

function b64url(b: Buffer): string {
  return b.toString('base64url');
}

/** RFC 3110 §2: an RSA public key's exponent and modulus; undefined when the fields do not fit. */
function rsaParts(pk: Buffer): { e: Buffer; n: Buffer } | undefined {
  // The exponent's length in one octet, or 0 and then two octets.
  if (pk.length < 3) return undefined;
  let at = 1;
  let expLength = pk[0] as number;
  if (expLength === 0) {
    expLength = pk.readUInt16BE(1);
    at = 3;
  }
  const e = pk.subarray(at, at + expLength);
  const n = pk.subarray(at + expLength);
  if (e.length === 0 || n.length === 0 || at + expLength > pk.length) return undefined;
  return { e, n };
}

function significantBits(octets: Buffer): number {
  let at = 0;
  while (at < octets.length && octets[at] === 0) at++;
  if (at === octets.length) return 0;
  return (octets.length - at - 1) * 8 + (32 - Math.clz32(octets[at] as number));
}

/**
 * Why this validator will not verify with `key` (RFC 4035 §5.2: treated as an unsupported
 * algorithm), or undefined when it will: an RSA key with an exponent over `MAX_RSA_PUBLIC_EXPONENT`
 * or a modulus over `MAX_RSA_MODULUS_BITS`.
 */
export function unsupportedKeyReason(key: DnskeyData): string | undefined {
  if (key.algorithm !== 5 && key.algorithm !== 7 && key.algorithm !== 8 && key.algorithm !== 10) return undefined;
  const parts = rsaParts(key.publicKey);
  if (!parts) return undefined; // malformed: no KeyObject, so never verified with either
  const exponentBits = significantBits(parts.e);
  if (exponentBits > 33 || (exponentBits === 33 && BigInt(`0x${parts.e.toString('hex')}`) > MAX_RSA_PUBLIC_EXPONENT)) {
    return `its RSA public exponent has ${exponentBits} bits (above 2^32, which this validator does not verify with)`;
  }
  const modulusBits = significantBits(parts.n);
  if (modulusBits > MAX_RSA_MODULUS_BITS) return `its RSA modulus has ${modulusBits} bits (above ${MAX_RSA_MODULUS_BITS})`;
  return undefined;
}

function buildKey(algorithm: number, pk: Buffer): KeyObject | null {
  switch (algorithm) {
    case 5: case 7: case 8: case 10: {
      const parts = rsaParts(pk);
      if (!parts) return null;
      return createPublicKey({ format: 'jwk', key: { kty: 'RSA', n: b64url(parts.n), e: b64url(parts.e) } });
    }
    case 13: case 14: {
      // RFC 6605 §4: X ‖ Y, 32 or 48 octets each.
      const size = algorithm === 13 ? 32 : 48;
      if (pk.length !== size * 2) return null;
      return createPublicKey({ format: 'jwk', key: { kty: 'EC', crv: algorithm === 13 ? 'P-256' : 'P-384', x: b64url(pk.subarray(0, size)), y: b64url(pk.subarray(size)) } });
    }
    case 15: case 16: {
      // RFC 8080 §3: the raw public key, 32 (Ed25519) or 57 (Ed448) octets.
      if (pk.length !== (algorithm === 15 ? 32 : 57)) return null;
      return createPublicKey({ format: 'jwk', key: { kty: 'OKP', crv: algorithm === 15 ? 'Ed25519' : 'Ed448', x: b64url(pk) } });
    }
    default:
      return null;
  }
}

const HASH_OF: Readonly<Record<number, string | null>> = { 5: 'sha1', 7: 'sha1', 8: 'sha256', 10: 'sha512', 13: 'sha256', 14: 'sha384', 15: null, 16: null };

/**
 * RFC 4034 §3.1.8.1 and §6, RFC 4035 §5.3.2: the octets an RRSIG signs over an RRset: the RRSIG
 * RDATA without its signature (signer lower-cased), then each RR in canonical form (owner lower-cased,
 * or `*.` + the rightmost Labels labels for a wildcard expansion; the RRSIG's original TTL;
 * canonical RDATA), sorted by RDATA octets, duplicates removed.
 */
export function signedData(rrset: RawRRset, sig: RrsigData): Buffer {
  const ownerLabels = labelCount(rrset.name);
  const owner = sig.labels < ownerLabels ? `*.${lastLabels(rrset.name, sig.labels)}` : rrset.name;
  const ownerWire = nameToWire(lowerName(owner));
  const head = Buffer.alloc(8);
  head.writeUInt16BE(rrset.type, 0);
  head.writeUInt16BE(rrset.class, 2);
  head.writeUInt32BE(sig.originalTtl, 4);
  const rdatas = rrset.rdatas.map((r) => canonicalRdata(rrset.type, r)).sort(Buffer.compare);
  const parts: Buffer[] = [canonicalRdata(46, sig.signedPart)];
  let previous: Buffer | undefined;
  for (const rdata of rdatas) {
    if (previous && previous.equals(rdata)) continue; // RFC 4034 §6.3: duplicates removed
    previous = rdata;
    const length = Buffer.alloc(2);
    length.writeUInt16BE(rdata.length);
    parts.push(ownerWire, head, length, rdata);
  }
  return Buffer.concat(parts);
}

/** Counts every signature check, for the benchmark (signature verifications per check). */
export const verifyCounter = { count: 0 };

/** True when `sig` is a valid signature by `key` over `data`. */
export function verifySignature(key: DnskeyData, sig: RrsigData, data: Buffer): boolean {
  const object = publicKeyOf(key);
  if (!object) return false;
  verifyCounter.count++;
  try {
    const hash = HASH_OF[key.algorithm];
    if (hash === undefined) return false;
    if (key.algorithm === 13 || key.algorithm === 14) {
      return cryptoVerify(hash, data, { key: object, dsaEncoding: 'ieee-p1363' }, sig.signature);
    }
    return cryptoVerify(hash, data, object, sig.signature);
  } catch {
    return false;
  }
}

/** RFC 4034 §5.1.4: digest = H(owner name in canonical wire form ‖ DNSKEY RDATA); undefined for an unsupported type. */
export function dsDigest(owner: string, key: DnskeyData, digestType: number): Buffer | undefined {
  const hash = digestType === 1 ? 'sha1' : digestType === 2 ? 'sha256' : digestType === 4 ? 'sha384' : undefined;
  if (!hash) return undefined;
  return createHash(hash).update(nameToWire(lowerName(owner))).update(key.rdata).digest();
}

/** RFC 5155 §5: IH(salt, x, 0) = H(x ‖ salt); IH(salt, x, k) = H(IH(salt, x, k−1) ‖ salt), SHA-1. */
export function nsec3Hash(name: string, salt: Buffer, iterations: number): Buffer {
  let digest = createHash('sha1').update(nameToWire(lowerName(name))).update(salt).digest();
  for (let i = 0; i < iterations; i++) digest = createHash('sha1').update(digest).update(salt).digest();
  return digest;
}
