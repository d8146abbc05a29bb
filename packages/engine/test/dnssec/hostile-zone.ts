/**
 * The hostile signed zone of issue 38 item 2, made in memory (keys generated and records signed
 * here, nothing on disk) and answered by a `RawQuery` with no server: RSASHA256 keys (RFC 5702) that
 * share one key tag (RFC 4034 App. B: the variants swap modulus octets of the same parity, which
 * keeps the checksum), every RRset under `MAX_SIGNATURES_PER_RRSET` signatures of which only the
 * last verifies (RFC 4035 §5.3.3: a validator tries them), and the domain's TXT (SPF), its `_dmarc`
 * TXT and its MX each behind a chain of 16 CNAMEs (RFC 1034 §3.6.2). With `hugeExponent`, the
 * signing key's public exponent has 3,064 bits (each verification costs as much as a signing).
 */
import { createPrivateKey, generateKeyPairSync, generatePrimeSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type { RawQuery, TrustAnchor } from '../../src/dnssec/types.js';
import { dsDigest, keyTag, parseDnskey, parseRrsig, signedData } from '../../src/dnssec/verify.js';
import { nameToWire, TYPE, type RawMessage, type RawRecord } from '../../src/dns/canonical.js';

/** The zone (its own trust anchor, so no walk from the root), and the domain checked inside it. */
export const HOSTILE_ZONE = 'hostile.example';
export const HOSTILE_DOMAIN = `victim.${HOSTILE_ZONE}`;
/** CNAMEs in front of each RRset a check validates (MAX_VALIDATION_CNAMES). */
export const CHAIN_LINKS = 16;
/** Keys in the DNSKEY RRset, all with the same key tag. */
export const COLLIDING_KEYS = 4;
/** Signatures over each RRset (MAX_SIGNATURES_PER_RRSET): all but the last are decoys. */
export const SIGNATURES_PER_RRSET = 8;
/** The time the zone is signed for (seconds since the epoch). */
export const HOSTILE_NOW = Date.UTC(2030, 0, 1) / 1000;

const ALGORITHM = 8; // RSASHA256, RFC 5702
const TTL = 3600;

/** One signed zone, and what asking it cost. */
export interface HostileZone {
  query: RawQuery;
  anchors: TrustAnchor[];
  /** Every question asked, as `name/type`. */
  asked: string[];
  /** The key tag the keys share. */
  tag: number;
}

function toBigInt(octets: Buffer): bigint {
  return BigInt(`0x${octets.toString('hex') || '0'}`);
}

function toOctets(value: bigint): Buffer {
  let hex = value.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  return Buffer.from(hex, 'hex');
}

function modInverse(a: bigint, m: bigint): bigint {
  let [oldR, r] = [a % m, m];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const q = oldR / r;
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  if (oldR !== 1n) throw new Error('not invertible');
  return ((oldS % m) + m) % m;
}

/** An RSA key pair with a public exponent of `exponentBits` bits over a modulus of 2 × `primeBits`. */
function rsaWithExponent(primeBits: number, exponentBits: number): { privateKey: KeyObject; n: Buffer; e: Buffer } {
  for (;;) {
    const p = generatePrimeSync(primeBits, { bigint: true });
    const q = generatePrimeSync(primeBits, { bigint: true });
    const phi = (p - 1n) * (q - 1n);
    const e = toBigInt(randomBytes(exponentBits / 8)) | (1n << BigInt(exponentBits - 1)) | 1n;
    let d: bigint;
    try {
      d = modInverse(e, phi);
    } catch {
      continue;
    }
    const n = p * q;
    const b64 = (v: bigint): string => toOctets(v).toString('base64url');
    const privateKey = createPrivateKey({
      format: 'jwk',
      key: { kty: 'RSA', n: b64(n), e: b64(e), d: b64(d), p: b64(p), q: b64(q), dp: b64(d % (p - 1n)), dq: b64(d % (q - 1n)), qi: b64(modInverse(q, p)) },
    });
    return { privateKey, n: toOctets(n), e: toOctets(e) };
  }
}

/** RFC 3110 §2: the DNSKEY public key field of an RSA key. */
function rsaPublicKeyField(e: Buffer, n: Buffer): Buffer {
  const length = e.length <= 255 ? Buffer.from([e.length]) : Buffer.from([0, e.length >> 8, e.length & 0xff]);
  return Buffer.concat([length, e, n]);
}

function dnskeyRdata(publicKey: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(257, 0); // Zone Key + SEP (RFC 4034 §2.1.1)
  head[2] = 3;
  head[3] = ALGORITHM;
  return Buffer.concat([head, publicKey]);
}

/**
 * `count` DNSKEY RDATAs that share the first one's key tag: the checksum of App. B adds the octets
 * at even offsets and those at odd offsets apart, so swapping two octets two apart keeps it.
 */
function collidingKeys(first: Buffer, count: number): Buffer[] {
  const keys = [first];
  for (let at = first.length - 3; keys.length < count && at > 4; at--) {
    if (first[at] === first[at + 2]) continue; // equal octets: the swap changes nothing
    const variant = Buffer.from(first);
    variant[at] = first[at + 2] as number;
    variant[at + 2] = first[at] as number;
    keys.push(variant);
    at -= 3; // the next swap touches other octets
  }
  return keys;
}

/** Builds the zone. `hugeExponent`: the keys' exponent has 3,064 bits (modulus 3,072). */
export function buildHostileZone(options: { hugeExponent: boolean }): HostileZone {
  let privateKey: KeyObject;
  let publicField: Buffer;
  if (options.hugeExponent) {
    const made = rsaWithExponent(1536, 3064);
    privateKey = made.privateKey;
    publicField = rsaPublicKeyField(made.e, made.n);
  } else {
    const made = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 65537 });
    privateKey = made.privateKey;
    const jwk = made.publicKey.export({ format: 'jwk' });
    publicField = rsaPublicKeyField(Buffer.from(jwk.e as string, 'base64url'), Buffer.from(jwk.n as string, 'base64url'));
  }
  const signing = dnskeyRdata(publicField);
  // The signing key last: a validator tries each colliding key before the one that verifies.
  const keys = [...collidingKeys(signing, COLLIDING_KEYS).slice(1), signing];
  const tag = keyTag(signing);
  if (keys.some((k) => keyTag(k) !== tag)) throw new Error('the colliding keys do not share a key tag');

  /** RRSIG RDATAs over (owner, type, rdatas): decoys first, then the real one (RFC 4034 §3.1). */
  const signatures = (owner: string, type: number, rdatas: Buffer[]): Buffer[] => {
    const head = Buffer.alloc(18);
    head.writeUInt16BE(type, 0);
    head[2] = ALGORITHM;
    head[3] = owner.split('.').length;
    head.writeUInt32BE(TTL, 4);
    head.writeUInt32BE(HOSTILE_NOW + 30 * 86_400, 8);
    head.writeUInt32BE(HOSTILE_NOW - 3600, 12);
    head.writeUInt16BE(tag, 16);
    const signedPart = Buffer.concat([head, nameToWire(HOSTILE_ZONE)]);
    const data = signedData({ name: owner, type, class: 1, ttl: TTL, rdatas }, parseRrsig(Buffer.concat([signedPart, Buffer.alloc(1)]))!);
    const real = sign('sha256', data, privateKey);
    const decoys = Array.from({ length: SIGNATURES_PER_RRSET - 1 }, () => Buffer.concat([signedPart, randomBytes(real.length)]));
    return [...decoys, Buffer.concat([signedPart, real])];
  };
  const rrset = (owner: string, type: number, rdatas: Buffer[]): RawRecord[] => [
    ...rdatas.map((rdata) => ({ name: owner, type, class: 1, ttl: TTL, rdata })),
    ...signatures(owner, type, rdatas).map((rdata) => ({ name: owner, type: TYPE.RRSIG, class: 1, ttl: TTL, rdata })),
  ];

  // Every answer, by `name/type`, signed once here.
  const answers = new Map<string, RawRecord[]>();
  answers.set(`${HOSTILE_ZONE}/${TYPE.DNSKEY}`, rrset(HOSTILE_ZONE, TYPE.DNSKEY, keys));
  const txt = (text: string): Buffer => Buffer.concat([Buffer.from([text.length]), Buffer.from(text)]);
  const mx = (exchange: string): Buffer => Buffer.concat([Buffer.from([0, 10]), nameToWire(exchange)]);
  const chain = (start: string, type: number, prefix: string, final: Buffer): void => {
    let owner = start;
    for (let link = 1; link <= CHAIN_LINKS; link++) {
      const target = `${prefix}${link}.${HOSTILE_ZONE}`;
      answers.set(`${owner}/${type}`, rrset(owner, TYPE.CNAME, [nameToWire(target)]));
      owner = target;
    }
    answers.set(`${owner}/${type}`, rrset(owner, type, [final]));
  };
  chain(HOSTILE_DOMAIN, TYPE.TXT, 'spf', txt('v=spf1 -all'));
  chain(`_dmarc.${HOSTILE_DOMAIN}`, TYPE.TXT, 'dmarc', txt('v=DMARC1; p=reject'));
  chain(HOSTILE_DOMAIN, TYPE.MX, 'mx', mx(`mail.${HOSTILE_ZONE}`));

  const asked: string[] = [];
  const query: RawQuery = async (name, type) => {
    asked.push(`${name}/${type}`);
    const answer = answers.get(`${name}/${type}`) ?? [];
    const message: RawMessage = { id: 0, flags: 0x8000, rcode: 0, question: { name, type, class: 1 }, answer, authority: [], additional: [], opt: undefined };
    return { kind: 'response', message };
  };
  const dnskey = parseDnskey(signing)!;
  const ds = Buffer.alloc(4);
  ds.writeUInt16BE(tag, 0);
  ds[2] = ALGORITHM;
  ds[3] = 2;
  // The anchor names every key (an attacker publishes a DS for each), so each is DS-matched.
  const anchorDs = keys.map((rdata) => Buffer.concat([ds, dsDigest(HOSTILE_ZONE, { ...dnskey, rdata, publicKey: rdata.subarray(4) }, 2)!]));
  return { query, anchors: [{ zone: HOSTILE_ZONE, ds: anchorDs, dnskeys: [] }], asked, tag };
}
