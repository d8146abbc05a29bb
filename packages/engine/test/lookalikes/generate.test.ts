/**
 * The fuzzers against what dnstwist's published rules give (elceef/dnstwist `Fuzzer`, worked out by
 * hand from each rule for short labels), the per-TLD homoglyph policy, the skeletons, the distance,
 * the rank and the cap.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addition,
  bitsquatting,
  cyrillic,
  dictionary,
  hyphenation,
  homoglyph,
  insertion,
  KEYBOARD_NEIGHBOURS,
  MAX_HOMOGLYPH_NAMES,
  omission,
  plural,
  repetition,
  replacement,
  subdomain,
  tldSwap,
  transposition,
  various,
  vowelSwap,
} from '../../src/lookalikes/fuzzers.js';
import { capCandidates, DEFAULT_DICTIONARY, DEFAULT_SWAP_TLDS, generateFor, MIN_CANDIDATES_PER_FUZZER, originalName } from '../../src/lookalikes/generate.js';
import { glyphTable, idnPolicyFor } from '../../src/lookalikes/homoglyphs.js';
import { damerauLevenshtein, looseSkeleton, skeleton } from '../../src/lookalikes/skeleton.js';
import type { LookalikeCandidate } from '../../src/lookalikes/types.js';

const sorted = (list: Iterable<string>): string[] => [...new Set(list)].sort();

describe('each fuzzer gives what dnstwist gives for the same label', () => {
  it.each([
    ['omission', omission('abc'), ['ab', 'ac', 'bc']],
    ['transposition', transposition('abc'), ['acb', 'bac']],
    ['repetition', repetition('abc'), ['aabc', 'abbc', 'abcc']],
    ['hyphenation', hyphenation('abc'), ['a-bc', 'ab-c']],
    ['subdomain (never first, last, or beside a hyphen)', subdomain('ab-cd'), ['a.b-cd']],
    ['vowel-swap', vowelSwap('abc'), ['ebc', 'ibc', 'obc', 'ubc']],
    ['plural (2 ≤ i < length − 2)', plural('abcdef'), ['abcdsef', 'abcsdef']],
    ['plural after s, x, z is "es"', plural('taxis'), ['taxesis']],
    ['bitsquatting of a', bitsquatting('a'), ['c', 'e', 'i', 'q']],
    ['cyrillic (every letter has a twin)', cyrillic('ace'), ['\u0430\u0441\u0435']],
    ['cyrillic (a letter without one: nothing)', cyrillic('abc'), []],
    ['cyrillic (a digit: nothing)', cyrillic('a1'), []],
  ])('%s', (_name, got, expected) => {
    expect(sorted(got)).toEqual(sorted(expected));
  });

  it('google.com: the names dnstwist lists for it (omission, transposition, repetition, vowel-swap, plural, hyphenation, subdomain)', () => {
    const { candidates } = generateFor((originalName('google.com') as { ok: true; original: never }).original);
    const by = (fuzzer: string) => sorted(candidates.filter((c) => c.fuzzers.includes(fuzzer as never)).map((c) => c.domain.replace(/\.com$/, '')));
    expect(by('omission')).toEqual(sorted(['oogle', 'gogle', 'goole', 'googe', 'googl']));
    // Swapping the two o's gives google itself, which is never a candidate.
    expect(by('transposition')).toEqual(sorted(['ogogle', 'gogole', 'goolge', 'googel']));
    expect(by('repetition')).toEqual(sorted(['ggoogle', 'gooogle', 'googgle', 'googlle', 'googlee']));
    expect(by('vowel-swap')).toEqual(sorted(['gaogle', 'geogle', 'giogle', 'guogle', 'goagle', 'goegle', 'goigle', 'gougle', 'googla', 'googli', 'googlo', 'googlu']));
    expect(by('plural')).toEqual(sorted(['goosgle', 'googsle']));
    expect(by('hyphenation')).toEqual(sorted(['g-oogle', 'go-ogle', 'goo-gle', 'goog-le', 'googl-e']));
    expect(by('subdomain')).toEqual(sorted(['g.oogle', 'go.ogle', 'goo.gle', 'goog.le']));
    expect(by('various')).toEqual(['googlecom']);
    expect(by('addition')).toHaveLength(36);
  });

  it('replacement and insertion use the neighbours on QWERTY, QWERTZ and AZERTY', () => {
    // dnstwist's tables: qwerty q '12wa', qwertz q '12wa', azerty q 'zswa'; a: 'qwsz', 'qwsy', '2zq1'.
    expect(sorted(KEYBOARD_NEIGHBOURS.get('q')!)).toEqual(sorted('12wazs'));
    expect(sorted(KEYBOARD_NEIGHBOURS.get('a')!)).toEqual(sorted('qwszy12'));
    expect(sorted(KEYBOARD_NEIGHBOURS.get('m')!)).toEqual(sorted('njklp'));
    expect(sorted(KEYBOARD_NEIGHBOURS.get('p')!)).toEqual(sorted('lo0m'));
    expect(sorted(replacement('q'))).toEqual(sorted('12wazs'));
    // Insertion skips the last character: for 'ab' only 'a' gets neighbours, before and after it.
    expect(sorted(insertion('ab'))).toEqual(sorted([...'qwszy12'].flatMap((k) => [`${k}ab`, `a${k}b`])));
  });

  it('addition appends to the label and to each hyphen part but the last', () => {
    const got = addition('a-b');
    expect(got).toHaveLength(72);
    expect(got).toContain('a-b0');
    expect(got).toContain('a-bz');
    expect(got).toContain('a9-b');
    expect(got).not.toContain('a-0b');
  });

  it('dictionary, tld-swap and various', () => {
    expect(sorted(dictionary('acme', ['login']))).toEqual(['acme-login', 'acmelogin', 'login-acme', 'loginacme']);
    expect(sorted(dictionary('acme-bank', ['pay']))).toEqual(sorted(['acme-bank-pay', 'acme-bankpay', 'pay-acme-bank', 'payacme-bank', 'acme-pay', 'pay-bank']));
    expect(tldSwap('acme', 'com', ['com', 'net'])).toEqual([{ label: 'acme', suffix: 'net' }]);
    expect(various('acme', 'com')).toEqual([{ label: 'acmecom', suffix: 'com' }]);
    expect(various('acme', 'de')).toEqual([
      { label: 'acmede', suffix: 'de' },
      { label: 'acme-de', suffix: 'com' },
      { label: 'acmede', suffix: 'com' },
    ]);
    expect(various('acme', 'co.uk')).toEqual([
      { label: 'acme', suffix: 'uk' },
      { label: 'acmeco', suffix: 'uk' },
    ]);
  });
});

describe('generation', () => {
  const generate = (input: string, deep = false) => {
    const outcome = originalName(input);
    if (!outcome.ok) throw new Error(outcome.message);
    return generateFor(outcome.original, { deep });
  };
  const find = (list: LookalikeCandidate[], unicode: string) => list.find((c) => c.unicode === unicode);

  it('works on the registrable label (tldts), whatever was typed', () => {
    const { original } = generate('https://www.mail.example.co.uk/login');
    expect(original).toEqual({ domain: 'example.co.uk', unicode: 'example.co.uk', label: 'example', suffix: 'co.uk' });
    expect(originalName('co.uk')).toMatchObject({ ok: false });
    expect(originalName('not a domain')).toMatchObject({ ok: false });
  });

  it('a few hundred names by default, each with its fuzzers and its distance', () => {
    const { candidates } = generate('example.com');
    expect(candidates.length).toBeGreaterThan(150);
    expect(candidates.length).toBeLessThan(500);
    expect(find(candidates, 'examp1e.com')).toMatchObject({ domain: 'examp1e.com', fuzzers: ['homoglyph'], distance: 1, skeleton: 'confusable' });
    expect(find(candidates, 'exarnple.com')).toMatchObject({ fuzzers: ['homoglyph'], distance: 2, skeleton: 'confusable' });
    expect(find(candidates, 'exampel.com')).toMatchObject({ fuzzers: ['transposition'], distance: 1 });
    expect(find(candidates, 'dxample.com')?.fuzzers).toEqual(['bitsquatting', 'replacement']);
    expect(find(candidates, 'exa.mple.com')?.fuzzers).toEqual(['subdomain']);
    expect(find(candidates, 'examplecom.com')?.fuzzers).toEqual(['various']);
    // The whole-script Cyrillic twin (Verisign registers Cyrillic labels in .com), in A-labels.
    const cyr = find(candidates, '\u0435\u0445\u0430\u043c\u0440\u04cf\u0435.com');
    expect(cyr?.fuzzers).toEqual(['cyrillic']);
    expect(cyr?.domain.startsWith('xn--')).toBe(true);
    // Diacritics from Verisign's Latin table, and one Cyrillic letter (names registered before one script per label).
    expect(find(candidates, 'exämple.com')).toMatchObject({ domain: 'xn--exmple-cua.com', skeleton: 'diacritic', distance: 1 });
    expect(find(candidates, '\u0435xample.com')).toMatchObject({ fuzzers: ['homoglyph'], distance: 1, skeleton: 'confusable' });
    // .org (PIR): all-Cyrillic labels only.
    expect(find(generate('example.org').candidates, '\u0435xample.org')).toBeUndefined();
    // Confusables first.
    expect(candidates[0]!.skeleton).toBe('confusable');
    // Deep runs only.
    expect(candidates.some((c) => c.fuzzers.includes('tld-swap') || c.fuzzers.includes('dictionary'))).toBe(false);
  });

  it('no IDN candidate under a TLD whose registry registers none; its own letters only elsewhere', () => {
    expect(idnPolicyFor('co.uk')).toEqual({ latin: '', cyrillic: null });
    const uk = generate('example.co.uk', true).candidates;
    expect(uk.every((c) => !c.domain.includes('xn--'))).toBe(true);
    expect(find(uk, 'examp1e.co.uk')).toBeDefined();
    const dk = glyphTable('dk');
    expect(dk.get('a')).toEqual(expect.arrayContaining(['å', 'ä']));
    expect(dk.get('c') ?? []).not.toContain('ç');
    const de = generate('example.de').candidates;
    expect(de.some((c) => /[\u0400-\u04ff]/.test(c.unicode))).toBe(false); // DENIC: Latin only
  });

  it('an unknown TLD (the fixtures\' .example) tries a Cyrillic or Greek letter inside a Latin label', () => {
    const { candidates } = generate('acmebank.example');
    expect(find(candidates, 'acmeb\u0430nk.example')).toMatchObject({ fuzzers: ['homoglyph'], distance: 1, skeleton: 'confusable' });
    expect(find(candidates, 'acmeb\u03b1nk.example')).toMatchObject({ domain: 'xn--acmebnk-5lf.example', fuzzers: ['homoglyph'], distance: 1, skeleton: 'confusable' });
    // And recognises one given as input.
    expect(generate('acmeb\u03b1nk.example').looksLike).toBe('acmebank.example');
  });

  it('deep adds two substitutions, the dictionary and the TLD swap', () => {
    const { candidates } = generate('example.com', true);
    expect(find(candidates, 'exampie.net')).toBeUndefined();
    expect(find(candidates, 'example.net')).toMatchObject({ fuzzers: ['tld-swap'] });
    expect(find(candidates, 'example-login.com')).toMatchObject({ fuzzers: ['dictionary'] });
    expect(find(candidates, 'exämplé.com')).toMatchObject({ fuzzers: ['homoglyph'], distance: 2 });
  });

  it('recognises an input that is itself a lookalike, and puts the name it imitates first', () => {
    const fake = generate('p\u0430ypal.com'); // Cyrillic а
    expect(fake.looksLike).toBe('paypal.com');
    expect(fake.candidates[0]).toMatchObject({ domain: 'paypal.com', fuzzers: ['homoglyph'], skeleton: 'confusable' });
    expect(generate('paypal.com').looksLike).toBeNull();
  });

  it.each([2500, 1000, 300])('the cap (%i) ranks by likelihood of abuse: every TLD swap and dictionary name of bankofamerica.com --deep first, never fuzzer order (issue 42)', (max) => {
    const { candidates, beforeCap } = generateFor((originalName('bankofamerica.com') as { ok: true; original: never }).original, { deep: true, maxCandidates: max });
    expect(beforeCap).toBeGreaterThan(4000);
    const domains = candidates.map((c) => c.domain);
    for (const name of ['bankofamerica.net', 'bankofamerica.org', 'bankofamerica-login.com', 'secure-bankofamerica.com', 'bankofamerica-verify.com']) expect(domains, name).toContain(name);
    // Common TLDs first, in the list's order (by registrations), then the words, login and secure first.
    expect(domains.slice(0, 3)).toEqual(['bankofamerica.net', 'bankofamerica.org', 'bankofamerica.info']);
    expect(candidates.filter((c) => c.fuzzers.includes('tld-swap'))).toHaveLength(DEFAULT_SWAP_TLDS.length - 1);
    const words = candidates.filter((c) => c.fuzzers.includes('dictionary')).map((c) => c.domain);
    expect(words.slice(0, 2)).toEqual(['bankofamerica-login.com', 'login-bankofamerica.com']);
    if (max >= 1000) expect(words).toHaveLength(DEFAULT_DICTIONARY.length * 4);
    // Then the typos by edit distance.
    const rest = candidates.filter((c) => !c.fuzzers.includes('tld-swap') && !c.fuzzers.includes('dictionary') && c.skeleton !== 'confusable');
    expect(rest.map((c) => c.distance)).toEqual([...rest.map((c) => c.distance)].sort((a, b) => a - b));
  });

  it('the cap keeps the likeliest names and never drops a whole fuzzer', () => {
    const { candidates, beforeCap } = generateFor((originalName('bankofamerica.com') as { ok: true; original: never }).original, { deep: true, maxCandidates: 300 });
    expect(beforeCap).toBeGreaterThan(300);
    expect(candidates).toHaveLength(300);
    const fuzzers = new Set(candidates.flatMap((c) => c.fuzzers));
    for (const f of ['tld-swap', 'dictionary', 'various', 'plural', 'homoglyph', 'addition', 'subdomain']) expect(fuzzers.has(f as never), f).toBe(true);
    // A pure helper check: with room for every fuzzer's minimum, each keeps MIN_CANDIDATES_PER_FUZZER.
    const make = (fuzzer: 'addition' | 'omission', i: number): LookalikeCandidate => ({ domain: `${fuzzer}${i}.com`, unicode: `${fuzzer}${i}.com`, fuzzers: [fuzzer], distance: fuzzer === 'addition' ? 1 : 2, skeleton: 'none' });
    const ranked = [...Array.from({ length: 50 }, (_, i) => make('addition', i)), ...Array.from({ length: 50 }, (_, i) => make('omission', i))];
    const capped = capCandidates(ranked, 30);
    expect(capped.filter((c) => c.fuzzers[0] === 'omission')).toHaveLength(MIN_CANDIDATES_PER_FUZZER);
    expect(capped.slice(0, 20).every((c) => c.fuzzers[0] === 'addition')).toBe(true);
  });
});

describe('UTS #39 skeletons and the distance', () => {
  it.each([
    ['paypa1', 'paypal', true],
    ['p\u0430ypal', 'paypal', true],
    ['rnicrosoft', 'microsoft', true],
    ['ex\u00e4mple', 'example', false],
  ])('skeleton(%s) = skeleton(%s): %s', (a, b, equal) => {
    expect(skeleton(a) === skeleton(b)).toBe(equal);
  });

  it('the loose skeleton drops diacritics', () => {
    expect(looseSkeleton('ex\u00e4mple')).toBe(looseSkeleton('example'));
    expect(looseSkeleton('exarnple')).toBe(looseSkeleton('example'));
  });

  it.each([
    ['example', 'example', 0],
    ['examp1e', 'example', 1],
    ['exampel', 'example', 1],
    ['exarnple', 'example', 2],
    ['ca', 'abc', 2], // unrestricted: ca → ac → abc (the restricted OSA variant says 3)
    ['ex\u00e4mple', 'example', 1],
    ['', 'abc', 3],
  ])('damerauLevenshtein(%s, %s) = %i', (a, b, d) => {
    expect(damerauLevenshtein(a, b)).toBe(d);
  });
});

describe('bounds and invariants', () => {
  it(`two substitutions stop at MAX_HOMOGLYPH_NAMES (a label of one repeated letter would make hundreds of thousands)`, () => {
    expect(homoglyph('a'.repeat(20), 'example', true).length).toBeLessThanOrEqual(MAX_HOMOGLYPH_NAMES);
    expect(homoglyph('a'.repeat(20), 'example', false).length).toBeLessThan(MAX_HOMOGLYPH_NAMES);
  });

  it('every candidate of any label is a host name in A-labels, not the original, at distance ≥ 1, with a fuzzer', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9ü](?:[a-z0-9ü-]{0,14}[a-z0-9])?$/), fc.constantFrom('com', 'co.uk', 'de', 'example'), fc.boolean(), (label, suffix, deep) => {
        const outcome = originalName(`${label}.${suffix}`);
        if (!outcome.ok) return; // e.g. a label that is itself a public suffix
        const { candidates } = generateFor(outcome.original, { deep, maxCandidates: 300 });
        for (const c of candidates) {
          expect(c.domain).toMatch(/^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9-]+$/);
          expect(c.domain).not.toBe(outcome.original.domain);
          expect(c.distance).toBeGreaterThanOrEqual(1);
          expect(c.fuzzers.length).toBeGreaterThan(0);
        }
        expect(new Set(candidates.map((c) => c.domain)).size).toBe(candidates.length);
      }),
      { numRuns: 60 },
    );
  });
});
