// The zone reader accepts every record type a real zone export holds (issue 42 item 3): each type
// read from its presentation form into its RFC wire form, RFC 3597 `\#` for any type, and clear
// refusals for malformed data. The signed DNSSEC fixtures load whole, byte for byte as the signed
// zone reader (zones/signed-zonefile.ts) reads them.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSignedZone } from '../../packages/engine/src/zones/signed-zonefile.js';
import { parseZone, ZoneSyntaxError } from '../../packages/engine/src/zones/parse.js';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';

const ORIGIN = { origin: 'example.com', file: 't.zone' };

/** Each row: one record, the type and code it is kept as, and its RDATA in hex. */
const GOOD: { reason: string; text: string; type: string; code: number; hex: string }[] = [
  { reason: 'CAA issue (RFC 8659 §4.1.1)', text: '@ CAA 0 issue "letsencrypt.org"', type: 'CAA', code: 257, hex: '0005' + Buffer.from('issue').toString('hex') + Buffer.from('letsencrypt.org').toString('hex') },
  { reason: 'CAA critical iodef', text: '@ CAA 128 iodef "mailto:sec@example.com"', type: 'CAA', code: 257, hex: '8005696f646566' + Buffer.from('mailto:sec@example.com').toString('hex') },
  { reason: 'SRV with a relative target (RFC 2782)', text: '_sip._tcp SRV 10 5 5060 sip', type: 'SRV', code: 33, hex: '000a000513c4' + '03736970076578616d706c6503636f6d00' },
  { reason: 'TLSA 3 1 1 (RFC 6698 §2.2)', text: '_25._tcp.mx TLSA 3 1 1 ( 0123456789abcdef 0123456789ABCDEF )', type: 'TLSA', code: 52, hex: '030101' + '0123456789abcdef0123456789abcdef' },
  { reason: 'DS (RFC 4034 §5.3)', text: 'child DS 12345 13 2 ABCDEF01', type: 'DS', code: 43, hex: '30390d02abcdef01' },
  { reason: 'CDS delete (RFC 8078 §4)', text: '@ CDS 0 0 0 00', type: 'CDS', code: 59, hex: '0000000000' },
  { reason: 'DNSKEY (RFC 4034 §2.2)', text: '@ DNSKEY 257 3 13 AQID BA==', type: 'DNSKEY', code: 48, hex: '0101030d' + '01020304' },
  {
    reason: 'RRSIG with dates (RFC 4034 §3.2)',
    text: '@ RRSIG MX 13 2 3600 20350101000000 20250101000000 4242 example.com. AQID',
    type: 'RRSIG',
    code: 46,
    hex: '000f0d0200000e10' + (Date.UTC(2035, 0, 1) / 1000).toString(16).padStart(8, '0') + (Date.UTC(2025, 0, 1) / 1000).toString(16).padStart(8, '0') + '1092' + '076578616d706c6503636f6d00' + '010203',
  },
  { reason: 'NSEC with its type bit map (RFC 4034 §4.1.2)', text: '@ NSEC www.example.com. A NS SOA MX TXT AAAA RRSIG NSEC DNSKEY', type: 'NSEC', code: 47, hex: '03777777076578616d706c6503636f6d00' + '0007' + '62018008000380' },
  { reason: 'NSEC3 (RFC 5155 §3.3)', text: 'abc NSEC3 1 1 0 - 0123456789abcdefghijklmnopqrstuv A RRSIG', type: 'NSEC3', code: 50, hex: '01010000' + '00' + '14' + '00443214c74254b635cf84653a56d7c675be77df' + '0006' + '400000000002' },
  { reason: 'NSEC3PARAM with a salt (RFC 5155 §4.3)', text: '@ NSEC3PARAM 1 0 10 aabb', type: 'NSEC3PARAM', code: 51, hex: '0100000a02aabb' },
  { reason: 'HTTPS with quoted alpn, port and hints (RFC 9460 §2.1), keys sorted', text: '@ HTTPS 1 . port=443 alpn="h2,h3" ipv4hint=192.0.2.1', type: 'HTTPS', code: 65, hex: '0001' + '00' + '0001000602683202683' + '3' + '0003000201bb' + '00040004c0000201' },
  { reason: 'SVCB alias form (priority 0)', text: '_dns SVCB 0 svc.example.net.', type: 'SVCB', code: 64, hex: '0000' + '03737663076578616d706c65036e657400' },
  { reason: 'SVCB with no-default-alpn, ipv6hint and a generic key', text: 'svc SVCB 1 @ mandatory=alpn alpn=h2 no-default-alpn ipv6hint=2001:db8::1 key65000=x', type: 'SVCB', code: 64, hex: '0001076578616d706c6503636f6d00' + '000000020001' + '000100030268 32'.replace(' ', '') + '00020000' + '0006001020010db8000000000000000000000001' + 'fde8000178' },
  { reason: 'DNAME (RFC 6672 §2.1)', text: 'old DNAME new.example.net.', type: 'DNAME', code: 39, hex: '036e6577076578616d706c65036e657400' },
  { reason: 'SSHFP (RFC 4255 §3.2)', text: 'host SSHFP 4 2 ABCD', type: 'SSHFP', code: 44, hex: '0402abcd' },
  { reason: 'HINFO (RFC 8482 §4.2)', text: '@ HINFO "RFC8482" ""', type: 'HINFO', code: 13, hex: '07524643383438320' + '0' },
  { reason: 'an unknown type in the RFC 3597 form', text: 'x TYPE65280 \\# 3 abcdef', type: 'TYPE65280', code: 65280, hex: 'abcdef' },
  { reason: 'a known type written in the RFC 3597 form', text: 'x LOC \\# 2 ( ab cd )', type: 'LOC', code: 29, hex: 'abcd' },
  { reason: 'TYPE257 is CAA', text: '@ TYPE257 \\# 3 000100', type: 'CAA', code: 257, hex: '000100' },
];

describe('zone reader: the record types a real zone export holds', () => {
  it.each(GOOD)('$reason', ({ text, type, code, hex }) => {
    const zone = parseZone(`$ORIGIN example.com.\n${text}\n`, ORIGIN);
    expect(zone.records).toEqual([]);
    expect(zone.otherRecords).toHaveLength(1);
    const record = zone.otherRecords![0]!;
    expect({ type: record.type, code: record.code }).toEqual({ type, code });
    expect(Buffer.from(record.rdata).toString('hex')).toBe(hex);
  });

  it('reads a type the checks read from its RFC 3597 form as its usual data', () => {
    const zone = parseZone('@ A \\# 4 c0000201\n@ MX \\# 6 000a026d7800\n@ TXT \\# 3 026869\n@ TYPE1 192.0.2.9', ORIGIN);
    expect(zone.records.map((r) => r.data)).toEqual(['192.0.2.1', { preference: 10, exchange: 'mx' }, ['hi'], '192.0.2.9']);
  });

  it('keeps RRSIG and NSEC beside a CNAME (RFC 4035 §2.5), and refuses other data there', () => {
    const zone = parseZone('alias CNAME target\nalias RRSIG CNAME 13 3 3600 20350101000000 20250101000000 1 example.com. AQID\nalias NSEC z.example.com. CNAME RRSIG NSEC', ORIGIN);
    expect(zone.otherRecords?.map((r) => r.type)).toEqual(['RRSIG', 'NSEC']);
    expect(() => parseZone('alias CNAME target\nalias CAA 0 issue "x"', ORIGIN)).toThrow('expected either a CNAME or other records at "alias.example.com"');
    expect(() => parseZone('alias DNAME a.example.\nalias DNAME b.example.', ORIGIN)).toThrow('expected one DNAME record');
  });

  it('drops an exact duplicate of another type, as servers do', () => {
    expect(parseZone('@ CAA 0 issue "x"\n@ CAA 0 issue "x"', ORIGIN).otherRecords).toHaveLength(1);
  });

  const BAD: { reason: string; text: string; message: string }[] = [
    { reason: 'CAA flags over 255', text: '@ CAA 256 issue "x"', message: 't.zone:1:7: expected the CAA flags (0 or 128) (a number from 0 to 255) in this CAA record, found "256"' },
    { reason: 'CAA tag with a hyphen', text: '@ CAA 0 is-sue "x"', message: 't.zone:1:9: expected a CAA tag of letters and digits (issue, issuewild, iodef), found "is-sue"' },
    { reason: 'TLSA data not hex', text: '_25._tcp TLSA 3 1 1 xyz', message: 't.zone:1:21: expected the certificate association data in hexadecimal (an even number of digits) in this TLSA record, found "xyz"' },
    { reason: 'TLSA without data', text: '_25._tcp TLSA 3 1 1', message: 't.zone:1:19: expected the certificate association data in this TLSA record, found the end of the record' },
    { reason: 'DS digest of odd length', text: 'c DS 1 13 2 abc', message: 't.zone:1:13: expected the digest in hexadecimal (an even number of digits) in this DS record, found "abc"' },
    { reason: 'DNSKEY key not base64', text: '@ DNSKEY 257 3 13 !!!!', message: 't.zone:1:19: expected the public key in base64 in this DNSKEY record, found "!!!!"' },
    { reason: 'RRSIG with a bad date', text: '@ RRSIG A 13 2 60 2035-01-01 20250101000000 1 example.com. AQID', message: 't.zone:1:19: expected a signature time (YYYYMMDDHHmmSS in UTC, RFC 4034 §3.2), found "2035-01-01"' },
    { reason: 'NSEC with an unknown type in its bit map', text: '@ NSEC a.example.com. A BOGUS', message: 't.zone:1:25: expected a record type in the type bit map of this NSEC record, found "BOGUS"' },
    { reason: 'NSEC3 next hash not base32hex', text: 'h NSEC3 1 0 0 - zzzz A', message: 't.zone:1:17: expected the next hashed owner name in base32hex (RFC 4648 §7), found "zzzz"' },
    { reason: 'SVCB with a key twice (RFC 9460 §2.2)', text: '@ SVCB 1 . port=1 port=2', message: 't.zone:1:19: expected each SvcParamKey once in this SVCB record (RFC 9460 §2.2), found "port" twice' },
    { reason: 'HTTPS with an unknown key', text: '@ HTTPS 1 . colour=blue', message: 't.zone:1:13: expected a SvcParam (alpn=…, port=…, ipv4hint=…, keyNNNNN=…) in this HTTPS record, found "colour=blue"' },
    { reason: 'SRV with an extra field', text: '_s._tcp SRV 1 1 1 t extra', message: 't.zone:1:21: expected the end of this SRV record, found "extra"' },
    { reason: 'RFC 3597 length that disagrees with the data', text: 'x TYPE65280 \\# 3 abcd', message: 't.zone:1:18: expected 3 octets of hexadecimal data after "\\# 3" (RFC 3597 §5), found 2' },
    { reason: 'RFC 3597 without a length', text: 'x TYPE65280 \\#', message: 't.zone:1:13: expected the RDATA length after "\\#" (RFC 3597 §5: \\# <length> <hex>, a number from 0 to 65535), found the end of the record' },
    { reason: 'an A record in RFC 3597 form of the wrong size', text: 'x A \\# 3 c00002', message: 't.zone:1:5: expected octets that are a valid A record in wire form (RFC 3597 §5), found 3 octets that are not' },
    { reason: 'a meta-type as zone data', text: 'x TYPE41 \\# 0', message: 't.zone:1:3: expected a record type that can be zone data, found TYPE41 (a meta-type or query type, RFC 6895 §3.1)' },
  ];
  it.each(BAD)('refuses $reason', ({ text, message }) => {
    let error: unknown;
    try {
      parseZone(text, ORIGIN);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ZoneSyntaxError);
    expect((error as Error).message).toBe(message);
  });
});

describe('the signed DNSSEC fixtures load whole', () => {
  const dir = 'fixtures/dnssec/zones';
  const files = readdirSync(dir).filter((name) => name.endsWith('.signed') || name.endsWith('.zone'));

  it.each(files)('%s: every record, byte for byte as the signed-zone reader reads it', (name) => {
    const text = readFileSync(join(dir, name), 'utf8');
    const zone = parseZone(text, { file: name, requireSoaAndNs: true });
    const signed = parseSignedZone(text, { file: name });
    const ours = new Set((zone.otherRecords ?? []).map((r) => `${r.name} ${r.code} ${Buffer.from(r.rdata).toString('hex')}`));
    const theirs = signed.records.filter((r) => ![1, 2, 5, 6, 12, 15, 16, 28].includes(r.type));
    expect(theirs.length).toBeGreaterThan(0);
    expect(ours.size).toBe(theirs.length);
    for (const record of theirs) expect(ours).toContain(`${record.name} ${record.type} ${record.rdata.toString('hex')}`);
    expect(zone.records.length + (zone.otherRecords?.length ?? 0)).toBe(signed.records.length);
  });

  it('the directory of signed zones and the unsigned one beside them loads (dns-serve reads it)', async () => {
    const zones = await loadZoneDirectory('fixtures/dnssec/unsigned');
    expect(zones.map((z) => z.origin)).toContain('secure-nsec.test');
    expect(zones.find((z) => z.origin === 'secure-nsec.test')?.otherRecords?.map((r) => r.type)).toEqual(['TLSA']);
  });
});
