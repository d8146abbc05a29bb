/**
 * Mark certificates from hostile input: bundles that do not parse, DER that lies about its
 * lengths, and the pieces of the DER reader. (The chain verdicts against a fake Mark Verifying
 * Authority are in lab.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { checkMarkCertificate, parsePemBundle, shippedBimiRoots } from '../../src/bimi/certificate.js';
import { childrenOf, DerError, oidOf, readTlv } from '../../src/bimi/der.js';

const input = (pem: string) => ({ pem, url: 'https://b.example/v.pem', domain: 'b.example', organizationalDomain: 'b.example', selector: 'default', logo: null, roots: shippedBimiRoots(), now: new Date() });

describe('checkMarkCertificate on bundles that are not certificates', () => {
  it.each([
    ['an empty document', '', 'holds no PEM certificate'],
    ['an HTML error page', '<html><body>Not found</body></html>', 'holds no PEM certificate'],
    ['a PEM block of garbage', '-----BEGIN CERTIFICATE-----\nAAAAAAAA\n-----END CERTIFICATE-----\n', 'does not parse'],
  ])('%s: untrusted, with the reason, never a throw', (_name, pem, problem) => {
    const result = checkMarkCertificate(input(pem));
    expect(result.chain.trusted).toBe(false);
    expect(result.chain.problems.join(' ')).toContain(problem);
    expect(result).toMatchObject({ kind: null, bimiEku: false, sanMatch: false, logotype: null });
  });

  it('more certificates than the cap: only the first are read, and it says so', () => {
    const root = shippedBimiRoots()[0]!.certificate.toString();
    const parsed = parsePemBundle(root.repeat(12));
    expect(parsed.certificates).toHaveLength(8);
    expect(parsed.problems[0]).toContain('12 certificates');
  });

  it('a root certificate served as the mark certificate is a CA, not a leaf', () => {
    const result = checkMarkCertificate(input(shippedBimiRoots()[0]!.certificate.toString()));
    expect(result.chain.problems[0]).toContain('is a CA certificate');
    expect(result.chain.trusted).toBe(false);
  });
});

describe('the DER reader', () => {
  it('reads a TLV, its children and an OID', () => {
    // SEQUENCE { OID 1.3.6.1.5.5.7.3.31 }
    const der = Uint8Array.from([0x30, 0x0a, 0x06, 0x08, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x1f]);
    const seq = readTlv(der, 0);
    const [oid] = childrenOf(der, seq);
    expect(oidOf(der, oid!)).toBe('1.3.6.1.5.5.7.3.31');
  });
  it.each([
    ['a length past the end', [0x30, 0x05, 0x01]],
    ['a truncated long length', [0x30, 0x82, 0x01]],
    ['an indefinite length', [0x30, 0x80, 0x00, 0x00]],
    ['a five-octet length', [0x30, 0x85, 1, 1, 1, 1, 1]],
    ['a child running past its parent', [0x30, 0x02, 0x04, 0x05, 0, 0, 0, 0, 0]],
  ])('%s throws DerError', (_name, bytes) => {
    const der = Uint8Array.from(bytes);
    expect(() => childrenOf(der, readTlv(der, 0))).toThrow(DerError);
  });
});
