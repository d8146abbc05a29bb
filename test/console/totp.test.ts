/**
 * TOTP (RFC 6238) over HOTP (RFC 4226): the RFCs' own test vectors (6 digits: the last six of
 * RFC 6238 Appendix B's eight), base32 (RFC 4648 §10), the window and replay, recovery codes;
 * and the second factor through the console: required by an owner, enrolled at sign-in, asked at
 * every sign-in, a recovery code working once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { base32Decode, base32Encode, hashRecoveryCode, hotp, newRecoveryCodes, totpCode, verifyTotp } from '../../src/console/totp.js';
import { passwordProblem, verifyPassword, hashPassword } from '../../src/console/passwords.js';
import { addMember, Browser, consoleService, ORG_A } from './helpers.js';

const RFC_KEY = Buffer.from('12345678901234567890', 'ascii');

describe('HOTP and TOTP', () => {
  it.each([
    [0, '755224'],
    [1, '287082'],
    [2, '359152'],
    [3, '969429'],
    [4, '338314'],
    [5, '254676'],
    [6, '287922'],
    [7, '162583'],
    [8, '399871'],
    [9, '520489'],
  ])('RFC 4226 Appendix D: counter %i → %s', (counter, code) => {
    expect(hotp(RFC_KEY, counter)).toBe(code);
  });

  it.each([
    [59, '287082'],
    [1111111109, '081804'],
    [1111111111, '050471'],
    [1234567890, '005924'],
    [2000000000, '279037'],
    [20000000000, '353130'],
  ])('RFC 6238 Appendix B (SHA-1): T = %i s → %s', (seconds, code) => {
    expect(totpCode(base32Encode(RFC_KEY), seconds * 1000)).toBe(code);
  });

  it.each([
    ['', ''],
    ['f', 'MY'],
    ['fo', 'MZXQ'],
    ['foo', 'MZXW6'],
    ['foob', 'MZXW6YQ'],
    ['fooba', 'MZXW6YTB'],
    ['foobar', 'MZXW6YTBOI'],
  ])('base32 (RFC 4648 §10): %j ↔ %s', (text, encoded) => {
    expect(base32Encode(Buffer.from(text))).toBe(encoded);
    expect(base32Decode(encoded)?.toString()).toBe(text);
  });

  it('accepts one step either side, never a step already used, never a malformed code', () => {
    const secret = base32Encode(RFC_KEY);
    const at = 1111111111 * 1000;
    const step = Math.floor(at / 30_000);
    expect(verifyTotp(secret, totpCode(secret, at), at, 0)).toBe(step);
    expect(verifyTotp(secret, totpCode(secret, at - 30_000), at, 0)).toBe(step - 1);
    expect(verifyTotp(secret, totpCode(secret, at + 30_000), at, 0)).toBe(step + 1);
    expect(verifyTotp(secret, totpCode(secret, at - 60_000), at, 0)).toBeNull();
    expect(verifyTotp(secret, totpCode(secret, at), at, step)).toBeNull();
    expect(verifyTotp(secret, '12345', at, 0)).toBeNull();
    expect(verifyTotp(secret, 'abcdef', at, 0)).toBeNull();
  });

  it('recovery codes: ten, different, stored as hashes that ignore dashes and case', () => {
    const { codes, hashes } = newRecoveryCodes();
    expect(new Set(codes).size).toBe(10);
    expect(hashes).toEqual(codes.map(hashRecoveryCode));
    expect(hashRecoveryCode(codes[0]!.toUpperCase().replace(/-/g, ' '))).toBe(hashes[0]);
  });
});

describe('passwords', () => {
  it.each([
    ['eleven char', 'ann@example.com', 'at least 12'],
    ['password123!', 'ann@example.com', null],
    ['qwertyuiopasdfgh', 'ann@example.com', null],
    ['password1234', 'ann@example.com', 'common passwords'],
    ['1qaz2wsx3edc', 'ann@example.com', 'common passwords'],
    ['Annabelle-rides-far', 'anna@example.com', 'email address'],
    ['correct horse battery staple', 'ann@example.com', null],
    ['ab'.repeat(129), 'ann@example.com', 'at most 256'],
  ])('%j for %s → %s', (password, email, problem) => {
    const found = passwordProblem(password, email);
    if (problem === null) expect(found).toBeNull();
    else expect(found).toContain(problem);
  });

  it('scrypt: verifies its own hash, refuses another password and a hash asking for more work than ours', async () => {
    const stored = await hashPassword('correct horse battery staple');
    expect(stored).toMatch(/^scrypt\$15\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]{44}$/);
    expect(await verifyPassword('correct horse battery staple', stored)).toBe(true);
    expect(await verifyPassword('correct horse battery stapler', stored)).toBe(false);
    expect(await verifyPassword('correct horse battery staple', stored.replace('scrypt$15$', 'scrypt$20$'))).toBe(false);
    expect(await verifyPassword('x', 'not a hash')).toBe(false);
  });
});

describe('the second factor in the console', () => {
  let service: Awaited<ReturnType<typeof consoleService>> | undefined;
  afterEach(async () => {
    await service?.monitors.scheduler.close();
    await service?.app.close();
  });

  it('an owner requires it; a member enrols at sign-in, is asked for a code every time, and a recovery code works once', async () => {
    service = await consoleService();
    const { app, stores, clock } = service;
    const owner = await addMember(app, stores, ORG_A.id, 'ann@acme.example', 'owner', clock);
    await owner.get('/console/members');
    expect((await owner.post('/console/members/second-factor', { require: 'yes' })).statusCode).toBe(303);
    // The owner's own pages now ask to set it up first.
    const asked = await owner.get('/console');
    expect(asked.statusCode).toBe(303);
    expect(asked.headers.location).toBe('/console/account?setup=1&done=enrol');

    // A viewer signs in: the password, then enrolment before anything else.
    const viewer = await addMember(app, stores, ORG_A.id, 'vic@acme.example', 'viewer', clock);
    const b = new Browser(app);
    const first = await b.signIn('vic@acme.example');
    expect(first.headers.location).toBe('/console/second-factor/enrol');
    expect((await b.get('/console')).headers.location).toBe('/console/second-factor/enrol');
    const enrol = await b.get('/console/second-factor/enrol');
    const secret = /id="totp-secret"[^>]*>([A-Z2-7]{32})</.exec(enrol.body)![1]!;
    expect((await b.post('/console/second-factor/enrol', { secret, otp: '000000' })).statusCode).toBe(400);
    const enrolled = await b.post('/console/second-factor/enrol', { secret, otp: totpCode(secret, clock.ms) });
    expect(enrolled.statusCode).toBe(200);
    const codes = /<textarea class="secret" id="secret"[^>]*>([^<]+)<\/textarea>/.exec(enrolled.body)![1]!.split('\n');
    expect(codes).toHaveLength(10);
    expect((await b.get('/console')).statusCode).toBe(200);
    void viewer;

    // The next sign-in asks for a code; the same code is not accepted twice.
    clock.advance(60_000);
    const again = new Browser(app);
    expect((await again.signIn('vic@acme.example')).headers.location).toBe('/console/second-factor');
    await again.get('/console/second-factor');
    expect((await again.post('/console/second-factor', { otp: '123456' })).statusCode).toBe(401);
    expect((await again.post('/console/second-factor', { otp: totpCode(secret, clock.ms) })).statusCode).toBe(303);
    expect((await again.get('/console')).statusCode).toBe(200);
    const replay = new Browser(app);
    await replay.signIn('vic@acme.example');
    await replay.get('/console/second-factor');
    expect((await replay.post('/console/second-factor', { otp: totpCode(secret, clock.ms) })).statusCode).toBe(401);
    // A recovery code signs in once.
    expect((await replay.post('/console/second-factor', { otp: codes[0]! })).statusCode).toBe(303);
    const once = new Browser(app);
    await once.signIn('vic@acme.example');
    await once.get('/console/second-factor');
    expect((await once.post('/console/second-factor', { otp: codes[0]! })).statusCode).toBe(401);
  });
});
