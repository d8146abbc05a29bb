/**
 * One rule for API keys (src/store/api-key-strength.ts), whatever their length: keys built from
 * sequential runs, repeats, years or common words are refused in SPOOF_CHECKER_API_KEYS (see
 * serve.test.ts), in seed files, in `buildApp`'s `apiKeys`, and when presented; the published demo
 * keys work only in `serve --demo` on loopback. Random keys of every usual form pass.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { acceptsWeakKeys, DEMO_API_KEY, DEMO_SEED_FILE } from '../../src/cli/serve.js';
import {
  apiKeyPatternBits,
  apiKeyWeakness,
  MAX_API_KEY_PATTERN_SHARE,
  MIN_API_KEY_PATTERN_BITS,
} from '../../src/store/api-key-strength.js';
import { createMemoryStores } from '../../src/store/memory.js';
import { applySeed, loadSeedFile, parseSeed } from '../../src/store/seed.js';
import { makeApp } from './helpers.js';

/** Weak keys of 32 characters or more: each refused, with why. */
const WEAK: [what: string, key: string, reason: RegExp][] = [
  ['hex digits in order, twice', '0123456789abcdef0123456789abcdef', /sequential runs, repeats or common words/],
  ['the alphabet, then digits in order', 'abcdefghijklmnopqrstuvwxyz012345', /sequential runs/],
  ['the alphabet backwards', 'zyxwvutsrqponmlkjihgfedcba987654', /sequential runs/],
  ['a password, repeated', 'Password123!Password123!Password123!', /sequential runs, repeats or common words/],
  ['words, years and symbols', 'Password123!Welcome2024!Summer2025$', /common words/],
  ['leet spellings of words', 'P@ssw0rd!Adm1n!S3cr3t!W3lc0me!Tok3n!', /common words/],
  ['a keyboard walk', 'qwertyuiopasdfghjklzxcvbnm123456', /common words/],
  ['a keyboard walk with digits, repeated', '1q2w3e4r5t6y7u8i9o0p1q2w3e4r5t6y', /common words/],
  ['a column walk', '1qaz2wsx3edc4rfv5tgb6yhn7ujm8ik9', /common words/],
  ['hex digits in order, each twice', '00112233445566778899aabbccddeeff', /sequential runs/],
  ['a prefix, then runs repeated', 'sk_live_0123456789abcdef0123456789abcdef', /sequential runs/],
  ['a passphrase of common words', 'correct-horse-battery-staple-and-more', /common words/],
  ['a random piece repeated', 'k3J9xQ7vT2k3J9xQ7vT2k3J9xQ7vT2k3J9xQ7vT2', /repeats/],
  ['one character', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', /distinct character/],
  ['32 decimal digits', '01234567890123456789012345678901', /bits of entropy/],
  ['five characters', 'abcde', /fewer than 32/],
];

/** A deterministic source of random bytes (SHA-256 in counter mode), so the test never depends on luck. */
function randomKeys(count: number, encode: (bytes: Buffer) => string, bytes: number, seed: string): string[] {
  return Array.from({ length: count }, (_, i) => encode(createHash('sha256').update(`${seed}:${i}`).digest().subarray(0, bytes)));
}

describe('apiKeyWeakness', () => {
  it.each(WEAK)('refuses %s', (_what, key, reason) => {
    expect(apiKeyWeakness(key)).toMatch(reason);
  });

  it('never quotes the key in its reason', () => {
    for (const [, key] of WEAK) expect(apiKeyWeakness(key)).not.toContain(key.slice(0, 8));
  });

  it.each([
    ['openssl rand -hex 32', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['a prefix and 32 hex digits', 'sk_jobs_cli_5e0d8c2a7f914b36a1c9e4d70b28f6a3'],
    ['32 base64url characters', 'Xq8vN2rT5kLm9wZ3bH7yC4dF6gJ1sP0a'],
  ])('accepts %s', (_what, key) => {
    expect(apiKeyWeakness(key)).toBeNull();
  });

  it.each([
    ['32 hex digits (128 bits)', (b: Buffer) => b.toString('hex'), 16],
    ['64 hex digits', (b: Buffer) => b.toString('hex'), 32],
    ['32 base64url characters', (b: Buffer) => b.toString('base64url'), 24],
  ])('random keys of %s keep clear of the pattern thresholds (2,000 of them)', (what, encode, bytes) => {
    const keys = randomKeys(2000, encode, bytes, what);
    const worst = Math.min(...keys.map(apiKeyPatternBits));
    expect(worst).toBeGreaterThan(MIN_API_KEY_PATTERN_BITS);
    // The older rules (32 characters, 10 distinct, 128 bits by alphabet) refuse about 1 in 5,000 random 32-hex-digit keys for too few distinct digits.
    const refused = keys.filter((key) => apiKeyWeakness(key) !== null && !/distinct/.test(apiKeyWeakness(key)!));
    expect(refused).toEqual([]);
    expect(MAX_API_KEY_PATTERN_SHARE).toBeLessThan(1);
  });
});

describe('seed files', () => {
  const seed = (key: string) => ({ organizations: [{ id: 'org_x', name: 'X', apiKeys: [{ key }] }] });

  it('refuse a weak key in clear, naming where it is and how to make a strong one', () => {
    expect(() => parseSeed(seed('0123456789abcdef0123456789abcdef'), 'seed.json')).toThrow(
      /^seed\.json: \/organizations\/0\/apiKeys\/0\/key is too weak: it is built from sequential runs.*openssl rand -hex 32/,
    );
  });

  it('accept a strong key, and a weak one only when told to (serve --demo)', () => {
    expect(parseSeed(seed('sk_jobs_cli_5e0d8c2a7f914b36a1c9e4d70b28f6a3')).organizations).toHaveLength(1);
    expect(parseSeed(seed('sk_demo_0123456789abcdef'), 'demo', { allowWeakKeys: true }).organizations).toHaveLength(1);
  });

  it('the demo seed loads only with weak keys allowed', async () => {
    await expect(loadSeedFile(DEMO_SEED_FILE)).rejects.toThrow(/too weak/);
    await expect(loadSeedFile(DEMO_SEED_FILE, { allowWeakKeys: true })).resolves.toBeTruthy();
  });
});

describe('buildApp', () => {
  it.each(['abcde', '0123456789abcdef0123456789abcdef', 'Password123!Password123!Password123!'])('refuses the weak key %j in apiKeys', async (key) => {
    await expect(makeApp({ apiKeys: [{ key, organizationId: 'org_a' }] })).rejects.toThrow(/apiKeys\[0\] \(organisation "org_a"\): the key is too weak/);
  });

  it('answers 401 to a weak key the store holds (demo keys left behind, a digest-only seed), unless weak keys are accepted', async () => {
    const stores = createMemoryStores();
    await applySeed(stores, await loadSeedFile(DEMO_SEED_FILE, { allowWeakKeys: true }));
    const weakDigest = createHash('sha256').update('0123456789abcdef0123456789abcdef').digest('hex');
    await applySeed(stores, parseSeed({ organizations: [{ id: 'org_digest', name: 'D', apiKeys: [{ sha256: weakDigest }] }] }));
    const strict = (await makeApp({ stores })).app;
    for (const key of [DEMO_API_KEY, '0123456789abcdef0123456789abcdef']) {
      const response = await strict.inject({ method: 'GET', url: '/api/contacts/list', headers: { authorization: `Bearer ${key}` } });
      expect(response.statusCode).toBe(401);
      expect(response.json()).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringMatching(/too weak/) });
    }
    await strict.close();
    const demo = (await makeApp({ stores, acceptWeakKeys: true })).app;
    expect((await demo.inject({ method: 'GET', url: '/api/contacts/list', headers: { authorization: `Bearer ${DEMO_API_KEY}` } })).statusCode).toBe(200);
    await demo.close();
  });

  it('serve accepts weak keys only for --demo on loopback', () => {
    expect(acceptsWeakKeys({ demo: true, host: '127.0.0.1' })).toBe(true);
    expect(acceptsWeakKeys({ demo: true, host: '::1' })).toBe(true);
    expect(acceptsWeakKeys({ demo: true, host: '0.0.0.0' })).toBe(false);
    expect(acceptsWeakKeys({ demo: false, host: '127.0.0.1' })).toBe(false);
  });
});
