/**
 * API key authentication. Every API route accepts the key as `Authorization: Bearer <key>` and as
 * `x-api-key: <key>` (the spec shows both). Keys are looked up by their SHA-256 digest, compared in
 * constant time by the store; a key maps to exactly one organisation.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { digestApiKey } from '../store/api-keys.js';
import type { ApiKeyStore } from '../store/types.js';
import type { Principal } from './context.js';
import { ApiError } from './errors.js';

/** Longest key accepted; longer values are refused before hashing. */
export const MAX_API_KEY_LENGTH = 512;

/** What the request presented: a key, nothing, or something unusable (and why). */
export type PresentedKey = { kind: 'key'; key: string } | { kind: 'none' } | { kind: 'invalid'; reason: string };

// RFC 7235 §2.1: the auth-scheme is case-insensitive. RFC 6750 §2.1: `Bearer` + one space + token.
const BEARER = /^bearer +(\S+) *$/i;

/** Reads the key from `Authorization: Bearer` or `x-api-key`. Two different keys are refused. */
export function presentedKey(headers: IncomingHttpHeaders): PresentedKey {
  const authorization = headers.authorization;
  const apiKeyHeader = headers['x-api-key'];
  let fromAuthorization: string | undefined;
  if (authorization !== undefined && authorization !== '') {
    const match = BEARER.exec(authorization);
    if (!match?.[1]) return { kind: 'invalid', reason: "The Authorization header must be 'Bearer <key>'." };
    fromAuthorization = match[1];
  }
  if (Array.isArray(apiKeyHeader)) return { kind: 'invalid', reason: 'The x-api-key header was sent more than once.' };
  const fromHeader = apiKeyHeader?.trim() || undefined;
  if (fromAuthorization !== undefined && fromHeader !== undefined && fromAuthorization !== fromHeader) {
    return { kind: 'invalid', reason: 'The Authorization and x-api-key headers carry two different keys.' };
  }
  const key = fromAuthorization ?? fromHeader;
  if (key === undefined) return { kind: 'none' };
  if (key.length > MAX_API_KEY_LENGTH) return { kind: 'invalid', reason: 'The API key is not valid.' };
  return { kind: 'key', key };
}

/** The principal of a key, or undefined for a key the store does not know. */
export async function principalForKey(store: ApiKeyStore, key: string): Promise<Principal | undefined> {
  const record = await store.findByDigest(digestApiKey(key));
  return record && { organizationId: record.organizationId, keyId: record.id, owner: record.owner };
}

/**
 * Resolves the request's principal. Returns null when no usable key was sent; `required` turns
 * that into a 401 (UNAUTHORIZED) with a message that says what was wrong.
 */
export async function authenticate(store: ApiKeyStore, headers: IncomingHttpHeaders, required: boolean): Promise<Principal | null> {
  const presented = presentedKey(headers);
  if (presented.kind === 'key') {
    const principal = await principalForKey(store, presented.key);
    if (principal) return principal;
    if (required) throw new ApiError('UNAUTHORIZED', { message: 'The API key is not valid.' });
    return null;
  }
  if (!required) return null;
  if (presented.kind === 'invalid') throw new ApiError('UNAUTHORIZED', { message: presented.reason });
  throw new ApiError('UNAUTHORIZED', { message: 'No API key was sent.' });
}
