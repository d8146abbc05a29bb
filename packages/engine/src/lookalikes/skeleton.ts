/**
 * UTS #39 (Unicode Security Mechanisms) §4 skeletons and the edit distance, to rank candidates and
 * to recognise a lookalike given as input. Confusables data: the `unhomoglyph` package (nodeca, MIT),
 * a source → prototype map from Unicode's confusables.txt (version 13.0.0).
 */
import { createRequire } from 'node:module';

/** Each confusable code point (as a string) → its prototype. Loaded on first use (100 KB), not at import. */
let confusables: Map<string, string> | undefined;

function mapConfusables(text: string): string {
  confusables ??= new Map(Object.entries(createRequire(import.meta.url)('unhomoglyph/data.json') as Record<string, string>));
  let out = '';
  for (const ch of text) out += confusables.get(ch) ?? ch;
  return out;
}

/**
 * UTS #39 §4 skeleton(X): NFD, each character replaced by its confusables.txt prototype, NFD again.
 * Two strings are confusable when their skeletons are equal (`paypa1` and `paypal` both give `paypal`).
 */
export function skeleton(text: string): string {
  return mapConfusables(text.normalize('NFD')).normalize('NFD');
}

/**
 * The loose skeleton: the strict one with every combining mark removed (before and after the map).
 * Diacritics are not confusables in UTS #39 (`exämple` ≠ `example`), but a registry that sells
 * `exämple` sells a name that passes for `example` at a glance.
 */
export function looseSkeleton(text: string): string {
  const bare = text.normalize('NFD').replace(/\p{M}/gu, '');
  return mapConfusables(bare).normalize('NFD').replace(/\p{M}/gu, '');
}

/**
 * The Damerau-Levenshtein distance (insertions, deletions, substitutions and transpositions of
 * adjacent characters, unrestricted: Lowrance-Wagner), counted in code points. Characters are
 * numbered first, so the table is typed arrays and no lookup by string happens per cell.
 */
export function damerauLevenshtein(a: string, b: string): number {
  const codes = new Map<string, number>();
  const code = (ch: string): number => {
    let c = codes.get(ch);
    if (c === undefined) {
      c = codes.size;
      codes.set(ch, c);
    }
    return c;
  };
  const s = Array.from(a, code);
  const t = Array.from(b, code);
  const n = s.length;
  const m = t.length;
  const max = n + m;
  // For each character, the last row of `s` where it was seen (0: not yet).
  const lastRow = new Int32Array(codes.size);
  // (n + 2) × (m + 2) table, with a border of `max`.
  const width = m + 2;
  const d = new Int32Array((n + 2) * width);
  d[0] = max;
  for (let i = 0; i <= n; i++) {
    d[(i + 1) * width] = max;
    d[(i + 1) * width + 1] = i;
  }
  for (let j = 0; j <= m; j++) {
    d[j + 1] = max;
    d[width + j + 1] = j;
  }
  for (let i = 1; i <= n; i++) {
    let lastMatchCol = 0;
    const si = s[i - 1]!;
    for (let j = 1; j <= m; j++) {
      const tj = t[j - 1]!;
      const i1 = lastRow[tj]!;
      const j1 = lastMatchCol;
      const cost = si === tj ? 0 : 1;
      if (cost === 0) lastMatchCol = j;
      const substitution = d[i * width + j]! + cost;
      const insertion = d[(i + 1) * width + j]! + 1;
      const deletion = d[i * width + j + 1]! + 1;
      const transposition = d[i1 * width + j1]! + (i - i1 - 1) + 1 + (j - j1 - 1);
      d[(i + 1) * width + j + 1] = Math.min(substitution, insertion, deletion, transposition);
    }
    lastRow[si] = i;
  }
  return d[(n + 1) * width + m + 1]!;
}
