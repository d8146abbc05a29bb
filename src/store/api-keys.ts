import { createHash, timingSafeEqual } from 'node:crypto';

/** Length of a SHA-256 digest in bytes. */
export const API_KEY_DIGEST_BYTES = 32;

/** The digest under which a key is stored and looked up: SHA-256 of its UTF-8 bytes. */
export function digestApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** A public id for a key that has none: derived from its digest, so it never reveals the key. */
export function apiKeyIdFromDigest(digest: Buffer): string {
  return `key_${digest.toString('hex').slice(0, 16)}`;
}

/**
 * Whether two digests are equal, in time that does not depend on where they differ
 * (`crypto.timingSafeEqual`). Digests of the wrong length never match.
 */
export function digestsEqual(a: Buffer, b: Buffer): boolean {
  if (a.length !== API_KEY_DIGEST_BYTES || b.length !== API_KEY_DIGEST_BYTES) return false;
  return timingSafeEqual(a, b);
}
