/**
 * V8's heap growing factor for a command that streams many short-lived objects through a small live
 * heap (`scan`, `reports import`). By default V8 lets the old space grow to up to four times what
 * was live at the last full collection before it collects again (more when collections are cheap),
 * and objects that outlive two scavenges (a zone being checked, a report waiting for its
 * transaction) are promoted there and die: the RSS then reads several times the live heap. Set in
 * the process when the command starts (NODE_OPTIONS cannot carry the flag); node started with a
 * growing factor of its own (`node --heap-growing-percent=N`, 0: V8's own choice) keeps it.
 */
import { setFlagsFromString } from 'node:v8';

/** The flag that sets the growing factor to `percent`, or undefined when `execArgv` (node's own flags) sets one. */
export function heapGrowthFlag(execArgv: readonly string[], percent: number): string | undefined {
  if (execArgv.some((flag) => /^--heap[-_]growing[-_]percent\b/.test(flag))) return undefined;
  return `--heap-growing-percent=${percent}`;
}

/** Sets V8's heap growing factor to `percent` for the rest of the process, unless node was started with one. */
export function limitHeapGrowth(percent: number): void {
  const flag = heapGrowthFlag(process.execArgv, percent);
  if (flag !== undefined) setFlagsFromString(flag);
}
