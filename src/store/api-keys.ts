import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** Length of a SHA-256 digest in bytes. */
export const API_KEY_DIGEST_BYTES = 32;

/** The digest under which a key is stored and looked up: SHA-256 of its UTF-8 bytes. */
export function digestApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** The HMAC key that separates key ids from the stored digests (a fixed label, not a secret). */
const KEY_ID_LABEL = 'spoof-checker:api-key-id:v2';
/** Hex digits of a key id: 48 bits, enough to keep ids of one service apart, too few to confirm a guess of a long key. */
export const API_KEY_ID_HEX_DIGITS = 12;

/**
 * A public id for a key that has none (`key_` and 12 hex digits): an HMAC of its digest under a fixed
 * label, so that it is stable (replicas and restarts agree; seeds that give only the digest get the
 * same id) but is neither a prefix of the stored SHA-256 nor of any plain hash of the key: printing
 * it at start-up or in a record log gives nothing to match a digest or a hash table against.
 */
export function apiKeyIdFromDigest(digest: Buffer): string {
  return `key_${createHmac('sha256', KEY_ID_LABEL).update(digest).digest('hex').slice(0, API_KEY_ID_HEX_DIGITS)}`;
}

/**
 * Whether two digests are equal, in time that does not depend on where they differ
 * (`crypto.timingSafeEqual`). Digests of the wrong length never match.
 */
export function digestsEqual(a: Buffer, b: Buffer): boolean {
  if (a.length !== API_KEY_DIGEST_BYTES || b.length !== API_KEY_DIGEST_BYTES) return false;
  return timingSafeEqual(a, b);
}

// The stored shapes of organisations and keys, and their store (src/store/api-keys-memory.ts,
// src/store/api-keys-sql.ts).

/** An organisation: the unit of tenancy. Every other resource belongs to exactly one. */
export interface Organization {
  id: string;
  name: string;
}

/** The person shown as the author of what an API key creates (`createdBy` of a template version). */
export interface KeyOwner {
  id: string;
  name: string;
  email: string;
  image: string;
}

/**
 * An API key as stored: never the key itself, only its SHA-256 digest. `id` is public (it is the
 * `actor_id` of the record log); the key is secret.
 */
export interface ApiKeyRecord {
  id: string;
  organizationId: string;
  /** SHA-256 of the key's UTF-8 bytes (32 bytes). */
  sha256: Buffer;
  owner: KeyOwner;
}

/** Organisations and their API keys. */
export interface ApiKeyStore {
  addOrganization(organization: Organization): Promise<void>;
  getOrganization(id: string): Promise<Organization | undefined>;
  addKey(key: ApiKeyRecord): Promise<void>;
  /**
   * The key whose digest equals `sha256`, or undefined. Timing reveals nothing usable: the memory
   * store compares in constant time against every stored digest (no early exit); the SQL stores
   * look the digest up by index (an attacker cannot choose digest prefixes, so where a lookup stops
   * tells them nothing) and confirm the match in constant time.
   */
  findByDigest(sha256: Buffer): Promise<ApiKeyRecord | undefined>;
  /** Whether any API key is stored (`serve` says how to add one when none is). */
  hasAnyKey(): Promise<boolean>;
  /** Deletes the organisation's key `id` (the console's revoke); false when it is not the organisation's. */
  removeKey(organizationId: string, id: string): Promise<boolean>;
}
