import { describe, expect, it } from 'vitest';
import { isDmarcRecord, parseDmarcRecord, parseFailureOptions } from '../../src/dmarc/parse.js';
import type { DmarcRecord, DmarcRecordOutcome, NotDmarcReason } from '../../src/dmarc/types.js';

/** What a row expects: not a DMARC record at all, or a record with this outcome, these values and these warning codes. */
type Expected =
  | { notDmarc: NotDmarcReason }
  | { outcome: DmarcRecordOutcome; record?: Record<string, unknown>; warnings: string[] };

interface Row {
  id: string;
  txt: string | string[];
  expected: Expected;
  reason: string;
}

const MiB = 2 ** 20;
const GiB = 2 ** 30;

// One row per case of conformance/dmarc/cases.md (sections 1-7). Where the case table gives both an
// RFC 7489 and an RFC 9989 answer, the row follows RFC 9989 and says so in its reason.
const rows: Row[] = [
  // 1. Version tag
  { id: 'V1', txt: '', expected: { notDmarc: 'empty' }, reason: 'an empty TXT record is not DMARC' },
  { id: 'V2', txt: 'v=', expected: { notDmarc: 'bad-version' }, reason: 'the version value must be DMARC1' },
  { id: 'V3', txt: 'v=DMARC12', expected: { notDmarc: 'bad-version' }, reason: 'the value must be exactly DMARC1' },
  { id: 'V4', txt: 'v=DMARC1x; p=reject', expected: { notDmarc: 'bad-version' }, reason: 'DMARC1x is not DMARC1' },
  { id: 'V5', txt: 'v=dmarc1; p=none', expected: { notDmarc: 'bad-version' }, reason: 'the value is case-sensitive (%s"DMARC1")' },
  { id: 'V6', txt: 'V=DMARC1; P=reject; ADKIM=s', expected: { outcome: 'valid', record: { policy: 'reject', adkim: 's' }, warnings: [] }, reason: 'tag names are case-insensitive ABNF literals' },
  { id: 'V7', txt: 'v = DMARC1; p=reject', expected: { outcome: 'valid', record: { policy: 'reject' }, warnings: [] }, reason: 'WSP is allowed around "="' },
  { id: 'V8', txt: 'v=DMARC1', expected: { outcome: 'no-dmarc', record: { policy: null, subdomainPolicy: null }, warnings: ['unusable-policy'] }, reason: 'a DMARC record, but no p and no rua' },
  { id: 'V9', txt: 'v=DMARC1 p=none', expected: { notDmarc: 'no-separator' }, reason: 'the version must be followed by ";"' },
  { id: 'V10', txt: ' v=DMARC1; p=reject', expected: { notDmarc: 'version-not-first' }, reason: 'a leading space means the record does not start with v=' },
  { id: 'V11', txt: 'p=reject; v=DMARC1', expected: { notDmarc: 'version-not-first' }, reason: 'v MUST be the first tag' },
  { id: 'V12', txt: 'v=spf1 include:example.com -all', expected: { notDmarc: 'bad-version' }, reason: 'an SPF record at _dmarc is not DMARC' },
  { id: 'V16', txt: ['v=DMARC1; p=re', 'ject'], expected: { outcome: 'valid', record: { policy: 'reject', raw: 'v=DMARC1; p=reject' }, warnings: [] }, reason: 'character-strings are joined without a separator' },
  // 2. p, sp, np
  { id: 'P1', txt: 'v=DMARC1;', expected: { outcome: 'no-dmarc', record: { policy: null }, warnings: ['unusable-policy'] }, reason: 'no p and no rua' },
  { id: 'P2', txt: 'v=DMARC1; rua=mailto:mjl@mox.example', expected: { outcome: 'as-none', record: { policy: 'none', subdomainPolicy: 'none', nonExistentSubdomainPolicy: 'none' }, warnings: ['unusable-policy'] }, reason: 'no p but a valid rua: act as p=none' },
  { id: 'P3', txt: 'v=DMARC1; adkim=s', expected: { outcome: 'no-dmarc', record: { adkim: 's' }, warnings: ['unusable-policy'] }, reason: 'no p, no rua' },
  { id: 'P4', txt: 'v=DMARC1; sp=invalid', expected: { outcome: 'no-dmarc', warnings: ['unusable-policy'] }, reason: 'no p, invalid sp, no rua' },
  { id: 'P5', txt: 'v=DMARC1; p=reject; sp=invalid; rua=mailto:mjl@mox.example', expected: { outcome: 'as-none', record: { policy: 'none', published: { p: 'reject', sp: null, np: null } }, warnings: ['unusable-policy'] }, reason: 'an invalid sp with a valid rua makes the whole record p=none' },
  { id: 'P6', txt: 'v=DMARC1; p=badvalue', expected: { outcome: 'no-dmarc', warnings: ['unusable-policy'] }, reason: 'invalid p, no rua' },
  { id: 'P7', txt: 'v=DMARC1; p=foo; rua=mailto:dmarc@example.com', expected: { outcome: 'as-none', record: { policy: 'none' }, warnings: ['unusable-policy'] }, reason: 'invalid p, valid rua' },
  { id: 'P8', txt: 'v=DMARC1; sp=bad', expected: { outcome: 'no-dmarc', warnings: ['unusable-policy'] }, reason: 'no p, invalid sp' },
  { id: 'P9a', txt: 'v=DMARC1; p=Reject', expected: { outcome: 'valid', record: { policy: 'reject' }, warnings: [] }, reason: 'policy keywords are case-insensitive' },
  { id: 'P9b', txt: 'v=DMARC1;p=ReJect', expected: { outcome: 'valid', record: { policy: 'reject' }, warnings: [] }, reason: 'no space after ";" is fine' },
  { id: 'P10', txt: 'v=DMARC1; sp=reject; p=reject', expected: { outcome: 'valid', record: { policy: 'reject', subdomainPolicy: 'reject' }, warnings: ['policy-not-second'] }, reason: 'RFC 9989: any order after v; RFC 7489 strict parsers object, so warn' },
  { id: 'P11', txt: 'v=DMARC1; sp=none; p=reject', expected: { outcome: 'valid', record: { policy: 'reject', subdomainPolicy: 'none', nonExistentSubdomainPolicy: 'none' }, warnings: ['policy-not-second'] }, reason: 'np falls back to sp' },
  { id: 'P12a', txt: 'v=DMARC1; p=none; p=none', expected: { outcome: 'no-dmarc', record: { policy: null, published: { p: null, sp: null, np: null } }, warnings: ['duplicate-tag', 'unusable-policy'] }, reason: 'a duplicated tag is discarded (RFC 6376 §3.2), leaving no p' },
  { id: 'P12b', txt: 'v=DMARC1; p=none; p=reject', expected: { outcome: 'no-dmarc', record: { policy: null }, warnings: ['duplicate-tag', 'unusable-policy'] }, reason: 'conflicting duplicates: neither value is trusted' },
  { id: 'P13', txt: 'v=DMARC1; p=reject; np=quarantine', expected: { outcome: 'valid', record: { policy: 'reject', subdomainPolicy: 'reject', nonExistentSubdomainPolicy: 'quarantine' }, warnings: [] }, reason: 'RFC 9989 np' },
  { id: 'P14a', txt: 'v=DMARC1; p=reject; np=invalid', expected: { outcome: 'no-dmarc', warnings: ['unusable-policy'] }, reason: 'RFC 9989 §4.10.1: an invalid np without rua means no DMARC' },
  { id: 'P14b', txt: 'v=DMARC1; p=reject; np=invalid; rua=mailto:d@example.com', expected: { outcome: 'as-none', record: { policy: 'none' }, warnings: ['unusable-policy'] }, reason: 'an invalid np with a valid rua: p=none' },
  { id: 'P15', txt: 'v=DMARC1; p=reject; sp=quarantine', expected: { outcome: 'valid', record: { policy: 'reject', subdomainPolicy: 'quarantine', nonExistentSubdomainPolicy: 'quarantine' }, warnings: [] }, reason: 'np from sp' },
  {
    id: 'P16',
    txt: 'v=DMARC1; p=reject',
    expected: { outcome: 'valid', record: { policy: 'reject', subdomainPolicy: 'reject', nonExistentSubdomainPolicy: 'reject', psd: 'u', testing: false, adkim: 'r', aspf: 'r', failureOptions: ['0'], pct: null, rf: null, ri: null, rua: [], ruf: [] }, warnings: [] },
    reason: 'defaults filled in',
  },
  {
    id: 'P17',
    txt: 'v=DMARC1; p=reject; sp=quarantine; np=None; aspf=s; adkim=s; fo = 1;rua=mailto:dmarc-feedback@example.com',
    expected: { outcome: 'valid', record: { policy: 'reject', subdomainPolicy: 'quarantine', nonExistentSubdomainPolicy: 'none', aspf: 's', adkim: 's', failureOptions: ['1'], rua: [{ address: 'dmarc-feedback@example.com' }] }, warnings: ['fo-without-ruf'] },
    reason: 'np value is case-insensitive; fo without ruf is noted',
  },
  // 3. Alignment, fo, psd, t
  { id: 'A1', txt: 'v=DMARC1; adkim=x', expected: { outcome: 'no-dmarc', record: { adkim: 'r' }, warnings: ['invalid-value', 'unusable-policy'] }, reason: 'bad adkim falls back to r; no p' },
  { id: 'A2', txt: 'v=DMARC1; aspf=123', expected: { outcome: 'no-dmarc', record: { aspf: 'r' }, warnings: ['invalid-value', 'unusable-policy'] }, reason: 'bad aspf falls back to r' },
  { id: 'A3', txt: 'v=DMARC1; p=reject; adkim=S', expected: { outcome: 'valid', record: { adkim: 's' }, warnings: [] }, reason: 'upper-case literal accepted' },
  { id: 'A4', txt: 'v=DMARC1; p = reject; adkim = s', expected: { outcome: 'valid', record: { policy: 'reject', adkim: 's' }, warnings: [] }, reason: 'spaces around "="' },
  { id: 'F1a', txt: 'v=DMARC1; fo=', expected: { outcome: 'no-dmarc', record: { failureOptions: ['0'] }, warnings: ['fo-without-ruf', 'invalid-value', 'unusable-policy'] }, reason: 'empty fo is invalid' },
  { id: 'F1b', txt: 'v=DMARC1; fo=01', expected: { outcome: 'no-dmarc', record: { failureOptions: ['0'] }, warnings: ['fo-without-ruf', 'invalid-value', 'unusable-policy'] }, reason: '01 is not an option' },
  { id: 'F1c', txt: 'v=DMARC1; fo=bad', expected: { outcome: 'no-dmarc', record: { failureOptions: ['0'] }, warnings: ['fo-without-ruf', 'invalid-value', 'unusable-policy'] }, reason: 'bad is not an option' },
  { id: 'F2a', txt: 'v=DMARC1; p=reject; fo=invalid_value', expected: { outcome: 'valid', record: { failureOptions: ['0'] }, warnings: ['fo-without-ruf', 'invalid-value'] }, reason: 'bad fo ignored, default 0' },
  { id: 'F2b', txt: 'v=DMARC1; p=reject; fo=x', expected: { outcome: 'valid', record: { failureOptions: ['0'] }, warnings: ['fo-without-ruf', 'invalid-value'] }, reason: 'bad fo ignored' },
  { id: 'F3', txt: 'v=DMARC1; p=reject; ruf=mailto:f@example.com; fo=0:1:d:s', expected: { outcome: 'valid', record: { failureOptions: ['0'] }, warnings: ['invalid-value'] }, reason: 'RFC 9989: 0 and 1 are mutually exclusive (RFC 7489 allowed it)' },
  { id: 'F4a', txt: 'v=DMARC1; p=reject; ruf=mailto:f@example.com; fo=d:s', expected: { outcome: 'valid', record: { failureOptions: ['d', 's'] }, warnings: [] }, reason: 'd and s together' },
  { id: 'F4b', txt: 'v=DMARC1; p=reject; ruf=mailto:f@example.com; fo=s:d', expected: { outcome: 'valid', record: { failureOptions: ['s', 'd'] }, warnings: [] }, reason: 'any order' },
  { id: 'S1', txt: 'v=DMARC1; p=reject; psd=n', expected: { outcome: 'valid', record: { psd: 'n' }, warnings: [] }, reason: 'RFC 9989 psd=n' },
  { id: 'S2', txt: 'v=DMARC1; p=reject; psd=x', expected: { outcome: 'valid', record: { psd: 'u' }, warnings: ['invalid-value'] }, reason: 'bad psd falls back to u' },
  { id: 'T1', txt: 'v=DMARC1; p=reject; t=y', expected: { outcome: 'valid', record: { policy: 'reject', testing: true }, warnings: [] }, reason: 'test mode' },
  { id: 'T2', txt: 'v=DMARC1; p=quarantine; t=y', expected: { outcome: 'valid', record: { policy: 'quarantine', testing: true }, warnings: [] }, reason: 'test mode (the applied level is checked in policy tests)' },
  { id: 'T3', txt: 'v=DMARC1; p=reject; t=x', expected: { outcome: 'valid', record: { testing: false }, warnings: ['invalid-value'] }, reason: 'bad t falls back to n' },
  {
    id: 'T4',
    txt: 'v=DMARC1; p=quarantine; rua=mailto:dmarc-feedback@example.com,mailto:tld-test@thirdparty.example.net; fo=s:d; t=y; psd=y;;',
    expected: { outcome: 'valid', record: { policy: 'quarantine', failureOptions: ['s', 'd'], testing: true, psd: 'y', rua: [{ domain: 'example.com' }, { domain: 'thirdparty.example.net' }] }, warnings: ['fo-without-ruf'] },
    reason: 'RFC 9989: a stray ";;" is harmless',
  },
  // 4. Tags removed in RFC 9989
  {
    id: 'R1',
    txt: 'v=DMARC1; p=quarantine; rua=mailto:dmarc-feedback@example.com,mailto:tld-test@thirdparty.example.net!10m; pct=25',
    expected: { outcome: 'valid', record: { policy: 'quarantine', pct: 25, rua: [{ sizeLimit: null }, { uri: 'mailto:tld-test@thirdparty.example.net', sizeLimit: { digits: '10', unit: 'm', bytes: 10 * MiB } }] }, warnings: ['legacy-tag', 'size-suffix'] },
    reason: 'pct still read; the obsolete size is parsed (10 MiB) and flagged',
  },
  { id: 'R2a', txt: 'v=DMARC1; pct=110', expected: { outcome: 'no-dmarc', record: { pct: null }, warnings: ['invalid-value', 'legacy-tag', 'unusable-policy'] }, reason: 'pct is 0-100' },
  { id: 'R2b', txt: 'v=DMARC1; pct=bogus', expected: { outcome: 'no-dmarc', record: { pct: null }, warnings: ['invalid-value', 'legacy-tag', 'unusable-policy'] }, reason: 'pct is a number' },
  { id: 'R2c', txt: 'v=DMARC1; pct=', expected: { outcome: 'no-dmarc', record: { pct: null }, warnings: ['invalid-value', 'legacy-tag', 'unusable-policy'] }, reason: 'empty pct' },
  { id: 'R3a', txt: 'v=DMARC1; p=reject; pct=0', expected: { outcome: 'valid', record: { pct: 0 }, warnings: ['legacy-tag'] }, reason: 'pct=0 is 0, not 100' },
  { id: 'R3b', txt: 'v=DMARC1; p=reject; pct=150', expected: { outcome: 'valid', record: { pct: null }, warnings: ['invalid-value', 'legacy-tag'] }, reason: 'out of range: default' },
  { id: 'R3c', txt: 'v=DMARC1; p=reject; pct=-1', expected: { outcome: 'valid', record: { pct: null }, warnings: ['invalid-value', 'legacy-tag'] }, reason: 'negative: default' },
  { id: 'R3d', txt: 'v=DMARC1; p=reject; pct=abc', expected: { outcome: 'valid', record: { pct: null }, warnings: ['invalid-value', 'legacy-tag'] }, reason: 'not a number: default, not 0' },
  { id: 'R5a', txt: 'v=DMARC1; ri=', expected: { outcome: 'no-dmarc', record: { ri: null }, warnings: ['invalid-value', 'legacy-tag', 'unusable-policy'] }, reason: 'empty ri' },
  { id: 'R5b', txt: 'v=DMARC1; ri=-1', expected: { outcome: 'no-dmarc', record: { ri: null }, warnings: ['invalid-value', 'legacy-tag', 'unusable-policy'] }, reason: 'negative ri' },
  { id: 'R5c', txt: 'v=DMARC1; ri=99999999999999999999999999999999999999', expected: { outcome: 'no-dmarc', record: { ri: null }, warnings: ['invalid-value', 'legacy-tag', 'unusable-policy'] }, reason: 'ri above 32 bits' },
  { id: 'R5d', txt: 'v=DMARC1; ri=123bad', expected: { outcome: 'no-dmarc', record: { ri: null }, warnings: ['invalid-value', 'legacy-tag', 'unusable-policy'] }, reason: 'trailing junk' },
  { id: 'R5e', txt: 'v=DMARC1; ri=bad', expected: { outcome: 'no-dmarc', record: { ri: null }, warnings: ['invalid-value', 'legacy-tag', 'unusable-policy'] }, reason: 'not a number' },
  { id: 'R6', txt: 'v=DMARC1; p=reject; ri=abc', expected: { outcome: 'valid', record: { ri: null }, warnings: ['invalid-value', 'legacy-tag'] }, reason: 'bad ri ignored' },
  { id: 'R7a', txt: 'v=DMARC1; rf=', expected: { outcome: 'no-dmarc', record: { rf: null }, warnings: ['invalid-value', 'legacy-tag', 'unusable-policy'] }, reason: 'empty rf' },
  { id: 'R7b', txt: 'v=DMARC1; rf=bad-trailing-dash-', expected: { outcome: 'no-dmarc', record: { rf: null }, warnings: ['invalid-value', 'legacy-tag', 'unusable-policy'] }, reason: 'a Keyword cannot end in "-"' },
  { id: 'R7c', txt: 'v=DMARC1; rf=bad.non-alphadigitdash', expected: { outcome: 'no-dmarc', record: { rf: null }, warnings: ['invalid-value', 'legacy-tag', 'unusable-policy'] }, reason: '"." is not in a Keyword' },
  { id: 'R8a', txt: 'v=DMARC1; p=reject; rf=afrf', expected: { outcome: 'valid', record: { rf: ['afrf'] }, warnings: ['legacy-tag'] }, reason: 'the one registered format' },
  { id: 'R8b', txt: 'v=DMARC1; p=reject; rf=invalid', expected: { outcome: 'valid', record: { rf: ['invalid'] }, warnings: ['legacy-tag'] }, reason: 'deliberate: "invalid" matches the RFC 7489 Keyword ABNF; it is an unknown format, not a syntax error (checkdmarc is stricter)' },
  // 5. Report URIs
  { id: 'U1', txt: 'v=DMARC1; rua=', expected: { outcome: 'no-dmarc', record: { rua: [] }, warnings: ['invalid-uri', 'unusable-policy'] }, reason: 'empty rua is not a URI' },
  { id: 'U2', txt: 'v=DMARC1; rua=bogus', expected: { outcome: 'no-dmarc', record: { rua: [] }, warnings: ['invalid-uri', 'unusable-policy'] }, reason: 'no scheme' },
  { id: 'U3', txt: 'v=DMARC1; rua=mailto:dmarc-feedback@example.com!', expected: { outcome: 'no-dmarc', record: { rua: [] }, warnings: ['invalid-uri', 'unusable-policy'] }, reason: 'a bare "!" is neither a size nor allowed unencoded' },
  {
    id: 'U4',
    txt: 'v=DMARC1; rua=mailto:dmarc-feedback@example.com!99999999999999999999999999999999999999999999999',
    expected: { outcome: 'as-none', record: { rua: [{ address: 'dmarc-feedback@example.com', sizeLimit: { bytes: null } }] }, warnings: ['size-suffix', 'unusable-policy'] },
    reason: 'RFC 9989: obsolete size syntax, ignored, so the URI is valid (RFC 7489 would reject it; the warning says so)',
  },
  { id: 'U5', txt: 'v=DMARC1; rua=mailto:dmarc-feedback@example.com!10p', expected: { outcome: 'no-dmarc', record: { rua: [] }, warnings: ['invalid-uri', 'unusable-policy'] }, reason: 'p is not a size unit' },
  { id: 'U6', txt: 'v=DMARC1; p=none; rua=reports@dmarc.cyber.dhs.gov,mailto:dmarcreports@usdoj.gov', expected: { outcome: 'valid', record: { rua: [{ domain: 'usdoj.gov' }] }, warnings: ['invalid-uri'] }, reason: 'the first entry has no scheme; the second is kept' },
  { id: 'U7', txt: 'v=DMARC1; p=none; rua=__mailto:reports@dmarc.cyber.dhs.gov,mailto:dmarcreports@usdoj.gov', expected: { outcome: 'valid', record: { rua: [{ domain: 'usdoj.gov' }] }, warnings: ['invalid-uri'] }, reason: 'a scheme starts with a letter' },
  { id: 'U8', txt: 'v=DMARC1; p=none; rua=mailto:DMARC-Reports@Example.COM', expected: { outcome: 'valid', record: { raw: 'v=DMARC1; p=none; rua=mailto:DMARC-Reports@Example.COM', rua: [{ uri: 'mailto:DMARC-Reports@Example.COM', domain: 'example.com' }] }, warnings: [] }, reason: 'URI case preserved; the domain compares in lower case' },
  {
    id: 'U9',
    txt: 'v=DMARC1; p=reject; ri = 3600; aspf=r; adkim =r; rua=mailto:dmarc-feedback@example.com!10 K , mailto:user%20@example.com ! 2G;ignore_me= true; fo=s; rf = AfrF; ',
    expected: { outcome: 'valid', record: { policy: 'reject', failureOptions: ['s'], ri: 3600, rf: ['afrf'], rua: [] }, warnings: ['fo-without-ruf', 'invalid-uri', 'invalid-uri', 'legacy-tag', 'legacy-tag', 'malformed-tag'] },
    reason: 'strict-ABNF violations discarded; the core record stands',
  },
  // 6. Whitespace variants
  { id: 'W1', txt: 'v = DMARC1;p=reject;', expected: { outcome: 'valid', record: { policy: 'reject' }, warnings: [] }, reason: 'spaces in the version, none after ";"' },
  { id: 'W2', txt: 'v = DMARC1\t;\tp=reject\t;', expected: { outcome: 'valid', record: { policy: 'reject' }, warnings: [] }, reason: 'tabs are WSP' },
  { id: 'W3', txt: 'v = DMARC1\t;\tp\t\t\t=\t\t\treject\t;', expected: { outcome: 'valid', record: { policy: 'reject' }, warnings: [] }, reason: 'tabs around "="' },
  { id: 'W4', txt: 'v=DMARC1 ;  p = reject  ; pct = 100 ', expected: { outcome: 'valid', record: { policy: 'reject', pct: 100 }, warnings: ['legacy-tag'] }, reason: 'values are trimmed' },
  {
    id: 'W5',
    txt: 'V = DMARC1 ; P = reject ;\tSP=none; unknown \t=\t ignored-future-value \t ; adkim=s; aspf=s; rua=mailto:dmarc-feedback@example.com  ,\t\tmailto:tld-test@thirdparty.example.net!10m; RUF=mailto:auth-reports@example.com  ,\t\tmailto:tld-test@thirdparty.example.net!0G; RI = 123; FO = 0:1:d:s ; RF= afrf : other; Pct = 0',
    expected: {
      outcome: 'valid',
      record: {
        policy: 'reject',
        subdomainPolicy: 'none',
        adkim: 's',
        aspf: 's',
        rua: [{ address: 'dmarc-feedback@example.com', sizeLimit: null }, { address: 'tld-test@thirdparty.example.net', sizeLimit: { bytes: 10 * MiB } }],
        ruf: [{ address: 'auth-reports@example.com' }, { address: 'tld-test@thirdparty.example.net', sizeLimit: { digits: '0', unit: 'g', bytes: 0 * GiB } }],
        ri: 123,
        failureOptions: ['0'],
        rf: ['afrf', 'other'],
        pct: 0,
      },
      warnings: ['invalid-value', 'legacy-tag', 'legacy-tag', 'legacy-tag', 'size-suffix', 'size-suffix', 'unknown-tag'],
    },
    reason: 'mox example; under RFC 9989 fo=0:1:d:s falls back to 0',
  },
  { id: 'W6a', txt: 'v=DMARC1; p=reject; tagonly', expected: { outcome: 'valid', record: { policy: 'reject' }, warnings: ['malformed-tag'] }, reason: 'a tag without "=" is ignored' },
  { id: 'W6b', txt: 'v=DMARC1; p=reject; =value', expected: { outcome: 'valid', record: { policy: 'reject' }, warnings: ['malformed-tag'] }, reason: 'a tag without a name is ignored' },
  { id: 'W7', txt: 'v=DMARC1; p=reject; xyz=foo', expected: { outcome: 'valid', record: { policy: 'reject', tags: [{ name: 'p', value: 'reject' }, { name: 'xyz', value: 'foo' }] }, warnings: ['unknown-tag'] }, reason: 'unknown tags ignored' },
  { id: 'W8', txt: 'v=DMARC1; p=none; bogus;', expected: { outcome: 'valid', record: { policy: 'none' }, warnings: ['malformed-tag'] }, reason: 'RFC 9989 §4.8: the syntax error is discarded, not fatal' },
  // 7. Examples from the DMARC documents
  { id: 'E1', txt: 'v=DMARC1; p=none; rua=mailto:dmarc-feedback@example.com', expected: { outcome: 'valid', record: { policy: 'none', rua: [{ domain: 'example.com' }] }, warnings: [] }, reason: 'monitoring mode' },
  { id: 'E2', txt: 'v=DMARC1; p=none; rua=mailto:dmarc-feedback@example.com; ruf=mailto:auth-reports@example.com', expected: { outcome: 'valid', record: { rua: [{}], ruf: [{ address: 'auth-reports@example.com' }] }, warnings: [] }, reason: 'with failure reports' },
  { id: 'E3', txt: 'v=DMARC1; p=none; rua=mailto:dmarc-feedback@example.com; ruf=mailto:auth-reports@thirdparty.example.net', expected: { outcome: 'valid', record: { ruf: [{ domain: 'thirdparty.example.net' }] }, warnings: [] }, reason: 'external ruf (authorization checked in reports tests)' },
  { id: 'E4', txt: 'v=DMARC1; p=quarantine; rua=mailto:dmarc-feedback@example.com,mailto:tld-test@thirdparty.example.net; t=y', expected: { outcome: 'valid', record: { policy: 'quarantine', testing: true, rua: [{}, {}] }, warnings: [] }, reason: 'RFC 9989 B.2.5' },
  { id: 'E4b', txt: 'v=DMARC1; p=quarantine; rua=mailto:dmarc-feedback@example.com,mailto:tld-test@thirdparty.example.net!10m; pct=25', expected: { outcome: 'valid', record: { pct: 25, rua: [{}, { sizeLimit: { bytes: 10 * MiB } }] }, warnings: ['legacy-tag', 'size-suffix'] }, reason: 'RFC 7489 B.2.4' },
  { id: 'E5', txt: 'v=DMARC1;', expected: { outcome: 'no-dmarc', warnings: ['unusable-policy'] }, reason: 'an authorization record: DMARC, but no policy' },
  { id: 'E6', txt: 'v=DMARC1; rua=mailto:aggregate-reports@thirdparty.example.net; ruf=mailto:failure-reports@thirdparty.example.net', expected: { outcome: 'as-none', record: { rua: [{}], ruf: [{}] }, warnings: ['unusable-policy'] }, reason: 'authorization with override addresses' },
  { id: 'E7', txt: 'v=DMARC1; p=reject; rua=mailto:dmarc-feedback@example.com,mailto:tld-test@thirdparty.example.net', expected: { outcome: 'valid', record: { policy: 'reject', rua: [{}, {}] }, warnings: [] }, reason: 'two rua' },
];

describe('parseDmarcRecord: conformance/dmarc/cases.md', () => {
  it.each(rows.map((row) => [`${row.id}: ${row.reason}`, row] as const))('%s', (_name, row) => {
    const result = parseDmarcRecord(row.txt);
    const expected = row.expected;
    if ('notDmarc' in expected) {
      expect(result).toEqual({ kind: 'not-dmarc', reason: expected.notDmarc, raw: typeof row.txt === 'string' ? row.txt : row.txt.join('') });
      expect(isDmarcRecord(typeof row.txt === 'string' ? row.txt : row.txt.join(''))).toBe(false);
      return;
    }
    expect(result.kind).toBe('record');
    if (result.kind !== 'record') return;
    expect(result.record.outcome).toBe(expected.outcome);
    if (expected.record) expect(result.record).toMatchObject(expected.record as Partial<DmarcRecord>);
    expect(result.warnings.map((warning) => warning.code).sort()).toEqual([...expected.warnings].sort());
  });
});

describe('parseDmarcRecord: details', () => {
  it('names the policy problems behind an unusable record', () => {
    const result = parseDmarcRecord('v=DMARC1; p=bad; sp=worse; np=none; np=none; rua=mailto:r@example.com');
    expect(result.kind === 'record' && result.warnings.find((warning) => warning.code === 'unusable-policy')).toEqual({
      code: 'unusable-policy',
      problems: [
        { tag: 'p', problem: 'invalid', value: 'bad' },
        { tag: 'sp', problem: 'invalid', value: 'worse' },
        { tag: 'np', problem: 'duplicated' },
      ],
      outcome: 'as-none',
    });
  });

  it('reports a missing p as missing, not invalid', () => {
    const result = parseDmarcRecord('v=DMARC1; rua=mailto:r@example.com');
    expect(result.kind === 'record' && result.warnings).toContainEqual({ code: 'unusable-policy', problems: [{ tag: 'p', problem: 'missing' }], outcome: 'as-none' });
  });

  it('keeps the published values apart from the effective ones', () => {
    const result = parseDmarcRecord('v=DMARC1; p=quarantine');
    expect(result.kind === 'record' && result.record.published).toEqual({ p: 'quarantine', sp: null, np: null });
    expect(result.kind === 'record' && result.record.subdomainPolicy).toBe('quarantine');
  });

  it('records the invalid value and the default used', () => {
    const result = parseDmarcRecord('v=DMARC1; p=reject; adkim=x');
    expect(result.kind === 'record' && result.warnings).toEqual([{ code: 'invalid-value', tag: 'adkim', value: 'x', fallback: 'r' }]);
  });

  it('flags non-mailto schemes but counts them as valid URIs', () => {
    const result = parseDmarcRecord('v=DMARC1; rua=https://reports.example.net/dmarc');
    expect(result.kind === 'record' && result.record.outcome).toBe('as-none');
    expect(result.kind === 'record' && result.record.rua).toEqual([{ uri: 'https://reports.example.net/dmarc', scheme: 'https', address: null, domain: 'reports.example.net', sizeLimit: null }]);
    expect(result.kind === 'record' && result.warnings.map((warning) => warning.code)).toContain('unsupported-scheme');
  });
});

// The version, tag and value scans are hand-written loops (a backtracking pattern was quadratic on a
// run of spaces): each row pins one branch of them.
describe('parseDmarcRecord: the hand-written scans', () => {
  it.each<[txt: string, expected: string, why: string]>([
    ['v\t=\tDMARC1\t;p=reject', 'record', 'HTAB around "=" and before ";" (RFC 5234 WSP)'],
    ['v=DMARC1   ', 'record', 'WSP after the version, then the end'],
    ['v=DMARC1;', 'record', 'a bare version and separator'],
    ['v=DMARC1\t\tp=none', 'no-separator', 'the version runs on after HTAB'],
    ['v=DMARC1 ;p=none', 'record', 'a space before the separator is not a run-on'],
    ['v =', 'bad-version', 'no value at all'],
    ['V=DMARC1; p=none', 'record', 'the tag name in upper case'],
    ['x; ; V = dmarc1', 'version-not-first', 'a version tag of any case after a separator'],
    ['x;   v=DMARC1', 'version-not-first', 'WSP after the separator'],
    [';v=DMARC1', 'version-not-first', 'an empty first tag'],
    ['x; vv=DMARC1', 'no-version', 'a longer tag name is not "v"'],
  ])('%j → %s (%s)', (txt, expected) => {
    const result = parseDmarcRecord(txt);
    expect(result.kind === 'record' ? 'record' : result.reason).toBe(expected);
  });

  it('reads a record with 10,000 spaces after a separator as no version, not a hang', () => {
    expect(parseDmarcRecord(`x;${' '.repeat(10_000)}y`)).toMatchObject({ kind: 'not-dmarc', reason: 'no-version' });
  });

  it.each<[txt: string, tags: [string, string][], warnings: string[], why: string]>([
    ['v=DMARC1; p = reject ;', [['p', 'reject']], [], 'WSP around "=" and before ";"'],
    ['v=DMARC1; p=reject; x y=1', [['p', 'reject']], ['malformed-tag'], 'a tag name with a space inside'],
    ['v=DMARC1; p=reject; a1=1', [['p', 'reject']], ['malformed-tag'], 'a tag name with a digit'],
    ['v=DMARC1; p=reject; rua==x', [['p', 'reject'], ['rua', '=x']], ['invalid-uri'], 'only the first "=" separates'],
    ['v=DMARC1; p=reject; rf=afrf:-x', [['p', 'reject'], ['rf', 'afrf:-x']], ['legacy-tag', 'invalid-value'], 'an rf keyword cannot start with "-"'],
    ['v=DMARC1; p=reject; rf=a-b:c1', [['p', 'reject'], ['rf', 'a-b:c1']], ['legacy-tag'], 'inner dashes and digits in rf keywords'],
    ['v=DMARC1; p=reject; pct=1000', [['p', 'reject'], ['pct', '1000']], ['legacy-tag', 'invalid-value'], 'pct has at most three digits'],
    ['v=DMARC1; p=reject; ri=12345678901', [['p', 'reject'], ['ri', '12345678901']], ['legacy-tag', 'invalid-value'], 'ri has at most ten digits'],
  ])('%j → tags %j, warnings %j (%s)', (txt, tags, warnings) => {
    const result = parseDmarcRecord(txt);
    if (result.kind !== 'record') throw new Error(`${txt} should be a record`);
    expect(result.record.tags.map((tag) => [tag.name, tag.value])).toEqual(tags);
    expect(result.warnings.map((warning) => warning.code)).toEqual(warnings);
  });
});

describe('parseFailureOptions', () => {
  it.each<[string, string[] | null, string]>([
    ['0', ['0'], 'the default'],
    ['1', ['1'], 'any failure'],
    ['d:s', ['d', 's'], 'DKIM and SPF reports'],
    ['1:d', ['1', 'd'], 'mixed'],
    ['0 : s', ['0', 's'], 'WSP around ":" tolerated (RFC 7489)'],
    ['D', ['d'], 'upper case literal'],
    ['0:1', null, '0 and 1 are exclusive (RFC 9989)'],
    ['d:d', null, 'd at most once (RFC 9989)'],
    ['', null, 'empty'],
    ['2', null, 'unknown option'],
  ])('%s → %j (%s)', (value, expected) => {
    expect(parseFailureOptions(value)).toEqual(expected);
  });
});
