/**
 * Properties of the SPF record parser and the macro functions (RFC 7208 §7, §12) over PROPERTY_RUNS
 * generated inputs each: they never throw, and what they return is consistent with their input.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_LABEL_OCTETS, MAX_NAME_OCTETS } from '../../src/dns/name.js';
import { parseClientAddress } from '../../src/spf/address.js';
import { expandMacroString, parseDomainSpec, parseMacroString, toTargetName, urlEscape } from '../../src/spf/macro.js';
import type { MacroContext, MacroSyntax } from '../../src/spf/macro.js';
import { MAX_REPORTED_SYNTAX_ERRORS, isSpfRecordText, parseSpfRecord } from '../../src/spf/parse.js';
import { AWKWARD_CHARACTERS, PROPERTY_RUNS, piecesOf, stringFrom } from './helpers.js';

/** Pieces of SPF syntax, valid and not, so that generated records reach every branch of the parser. */
const SPF_PIECES = [
  'a', 'mx', 'ptr', 'all', 'ip4:', 'ip6:', 'include:', 'exists:', 'redirect=', 'exp=', 'x=', ':', '/', '//',
  '24', '0', '128', '192.0.2.1', '2001:db8::', '::ffff:1.2.3.4', 'example.com', '.', 'com', '-', '+', '~', '?',
  '%{d}', '%{i}', '%{ir}', '%{d2}', '%{L-}', '%{p}', '%{c}', '%%', '%_', '%-', '%', '{', '}', '=', '1', 'x', ' ',
  ...Array.from(AWKWARD_CHARACTERS),
];
const spfPiece = fc.constantFrom(...SPF_PIECES);
/** "v=spf1 " and up to eight pieces, or (one time in eight) arbitrary text that may not be SPF at all. */
const spfRecord = fc.oneof(
  { weight: 7, arbitrary: fc.array(spfPiece, { maxLength: 8 }).map((pieces) => `v=spf1 ${pieces.join('')}`) },
  { weight: 1, arbitrary: stringFrom('v=spf1 aVSPF:' + AWKWARD_CHARACTERS, 12) },
);

const MACRO_PIECES = ['%{', '}', 's', 'l', 'o', 'd', 'i', 'p', 'h', 'v', 'c', 'r', 't', 'D', 'I', 'x', '1', '2', '0', '.', '-', '+', ',', '/', '_', '=', '%%', '%_', '%-', '%', ' ', 'com', 'é'];
const macroText = piecesOf(fc.constantFrom(...MACRO_PIECES), '', 10);
const syntax = fc.constantFrom<MacroSyntax>('domain', 'modifier', 'explain');

const client4 = parseClientAddress('192.0.2.1')!;
const client6 = parseClientAddress('2001:db8::1')!;
/** A context with a generated local part and domain, for either address family. */
const macroContext = fc
  .record({ localPart: stringFrom('ab.-+_=é %' + '\u0000', 12), domain: stringFrom('ab.-', 16), ipv6: fc.boolean() })
  .map(({ localPart, domain, ipv6 }): MacroContext => ({
    sender: `${localPart}@example.com`,
    localPart,
    senderDomain: 'example.com',
    domain,
    client: ipv6 ? client6 : client4,
    helo: 'mail.example.com',
    validatedName: 'unknown',
    receiver: 'unknown',
    timestamp: 1_700_000_000,
  }));

describe('parseSpfRecord (property)', () => {
  it(`never throws, and its terms and errors point into the record (${PROPERTY_RUNS} records)`, () => {
    let valid = 0;
    fc.assert(
      fc.property(spfRecord, (text) => {
        const parsed = parseSpfRecord(text);
        if (parsed.ok) valid++;
        if (!isSpfRecordText(text) && parsed.ok) return false;
        if (!parsed.ok) {
          const count = parsed.errors.length;
          return count > 0 && count <= MAX_REPORTED_SYNTAX_ERRORS + 1 && parsed.errors.every((error) => error.position >= 0 && error.position <= text.length && error.message !== '');
        }
        if (parsed.record.text !== text) return false;
        let previousEnd = 0;
        for (const term of parsed.record.terms) {
          // RFC 7208 §12: terms are separated by spaces and hold none.
          if (term.position < previousEnd || text.slice(term.position, term.position + term.text.length) !== term.text || term.text.includes(' ')) return false;
          previousEnd = term.position + term.text.length;
        }
        return true;
      }),
      { numRuns: PROPERTY_RUNS },
    );
    // The generator reaches valid records, not only syntax errors.
    expect(valid).toBeGreaterThan(PROPERTY_RUNS / 100);
  });
});

describe('SPF macros (property)', () => {
  it(`parse, expand and turn into a query name without throwing (${PROPERTY_RUNS} macro-strings)`, () => {
    let queryable = 0;
    fc.assert(
      fc.property(macroText, syntax, macroContext, (text, where, context) => {
        const parsed = parseMacroString(text, where);
        if (!parsed.ok) return parsed.error.offset >= 0 && parsed.error.offset <= text.length && parsed.error.message !== '';
        if (parsed.value.text !== text) return false;
        const expanded = expandMacroString(parsed.value, context);
        if (typeof expanded !== 'string') return false;
        const target = toTargetName(expanded, parsed.value.dynamic);
        if (!target.ok) return target.problem !== '';
        queryable++;
        // RFC 1035 §2.3.4 limits, which every name we query must meet.
        return target.name.length <= MAX_NAME_OCTETS && target.name.split('.').every((label) => label.length > 0 && label.length <= MAX_LABEL_OCTETS);
      }),
      { numRuns: PROPERTY_RUNS },
    );
    // The generator reaches expansions that are names to query, not only refusals.
    expect(queryable).toBeGreaterThan(PROPERTY_RUNS / 100);
  });

  it(`parseDomainSpec accepts only what parseMacroString accepts as a domain macro-string (${PROPERTY_RUNS} specs)`, () => {
    fc.assert(
      fc.property(fc.oneof(macroText, stringFrom('ab1-.%{}d!')), (text) => {
        const spec = parseDomainSpec(text);
        // RFC 7208 §7.1: domain-spec = macro-string domain-end.
        return spec.ok ? parseMacroString(text, 'domain').ok : spec.error.offset >= 0 && spec.error.offset <= text.length;
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it(`urlEscape writes only unreserved characters and %XX, and decodes back (${PROPERTY_RUNS} strings)`, () => {
    const ESCAPED = /^(?:[A-Za-z0-9\-._~]|%[0-9A-F]{2})*$/;
    // Well-formed strings only: a lone surrogate is written as U+FFFD, which cannot decode back to it.
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 16 }), (text) => {
        const escaped = urlEscape(text);
        return ESCAPED.test(escaped) && decodeURIComponent(escaped) === text;
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it('the properties can fail: a wrong claim about urlEscape is caught', () => {
    // Guards the harness itself: a property that returns false must make fc.assert throw.
    expect(() => fc.assert(fc.property(fc.constantFrom(' '), (text) => urlEscape(text) === text), { numRuns: 10 })).toThrow(/Property failed/);
  });
});
