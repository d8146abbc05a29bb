/**
 * Properties of the zone file parser (RFC 1035 §5) and the input normaliser over PROPERTY_RUNS
 * generated inputs each: the parser returns a zone or throws its typed `ZoneSyntaxError` (nothing
 * else), quoted TXT text comes back as written, and the normaliser never throws and only ever
 * accepts a name that is a host name.
 */
import { isIP } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normaliseDomainInput } from '../../src/input.js';
import { parseZone, ZoneSyntaxError } from '../../src/zones/parse.js';
import { AWKWARD_CHARACTERS, PROPERTY_RUNS, stringFrom } from './helpers.js';

const ZONE_PIECES = [
  '$ORIGIN ', '$TTL ', '$INCLUDE ', '$GENERATE ', '@', ' ', '\t', '\n', '(', ')', '; note', '"', '"x"', '\\', '\\065', '\\.',
  'IN', 'CH', 'TXT', 'A', 'AAAA', 'MX', 'NS', 'SOA', 'CNAME', 'PTR', 'SPF', 'TYPE99', 'www', 'example.', '.', '192.0.2.1', '::1',
  '10', '3600', '1h30m', '99999999999', 'x', ...Array.from(AWKWARD_CHARACTERS),
];
/** One record line: owner, optional TTL and class (either order), type and data, mostly meaningful. */
const recordLine = fc
  .tuple(
    fc.constantFrom('@', 'www', 'mail.example.', '', '*.w', 'a\\065', 'x.other.'),
    fc.constantFrom('', '300 ', '1h ', 'IN ', '300 IN ', 'IN 300 ', 'CH '),
    fc.constantFrom('A', 'AAAA', 'MX', 'TXT', 'NS', 'CNAME', 'PTR', 'SOA', 'SPF', 'TYPE1'),
    fc.constantFrom('192.0.2.1', '2001:db8::1', '10 mx', '0 .', '"v=spf1 -all"', '"a" "b"', '( "x"\n "y" )', 'ns', 'target.example.', 'ns h 1 2 3 4 5', '"unterminated', 'x', ''),
  )
  .map(([owner, ttlAndClass, type, data]) => `${owner === '' ? ' ' : owner} ${ttlAndClass}${type} ${data}`);
/** A valid start (origin, SOA, NS), then generated record lines or (one time in four) raw pieces. */
const zoneText = fc
  .oneof(
    { weight: 3, arbitrary: fc.array(recordLine, { maxLength: 6 }).map((lines) => lines.join('\n')) },
    { weight: 1, arbitrary: fc.array(fc.constantFrom(...ZONE_PIECES), { maxLength: 12 }).map((pieces) => pieces.join('')) },
  )
  .map((body) => `$ORIGIN example.\n@ SOA ns h 1 2 3 4 5\n@ NS ns\n${body}\n`);

/** Text a quoted string can hold without escapes: printable ASCII but `"` and `\`. */
const plainText = stringFrom(' !#$%&\'()*+,-./0123456789:;<=>?@ABCXYZ[]^_`abcxyz{|}~', 32);

describe('parseZone (property)', () => {
  it(`returns a zone or throws ZoneSyntaxError with a location, nothing else (${PROPERTY_RUNS} files)`, () => {
    let withGeneratedRecords = 0;
    // Most generated files are refused: skip the stack traces nobody reads, which cost most of the time.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      fc.assert(
      fc.property(zoneText, (text) => {
        try {
          const zone = parseZone(text);
          if (zone.records.length > 2) withGeneratedRecords++;
          return zone.origin === 'example' && zone.records.every((record) => record.name === 'example' || record.name.endsWith('.example'));
        } catch (error) {
          if (!(error instanceof ZoneSyntaxError)) throw error;
          return error.line >= 1 && error.column >= 1 && error.reason !== '' && error.message.startsWith('<zone>:');
        }
      }),
        { numRuns: PROPERTY_RUNS },
      );
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
    // The generator reaches zones whose generated lines load, not only refusals.
    expect(withGeneratedRecords).toBeGreaterThan(PROPERTY_RUNS / 100);
  });

  it(`gives back the text of quoted TXT strings as written (${PROPERTY_RUNS} records)`, () => {
    fc.assert(
      fc.property(fc.array(plainText, { minLength: 1, maxLength: 3 }), (strings) => {
        const zone = parseZone(`$ORIGIN example.\nt TXT ${strings.map((text) => `"${text}"`).join(' ')}\n`);
        const data = zone.records[0]?.data;
        return Array.isArray(data) && data.length === strings.length && data.every((text, index) => text === strings[index]);
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });
});

const INPUT_PIECES = ['example', 'com', 'xn--bcher-kva', 'bücher', '.', '..', '-', '_', '@', ':', '/', '[', ']', '0x', '7f', '1', '127', '2130706433', 'https://', 'mailto:', ' ', 'Ｅ', '．', '１', ...Array.from(AWKWARD_CHARACTERS)];
/** A name of one to four labels, wrapped the ways people paste one: a URL, an address, a port, a dot. */
const pastedName = fc
  .tuple(
    fc.constantFrom('', 'https://', 'http://user@', 'ceo@', 'mailto:a@', ' '),
    fc.array(fc.constantFrom('example', 'com', 'a-b', 'xn--bcher-kva', 'bücher', 'BÜCHER', '127', '0x7f', '1', '0', '_spf', '-x', 'Ｅｘ', '１２', 'a'.repeat(64)), { minLength: 1, maxLength: 4 }),
    fc.constantFrom('', '/path', ':25', '.', ' ', '?q=1', '..'),
  )
  .map(([before, labels, after]) => `${before}${labels.join('.')}${after}`);
const userInput = fc.oneof(
  { weight: 2, arbitrary: pastedName },
  { weight: 1, arbitrary: fc.array(fc.constantFrom(...INPUT_PIECES), { maxLength: 8 }).map((pieces) => pieces.join('')) },
  { weight: 1, arbitrary: stringFrom('ab0123456789x.' + AWKWARD_CHARACTERS, 16) },
);
const HOST_LABEL = /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$/;
const NUMERIC_LABEL = /^(?:[0-9]+|0x[0-9a-f]*)$/;

describe('normaliseDomainInput (property)', () => {
  it(`never throws; accepts only host names, never an IP address or a numeric last label, and is idempotent (${PROPERTY_RUNS} inputs)`, () => {
    let accepted = 0;
    fc.assert(
      fc.property(userInput, (input) => {
        const result = normaliseDomainInput(input, { specialUseSuffixes: [] });
        if (!result.ok) return result.message !== '' && result.fix !== '';
        accepted++;
        const labels = result.domain.split('.');
        return (
          labels.length >= 2 &&
          labels.every((label) => HOST_LABEL.test(label)) &&
          // RFC 1123 §2.1, RFC 3696 §2: the top-level label is not all-numeric.
          !NUMERIC_LABEL.test(labels[labels.length - 1]!) &&
          isIP(result.domain) === 0 &&
          normaliseDomainInput(result.domain, { specialUseSuffixes: [] }).ok
        );
      }),
      { numRuns: PROPERTY_RUNS },
    );
    // The generator reaches accepted names, not only refusals.
    expect(accepted).toBeGreaterThan(PROPERTY_RUNS / 100);
  });
});
