/**
 * Issue 42, item 6: a record the terminal report tells the user to publish is printed on one line,
 * copyable as it is: the BIMI record inside `check --bimi`'s next step (a quoted record is never cut
 * by the wrapping of the prose), and the DS records of a bogus DNSSEC chain (each on its own line,
 * no sentence period glued to the digest).
 */
import { describe, expect, it } from 'vitest';
import type { DnssecResult } from '@spoof-checker/engine';
import { main } from '../../src/cli/main.js';
import { formatDnssec, wrap, wrapWords } from '../../src/cli/report.js';
import { captureIo } from './helpers.js';

describe('wrapping never cuts a quoted record', () => {
  it.each([
    ['Publish TXT default._bimi.a.example = "v=BIMI1; l=https://a.example/bimi/logo.svg;" (add a=…)', ['Publish', 'TXT', 'default._bimi.a.example', '=', '"v=BIMI1; l=https://a.example/bimi/logo.svg;"', '(add', 'a=…)']],
    ['a "quoted record" and an unbalanced " quote', ['a', '"quoted record"', 'and', 'an', 'unbalanced', '"', 'quote']],
    ['TXT "v=spf1 -all".', ['TXT', '"v=spf1 -all".']],
    ['plain words only', ['plain', 'words', 'only']],
  ])('%s', (text, words) => {
    expect(wrapWords(text)).toEqual(words);
  });

  it('a quoted record longer than the width goes whole on a line of its own', () => {
    const record = `"v=BIMI1; l=https://${'long-'.repeat(12)}example/bimi/logo.svg; a=https://${'long-'.repeat(8)}example/vmc.pem;"`;
    const lines = wrap(`1. Publish TXT default._bimi.long.example = ${record} (then wait for the TTL).`, 6);
    expect(lines.filter((line) => line.includes(record))).toHaveLength(1);
    expect(lines.some((line) => line.trim() === record)).toBe(true);
  });
});

describe('check --bimi: the BIMI record to publish is on one line', () => {
  it('p-reject.example (no BIMI record yet): the record of the next step is whole on a line', async () => {
    const { io, stdout } = captureIo();
    expect(await main(['check', 'p-reject.example', '--demo-zones', '--bimi'], io)).toBe(0);
    const lines = stdout().split('\n');
    expect(lines.filter((line) => line.includes('"v=BIMI1; l=https://p-reject.example/bimi/logo.svg;"'))).toHaveLength(1);
    // No line ends in the middle of the record.
    expect(lines.some((line) => /"v=BIMI1;$/.test(line))).toBe(false);
  });
});

describe('DNSSEC: the DS records to publish', () => {
  it('each on its own line, whole, with no period after the digest', () => {
    const digest = 'E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D';
    const dnssec: DnssecResult = {
      status: 'bogus',
      reason: { code: 9, text: `No DNSKEY of ds-mismatch.example matches the DS at the parent (key tags 1). Publish at the registrar the DS of the key the zone now serves:\n  ds-mismatch.example. IN DS 12345 13 2 ${digest}\n  ds-mismatch.example. IN DS 23456 13 2 ${digest}` },
      rrsets: [],
      signaturesExpire: null,
    } as unknown as DnssecResult;
    const lines = formatDnssec(dnssec);
    expect(lines).toContain(`      ds-mismatch.example. IN DS 12345 13 2 ${digest}`);
    expect(lines).toContain(`      ds-mismatch.example. IN DS 23456 13 2 ${digest}`);
    expect(lines.some((line) => line.endsWith(`${digest}.`))).toBe(false);
  });
});
