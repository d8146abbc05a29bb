/**
 * Properties of the DMARC record parser (RFC 9989 §4.7, §4.8) and the DKIM key record parser
 * (RFC 6376 §3.2, §3.6.1) over PROPERTY_RUNS generated records each: they never throw, and their
 * outcomes are closed unions consistent with the input.
 */
import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDkimKeyRecord, parseTagList } from '../../src/dkim/parse.js';
import { isDmarcRecord, MAX_PCT, parseDmarcRecord } from '../../src/dmarc/parse.js';
import { AWKWARD_CHARACTERS, PROPERTY_RUNS, stringFrom } from './helpers.js';

const DMARC_PIECES = [
  'v=DMARC1', 'v', 'V', 'DMARC1', 'dmarc1', '=', ';', ' ', '\t', 'p=', 'sp=', 'np=', 'none', 'reject', 'quarantine', 'REJECT',
  'rua=', 'ruf=', 'mailto:', 'a@example.com', 'https://example.com/r', '!10m', '!', ',', 'pct=', '100', '101', '007', 'ri=',
  '86400', 'fo=', '0', '1', 'd', 's', ':', 'rf=', 'afrf', 'adkim=', 'aspf=', 'r', 'psd=', 'y', 'n', 'u', 't=', 'x', '%', '%4',
  ...Array.from(AWKWARD_CHARACTERS),
];
const DMARC_TAGS: Record<string, readonly string[]> = {
  p: ['none', 'quarantine', 'reject', 'REJECT', 'rejct', ''],
  sp: ['none', 'reject', 'x'],
  np: ['quarantine', ''],
  rua: ['mailto:a@example.com', 'mailto:a@example.com!10m', 'mailto:a@example.com,https://example.com/r', 'mailto:', ' mailto:a@example.com , mailto:b@example.org '],
  ruf: ['mailto:f@example.com'],
  pct: ['100', '0', '101', '007', 'x'],
  fo: ['0', '1:d', 'd:s', '0:1', 'x'],
  adkim: ['r', 's', 'x'],
  aspf: ['S', 'r'],
  psd: ['y', 'n', 'u', 'x'],
  t: ['y', 'n'],
  rf: ['afrf', 'afrf:iodef', '-x'],
  ri: ['86400', '99999999999'],
  x: ['1'],
};
const dmarcTag = fc
  .constantFrom(...Object.keys(DMARC_TAGS))
  .chain((name) => fc.tuple(fc.constant(name), fc.constantFrom(...DMARC_TAGS[name]!), fc.constantFrom('', ' ', '\t')))
  .map(([name, value, space]) => `${name}${space}=${space}${value}`);
/** Mostly records that start right ("v=DMARC1;") with meaningful tags, so that tag parsing is reached; the rest anything. */
const dmarcRecord = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(fc.array(dmarcTag, { maxLength: 6 }), fc.constantFrom(';', '; ', ' ;', ';;')).map(([tags, separator]) => ['v=DMARC1', ...tags].join(separator)) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom(...DMARC_PIECES), { maxLength: 10 }).map((pieces) => `v=DMARC1; ${pieces.join('')}`) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom(...DMARC_PIECES), { maxLength: 10 }).map((pieces) => pieces.join('')) },
);
const POLICIES = new Set([null, 'none', 'quarantine', 'reject']);

const DKIM_PIECES = [
  'v=DKIM1', 'v=', 'DKIM1', 'k=', 'rsa', 'ed25519', 'RSA', 'p=', 'h=', 'sha256', 'sha1', 's=', 'email', '*', 't=', 'y', 'n=', ':', ';',
  ' ', '\t', '\r\n', '=', 'x', 'MIIB', 'AAAA', 'AQAB', '==', '+/', '!',
  ...Array.from(AWKWARD_CHARACTERS),
];
/** Real keys, so that generated records also reach key decoding and the size checks (RFC 8301 §3.2). */
const RSA_1024 = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
const RSA_512 = generateKeyPairSync('rsa', { modulusLength: 512 }).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
/** RFC 8463 §A.2's Ed25519 key: the raw 32 bytes. */
const ED25519 = '11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=';
const DKIM_TAG_NAMES = ['v', 'k', 'p', 'h', 's', 't', 'n', 'x', 'P', '1a', ''];
const DKIM_VALUES = ['DKIM1', 'DKIM2', 'rsa', 'ed25519', 'RSA', '', RSA_1024, RSA_512, ED25519, `${RSA_1024.slice(0, 40)} ${RSA_1024.slice(40)}`, 'AAAA', '!!', 'sha256', 'sha1:sha256', 'email', '*', 'other', 'y', 's', 'y:s', 'a note'];
const fws = fc.constantFrom('', ' ', '\t', '\r\n ');
/** A tag-list of up to six tags, names and values mostly meaningful, with FWS around them. */
const dkimTagList = fc
  .array(fc.tuple(fc.constantFrom(...DKIM_TAG_NAMES), fws, fc.constantFrom(...DKIM_VALUES), fws), { maxLength: 6 })
  .chain((tags) => fc.constantFrom(';', '; ', ';;').map((separator) => tags.map(([name, before, value, after]) => `${name}${before}=${before}${value}${after}`).join(separator)));
const dkimRecord = fc.oneof(
  { weight: 3, arbitrary: dkimTagList },
  { weight: 1, arbitrary: fc.array(fc.constantFrom(...DKIM_PIECES), { maxLength: 10 }).map((pieces) => pieces.join('')) },
);
const DKIM_STATUSES = new Set(['valid', 'too-short', 'revoked', 'discard', 'invalid-syntax', 'not-for-email', 'unsupported-key-type', 'bad-key']);

describe('parseDmarcRecord (property)', () => {
  it(`never throws; a record exactly when isDmarcRecord says so, with values in range (${PROPERTY_RUNS} records)`, () => {
    let withPolicy = 0;
    fc.assert(
      fc.property(fc.oneof(dmarcRecord, stringFrom(' \tv=DMARC1;pP' + AWKWARD_CHARACTERS, 16)), (text) => {
        const parsed = parseDmarcRecord(text);
        if (parsed.kind === 'record' && parsed.record.policy !== null) withPolicy++;
        if ((parsed.kind === 'record') !== isDmarcRecord(text)) return false;
        if (parsed.kind === 'not-dmarc') return parsed.raw === text;
        const record = parsed.record;
        return (
          record.raw === text &&
          POLICIES.has(record.policy) &&
          POLICIES.has(record.subdomainPolicy) &&
          // RFC 9989 §4.7: a policy applies to subdomains only when the domain itself has one.
          (record.policy !== null || record.subdomainPolicy === null) &&
          (record.pct === null || (record.pct >= 0 && record.pct <= MAX_PCT)) &&
          record.tags.every((tag) => /^[a-z]+$/.test(tag.name))
        );
      }),
      { numRuns: PROPERTY_RUNS },
    );
    // The generator reaches records with a usable policy, not only refusals.
    expect(withPolicy).toBeGreaterThan(PROPERTY_RUNS / 100);
  });
});

describe('parseDkimKeyRecord (property)', () => {
  it(`never throws, and every outcome is one of the closed set with a reason (${PROPERTY_RUNS} records)`, () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(dkimRecord, (text) => {
        const list = parseTagList(text);
        if (!list.ok && list.reason === '') return false;
        const outcome = parseDkimKeyRecord(text);
        seen.add(outcome.status);
        if (!DKIM_STATUSES.has(outcome.status) || outcome.reason === '') return false;
        // RFC 6376 §3.2: a tag-list that does not parse cannot be a key.
        return list.ok || outcome.status === 'invalid-syntax';
      }),
      { numRuns: PROPERTY_RUNS },
    );
    // The generator reaches every outcome, valid keys and short ones included.
    expect([...seen].sort()).toEqual([...DKIM_STATUSES].sort());
  });
});
