/**
 * What every benchmark section shares: medians with their spread, timed loops, and the child
 * processes some sections measure in (same Node, same loader flags, so tsx runs them too).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { smokeOr } from './smoke.js';

/** Runs per figure: the brief asks for medians of at least 5 (one in a `--smoke` run, whose figures are not judged). */
export const MIN_RUNS = smokeOr(1, 5);

/** A median with the lowest and highest run, and every run. */
export interface Measured {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** `values` summarised as median and spread. */
export function measured(values: readonly number[]): Measured {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values), runs: [...values] };
}

/**
 * Calls `once` (which does `batch` units of work) repeatedly for at least `ms` milliseconds and
 * returns units per second.
 */
export async function ratePerSecond(ms: number, batch: number, once: () => Promise<unknown>): Promise<number> {
  let units = 0;
  const started = performance.now();
  let elapsed = 0;
  do {
    await once();
    units += batch;
    elapsed = performance.now() - started;
  } while (elapsed < ms);
  return units / (elapsed / 1000);
}


/** CPU seconds this thread (the main one, which runs the JavaScript) has spent; waiting for a core is not counted. */
export function threadCpuSeconds(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1e6;
}

/** Calls `once` until the main thread has spent `ms` milliseconds of CPU: a warm-up the machine's load does not shorten. */
export async function forCpuMs(ms: number, once: () => Promise<unknown>): Promise<void> {
  const end = threadCpuSeconds() + ms / 1000;
  do await once();
  while (threadCpuSeconds() < end);
}

/** One side of an interleaved measurement: `once` does `batch` units of work. */
export interface Side {
  batch: number;
  once: () => Promise<unknown>;
}

/**
 * Runs one pass of `a`, then one of `b`, and again, until each has spent `ms` milliseconds of the
 * main thread's CPU; returns each one's units per CPU second. Pass by pass, both sides meet the same
 * machine: a neighbour's burst on the shared core, or its sibling hyperthread's, slows a few passes
 * of each, not one side of the pair. (`bFirst` starts with `b`, for runs that take turns.)
 */
export async function interleavedCpuRates(ms: number, a: Side, b: Side, bFirst = false): Promise<{ a: number; b: number }> {
  const spent = { a: 0, b: 0 };
  const units = { a: 0, b: 0 };
  const pass = async (name: 'a' | 'b', side: Side) => {
    if (spent[name] * 1000 >= ms && units[name] > 0) return;
    const started = threadCpuSeconds();
    await side.once();
    spent[name] += threadCpuSeconds() - started;
    units[name] += side.batch;
  };
  while (spent.a * 1000 < ms || spent.b * 1000 < ms) {
    if (bFirst) await pass('b', b);
    await pass('a', a);
    if (!bFirst) await pass('b', b);
  }
  return { a: units.a / spent.a, b: units.b / spent.b };
}

/** `runs` runs of `interleavedCpuRates`, which side starts taking turns; each side's per-run rates. */
export async function alternateInterleaved(runs: number, ms: number, a: Side, b: Side): Promise<{ a: number[]; b: number[] }> {
  const result = { a: [] as number[], b: [] as number[] };
  for (let run = 0; run < runs; run++) {
    const rates = await interleavedCpuRates(ms, a, b, run % 2 === 1);
    result.a.push(rates.a);
    result.b.push(rates.b);
  }
  return result;
}

/**
 * Alternates `a` and `b` for `runs` runs (which goes first alternates too, so neither always runs on
 * a heap the other just filled) and returns each one's per-run rates.
 */
export async function alternate(runs: number, a: () => Promise<number>, b: () => Promise<number>): Promise<{ a: number[]; b: number[] }> {
  const result = { a: [] as number[], b: [] as number[] };
  for (let run = 0; run < runs; run++) {
    if (run % 2 === 0) {
      result.a.push(await a());
      result.b.push(await b());
    } else {
      result.b.push(await b());
      result.a.push(await a());
    }
  }
  return result;
}

/**
 * The median over runs of `a[i] ÷ b[i]`: each pair ran back to back (`alternate`), so a load spike
 * on the shared machine moves one pair's ratio, not the figure, where the median of `a` over the
 * median of `b` can take each side's median from a different load.
 */
export function pairedRatio(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) throw new RangeError(`pairedRatio needs runs in pairs: ${a.length} against ${b.length}`);
  return median(a.map((rate, index) => rate / (b[index] as number)));
}

/** A child process started on a bench module, speaking JSON lines on stdin/stdout. */
export interface BenchChild {
  process: ChildProcess;
  /** The next JSON line the child prints. */
  next<T>(): Promise<T>;
  /** Sends one JSON line to the child. */
  send(message: unknown): void;
  /** Closes the child's stdin (it exits) and waits for it. */
  stop(): Promise<number | null>;
}

/**
 * Starts `modulePath` in a child process with `args`, with the loader flags this process runs with
 * (so `tsx` carries over). The child answers on stdout in JSON lines; its stderr is passed through.
 */
export function startChild(modulePath: string, args: string[] = [], nodeFlags: string[] = []): BenchChild {
  const child = spawn(process.execPath, [...nodeFlags, ...process.execArgv, modulePath, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    process: child,
    async next<T>(): Promise<T> {
      const line = await Promise.race([lines.next(), exited.then(() => ({ done: true as const, value: undefined }))]);
      if (line.done) throw new Error(`the bench child ${modulePath} ended before answering`);
      return JSON.parse(String(line.value)) as T;
    },
    send(message) {
      child.stdin!.write(`${JSON.stringify(message)}\n`);
    },
    async stop() {
      child.stdin!.end();
      return exited;
    },
  };
}

/** In a child: reads JSON lines from stdin and answers each through `handle`, one line out per line in. */
export async function serveLines(handle: (message: unknown) => Promise<unknown> | unknown): Promise<void> {
  for await (const line of createInterface({ input: process.stdin })) {
    if (line.trim() === '') continue;
    process.stdout.write(`${JSON.stringify(await handle(JSON.parse(line)))}\n`);
  }
}

/** A number with thousands separators, rounded. */
export function formatCount(value: number): string {
  return Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a';
}

/** `median (min–max)` of rates. */
export function formatMeasured(value: Measured, unit = ''): string {
  return `${formatCount(value.median)}${unit} (${formatCount(value.min)}–${formatCount(value.max)})`;
}

/** A ratio as `0.83×`. */
export function formatRatio(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}×` : 'n/a';
}
