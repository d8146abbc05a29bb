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
 * adjacent characters, unrestricted: Lowrance-Wagner), counted in code points.
 */
export function damerauLevenshtein(a: string, b: string): number {
  const s = Array.from(a);
  const t = Array.from(b);
  const n = s.length;
  const m = t.length;
  const max = n + m;
  const lastRow = new Map<string, number>();
  // (n + 2) × (m + 2) table, with a border of `max`.
  const width = m + 2;
  const d = new Array<number>((n + 2) * width).fill(0);
  const at = (i: number, j: number): number => d[i * width + j]!;
  const set = (i: number, j: number, v: number): void => {
    d[i * width + j] = v;
  };
  set(0, 0, max);
  for (let i = 0; i <= n; i++) {
    set(i + 1, 0, max);
    set(i + 1, 1, i);
  }
  for (let j = 0; j <= m; j++) {
    set(0, j + 1, max);
    set(1, j + 1, j);
  }
  for (let i = 1; i <= n; i++) {
    let lastMatchCol = 0;
    for (let j = 1; j <= m; j++) {
      const i1 = lastRow.get(t[j - 1]!) ?? 0;
      const j1 = lastMatchCol;
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      if (cost === 0) lastMatchCol = j;
      set(
        i + 1,
        j + 1,
        Math.min(
          at(i, j) + cost,
          at(i + 1, j) + 1,
          at(i, j + 1) + 1,
          at(i1, j1) + (i - i1 - 1) + 1 + (j - j1 - 1),
        ),
      );
    }
    lastRow.set(s[i - 1]!, i);
  }
  return at(n + 1, m + 1);
}
