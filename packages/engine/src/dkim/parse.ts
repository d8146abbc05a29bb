/**
 * The DKIM key record parser: pure, string in, `DkimKeyOutcome` out. Never throws for bad text.
 * The key size is read from the decoded key with `node:crypto`, never guessed from the base64 length.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { memoByText } from '../text-cache.js';
import type {
  DkimFlag,
  DkimHashName,
  DkimKeyOutcome,
  DkimKeyRecord,
  DkimKeyType,
  DkimParseOptions,
  DkimPublicKey,
  DkimTagValues,
} from './types.js';

/** RFC 8301 §3.2: verifiers MUST NOT accept RSA keys shorter than this. */
export const MIN_RSA_KEY_BITS = 1024;
/** RFC 8301 §3.2: signers SHOULD use RSA keys of at least this size; shorter ones are weak. */
export const RECOMMENDED_RSA_KEY_BITS = 2048;
/** RFC 8301 §3.2: verifiers MUST be able to validate RSA keys up to this size; larger ones may not verify. */
export const MAX_REQUIRED_RSA_KEY_BITS = 4096;
/** RFC 8463 §4.2: an Ed25519 `p=` is the raw 32-byte public key. */
export const ED25519_PUBLIC_KEY_BYTES = 32;
/** The size reported for an Ed25519 key: 32 bytes. */
export const ED25519_KEY_BITS = ED25519_PUBLIC_KEY_BYTES * 8;
/**
 * The fixed DER header of an Ed25519 SubjectPublicKeyInfo (RFC 8410 §4: SEQUENCE, AlgorithmIdentifier
 * with OID 1.3.101.112, BIT STRING of 33 bytes). Prefixed to a raw key so `node:crypto` can check it.
 */
export const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** The version value RFC 6376 §3.6.1 accepts, compared exactly. */
export const DKIM_KEY_VERSION = 'DKIM1';

const KEY_TYPES: readonly DkimKeyType[] = ['rsa', 'ed25519'];
const HASH_NAMES: readonly DkimHashName[] = ['sha1', 'sha256'];
const FLAGS: readonly DkimFlag[] = ['y', 's'];

// The three patterns below are audited linear: each is one character class under one quantifier
// (anchored where it matters), so no input makes them backtrack more than once over it.
// RFC 6376 §2.8 FWS, as it can appear in a TXT record: space, tab, CR, LF.
const FWS_ANYWHERE = /[ \t\r\n]+/g;
// RFC 6376 §3.2: tag-name = ALPHA *ALNUMPUNC
const TAG_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;
// RFC 6376 §2.4 base64string: padding optional, so both `...=` and `...` decode.
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A tag-list split into tags, or the reason it is not a tag-list. */
export type TagListParse =
  | { ok: true; tags: Map<string, string>; order: string[]; syntaxNotes: string[] }
  | { ok: false; reason: string };

/**
 * Splits an RFC 6376 §3.2 tag-list into `name → value` (values trimmed of surrounding FWS).
 * Strict where the RFC is strict (tag-name syntax, a missing '=', duplicate names); lenient about
 * empty tag-specs (`;;`) and whitespace after the final ';', which common verifiers accept: those are
 * reported in `syntaxNotes` instead.
 */
export function parseTagList(text: string): TagListParse {
  const tags = new Map<string, string>();
  const order: string[] = [];
  const syntaxNotes: string[] = [];
  const specs = text.split(';');
  for (const [index, spec] of specs.entries()) {
    const isLast = index === specs.length - 1;
    if (trimFws(spec) === '') {
      // RFC 6376 §3.2 allows one final ';' with nothing after it.
      if (isLast && spec === '') continue;
      const note = isLast
        ? "There is whitespace after the final ';', which the RFC 6376 §3.2 grammar does not allow."
        : "There is an empty tag (two ';' with nothing between them), which the RFC 6376 §3.2 grammar does not allow.";
      if (!syntaxNotes.includes(note)) syntaxNotes.push(note);
      continue;
    }
    const equals = spec.indexOf('=');
    if (equals === -1) {
      return { ok: false, reason: `"${abbreviate(trimFws(spec))}" is not a tag=value pair (RFC 6376 §3.2).` };
    }
    const name = trimFws(spec.slice(0, equals));
    const value = trimFws(spec.slice(equals + 1));
    if (!TAG_NAME.test(name)) {
      return { ok: false, reason: `"${abbreviate(name)}" is not a valid tag name (RFC 6376 §3.2).` };
    }
    // RFC 6376 §3.2: a tag name appearing twice invalidates the entire tag-list.
    if (tags.has(name)) return { ok: false, reason: `The tag "${name}=" appears more than once (RFC 6376 §3.2).` };
    tags.set(name, value);
    order.push(name);
  }
  return { ok: true, tags, order, syntaxNotes };
}

/**
 * Parses a DKIM key record (the TXT strings already joined, RFC 6376 §3.6.2.2) into a closed outcome.
 * Checks run in the order a verifier needs them: grammar, `v=`, `p=` present, `s=`, `k=`, revocation,
 * base64, then the key itself (type and size).
 */
export function parseDkimKeyRecord(text: string, options: DkimParseOptions = {}): DkimKeyOutcome {
  const list = parseTagList(text);
  if (!list.ok) return { status: 'invalid-syntax', reason: list.reason };
  const { tags, order } = list;

  const version = tags.get('v');
  if (version !== undefined) {
    // RFC 6376 §3.6.1 v=: if present, it MUST be the first tag.
    if (order[0] !== 'v') return { status: 'invalid-syntax', reason: 'The "v=" tag must be the first tag of the record (RFC 6376 §3.6.1).' };
    // RFC 6376 §3.6.1 v=: any value other than exactly DKIM1 means the record MUST be discarded.
    if (version !== DKIM_KEY_VERSION) {
      return { status: 'discard', version, reason: `The record says "v=${abbreviate(version)}"; only exactly "v=${DKIM_KEY_VERSION}" is a DKIM key (RFC 6376 §3.6.1), so verifiers discard it.` };
    }
  }

  const rawKey = tags.get('p');
  // RFC 6376 §3.6.1 p=: REQUIRED. Missing is a syntax error, not a revocation.
  if (rawKey === undefined) return { status: 'invalid-syntax', reason: 'The record has no "p=" tag; the public key is required (RFC 6376 §3.6.1).' };

  const values: DkimTagValues = {
    version: version ?? null,
    keyTypeName: tags.get('k') ?? 'rsa',
    hashNames: tags.has('h') ? splitList(tags.get('h') ?? '') : null,
    serviceTypes: tags.has('s') ? splitList(tags.get('s') ?? '') : ['*'],
    flagNames: tags.has('t') ? splitList(tags.get('t') ?? '') : [],
    notes: tags.get('n') ?? null,
    publicKeyData: rawKey.replace(FWS_ANYWHERE, ''),
    unknownTags: order.filter((name) => !KNOWN_TAGS.has(name)),
    syntaxNotes: list.syntaxNotes,
  };

  // RFC 6376 §3.6.1 s=: the record is for email only when `email` or `*` is listed.
  if (!values.serviceTypes.includes('email') && !values.serviceTypes.includes('*')) {
    return { status: 'not-for-email', tags: values, reason: `The record is limited to the service(s) "${values.serviceTypes.join(':')}", not email (RFC 6376 §3.6.1 s=), so email verifiers ignore it.` };
  }

  // RFC 6376 §6.1.2 step 7: an unknown key type is an inappropriate key algorithm.
  const keyType = KEY_TYPES.find((known) => known === values.keyTypeName);
  if (!keyType) {
    const caseHint = KEY_TYPES.includes(values.keyTypeName.toLowerCase() as DkimKeyType) ? ' Key type names are case-sensitive; write it in lower case.' : '';
    return { status: 'unsupported-key-type', tags: values, reason: `The key type "k=${abbreviate(values.keyTypeName)}" is not one verifiers know (rsa, ed25519).${caseHint}` };
  }

  // RFC 6376 §3.6.1 p=: an empty value means the key has been revoked.
  if (values.publicKeyData === '') return { status: 'revoked', tags: values, reason: 'The key is revoked: "p=" is empty (RFC 6376 §3.6.1).' };

  const decoded = decodeKeyCached(keyType, values.publicKeyData);
  if (decoded === 'not-base64') return { status: 'invalid-syntax', reason: 'The "p=" value is not valid base64 (RFC 6376 §3.6.1).' };
  if (!decoded.ok) return { status: 'bad-key', tags: values, reason: decoded.reason };

  // Object.assign rather than `{ ...values, … }`, which costs about 1 µs a property on Node 20 (V8 11.3).
  const record: DkimKeyRecord = Object.assign({}, values, {
    keyType,
    acceptedHashes: values.hashNames === null ? null : acceptedHashes(values.hashNames, options.hashNameCase ?? 'exact'),
    flags: FLAGS.filter((flag) => values.flagNames.includes(flag)),
    testing: values.flagNames.includes('y'),
    strict: values.flagNames.includes('s'),
    key: decoded.key,
  });
  // RFC 8301 §3.2: verifiers MUST NOT consider signatures with RSA keys under 1024 bits valid.
  if (decoded.key.type === 'rsa' && decoded.key.bits < MIN_RSA_KEY_BITS) {
    return { status: 'too-short', record, reason: `The RSA key is ${decoded.key.bits} bits; verifiers must reject keys under ${MIN_RSA_KEY_BITS} bits (RFC 8301 §3.2).` };
  }
  return { status: 'valid', record, reason: describeKey(decoded.key) };
}

/** "2048-bit RSA key", "256-bit Ed25519 key". */
export function describeKey(key: { type: DkimKeyType; bits: number }): string {
  return `${key.bits}-bit ${key.type === 'rsa' ? 'RSA' : 'Ed25519'} key`;
}

/**
 * Decodes a base64 string with optional padding (RFC 6376 §2.4), or returns null when it is not
 * base64. Node's decoder skips bad characters silently, so the text is checked first.
 */
export function decodeBase64(text: string): Buffer | null {
  if (!BASE64.test(text)) return null;
  const padded = text.endsWith('=');
  // Without padding a length of 4n+1 cannot come from whole bytes; with padding the length is 4n.
  if (padded ? text.length % 4 !== 0 : text.length % 4 === 1) return null;
  return Buffer.from(text, 'base64');
}

type KeyDecode = { ok: true; key: DkimPublicKey } | { ok: false; reason: string };

/** Decoded keys kept by their base64 text: the same keys come back on every check of a domain. */
export const KEY_CACHE_ENTRIES = 1000;
/** Longer `p=` values are decoded every time (an 8192-bit RSA key is about 1,400 characters). */
export const KEY_CACHE_MAX_TEXT = 2048;

// Least recently used out first: keys of domains checked often stay decoded.
const decodedKeys = new LRUCache<string, KeyDecode | 'not-base64'>({ max: KEY_CACHE_ENTRIES });

/**
 * The `p=` value decoded (RFC 6376 §2.4 base64, then the key itself), from a bounded cache keyed by
 * the key type and the text. Decoding is pure and `createPublicKey` is most of a warm check's DKIM
 * time; a cached key is copied out, so no caller can change what the next check reads.
 */
function decodeKeyCached(keyType: DkimKeyType, base64: string): KeyDecode | 'not-base64' {
  if (base64.length > KEY_CACHE_MAX_TEXT) return decodeKey(keyType, base64);
  const cacheKey = `${keyType}:${base64}`;
  let decoded = decodedKeys.get(cacheKey);
  if (decoded === undefined) {
    decoded = decodeKey(keyType, base64);
    decodedKeys.set(cacheKey, decoded);
  }
  return decoded !== 'not-base64' && decoded.ok ? { ok: true, key: { ...decoded.key } } : decoded;
}

function decodeKey(keyType: DkimKeyType, base64: string): KeyDecode | 'not-base64' {
  const bytes = decodeBase64(base64);
  if (!bytes) return 'not-base64';
  return keyType === 'rsa' ? decodeRsaKey(bytes) : decodeEd25519Key(bytes);
}

/**
 * An RSA `p=`: SubjectPublicKeyInfo DER first, then a bare PKCS#1 RSAPublicKey, since RFC 6376 is
 * inconsistent about which is meant (erratum 3017). The size is the modulus length of the key.
 */
function decodeRsaKey(der: Buffer): KeyDecode {
  const spki = tryCreatePublicKey(der, 'spki');
  if (spki) {
    // RFC 6376 §3.3.1 rsa-sha256 uses rsaEncryption keys; an SPKI of another type does not match k=rsa.
    if (spki.asymmetricKeyType !== 'rsa') {
      return { ok: false, reason: `The key is of type ${keyTypeDisplay(spki.asymmetricKeyType)}, but the record says (or defaults to) "k=rsa".` };
    }
    return rsaKey(spki, 'spki');
  }
  const pkcs1 = tryCreatePublicKey(der, 'pkcs1');
  if (pkcs1) return rsaKey(pkcs1, 'pkcs1');
  return { ok: false, reason: 'The "p=" value decodes, but not into an RSA public key (neither SubjectPublicKeyInfo nor RSAPublicKey).' };
}

function rsaKey(key: KeyObject, encoding: 'spki' | 'pkcs1'): KeyDecode {
  const bits = key.asymmetricKeyDetails?.modulusLength;
  if (bits === undefined) return { ok: false, reason: 'The RSA key has no readable modulus.' };
  return { ok: true, key: { type: 'rsa', bits, encoding } };
}

/** An Ed25519 `p=` is the raw 32-byte key (RFC 8463 §4.2); it is wrapped in an SPKI to be checked. */
function decodeEd25519Key(raw: Buffer): KeyDecode {
  if (raw.length !== ED25519_PUBLIC_KEY_BYTES) {
    if (raw.length === ED25519_SPKI_PREFIX.length + ED25519_PUBLIC_KEY_BYTES && raw.subarray(0, ED25519_SPKI_PREFIX.length).equals(ED25519_SPKI_PREFIX)) {
      return { ok: false, reason: `The Ed25519 key is published as a SubjectPublicKeyInfo; RFC 8463 §4.2 requires the raw ${ED25519_PUBLIC_KEY_BYTES}-byte key (drop the first ${ED25519_SPKI_PREFIX.length} bytes).` };
    }
    return { ok: false, reason: `The Ed25519 key is ${raw.length} bytes; it must be exactly ${ED25519_PUBLIC_KEY_BYTES} (RFC 8463 §4.2).` };
  }
  const key = tryCreatePublicKey(Buffer.concat([ED25519_SPKI_PREFIX, raw]), 'spki');
  if (!key || key.asymmetricKeyType !== 'ed25519') return { ok: false, reason: 'The Ed25519 key is not a valid public key.' };
  return { ok: true, key: { type: 'ed25519', bits: ED25519_KEY_BITS, encoding: 'ed25519-raw' } };
}

function tryCreatePublicKey(der: Buffer, type: 'spki' | 'pkcs1'): KeyObject | null {
  try {
    return createPublicKey({ key: der, format: 'der', type });
  } catch {
    return null; // not this encoding: the caller tries the next one or reports a bad key
  }
}

/** RFC 6376 §3.6.1 h=: unrecognised names are ignored. */
function acceptedHashes(names: string[], mode: 'exact' | 'ignore-case'): DkimHashName[] {
  const accepted: DkimHashName[] = [];
  for (const name of names) {
    const candidate = mode === 'exact' ? name : name.toLowerCase();
    const known = HASH_NAMES.find((hash) => hash === candidate);
    if (known && !accepted.includes(known)) accepted.push(known);
  }
  return accepted;
}

/** A colon-separated list (h=, s=, t=), each element trimmed of FWS, empty elements dropped. */
function splitList(value: string): string[] {
  return value
    .split(':')
    .map(trimFws)
    .filter((item) => item !== '');
}

/**
 * `text` without FWS at either end. A loop, not a regular expression: `/[ \t]+$/` takes quadratic
 * time on a long run of spaces that is not at the end, and record text comes from anyone's DNS.
 */
function trimFws(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isFws(text.charCodeAt(start))) start++;
  while (end > start && isFws(text.charCodeAt(end - 1))) end--;
  return text.slice(start, end);
}

function isFws(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0d || code === 0x0a;
}

const KNOWN_TAGS = new Set(['v', 'h', 'k', 'n', 'p', 's', 't']);

const KEY_TYPE_DISPLAY: Record<string, string> = { ed25519: 'Ed25519', ed448: 'Ed448', 'rsa-pss': 'RSA-PSS', ec: 'elliptic-curve (EC)', dsa: 'DSA', x25519: 'X25519', x448: 'X448' };

function keyTypeDisplay(keyType: string | undefined): string {
  return keyType === undefined ? 'unknown' : (KEY_TYPE_DISPLAY[keyType] ?? keyType);
}

/** Long values are cut to this many characters in messages, so a finding never quotes a whole key. */
export const MAX_QUOTED_CHARS = 40;

function abbreviate(text: string): string {
  return text.length > MAX_QUOTED_CHARS ? `${text.slice(0, MAX_QUOTED_CHARS)}…` : text;
}

/** How many distinct key record texts stay parsed (`parseDkimKeyRecordCached`). */
export const KEY_RECORD_CACHE_ENTRIES = 1000;

const parseDefaultCached = memoByText((text: string) => parseDkimKeyRecord(text), { entries: KEY_RECORD_CACHE_ENTRIES, maxText: KEY_CACHE_MAX_TEXT });

/**
 * `parseDkimKeyRecord(text, options)`, from a bounded cache for the default options (what a check
 * uses): a domain's keys come back on every check. The outcome is shared, so it is frozen (read-only).
 */
export function parseDkimKeyRecordCached(text: string, options?: DkimParseOptions): DkimKeyOutcome {
  return options?.hashNameCase === undefined ? parseDefaultCached(text) : parseDkimKeyRecord(text, options);
}
