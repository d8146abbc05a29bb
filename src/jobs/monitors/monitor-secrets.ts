/**
 * Webhook secrets. A secret is shown once, when its monitor is created; the store keeps it sealed
 * with AES-256-GCM under a server key (signing needs the secret itself, so a one-way hash would not
 * do). The server key comes from SPOOF_CHECKER_SECRET_KEY when set (kept apart from the data),
 * else it is made once and kept in the store's `server_secrets` table, shared by every replica and
 * worker of that store. Secrets never appear in logs or in any response after the first.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** The variable that supplies the server key (any string; its SHA-256 is the AES key). */
export const SECRET_KEY_VARIABLE = 'SPOOF_CHECKER_SECRET_KEY';
/** Random bytes in a webhook secret (256 bits). */
export const WEBHOOK_SECRET_BYTES = 32;
/** Prefix of every webhook secret, so that a leaked one is recognisable. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** Version tag of the sealed form. */
const SEALED_PREFIX = 'v1.';
const IV_BYTES = 12;

/** A new webhook secret: `whsec_` and 64 hex digits. */
export function newWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(WEBHOOK_SECRET_BYTES).toString('hex')}`;
}

/** The AES-256 key for a configured key text. */
export function keyFromText(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** A fresh random server key. */
export function newServerKey(): Buffer {
  return randomBytes(32);
}

/** `secret` sealed under `key`: `v1.<iv>.<tag>.<ciphertext>`, base64url parts. */
export function sealSecret(secret: string, key: Buffer): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return `${SEALED_PREFIX}${iv.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${body.toString('base64url')}`;
}

/** The secret inside `sealed`, or undefined when it was sealed under another key (or is damaged). */
export function openSecret(sealed: string, key: Buffer): string | undefined {
  if (!sealed.startsWith(SEALED_PREFIX)) return undefined;
  const [iv, tag, body] = sealed.slice(SEALED_PREFIX.length).split('.');
  if (iv === undefined || tag === undefined || body === undefined) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
