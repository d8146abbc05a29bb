/**
 * Console sessions: a random id in an HttpOnly, SameSite=Lax cookie (`__Host-` prefixed and
 * Secure when the public origin is HTTPS: RFC 6265bis §4.1.3.2), kept server-side as its SHA-256;
 * idle expiry SESSION_IDLE_MS, absolute SESSION_ABSOLUTE_MS. The form token of a session is an
 * HMAC of its id, so it needs no storage and is worth nothing without the cookie.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A session unused this long ends: 12 hours. */
export const SESSION_IDLE_MS = 12 * 3_600_000;
/** A session ends this long after sign-in whatever its use: 7 days. */
export const SESSION_ABSOLUTE_MS = 7 * 86_400_000;
/** `lastSeenAt` is written at most this often (a page view is a read, not a write, most of the time). */
export const SESSION_TOUCH_INTERVAL_MS = 60_000;
/** Random bytes of a session id (256 bits). */
export const SESSION_ID_BYTES = 32;
/** The form field that carries the session's token (its name marks it secret for the record log's redaction). */
export const FORM_TOKEN_FIELD = 'csrf_token';

/** The cookie's name: `__Host-` prefixed when the cookie is Secure. */
export function sessionCookieName(secure: boolean): string {
  return secure ? '__Host-spoof_checker_session' : 'spoof_checker_session';
}

/** A new session id. */
export function newSessionId(): string {
  return randomBytes(SESSION_ID_BYTES).toString('base64url');
}

/** The Set-Cookie value that holds `id` (or clears the cookie when `id` is null). */
export function sessionCookie(id: string | null, secure: boolean): string {
  const parts = [`${sessionCookieName(secure)}=${id ?? ''}`, 'Path=/', 'HttpOnly', 'SameSite=Lax'];
  if (secure) parts.push('Secure');
  if (id === null) parts.push('Max-Age=0');
  else parts.push(`Max-Age=${Math.floor(SESSION_ABSOLUTE_MS / 1000)}`);
  return parts.join('; ');
}

/** The session id in a Cookie header, if it has one of the right shape. */
export function sessionIdFrom(cookieHeader: string | undefined, secure: boolean): string | undefined {
  if (!cookieHeader) return undefined;
  const name = sessionCookieName(secure);
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    if (/^[A-Za-z0-9_-]{40,64}$/.test(value)) return value;
  }
  return undefined;
}

/** The form token of a session. */
export function formToken(sessionId: string): string {
  return createHmac('sha256', sessionId).update('spoof-checker:console-form-token').digest('base64url');
}

/** Whether `presented` is the session's form token (constant time). */
export function formTokenMatches(sessionId: string, presented: unknown): boolean {
  if (typeof presented !== 'string') return false;
  const expected = Buffer.from(formToken(sessionId));
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
