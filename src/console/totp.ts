/**
 * The second factor: TOTP (RFC 6238) over HOTP (RFC 4226) with HMAC-SHA1 from node:crypto, and
 * recovery codes. A secret is 20 random bytes (RFC 4226 §4 R6: at least 128 bits; 160 advised),
 * shown once in base32 (RFC 4648 §6) and as an otpauth:// URI for authenticator apps.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** RFC 6238 §4.1: X, the time step, 30 seconds. */
export const TOTP_STEP_SECONDS = 30;
/** Digits of a code (RFC 4226 §5.3: at least 6). */
export const TOTP_DIGITS = 6;
/** Steps either side of now that are accepted (RFC 6238 §5.2: one step of delay allowed). */
export const TOTP_WINDOW_STEPS = 1;
/** Bytes of a new secret. */
export const TOTP_SECRET_BYTES = 20;
/** Recovery codes made at once, and their random bytes. */
export const RECOVERY_CODE_COUNT = 10;
const RECOVERY_CODE_BYTES = 8;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 §6, without padding. */
export function base32Encode(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** RFC 4648 §6; spaces, padding and case ignored; undefined for a character outside the alphabet. */
export function base32Decode(text: string): Buffer | undefined {
  const clean = text.replace(/[\s=]/g, '').toUpperCase();
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const c of clean) {
    const index = BASE32.indexOf(c);
    if (index === -1) return undefined;
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** A new secret, base32. */
export function newTotpSecret(): string {
  return base32Encode(randomBytes(TOTP_SECRET_BYTES));
}

/** RFC 4226 §5.3: HOTP(K, C), dynamic truncation, TOTP_DIGITS digits. */
export function hotp(key: Buffer, counter: number): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const digest = createHmac('sha1', key).update(message).digest();
  const offset = digest[digest.length - 1]! & 0x0f;
  const binary = ((digest[offset]! & 0x7f) << 24) | (digest[offset + 1]! << 16) | (digest[offset + 2]! << 8) | digest[offset + 3]!;
  return String(binary % 10 ** TOTP_DIGITS).padStart(TOTP_DIGITS, '0');
}

/** RFC 6238 §4.2: T = floor((now − T0) / X), T0 = 0. */
export function totpStep(nowMs: number): number {
  return Math.floor(nowMs / 1000 / TOTP_STEP_SECONDS);
}

/** The code of `secret` at `nowMs`. */
export function totpCode(secret: string, nowMs: number): string {
  return hotp(base32Decode(secret) ?? Buffer.alloc(0), totpStep(nowMs));
}

/**
 * The step whose code `code` is, within the window around now and after `lastStep` (a code is
 * accepted once: RFC 6238 §5.2), or null.
 */
export function verifyTotp(secret: string, code: string, nowMs: number, lastStep: number): number | null {
  const key = base32Decode(secret);
  const typed = code.replace(/\s/g, '');
  if (!key || !/^\d+$/.test(typed) || typed.length !== TOTP_DIGITS) return null;
  const now = totpStep(nowMs);
  let found: number | null = null;
  for (let step = now - TOTP_WINDOW_STEPS; step <= now + TOTP_WINDOW_STEPS; step++) {
    // Every step is compared (no early exit), in constant time.
    if (timingSafeEqual(Buffer.from(hotp(key, step)), Buffer.from(typed)) && step > lastStep && found === null) found = step;
  }
  return found;
}

/** The otpauth:// URI authenticator apps read (the Key Uri Format of Google Authenticator). */
export function otpauthUri(secret: string, account: string, issuer = 'spoof-checker'): string {
  return `otpauth://totp/${encodeURIComponent(issuer)}:${encodeURIComponent(account)}?secret=${secret}&issuer=${encodeURIComponent(issuer)}&algorithm=SHA1&digits=${TOTP_DIGITS}&period=${TOTP_STEP_SECONDS}`;
}

/** New recovery codes: shown once, stored as their SHA-256. */
export function newRecoveryCodes(): { codes: string[]; hashes: string[] } {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const hex = randomBytes(RECOVERY_CODE_BYTES).toString('hex');
    return `${hex.slice(0, 4)}-${hex.slice(4, 8)}-${hex.slice(8, 12)}-${hex.slice(12)}`;
  });
  return { codes, hashes: codes.map(hashRecoveryCode) };
}

/** The stored form of a recovery code (dashes, spaces and case ignored). */
export function hashRecoveryCode(code: string): string {
  return createHash('sha256').update(code.replace(/[\s-]/g, '').toLowerCase()).digest('hex');
}
