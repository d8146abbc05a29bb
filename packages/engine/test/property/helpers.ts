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

/**
 * The input sizes of the linear-time checks: one input of 64 KiB against GROWTH_FACTOR inputs of
 * 2 KiB, the same number of characters on both sides.
 */
export const LARGE_INPUT = 64 * 1024;
/**
 * How many small inputs make up one large one. A wide factor keeps linear and quadratic far apart:
 * a quadratic parser costs GROWTH_FACTOR times as much on the large side, a linear one about the same
 * (issue 20: with a factor of 8, linear code measured up to 3.3 on a 2-core AMD EPYC, whose caches
 * hold a 8 KiB parse's garbage but not a 64 KiB one's, so 8 could not be told from 3.3 with a margin).
 */
export const GROWTH_FACTOR = 32;
export const SMALL_INPUT = LARGE_INPUT / GROWTH_FACTOR;
/** RFC 1035 §3.2.1 caps one record's data near 64 KB: a record this long must parse in this time. */
export const MAX_PARSE_MS_AT_64_KIB = 50;
/**
 * How much more time one large input may take than GROWTH_FACTOR small ones. Linear code stays near
 * 1 and has been seen up to about 4 on a slow, busy machine with small caches (more than twice under
 * this bound); quadratic code is near GROWTH_FACTOR (more than three times over it).
 */
export const MAX_GROWTH_RATIO = 10;

function timeOnceMs(run: () => unknown): number {
  const started = performance.now();
  run();
  return performance.now() - started;
}

/** Timing trials per side of a growth ratio; the best of each is kept. */
export const GROWTH_TRIALS = 7;
/**
 * Rounds of trials before a ratio is reported over its bound. Load elsewhere on the machine can only
 * make a trial slower, never faster, so the best round is the truest; a quadratic parser is over the
 * bound in every round.
 */
export const GROWTH_ROUNDS = 3;

/** Collects garbage before a timed run when the process allows it (vitest runs with --expose-gc). */
const collectGarbage = (): void => (globalThis as { gc?: () => void }).gc?.();

/**
 * t(one input of GROWTH_FACTOR·n) / t(GROWTH_FACTOR inputs of n): about 1 for a linear parser,
 * about GROWTH_FACTOR for a quadratic one. Both sides do the same amount of linear work, so the ratio
 * does not depend on the machine's speed; the two sides are timed in alternation, each after a
 * collection, so that a burst of load or garbage left by the other side hits both alike. Returns the
 * best of up to `rounds` rounds, stopping at the first round under `bound`.
 */
export function growthRatio(
  parse: (input: string) => unknown,
  build: (size: number) => string,
  bound = MAX_GROWTH_RATIO,
  rounds = GROWTH_ROUNDS,
): number {
  const small = build(SMALL_INPUT);
  const large = build(LARGE_INPUT);
  const manySmall = (): void => {
    for (let copy = 0; copy < GROWTH_FACTOR; copy++) parse(small);
  };
  const oneLarge = (): void => {
    parse(large);
  };
  manySmall();
  oneLarge();
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < rounds && best >= bound; round++) {
    let bestSmall = Number.POSITIVE_INFINITY;
    let bestLarge = Number.POSITIVE_INFINITY;
    for (let trial = 0; trial < GROWTH_TRIALS; trial++) {
      collectGarbage();
      bestSmall = Math.min(bestSmall, timeOnceMs(manySmall));
      collectGarbage();
      bestLarge = Math.min(bestLarge, timeOnceMs(oneLarge));
    }
    // A floor of 0.05 ms keeps a too-fast-to-time small run from turning into a huge ratio.
    best = Math.min(best, bestLarge / Math.max(bestSmall, 0.05));
  }
  return best;
}
