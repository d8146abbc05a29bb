/**
 * Passwords of the console's users: the rules a new one must meet (NIST SP 800-63B §5.1.1.2: at
 * least 12 characters here, no composition rules, refused when on a list of common passwords or
 * when it holds the account's email local part) and their storage with scrypt (RFC 7914) from
 * node:crypto, at the parameters stated in docs/security.md. A password is never logged, stored in
 * clear or put in the record log.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** Fewest characters (code points) of a password (NIST SP 800-63B asks at least 8; we ask 12). */
export const MIN_PASSWORD_LENGTH = 12;
/** Most characters accepted (SP 800-63B §5.1.1.2: at least 64 must be allowed); bounds the hashing work. */
export const MAX_PASSWORD_LENGTH = 256;
/** A local part shorter than this is not looked for in the password (`a@…` would refuse every "a"). */
export const MIN_LOCAL_PART_CHECKED = 3;

/** scrypt's cost (N = 2^15), block size and parallelism: about 32 MiB and tens of milliseconds per hash. */
export const SCRYPT_LOG2_N = 15;
export const SCRYPT_R = 8;
export const SCRYPT_P = 1;
/** Bytes of the derived key and of the random salt. */
export const SCRYPT_KEY_BYTES = 32;
export const SCRYPT_SALT_BYTES = 16;
/** Memory scrypt may use: 128 × N × r bytes, with room to spare. */
const SCRYPT_MAXMEM = 128 * 2 ** SCRYPT_LOG2_N * SCRYPT_R * 2;

/** Where the common passwords are (assets/common-passwords/: its source and licence beside it), from src/ and dist/ alike. */
const COMMON_PASSWORDS_FILE = new URL('../../assets/common-passwords/passwords.txt', import.meta.url);

let common: ReadonlySet<string> | undefined;
/** The common passwords, in lower case (read once). */
export function commonPasswords(): ReadonlySet<string> {
  common ??= new Set(
    readFileSync(COMMON_PASSWORDS_FILE, 'utf8')
      .split('\n')
      .map((line) => line.trim().toLowerCase())
      .filter((line) => line !== ''),
  );
  return common;
}

/** Why a new password is refused, or null when it is accepted. */
export function passwordProblem(password: string, email: string): string | null {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) return `The password has ${length} characters; it needs at least ${MIN_PASSWORD_LENGTH}. A few words in a row make a good one.`;
  if (length > MAX_PASSWORD_LENGTH) return `The password has ${length} characters; at most ${MAX_PASSWORD_LENGTH} are accepted.`;
  const lower = password.toLowerCase();
  if (commonPasswords().has(lower)) return 'This password is on a list of common passwords that attackers try first. Choose another.';
  const local = email.split('@')[0]?.toLowerCase() ?? '';
  if (local.length >= MIN_LOCAL_PART_CHECKED && lower.includes(local)) return 'The password contains your email address’s name; it is the first thing an attacker tries. Choose another.';
  return null;
}

function derive(password: string, salt: Buffer, options: ScryptOptions & { N: number }): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, SCRYPT_KEY_BYTES, { ...options, maxmem: SCRYPT_MAXMEM }, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

/** The stored form: `scrypt$<log2 N>$<r>$<p>$<salt base64>$<key base64>` (the parameters travel with it). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SCRYPT_SALT_BYTES);
  const key = await derive(password, salt, { N: 2 ** SCRYPT_LOG2_N, r: SCRYPT_R, p: SCRYPT_P });
  return ['scrypt', SCRYPT_LOG2_N, SCRYPT_R, SCRYPT_P, salt.toString('base64'), key.toString('base64')].join('$');
}

/** A hash of nothing anyone knows: verified against when the email is unknown, so both answers take as long. */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(24).toString('base64'));
  return decoy;
}

/** Whether `password` is the one `stored` was made from (compared in constant time). A malformed hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  if ([...password].length > MAX_PASSWORD_LENGTH) return false;
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [logN, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  // Only the parameters this code writes (or cheaper): a stored hash cannot make a sign-in cost more.
  if (!(logN >= 10 && logN <= SCRYPT_LOG2_N && r >= 1 && r <= SCRYPT_R && p >= 1 && p <= SCRYPT_P)) return false;
  const salt = Buffer.from(parts[4]!, 'base64');
  const expected = Buffer.from(parts[5]!, 'base64');
  if (expected.length !== SCRYPT_KEY_BYTES) return false;
  const key = await derive(password, salt, { N: 2 ** logN, r, p });
  return timingSafeEqual(key, expected);
}
