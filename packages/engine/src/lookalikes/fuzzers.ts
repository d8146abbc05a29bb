/**
 * The dnstwist fuzzers (elceef/dnstwist `Fuzzer`, named as there), written from their published
 * rules: each takes the registrable label in Unicode and gives the labels (or, for `tld-swap` and
 * `various`, the suffixes) it makes. IDNA, dedupe, ranking and the cap are in `generate.ts`.
 */
import { allowsCyrillic, glyphTable, LATIN_TO_CYRILLIC } from './homoglyphs.js';
import type { LookalikeFuzzer } from './types.js';

/** What a fuzzer makes: a new label under the same suffix, or the same label under another suffix. */
export interface FuzzedName {
  label: string;
  suffix: string;
}

/**
 * Keyboard rows (QWERTY, QWERTZ, AZERTY). Keys are staggered: the neighbours of the key at column j
 * are j±1 in its row, j and j+1 in the row above, j−1 and j in the row below.
 */
const KEYBOARDS: readonly (readonly string[])[] = [
  ['1234567890', 'qwertyuiop', 'asdfghjkl', 'zxcvbnm'],
  ['1234567890', 'qwertzuiop', 'asdfghjkl', 'yxcvbnm'],
  ['1234567890', 'azertyuiop', 'qsdfghjklm', 'wxcvbn'],
];

function neighbourMap(): Map<string, Set<string>> {
  const map = new Map<string, Set<string>>();
  for (const rows of KEYBOARDS) {
    rows.forEach((row, r) => {
      for (let j = 0; j < row.length; j++) {
        const set = map.get(row[j]!) ?? new Set<string>();
        const add = (line: string | undefined, col: number): void => {
          const key = line?.[col];
          if (key !== undefined) set.add(key);
        };
        add(row, j - 1);
        add(row, j + 1);
        add(rows[r - 1], j);
        add(rows[r - 1], j + 1);
        add(rows[r + 1], j - 1);
        add(rows[r + 1], j);
        map.set(row[j]!, set);
      }
    });
  }
  return map;
}

/** Each key → the keys next to it on any of the three layouts. */
export const KEYBOARD_NEIGHBOURS: ReadonlyMap<string, ReadonlySet<string>> = neighbourMap();

const LDH = 'abcdefghijklmnopqrstuvwxyz0123456789-';
const VOWELS = 'aeiou';
const LETTERS_AND_DIGITS = [...'0123456789abcdefghijklmnopqrstuvwxyz'];

/** Append a letter or digit to the label, and to each hyphen-separated part but the last. */
export function addition(label: string): string[] {
  const out = LETTERS_AND_DIGITS.map((c) => label + c);
  const parts = label.split('-');
  for (let p = 1; p < parts.length; p++) {
    for (const c of LETTERS_AND_DIGITS) out.push(`${parts.slice(0, p).join('-')}${c}-${parts.slice(p).join('-')}`);
  }
  return out;
}

/** Flip one bit (of 8) of one character, kept when the result is a letter, digit or hyphen. */
export function bitsquatting(label: string): string[] {
  const chars = Array.from(label);
  const out: string[] = [];
  chars.forEach((c, i) => {
    const code = c.codePointAt(0)!;
    for (let bit = 0; bit < 8; bit++) {
      const flipped = String.fromCodePoint(code ^ (1 << bit));
      if (LDH.includes(flipped)) out.push(chars.slice(0, i).join('') + flipped + chars.slice(i + 1).join(''));
    }
  });
  return out;
}

/** Every Latin letter replaced by its Cyrillic twin; nothing when any character has none (a digit, a hyphen, `f`…). */
export function cyrillic(label: string): string[] {
  let out = '';
  for (const c of label) {
    const twin = LATIN_TO_CYRILLIC[c];
    if (twin === undefined) return [];
    out += twin;
  }
  return [out];
}

/**
 * One substitution from the glyph table: a character, or a pair (`rn` → `m`), replaced by a
 * look-alike; a pair of the same character may be replaced together (`ll` → `ıı`).
 */
export function homoglyphOnce(label: string, table: ReadonlyMap<string, readonly string[]>): string[] {
  const chars = Array.from(label);
  const out: string[] = [];
  const splice = (i: number, length: number, glyph: string): string => chars.slice(0, i).join('') + glyph + chars.slice(i + length).join('');
  for (let i = 0; i < chars.length; i++) {
    for (const glyph of table.get(chars[i]!) ?? []) out.push(splice(i, 1, glyph));
    if (i + 1 < chars.length) {
      const pair = chars[i]! + chars[i + 1]!;
      for (const glyph of table.get(pair) ?? []) out.push(splice(i, 2, glyph));
      if (chars[i] === chars[i + 1]) for (const glyph of table.get(chars[i]!) ?? []) out.push(splice(i, 2, glyph + glyph));
    }
  }
  return out;
}

/**
 * Most names the two-substitution pass may make (first and second together). Two substitutions
 * grow with the square of the label: `eeee…` (63 letters) under a permissive TLD would make
 * hundreds of thousands, seconds of CPU for a cap of 2,500. The likeliest first substitutions
 * (ASCII and Cyrillic look-alikes, then diacritics) are expanded first.
 */
export const MAX_HOMOGLYPH_NAMES = 6000;

/** `homoglyphOnce`, then (deep) `homoglyphOnce` of each result: up to two substitutions, at most `MAX_HOMOGLYPH_NAMES`. */
export function homoglyph(label: string, suffix: string, twice: boolean): string[] {
  const table = glyphTable(suffix);
  const once = new Set(homoglyphOnce(label, table));
  if (!twice) return [...once];
  const all = new Set(once);
  // Names whose substitution is ASCII or Cyrillic (no combining mark once decomposed) first.
  const ordered = [...once].sort((a, b) => markCount(a) - markCount(b));
  for (const first of ordered) {
    for (const second of homoglyphOnce(first, table)) {
      if (all.size >= MAX_HOMOGLYPH_NAMES) return [...all];
      all.add(second);
    }
  }
  return [...all];
}

function markCount(text: string): number {
  return text.normalize('NFD').length - text.length;
}

/** A hyphen between two characters. */
export function hyphenation(label: string): string[] {
  const chars = Array.from(label);
  const out: string[] = [];
  for (let i = 1; i < chars.length; i++) out.push(`${chars.slice(0, i).join('')}-${chars.slice(i).join('')}`);
  return out;
}

/** A key next to a character typed before or after it (every character but the last). */
export function insertion(label: string): string[] {
  const chars = Array.from(label);
  const out: string[] = [];
  for (let i = 0; i < chars.length - 1; i++) {
    const before = chars.slice(0, i).join('');
    const after = chars.slice(i + 1).join('');
    for (const key of KEYBOARD_NEIGHBOURS.get(chars[i]!) ?? []) {
      out.push(before + key + chars[i] + after, before + chars[i] + key + after);
    }
  }
  return out;
}

/** One character left out. */
export function omission(label: string): string[] {
  const chars = Array.from(label);
  return chars.map((_, i) => chars.slice(0, i).join('') + chars.slice(i + 1).join(''));
}

/** An `s` (`es` after s, x or z) after the character at 2 ≤ i < length − 2. */
export function plural(label: string): string[] {
  const chars = Array.from(label);
  const out: string[] = [];
  for (let i = 2; i < chars.length - 2; i++) {
    const c = chars[i]!;
    out.push(chars.slice(0, i + 1).join('') + ('sxz'.includes(c) ? 'es' : 's') + chars.slice(i + 1).join(''));
  }
  return out;
}

/** One character typed twice. */
export function repetition(label: string): string[] {
  const chars = Array.from(label);
  return chars.map((c, i) => chars.slice(0, i).join('') + c + chars.slice(i).join(''));
}

/** One character replaced by a key next to it. */
export function replacement(label: string): string[] {
  const chars = Array.from(label);
  const out: string[] = [];
  chars.forEach((c, i) => {
    for (const key of KEYBOARD_NEIGHBOURS.get(c) ?? []) out.push(chars.slice(0, i).join('') + key + chars.slice(i + 1).join(''));
  });
  return out;
}

/** A dot inside the label (`exa.mple.com`), never next to a hyphen or a dot, never first or last. */
export function subdomain(label: string): string[] {
  const chars = Array.from(label);
  const out: string[] = [];
  for (let i = 1; i < chars.length - 1; i++) {
    if ('-.'.includes(chars[i]!) || '-.'.includes(chars[i - 1]!)) continue;
    out.push(`${chars.slice(0, i).join('')}.${chars.slice(i).join('')}`);
  }
  return out;
}

/** Two adjacent characters swapped. */
export function transposition(label: string): string[] {
  const chars = Array.from(label);
  const out: string[] = [];
  for (let i = 0; i < chars.length - 1; i++) {
    out.push(chars.slice(0, i).join('') + chars[i + 1] + chars[i] + chars.slice(i + 2).join(''));
  }
  return out;
}

/** One vowel replaced by another. */
export function vowelSwap(label: string): string[] {
  const chars = Array.from(label);
  const out: string[] = [];
  chars.forEach((c, i) => {
    if (!VOWELS.includes(c)) return;
    for (const v of VOWELS) if (v !== c) out.push(chars.slice(0, i).join('') + v + chars.slice(i + 1).join(''));
  });
  return out;
}

/** The label joined with a word (either side, with or without a hyphen), and a word in place of its first or last hyphen part. */
export function dictionary(label: string, words: readonly string[]): string[] {
  const out: string[] = [];
  for (const word of words) {
    if (label.startsWith(word) && label.endsWith(word)) continue;
    out.push(`${label}-${word}`, `${label}${word}`, `${word}-${label}`, `${word}${label}`);
  }
  if (label.includes('-')) {
    const parts = label.split('-');
    for (const word of words) out.push(`${parts.slice(0, -1).join('-')}-${word}`, `${word}-${parts.slice(1).join('-')}`);
  }
  return out;
}

/** The same label under each other suffix of the list. */
export function tldSwap(label: string, suffix: string, tlds: readonly string[]): FuzzedName[] {
  return tlds.filter((tld) => tld !== suffix).map((tld) => ({ label, suffix: tld }));
}

/**
 * The suffix folded into the name: `examplecom.com`; for another TLD also `example-de.com` and
 * `examplede.com`; for a two-level suffix `example.uk` and `exampleco.uk`.
 */
export function various(label: string, suffix: string): FuzzedName[] {
  const labels = suffix.split('.');
  if (labels.length > 1) {
    const last = labels[labels.length - 1]!;
    return [
      { label, suffix: last },
      { label: label + labels.slice(0, -1).join(''), suffix: last },
    ];
  }
  const out: FuzzedName[] = [{ label: label + suffix, suffix }];
  if (suffix !== 'com') out.push({ label: `${label}-${suffix}`, suffix: 'com' }, { label: label + suffix, suffix: 'com' });
  return out;
}

/** Every fuzzer's names for a label under a suffix. */
export function fuzz(
  label: string,
  suffix: string,
  options: { deep: boolean; words: readonly string[] | null; tlds: readonly string[] | null },
): Map<LookalikeFuzzer, FuzzedName[]> {
  const same = (labels: string[]): FuzzedName[] => labels.map((l) => ({ label: l, suffix }));
  const out = new Map<LookalikeFuzzer, FuzzedName[]>([
    ['addition', same(addition(label))],
    ['bitsquatting', same(bitsquatting(label))],
    ['cyrillic', allowsCyrillic(suffix) ? same(cyrillic(label)) : []],
    ['homoglyph', same(homoglyph(label, suffix, options.deep))],
    ['hyphenation', same(hyphenation(label))],
    ['insertion', same(insertion(label))],
    ['omission', same(omission(label))],
    ['plural', same(plural(label))],
    ['repetition', same(repetition(label))],
    ['replacement', same(replacement(label))],
    ['subdomain', same(subdomain(label))],
    ['transposition', same(transposition(label))],
    ['vowel-swap', same(vowelSwap(label))],
    ['various', various(label, suffix)],
  ]);
  // Only with a list: deep runs give the built-in ones, a caller may give its own.
  if (options.words) out.set('dictionary', same(dictionary(label, options.words)));
  if (options.tlds) out.set('tld-swap', tldSwap(label, suffix, options.tlds));
  return out;
}
