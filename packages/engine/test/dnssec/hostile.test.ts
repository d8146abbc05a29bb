/**
 * Hostile bytes: the message reader turns any input into a message or a `WireFormatError` (never
 * another exception, never a hang), and a validator fed mangled responses to every question never
 * throws and never says `secure` for data it could not verify.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RawQuery } from '../../src/dnssec/types.js';
import { Validator } from '../../src/dnssec/validate.js';
import { readRawMessage, TYPE, WireFormatError, type RawRecord } from '../../src/dns/canonical.js';
import { FIXED_NOW, fixtureAnchors, signedServerPerFile } from './helpers.js';

const signed = signedServerPerFile();
const query = signed.query;

describe('hostile bytes', () => {
  it('readRawMessage: a message or a WireFormatError, for any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (bytes) => {
        try {
          readRawMessage(Buffer.from(bytes));
        } catch (error) {
          expect(error).toBeInstanceOf(WireFormatError);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('a compression loop is refused, not followed forever', () => {
    const loop = Buffer.from([0, 1, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1]);
    expect(() => readRawMessage(loop)).toThrow(WireFormatError);
  });

  it('the validator over responses with flipped RDATA octets: never throws, never secure where data changed', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 1, max: 255 }), async (seed, mask) => {
        let changed = false;
        const mangled: RawQuery = async (name, type) => {
          const response = await query(name, type);
          if (response.kind !== 'response') return response;
          const mangle = (records: RawRecord[]): RawRecord[] =>
            records.map((record, index) => {
              if ((seed + index) % 7 !== 0 || record.rdata.length === 0) return record;
              changed = true;
              const rdata = Buffer.from(record.rdata);
              const at = (seed + index) % rdata.length;
              rdata[at] = (rdata[at] as number) ^ mask;
              return { ...record, rdata };
            });
          return { kind: 'response', message: { ...response.message, answer: mangle(response.message.answer), authority: mangle(response.message.authority) } };
        };
        const result = await new Validator({ query: mangled, anchors: fixtureAnchors(), now: () => FIXED_NOW }).validate('secure-nsec.test', TYPE.MX);
        // An MX answer, its RRSIG, a DS, a DNSKEY or a signature flipped: the chain cannot verify.
        if (changed) expect(result.status).not.toBe('secure');
      }),
      { numRuns: 40 },
    );
  });
});
