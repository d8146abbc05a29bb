/**
 * `--smoke`: the smallest run of a benchmark that still goes through every step and writes its
 * figures: one short run per figure, the smallest sizes. It proves the benchmark works (CI runs it:
 * test/bench-smoke.test.ts); its figures mean nothing and are never judged. Every benchmark takes
 * it (and treats it as `--quick` made smaller). It is passed on to the benchmark's child processes
 * through the environment variable below, since they are started with arguments of their own.
 */

/** Set to `1` by a benchmark started with `--smoke`, so that its child processes run small too. */
export const SMOKE_VARIABLE = 'SPOOF_CHECKER_BENCH_SMOKE';

/** True in a smoke run (this process was given `--smoke`, or its parent was). */
export const SMOKE = process.argv.includes('--smoke') || process.env[SMOKE_VARIABLE] === '1';
if (SMOKE) process.env[SMOKE_VARIABLE] = '1';

/** `smoke` in a smoke run, else `otherwise`. */
export function smokeOr<T>(smoke: T, otherwise: T): T {
  return SMOKE ? smoke : otherwise;
}
