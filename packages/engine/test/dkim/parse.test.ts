import { readFileSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeBase64, parseDkimKeyRecord, parseTagList } from '../../src/dkim/parse.js';
import type { DkimKeyOutcome, DkimKeyStatus } from '../../src/dkim/types.js';

interface ConformanceCase {
  id: string;
  record: string;
  expected: string;
  expected_fields: Record<string, unknown>;
  note: string;
}
interface ConformanceFile {
  keys: Record<string, string>;
  cases: ConformanceCase[];
}

const conformance = JSON.parse(readFileSync(new URL('../../../../conformance/dkim/cases.json', import.meta.url), 'utf8')) as ConformanceFile;
const key = (name: string): string => {
  const value = conformance.keys[name];
  if (value === undefined) throw new Error(`no key ${name} in cases.json`);
  return value;
};

/** The table's plain outcome words, mapped to ours. */
const PLAIN_OUTCOMES: Record<string, DkimKeyStatus> = {
  VALID: 'valid',
  REVOKED: 'revoked',
  'INVALID-SYNTAX': 'invalid-syntax',
  DISCARD: 'discard',
  'UNSUPPORTED-KEY-TYPE': 'unsupported-key-type',
  'BAD-KEY': 'bad-key',
  'TOO-SHORT': 'too-short',
  'NOT-FOR-EMAIL': 'not-for-email',
};

/** Where the table allows a choice (lenient / strict, or a qualified outcome), what we decided and why. */
const DECISIONS: Record<string, { status: DkimKeyStatus; why: string }> = {
  K07: { status: 'valid', why: 'accept bare PKCS#1 RSAPublicKey too (erratum 3017), as go-msgauth does' },
  K11: { status: 'valid', why: 'the record is well-formed; the sha1-only restriction is a finding (dkim-sha1-only), not a parse failure' },
  K29: { status: 'revoked', why: 'tag names are case-sensitive, so V= is an unknown tag and p= is empty' },
  K33: { status: 'bad-key', why: 'RFC 8463 §4.2 requires the raw 32-byte key; SPKI is rejected with a message saying so' },
  K40: { status: 'valid', why: 'RFC 6376 §2.4 base64string makes padding optional' },
  K42: { status: 'valid', why: 'empty tag-specs are accepted (most verifiers do) and reported as syntax notes' },
  K43: { status: 'revoked', why: 'whitespace after the final ; is accepted and reported as a syntax note' },
};

function expectedStatus(testCase: ConformanceCase): DkimKeyStatus {
  return PLAIN_OUTCOMES[testCase.expected] ?? (DECISIONS[testCase.id]?.status as DkimKeyStatus);
}

/** The fields of cases.json `expected_fields`, read from an outcome. */
function fieldsOf(outcome: DkimKeyOutcome): Record<string, unknown> {
  const record = outcome.status === 'valid' || outcome.status === 'too-short' ? outcome.record : null;
  const tags = record ?? ('tags' in outcome ? outcome.tags : null);
  if (!tags) return {};
  return {
    k: record ? record.keyType : tags.keyTypeName,
    bits: record?.key.bits,
    h: record?.acceptedHashes,
    h_raw: tags.hashNames,
    s: tags.serviceTypes,
    t: record?.flags,
    t_raw: tags.flagNames,
    n: tags.notes,
  };
}

describe('DKIM key records: conformance/dkim/cases.json', () => {
  it('has a decision for every case whose expected outcome is not a plain one', () => {
    const undecided = conformance.cases.filter((testCase) => !(testCase.expected in PLAIN_OUTCOMES) && !(testCase.id in DECISIONS));
    expect(undecided.map((testCase) => `${testCase.id}: ${testCase.expected}`)).toEqual([]);
  });

  it.each(conformance.cases.map((testCase) => [testCase.id, testCase.expected, testCase] as const))('%s → %s', (_id, _expected, testCase) => {
    const outcome = parseDkimKeyRecord(testCase.record);
    expect(outcome.status, `${testCase.id}: ${testCase.note}`).toBe(expectedStatus(testCase));
    expect(outcome.reason.length).toBeGreaterThan(0);
    const fields = fieldsOf(outcome);
    for (const [field, value] of Object.entries(testCase.expected_fields)) {
      expect(fields[field], `${testCase.id} field ${field}`).toEqual(value);
    }
  });

  it('K41: h= names are compared exactly by default (RFC 6376 §3.2), so SHA256 is unknown and only sha1 remains', () => {
    const record = conformance.cases.find((testCase) => testCase.id === 'K41')?.record ?? '';
    const exact = parseDkimKeyRecord(record);
    expect(exact.status === 'valid' && exact.record.acceptedHashes).toEqual(['sha1']);
  });

  it('K41: with hashNameCase ignore-case, SHA256 counts as sha256 (as Stalwart compares)', () => {
    const record = conformance.cases.find((testCase) => testCase.id === 'K41')?.record ?? '';
    const lenient = parseDkimKeyRecord(record, { hashNameCase: 'ignore-case' });
    expect(lenient.status === 'valid' && lenient.record.acceptedHashes).toEqual(['sha1', 'sha256']);
  });

  it.each([
    ['K42', 1, 'two empty tag-specs (;;), noted once'],
    ['K43', 1, "whitespace after the final ';'"],
    ['K01', 0, 'a clean record'],
  ])('%s carries %i syntax note(s): %s', (id, count) => {
    const record = conformance.cases.find((testCase) => testCase.id === id)?.record ?? '';
    const outcome = parseDkimKeyRecord(record);
    const notes = 'record' in outcome ? outcome.record.syntaxNotes : 'tags' in outcome ? outcome.tags.syntaxNotes : null;
    expect(notes).toHaveLength(count);
  });

  it('K33: the reason tells the publisher to drop the SPKI header', () => {
    const outcome = parseDkimKeyRecord(`v=DKIM1; k=ed25519; p=${key('GEN-ED25519-SPKI')}`);
    expect(outcome.reason).toMatch(/SubjectPublicKeyInfo.*raw 32-byte/);
  });
});

const RSA1024 = key('RFC6376-RSA1024');
const ED25519 = key('RFC8463-ED25519');
const rsaPss = generateKeyPairSync('rsa-pss', { modulusLength: 1024 }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');

describe('DKIM key records: our own rows', () => {
  it.each<[string, string, DkimKeyStatus, string]>([
    ['empty text', '', 'invalid-syntax', 'p= is required'],
    ['no tags at all, only spaces', '   ', 'invalid-syntax', 'whitespace is not a tag; p= is still missing'],
    ['k= names are case-sensitive', `v=DKIM1; k=RSA; p=${RSA1024}`, 'unsupported-key-type', 'RFC 6376 §3.2: values are case-sensitive'],
    ['a tag-spec without =', `v=DKIM1; p=${RSA1024}; testing`, 'invalid-syntax', 'RFC 6376 §3.2 tag-spec needs "="'],
    ['a tag name starting with a digit', `v=DKIM1; 1x=y; p=${RSA1024}`, 'invalid-syntax', 'tag-name = ALPHA *ALNUMPUNC'],
    ['a tag name with a hyphen', `google-site-verification=abc`, 'invalid-syntax', 'hyphen is not ALNUMPUNC'],
    ['duplicate unknown tags', `v=DKIM1; x=1; x=2; p=${RSA1024}`, 'invalid-syntax', 'any duplicated tag name invalidates the list'],
    ['no spaces at all', `v=DKIM1;k=rsa;p=${RSA1024}`, 'valid', 'FWS is optional'],
    ['p= folded with CRLF and spaces', `v=DKIM1; p=${RSA1024.slice(0, 100)}\r\n ${RSA1024.slice(100)}`, 'valid', 'FWS inside p= is removed (RFC 6376 §3.6.1)'],
    ['h= names only unknown hashes', `v=DKIM1; h=sha512; p=${RSA1024}`, 'valid', 'record is well-formed; the hash finding is separate'],
    ['s= lists email among others', `v=DKIM1; s=email:tlsrpt; p=${RSA1024}`, 'valid', 'email is listed'],
    ['s= not for email beats revocation', 's=tlsrpt; p=', 'not-for-email', 'an email verifier ignores the record before reading p='],
    ['revoked ed25519', 'v=DKIM1; k=ed25519; p=', 'revoked', 'empty p= under any key type'],
    ['unknown k= beats revocation', 'v=DKIM1; k=dsa; p=', 'unsupported-key-type', 'mox order: key type before revocation'],
    ['padding in the middle', `v=DKIM1; p=MIGf=MA0G`, 'invalid-syntax', '= only at the end'],
    ['base64 of impossible length 4n+1', 'v=DKIM1; p=AAAAA', 'invalid-syntax', 'no byte string encodes to 5 characters'],
    ['padded to a wrong length', 'v=DKIM1; p=AAAAAA=', 'invalid-syntax', 'padded base64 is a multiple of 4 characters'],
    ['ed25519 key of 33 bytes', `v=DKIM1; k=ed25519; p=${Buffer.alloc(33, 7).toString('base64')}`, 'bad-key', 'RFC 8463 §4.2: exactly 32 bytes'],
    ['ed25519 under k=rsa as raw bytes', `v=DKIM1; k=rsa; p=${ED25519}`, 'bad-key', 'not DER'],
    ['RSA-PSS key under k=rsa', `v=DKIM1; k=rsa; p=${rsaPss}`, 'bad-key', 'an rsa-pss SPKI is not an rsaEncryption key'],
    ['v= not DKIM1 and no p=', 'v=spf1 include:_spf.example.com ~all', 'discard', 'v= is checked before p='],
    ['v= empty', `v=; p=${RSA1024}`, 'discard', 'only exactly DKIM1'],
  ])('%s → %s', (_name, record, status, why) => {
    expect(parseDkimKeyRecord(record).status, why).toBe(status);
  });

  it('parses hostile whitespace in linear time (record text comes from anyone\'s DNS)', () => {
    const started = performance.now();
    const outcome = parseDkimKeyRecord(`v=DKIM1; n=${' '.repeat(60_000)}x; p=${' '.repeat(60_000)}${RSA1024}${';'.repeat(20_000)}`);
    expect(performance.now() - started).toBeLessThan(500);
    expect(outcome.status).toBe('valid');
    expect('record' in outcome && outcome.record.syntaxNotes).toHaveLength(1);
  });

  it('keeps unknown tags and notes but ignores them', () => {
    const outcome = parseDkimKeyRecord(`v=DKIM1; g=*; x_y=1; n=hello there; p=${RSA1024}`);
    expect(outcome.status).toBe('valid');
    if (outcome.status !== 'valid') return;
    expect(outcome.record.unknownTags).toEqual(['g', 'x_y']);
    expect(outcome.record.notes).toBe('hello there');
    expect(outcome.record.key).toEqual({ type: 'rsa', bits: 1024, encoding: 'spki' });
  });

  it('defaults: k=rsa, any hash, services *, no flags', () => {
    const outcome = parseDkimKeyRecord(`p=${RSA1024}`);
    expect(outcome.status === 'valid' && outcome.record).toMatchObject({
      version: null,
      keyType: 'rsa',
      keyTypeName: 'rsa',
      acceptedHashes: null,
      hashNames: null,
      serviceTypes: ['*'],
      flags: [],
      testing: false,
      strict: false,
    });
  });
});

describe('parseTagList', () => {
  it.each<[string, string, Record<string, string> | null, string]>([
    ['values are trimmed of FWS, inner spaces kept', ' a = one two ;b=\tthree\t', { a: 'one two', b: 'three' }, 'RFC 6376 §3.2 tag-value'],
    ['= inside a value is allowed', 'p=abc==; q=x=y', { p: 'abc==', q: 'x=y' }, 'VALCHAR includes ='],
    ['a final ; is allowed', 'a=1;', { a: '1' }, 'tag-list [";"]'],
    ['tag names are case-sensitive: V and v are two tags', 'V=1; v=2', { V: '1', v: '2' }, 'RFC 6376 §3.2'],
    ['empty value', 'a=', { a: '' }, 'tag-value may be empty'],
    ['a missing = fails', 'a', null, 'tag-spec needs ='],
    ['an empty tag name fails', '=x', null, 'tag-name needs ALPHA'],
  ])('%s', (_name, text, expected, why) => {
    const parsed = parseTagList(text);
    if (expected === null) {
      expect(parsed.ok, why).toBe(false);
      return;
    }
    expect(parsed.ok && Object.fromEntries(parsed.tags), why).toEqual(expected);
  });
});

describe('decodeBase64', () => {
  it.each<[string, number | null, string]>([
    ['AAAA', 3, 'plain'],
    ['AAA', 2, 'unpadded 4n+3'],
    ['AA', 1, 'unpadded 4n+2'],
    ['AA==', 1, 'padded'],
    ['A', null, '4n+1 is impossible'],
    ['AA=', null, 'padding must complete the quantum'],
    ['A-B_', null, 'base64url alphabet is not base64'],
    ['AA AA', null, 'whitespace is removed before decoding, not here'],
    ['', 0, 'empty decodes to nothing (the parser treats empty p= as revoked first)'],
  ])('%s → %s bytes (%s)', (text, length, why) => {
    const decoded = decodeBase64(text);
    expect(decoded === null ? null : decoded.length, why).toBe(length);
  });
});
