/**
 * "Did you mean …?" for mistyped commands and options: the closest known word by edit distance, when
 * it is close enough to be what the user meant.
 */

/**
 * The optimal string alignment distance: insertions, deletions, substitutions and swaps of two
 * neighbouring characters each cost 1 (`chek` → `check` 1, `sacn` → `scan` 1).
 */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** How far a typo may be from the word meant: one edit per three characters, at least one. */
export function maxTypoDistance(word: string): number {
  return Math.max(1, Math.floor(word.length / 3));
}

/**
 * The candidate closest to `typed` (case-insensitive), or undefined when none is within
 * `maxTypoDistance` of it. Ties go to the earlier candidate, so list the common words first.
 */
export function closestMatch(typed: string, candidates: readonly string[]): string | undefined {
  const lower = typed.toLowerCase();
  let best: { word: string; distance: number } | undefined;
  for (const word of candidates) {
    const distance = editDistance(lower, word.toLowerCase());
    if (distance <= maxTypoDistance(word) && (best === undefined || distance < best.distance)) best = { word, distance };
  }
  return best?.word;
}

/** ` Did you mean 'x'?` when a candidate is close, else the empty string. */
export function didYouMean(typed: string, candidates: readonly string[]): string {
  const match = closestMatch(typed, candidates);
  return match === undefined ? '' : ` Did you mean '${match}'?`;
}
