import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseDkimKeyRecord } from '../../src/dkim/parse.js';
import type { DkimKeyStatus } from '../../src/dkim/types.js';

/** A freshly generated key in the three forms a DKIM p= can take. */
function rsaForms(bits: number): { spki: string; pkcs1: string } {
  const { publicKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  return {
    spki: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
    pkcs1: publicKey.export({ format: 'der', type: 'pkcs1' }).toString('base64'),
  };
}

function ed25519Forms(): { raw: string; spki: string } {
  const { publicKey } = generateKeyPairSync('ed25519');
  const spki = (publicKey as KeyObject).export({ format: 'der', type: 'spki' });
  // RFC 8463 §4.2: the DKIM form is the raw key, the last 32 bytes of the SPKI.
  return { raw: spki.subarray(spki.length - 32).toString('base64'), spki: spki.toString('base64') };
}

describe('key length is read from the key itself', () => {
  it.each<[number, DkimKeyStatus, string]>([
    [512, 'too-short', 'RFC 8301 §3.2: under 1024 bits must not be accepted'],
    [1024, 'valid', 'the minimum verifiers accept'],
    [1536, 'valid', 'between the minimum and the recommended size'],
    [2048, 'valid', 'the recommended size'],
    [3072, 'valid', 'larger keys are fine'],
    [4096, 'valid', 'the largest size verifiers must handle'],
  ])('RSA %i bits → %s (%s)', (bits, status) => {
    const forms = rsaForms(bits);
    for (const [encoding, p] of [['spki', forms.spki], ['pkcs1', forms.pkcs1]] as const) {
      const outcome = parseDkimKeyRecord(`v=DKIM1; k=rsa; p=${p}`);
      expect(outcome.status, encoding).toBe(status);
      expect('record' in outcome && outcome.record.key, encoding).toEqual({ type: 'rsa', bits, encoding });
    }
  });

  it('gives the same size for SPKI and PKCS#1, although their base64 lengths differ', () => {
    const forms = rsaForms(2048);
    expect(forms.spki.length).not.toBe(forms.pkcs1.length);
    const sizes = [forms.spki, forms.pkcs1].map((p) => {
      const outcome = parseDkimKeyRecord(`p=${p}`);
      return outcome.status === 'valid' ? outcome.record.key.bits : null;
    });
    expect(sizes).toEqual([2048, 2048]);
  });

  it('reads an unusual size exactly (1100 bits), which a base64-length guess cannot', () => {
    const outcome = parseDkimKeyRecord(`p=${rsaForms(1100).spki}`);
    expect(outcome.status === 'valid' && outcome.record.key.bits).toBe(1100);
  });

  it('Ed25519 raw key (RFC 8463 §4.2) → 256 bits', () => {
    const outcome = parseDkimKeyRecord(`v=DKIM1; k=ed25519; p=${ed25519Forms().raw}`);
    expect(outcome.status).toBe('valid');
    expect(outcome.status === 'valid' && outcome.record.key).toEqual({ type: 'ed25519', bits: 256, encoding: 'ed25519-raw' });
  });

  it('Ed25519 key in SPKI form → bad-key (RFC 8463 §4.2 wants the raw key)', () => {
    expect(parseDkimKeyRecord(`v=DKIM1; k=ed25519; p=${ed25519Forms().spki}`).status).toBe('bad-key');
  });

  it('Ed25519 SPKI under k=rsa → bad-key naming the actual type', () => {
    const outcome = parseDkimKeyRecord(`v=DKIM1; k=rsa; p=${ed25519Forms().spki}`);
    expect(outcome.status).toBe('bad-key');
    expect(outcome.reason).toContain('Ed25519');
  });

  it('an RSA key under k=ed25519 → bad-key', () => {
    expect(parseDkimKeyRecord(`v=DKIM1; k=ed25519; p=${rsaForms(1024).spki}`).status).toBe('bad-key');
  });
});
