/**
 * API key authentication. Every API route accepts the key as `Authorization: Bearer <key>` and as
 * `x-api-key: <key>` (the spec shows both). Keys are looked up by their SHA-256 digest, compared in
 * constant time by the store; a key maps to exactly one organisation.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { apiKeyWeakness } from '../store/api-key-strength.js';
import { digestApiKey } from '../store/api-keys.js';
import type { ApiKeyStore } from '../store/types.js';
import { announceKeyRevoked, listenForKeyRevocations } from '../store/key-revocations.js';
import type { Principal } from './context.js';
import type { WindowCounter } from './counters.js';
import { ApiError } from './errors.js';
import type { Limit } from './rate-limits.js';

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

/** The one lookup authentication needs. */
export type KeyLookup = Pick<ApiKeyStore, 'findByDigest'>;

/**
 * How long a key found in the store is remembered. A key revoked in this process (the console's
 * revoke: {@link forgetRevokedKey}) stops working at once; one removed by another process (the CLI's
 * `keys revoke`, another replica's console) keeps working in this one for at most this long.
 */
export const API_KEY_CACHE_TTL_MS = 10_000;
/** Most keys remembered at once (the least recently used is forgotten first). */
export const API_KEY_CACHE_MAX_ENTRIES = 10_000;

/**
 * Key lookups with the keys found remembered for `API_KEY_CACHE_TTL_MS`: on SQL stores a lookup is
 * a query per request (on SQLite, on the event loop, queued behind the record log's commits), and
 * the same few keys are presented again and again. Unknown keys are not remembered (a flood of
 * wrong keys cannot evict the right ones, and a key added to the store works at once).
 */
export class CachedKeyLookup implements KeyLookup {
  readonly #entries = new Map<string, { record: Awaited<ReturnType<ApiKeyStore['findByDigest']>>; until: number }>();

  constructor(
    private readonly store: KeyLookup,
    private readonly clock: () => number = Date.now,
    private readonly ttlMs: number = API_KEY_CACHE_TTL_MS,
  ) {
    listenForKeyRevocations(this);
  }

  /** Forgets the key with id `keyId` (revoked): its next request asks the store. */
  forget(keyId: string): void {
    for (const [digest, held] of this.#entries) if (held.record?.id === keyId) this.#entries.delete(digest);
  }

  async findByDigest(sha256: Buffer): Promise<Awaited<ReturnType<ApiKeyStore['findByDigest']>>> {
    const id = sha256.toString('base64');
    const now = this.clock();
    const held = this.#entries.get(id);
    if (held && held.until > now) {
      // Most recently used last: the map's first entry is the one to forget.
      this.#entries.delete(id);
      this.#entries.set(id, held);
      return held.record;
    }
    const record = await this.store.findByDigest(sha256);
    if (record === undefined) {
      this.#entries.delete(id);
      return undefined;
    }
    this.#entries.delete(id);
    this.#entries.set(id, { record, until: now + this.ttlMs });
    while (this.#entries.size > API_KEY_CACHE_MAX_ENTRIES) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
    return record;
  }
}

/**
 * A key was revoked in this process: every key cache of it forgets the key at once, so that its next
 * request is refused. (Key ids are unique: derived from the key's digest, `apiKeyIdFromDigest`.)
 */
export const forgetRevokedKey = announceKeyRevoked;

/** The principal of a key, or undefined for a key the store does not know. */
export async function principalForKey(store: KeyLookup, key: string): Promise<Principal | undefined> {
  const record = await store.findByDigest(digestApiKey(key));
  return record && { organizationId: record.organizationId, keyId: record.id, owner: record.owner };
}

/** Most keys whose strength is remembered (by key id) at once. */
export const MAX_KEY_STRENGTH_ENTRIES = 10_000;

/**
 * Refuses keys the store knows but that are too weak (src/store/api-key-strength.ts): a key loaded
 * from a seed by digest, or the published demo keys left in a store that now serves outside the
 * loopback demo. Each key's verdict is remembered by its id, so the estimate runs once per key.
 */
export class WeakKeyFilter {
  readonly #weak = new Map<string, boolean>();

  /** Whether the key (found in the store under `keyId`) is too weak to be accepted. */
  refuses(keyId: string, key: string): boolean {
    let weak = this.#weak.get(keyId);
    if (weak === undefined) {
      weak = apiKeyWeakness(key) !== null;
      this.#weak.set(keyId, weak);
      if (this.#weak.size > MAX_KEY_STRENGTH_ENTRIES) this.#weak.delete(this.#weak.keys().next().value!);
    }
    return weak;
  }
}

/**
 * Resolves the request's principal. Returns null when no usable key was sent; `required` turns
 * that into a 401 (UNAUTHORIZED) with a message that says what was wrong. With `weakKeys`, a known
 * key that is too weak counts as no key (a 401 that says why).
 */
export async function authenticate(store: KeyLookup, headers: IncomingHttpHeaders, required: boolean, weakKeys?: WeakKeyFilter): Promise<Principal | null> {
  const presented = presentedKey(headers);
  if (presented.kind === 'key') {
    const principal = await principalForKey(store, presented.key);
    if (principal && weakKeys?.refuses(principal.keyId, presented.key)) {
      if (!required) return null;
      throw new ApiError('UNAUTHORIZED', {
        message: 'The API key is too weak to be accepted: it is built from runs, repeats or common words, or is too short.',
        fix: "Use a key of at least 32 random characters (e.g. 'openssl rand -hex 32'). Weak keys, such as the published demo keys, are accepted only by 'serve --demo' on loopback.",
      });
    }
    if (principal) return principal;
    if (required) throw new ApiError('UNAUTHORIZED', { message: 'The API key is not valid.' });
    return null;
  }
  if (!required) return null;
  if (presented.kind === 'invalid') throw new ApiError('UNAUTHORIZED', { message: presented.reason });
  throw new ApiError('UNAUTHORIZED', { message: 'No API key was sent.' });
}

/** Most locked-out clients remembered at once (the oldest lock-out is forgotten first). */
export const MAX_LOCKED_OUT_CLIENTS = 10_000;

/**
 * Limits failed authentications per client: each 401 is counted (in the shared counter), and a
 * client past `limit.max` failures in the window is locked out until the window ends: its requests
 * get 429 RATE_LIMITED before any key is looked at, a valid one included (else guessing would
 * still tell a right key from a wrong one). The lock-out itself is kept in this process, so that
 * checking it costs no round trip; every replica learns it at the client's next failure there.
 */
export class FailedAuthLimiter {
  readonly #lockedUntil = new Map<string, number>();

  constructor(
    private readonly counter: WindowCounter,
    private readonly limit: Limit,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Throws 429 when `client` is locked out. */
  refuseIfLockedOut(client: string): void {
    const until = this.#lockedUntil.get(client);
    if (until === undefined) return;
    const left = until - this.clock();
    if (left <= 0) {
      this.#lockedUntil.delete(client);
      return;
    }
    throw this.#refusal(left);
  }

  /** Counts a failure of `client`; returns the 429 to answer instead of 401 once it is past the limit. */
  async failed(client: string): Promise<ApiError | null> {
    const [state] = await this.counter.hit([{ key: `auth-failed:${client}`, windowMs: this.limit.windowMs }]);
    if (!state || state.count <= this.limit.max) return null;
    this.#lockedUntil.delete(client);
    this.#lockedUntil.set(client, this.clock() + state.resetMs);
    while (this.#lockedUntil.size > MAX_LOCKED_OUT_CLIENTS) {
      const oldest = this.#lockedUntil.keys().next().value;
      if (oldest === undefined) break;
      this.#lockedUntil.delete(oldest);
    }
    return this.#refusal(state.resetMs);
  }

  #refusal(leftMs: number): ApiError {
    const seconds = Math.max(1, Math.ceil(leftMs / 1000));
    return new ApiError('RATE_LIMITED', {
      message: 'Too many requests with a missing or wrong API key.',
      why: `This service allows ${this.limit.max} failed authentication(s) per ${Math.round(this.limit.windowMs / 1000)} second(s) from one client address.`,
      fix: `Check the key you send, then wait ${seconds} second(s) before retrying.`,
      retryAfter: seconds,
    });
  }
}
