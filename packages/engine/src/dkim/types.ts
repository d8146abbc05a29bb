/**
 * DKIM public key records (RFC 6376 §3.6.1, with RFC 8301 and RFC 8463) and the result of probing a
 * domain's selectors for them.
 *
 * Key record tags, published as TXT at `<selector>._domainkey.<domain>` (RFC 6376 §3.6.2.1):
 *
 * | tag | required | default | meaning                                                              |
 * |-----|----------|---------|----------------------------------------------------------------------|
 * | v=  | no       | DKIM1   | Version. If present it MUST be the first tag and exactly `DKIM1`;     |
 * |     |          |         | any other value means the record MUST be discarded.                  |
 * | h=  | no       | all     | Acceptable hash algorithms, colon-separated (`sha1`, `sha256`).       |
 * |     |          |         | Unknown names are ignored. RFC 8301 §3.1: sha1 must not be used.      |
 * | k=  | no       | rsa     | Key type: `rsa` (RFC 6376) or `ed25519` (RFC 8463). Unknown: unusable.|
 * | n=  | no       | (none)  | Notes for humans; programs ignore it.                                 |
 * | p=  | yes      |         | Public key, base64 (whitespace allowed inside). Empty = revoked.      |
 * |     |          |         | rsa: SubjectPublicKeyInfo DER, or RSAPublicKey DER (erratum 3017).    |
 * |     |          |         | ed25519: the raw 32-byte key, not SPKI (RFC 8463 §4.2).               |
 * | s=  | no       | *       | Service types, colon-separated. Applies to email only if the list     |
 * |     |          |         | holds `email` or `*`.                                                 |
 * | t=  | no       | (none)  | Flags, colon-separated: `y` testing, `s` i= must equal d= exactly.    |
 * |     |          |         | Unknown flags are ignored.                                            |
 *
 * Tag-list grammar (RFC 6376 §3.2); tag names and, unless a tag says otherwise, values are
 * case-sensitive; a duplicated tag name invalidates the whole list; unknown tags are ignored:
 *
 *   tag-list  =  tag-spec *( ";" tag-spec ) [ ";" ]
 *   tag-spec  =  [FWS] tag-name [FWS] "=" [FWS] tag-value [FWS]
 *   tag-name  =  ALPHA *ALNUMPUNC
 *   tag-value =  [ tval *( 1*(WSP / FWS) tval ) ]
 *   tval      =  1*VALCHAR
 *   VALCHAR   =  %x21-3A / %x3C-7E
 *   ALNUMPUNC =  ALPHA / DIGIT / "_"
 */
import type { DnsErrorReason } from '../dns/types.js';
import type { Finding } from '../findings.js';

/** The key types this engine can use (RFC 6376 §3.6.1 `rsa`, RFC 8463 §4.2 `ed25519`). */
export type DkimKeyType = 'rsa' | 'ed25519';

/** The hash names RFC 6376 §3.6.1 defines for `h=`. */
export type DkimHashName = 'sha1' | 'sha256';

/** The `t=` flags RFC 6376 §3.6.1 defines: `y` testing, `s` strict identity. */
export type DkimFlag = 'y' | 's';

/** How `p=` was encoded: SPKI DER, bare PKCS#1 RSAPublicKey DER (erratum 3017), or raw Ed25519. */
export type DkimKeyEncoding = 'spki' | 'pkcs1' | 'ed25519-raw';

/**
 * The tag values of a well-formed tag-list, as published (lists split and trimmed, nothing
 * filtered). Present on every outcome that got past the tag-list syntax.
 */
export interface DkimTagValues {
  /** `v=`, or null when absent. */
  version: string | null;
  /** `k=` as written; 'rsa' when absent (RFC 6376 §3.6.1 default). */
  keyTypeName: string;
  /** `h=` as written (every name, known or not), or null when absent (all algorithms allowed). */
  hashNames: string[] | null;
  /** `s=` as written; ['*'] when absent. */
  serviceTypes: string[];
  /** `t=` as written (every flag, known or not); [] when absent. */
  flagNames: string[];
  /** `n=`, or null when absent. */
  notes: string | null;
  /** `p=` with its embedded whitespace removed; '' means revoked. */
  publicKeyData: string;
  /** Tags this parser does not know, ignored as RFC 6376 §3.2 requires (for example `g=`). */
  unknownTags: string[];
  /**
   * Departures from the strict grammar that were accepted anyway (empty tag-specs, whitespace
   * after the final ';'). Strict verifiers may reject such a record.
   */
  syntaxNotes: string[];
}

/** A decoded public key: its type, its size in bits read from the key itself, and its encoding. */
export interface DkimPublicKey {
  type: DkimKeyType;
  /** RSA: the modulus length. Ed25519: 256 (RFC 8463 §4.2, 32 bytes). */
  bits: number;
  encoding: DkimKeyEncoding;
}

/** A key record whose key decoded: the tags plus what they mean once applied. */
export interface DkimKeyRecord extends DkimTagValues {
  keyType: DkimKeyType;
  /**
   * The `h=` names a verifier recognises, in record order; null when `h=` is absent (any hash).
   * Empty when `h=` lists only names nobody knows: no signature can verify with this key.
   */
  acceptedHashes: DkimHashName[] | null;
  /** The known `t=` flags, in record order. */
  flags: DkimFlag[];
  /** `t=y`: receivers must treat mail signed with this key like unsigned mail (RFC 6376 §3.6.1). */
  testing: boolean;
  /** `t=s`: the i= domain must equal d= exactly. */
  strict: boolean;
  key: DkimPublicKey;
}

/**
 * What one key record means to a verifier, as a closed union. `reason` says why, in plain words.
 * - `valid`: usable (RSA of at least 1024 bits, or Ed25519).
 * - `too-short`: a well-formed RSA key under 1024 bits; verifiers must not accept it (RFC 8301 §3.2).
 * - `revoked`: `p=` is empty (RFC 6376 §3.6.1).
 * - `not-for-email`: `s=` names neither `email` nor `*`; an email verifier ignores the record.
 * - `unsupported-key-type`: `k=` names a type no verifier knows.
 * - `bad-key`: `p=` is base64 but not a key of the `k=` type.
 * - `invalid-syntax`: not a well-formed record (tag-list, missing `p=`, `v=` not first, bad base64).
 * - `discard`: `v=` is present but not exactly `DKIM1`; the record MUST be discarded.
 */
export type DkimKeyOutcome =
  | { status: 'valid'; record: DkimKeyRecord; reason: string }
  | { status: 'too-short'; record: DkimKeyRecord; reason: string }
  | { status: 'revoked'; tags: DkimTagValues; reason: string }
  | { status: 'not-for-email'; tags: DkimTagValues; reason: string }
  | { status: 'unsupported-key-type'; tags: DkimTagValues; reason: string }
  | { status: 'bad-key'; tags: DkimTagValues; reason: string }
  | { status: 'invalid-syntax'; reason: string }
  | { status: 'discard'; version: string; reason: string };

/** The status values of `DkimKeyOutcome`. */
export type DkimKeyStatus = DkimKeyOutcome['status'];

/** Options of `parseDkimKeyRecord`. */
export interface DkimParseOptions {
  /**
   * How `h=` names are compared with `sha1`/`sha256`. RFC 6376 §3.2 makes values case-sensitive and
   * §3.6.1 does not relax that for `h=`, so the default is 'exact' (`SHA256` is an unknown name).
   * 'ignore-case' follows verifiers that compare without case (Stalwart does).
   */
  hashNameCase?: 'exact' | 'ignore-case';
}

/** Where a probed selector came from. */
export type SelectorOrigin = 'caller' | 'list' | 'microsoft-dynamic';

/** How a provider was recognised: from the CNAME the selector name points to, or from the selector's name. */
export type ProviderEvidence = 'cname' | 'selector';

/** One key record found at a selector. A selector holding several key records gives one entry each. */
export interface DkimKey {
  selector: string;
  /** The name queried: `<selector>._domainkey.<domain>`. */
  name: string;
  origin: SelectorOrigin;
  /** The TXT record's character-strings joined with nothing between them (RFC 6376 §3.6.2.2). */
  record: string;
  outcome: DkimKeyOutcome;
  /** Known key type, or null when the key did not decode. */
  keyType: DkimKeyType | null;
  /** Bits read from the key itself (never from the base64 length), or null when it did not decode. */
  keyLength: number | null;
  testing: boolean;
  strict: boolean;
  revoked: boolean;
  /** True only for `valid`: a receiver can verify signatures with this key. */
  usable: boolean;
  /** The sending service this key most likely belongs to, or null. */
  provider: string | null;
  providerEvidence: ProviderEvidence | null;
  /** The last alias followed to reach the record, or null when the selector name held it directly. */
  cnameTarget: string | null;
  ttl?: number;
}

/** A selector whose lookup failed: the probe could not tell whether a key is published there. */
export interface DkimProbeFailure {
  selector: string;
  name: string;
  reason: DnsErrorReason;
  detail?: string;
}

/** A caller-supplied selector that was not queried, and why. */
export interface DkimSelectorRejection {
  selector: string;
  reason: string;
}

/** A selector name that is an alias to a name holding no key (a dangling DKIM delegation). */
export interface DkimDanglingAlias {
  selector: string;
  name: string;
  cnameTarget: string;
  provider: string | null;
}

/**
 * - `found`: at least one key record (of any outcome) was found.
 * - `not-found`: every probe answered, and none held a key record.
 * - `incomplete`: none found, but some probes failed, so the answer is "could not check", not "none".
 */
export type DkimProbeStatus = 'found' | 'not-found' | 'incomplete';

/** Everything `probeDkim` learned. */
export interface DkimProbe {
  domain: string;
  status: DkimProbeStatus;
  /** Every key record found, in probe order (caller selectors first). Not just the first. */
  found: DkimKey[];
  /** The key for the summary fields; see `chooseBestKey` for the order of preference. Null when none. */
  bestKey: DkimKey | null;
  /** How many selectors were queried (the length of `selectorsProbed`). */
  probed: number;
  selectorsProbed: string[];
  /** Selectors whose lookup failed (a DNS error, not "no record"). */
  failed: DkimProbeFailure[];
  /** Caller-supplied selectors that were not queried. */
  rejected: DkimSelectorRejection[];
  /** Selector names that are CNAMEs to a name without a key. */
  dangling: DkimDanglingAlias[];
  findings: Finding[];
}

/** Options of `probeDkim`. */
export interface DkimProbeOptions {
  /** Selectors to try before the built-in list (for example from a DKIM-Signature's `s=`). */
  selectors?: readonly string[];
  /** Try the built-in list too (default true). With false, only `selectors` are probed. */
  useBuiltInList?: boolean;
  /** Passed to the record parser. */
  parse?: DkimParseOptions;
}
