/**
 * The work one check's DNSSEC validation may do (issue 38 item 2), against the hostile zone made
 * in memory (packages/engine/test/dnssec/hostile-zone.ts: colliding key tags, decoy signatures, 16-link CNAME chains
 * in front of the SPF, DMARC and MX RRsets): RSA keys the validator does not verify with (RFC 4035
 * §5.2), a per-check budget of signature verifications, and no link asked for after a bogus one.
 * Counted in verifications and queries, never in time.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startDnssec } from '../../src/dnssec/check.js';
import { EDE, type RawQuery } from '../../src/dnssec/types.js';
import { MAX_SIGNATURE_VERIFICATIONS, Validator } from '../../src/dnssec/validate.js';
import { MAX_RSA_MODULUS_BITS, parseDnskey, unsupportedKeyReason, verifyCounter } from '../../src/dnssec/verify.js';
import { TYPE } from '../../src/dns/canonical.js';
import { buildHostileZone, CHAIN_LINKS, HOSTILE_DOMAIN, HOSTILE_NOW, HOSTILE_ZONE, type HostileZone } from './hostile-zone.js';

/** A DNSKEY RDATA (RSASHA256) with the given exponent and a modulus of `modulusOctets` octets. */
function rsaKey(exponent: Buffer, modulusOctets: number): Buffer {
  const length = exponent.length <= 255 ? Buffer.from([exponent.length]) : Buffer.from([0, exponent.length >> 8, exponent.length & 0xff]);
  const modulus = Buffer.alloc(modulusOctets, 0xab);
  return Buffer.concat([Buffer.from([1, 1, 3, 8]), length, exponent, modulus]);
}

describe('RSA keys the validator does not verify with (RFC 4035 §5.2: as an unsupported algorithm)', () => {
  it.each([
    ['e = 65537, 2048-bit modulus', Buffer.from([1, 0, 1]), 256, false],
    ['e = 2^32, the largest supported', Buffer.from([1, 0, 0, 0, 0]), 256, false],
    ['e = 2^32 + 1', Buffer.from([1, 0, 0, 0, 1]), 256, true],
    ['e of 3,064 bits', Buffer.alloc(383, 0xff), 384, true] as const,
    [`a ${MAX_RSA_MODULUS_BITS}-bit modulus`, Buffer.from([1, 0, 1]), MAX_RSA_MODULUS_BITS / 8, false],
    [`a ${MAX_RSA_MODULUS_BITS + 8}-bit modulus`, Buffer.from([1, 0, 1]), MAX_RSA_MODULUS_BITS / 8 + 1, true],
  ] as const)('%s', (_label, exponent, octets, unsupported) => {
    const key = parseDnskey(rsaKey(exponent, octets))!;
    expect(unsupportedKeyReason(key) !== undefined).toBe(unsupported);
  });
});

describe('the hostile zone of issue 38 (3,064-bit exponent, 4 keys sharing a tag, 16-link chains)', () => {
  let zone: HostileZone;
  beforeAll(() => {
    zone = buildHostileZone({ hugeExponent: true });
  }, 60_000);

  it('is insecure with the reason, and verifies no signature at all', async () => {
    const before = verifyCounter.count;
    const result = await startDnssec(HOSTILE_DOMAIN, { query: zone.query, anchors: zone.anchors, now: () => HOSTILE_NOW }).finish(`_dmarc.${HOSTILE_DOMAIN}`);
    expect(verifyCounter.count - before).toBe(0);
    expect(result.status).toBe('insecure');
    expect(result.reason.code).toBe(EDE.UNSUPPORTED_DNSKEY_ALGORITHM);
    expect(result.reason.text).toContain('exponent has 3064 bits');
    expect(result.reason.text).toContain('RFC 4035 §5.2');
  });
});

describe('the same zone with keys the validator supports (RSA-2048, e = 65537)', () => {
  let zone: HostileZone;
  beforeAll(() => {
    zone = buildHostileZone({ hugeExponent: false });
  }, 60_000);

  it(`one check makes at most ${MAX_SIGNATURE_VERIFICATIONS} verifications, then says indeterminate naming the cap`, async () => {
    const before = verifyCounter.count;
    const asked = zone.asked.length;
    const result = await startDnssec(HOSTILE_DOMAIN, { query: zone.query, anchors: zone.anchors, now: () => HOSTILE_NOW }).finish(`_dmarc.${HOSTILE_DOMAIN}`);
    const made = verifyCounter.count - before;
    // Without the budget: 32 per RRset (8 signatures × 4 colliding keys) × (1 DNSKEY + 3 × 17 links) = 1,664.
    expect(made).toBeLessThanOrEqual(MAX_SIGNATURE_VERIFICATIONS);
    expect(result.status).toBe('indeterminate');
    expect(result.reason.code).toBe(EDE.DNSSEC_INDETERMINATE);
    expect(result.reason.text).toContain(`${MAX_SIGNATURE_VERIFICATIONS} signature verifications`);
    // Once the budget is spent the chains are not followed further: far fewer than the 52 RRsets' questions.
    expect(zone.asked.length - asked).toBeLessThan(1 + 1 + 3 * (CHAIN_LINKS + 1));
  });

  it('a secure link costs at most 8 signatures × 4 keys, and the budget is per check (a new validator starts afresh)', async () => {
    const validator = new Validator({ query: zone.query, anchors: zone.anchors, now: () => HOSTILE_NOW });
    const result = await validator.validate(HOSTILE_DOMAIN, TYPE.MX);
    expect(validator.verificationsMade()).toBe(MAX_SIGNATURE_VERIFICATIONS);
    // The first links verified (secure) before the budget ran out.
    expect(result.links[0]).toMatchObject({ type: 'CNAME', status: 'secure' });
    expect(result.status).toBe('indeterminate');
    const again = new Validator({ query: zone.query, anchors: zone.anchors, now: () => HOSTILE_NOW });
    expect((await again.validate(`mx${CHAIN_LINKS}.${HOSTILE_ZONE}`, TYPE.MX)).status).toBe('secure');
    expect(again.verificationsMade()).toBe(64); // the DNSKEY set and the MX set, 32 each
  });

  it('once a link of a chain is bogus, the links after it are neither asked for nor verified', async () => {
    const bogusAt = `spf1.${HOSTILE_ZONE}`;
    const asked: string[] = [];
    // The first link after the domain comes with its signatures stripped: bogus (RRSIGs missing).
    const stripped: RawQuery = async (name, type) => {
      asked.push(`${name}/${type}`);
      const response = await zone.query(name, type);
      if (response.kind !== 'response' || name !== bogusAt) return response;
      return { kind: 'response', message: { ...response.message, answer: response.message.answer.filter((r) => r.type !== TYPE.RRSIG) } };
    };
    const validator = new Validator({ query: stripped, anchors: zone.anchors, now: () => HOSTILE_NOW });
    const result = await validator.validate(HOSTILE_DOMAIN, TYPE.TXT);
    expect(result.status).toBe('bogus');
    expect(result.links.map((l) => [l.name, l.status])).toEqual([
      [HOSTILE_DOMAIN, 'secure'],
      [bogusAt, 'bogus'],
    ]);
    // The link's TXT, the zone's keys, the stripped link, and whether the unsigned link is a cut (its DS).
    expect(asked).toEqual([`${HOSTILE_DOMAIN}/${TYPE.TXT}`, `${HOSTILE_ZONE}/${TYPE.DNSKEY}`, `${bogusAt}/${TYPE.TXT}`, `${bogusAt}/${TYPE.DS}`]);
    expect(validator.verificationsMade()).toBe(64); // the DNSKEY set and the first CNAME; nothing after
  });
});
