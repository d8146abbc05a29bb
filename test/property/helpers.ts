/**
 * Shared pieces of the property tests: how many generated inputs each property sees, cheap string
 * arbitraries built from a parser's own alphabet (so that most inputs reach deep into the grammar),
 * and a timer for the linear-time checks.
 */
import fc from 'fast-check';

/**
 * Generated inputs per property. Each property keeps to a few seconds at this count because its
 * arbitraries are short strings over small alphabets (no recursive structures, no shrinking work
 * unless something fails).
 */
export const PROPERTY_RUNS = 100_000;

/** Longest generated string: long enough for several terms or tags, short enough to stay cheap. */
export const MAX_GENERATED_LENGTH = 48;

/** A string of up to `maxLength` characters, each drawn from `alphabet` (a string of single characters). */
export function stringFrom(alphabet: string, maxLength = MAX_GENERATED_LENGTH): fc.Arbitrary<string> {
  return fc.string({ unit: fc.constantFrom(...Array.from(alphabet)), maxLength });
}

/** Joins generated pieces (terms, tags, labels) with a separator: more structure for the same cost. */
export function piecesOf(piece: fc.Arbitrary<string>, separator: string, maxPieces = 6): fc.Arbitrary<string> {
  return fc.array(piece, { maxLength: maxPieces }).map((pieces) => pieces.join(separator));
}

/** Control characters, a non-ASCII letter, a lone surrogate and an astral character: what breaks naive code. */
export const AWKWARD_CHARACTERS = '\u0000\t\n\r\u007f\u0085\u00e9\ud800\u{1f600}';

/**
 * The best (smallest) of `trials` timings of `run`, in milliseconds, after one warm-up call. The
 * minimum is the timing least disturbed by garbage collection and by other processes on the machine.
 */
export function bestTimeMs(run: () => unknown, trials = 5): number {
  run();
  let best = Number.POSITIVE_INFINITY;
  for (let trial = 0; trial < trials; trial++) {
    const started = performance.now();
    run();
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

/** The input sizes of the linear-time checks: n and 8n characters, 8n being 64 KiB. */
export const SMALL_INPUT = 8 * 1024;
export const LARGE_INPUT = 8 * SMALL_INPUT;
/** RFC 1035 §3.2.1 caps one record's data near 64 KB: a record this long must parse in this time. */
export const MAX_PARSE_MS_AT_64_KIB = 50;
/**
 * How much more time 8n characters may take than 8 separate inputs of n characters. A linear parser
 * stays near 1; a quadratic one is near 8. The margin absorbs timer and machine noise.
 */
export const MAX_GROWTH_RATIO = 3;

function timeOnceMs(run: () => unknown): number {
  const started = performance.now();
  run();
  return performance.now() - started;
}

/** Timing trials per side of a growth ratio; the best of each is kept. */
export const GROWTH_TRIALS = 7;

/**
 * t(one input of 8n) / t(eight inputs of n): about 1 for a linear parser, about 8 for a quadratic one.
 * Both sides do the same amount of linear work, so the ratio does not depend on the machine's speed;
 * the two sides are timed in alternation, so that a burst of load elsewhere hits both alike.
 */
export function growthRatio(parse: (input: string) => unknown, build: (size: number) => string): number {
  const small = build(SMALL_INPUT);
  const large = build(LARGE_INPUT);
  const eightSmall = (): void => {
    for (let copy = 0; copy < 8; copy++) parse(small);
  };
  const oneLarge = (): void => {
    parse(large);
  };
  eightSmall();
  oneLarge();
  let bestSmall = Number.POSITIVE_INFINITY;
  let bestLarge = Number.POSITIVE_INFINITY;
  for (let trial = 0; trial < GROWTH_TRIALS; trial++) {
    bestSmall = Math.min(bestSmall, timeOnceMs(eightSmall));
    bestLarge = Math.min(bestLarge, timeOnceMs(oneLarge));
  }
  // A floor of 0.05 ms keeps a too-fast-to-time small run from turning into a huge ratio.
  return bestLarge / Math.max(bestSmall, 0.05);
}
