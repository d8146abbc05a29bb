import { parseArgs, type ParseArgsConfig } from 'node:util';
import { EXIT_OK, EXIT_USAGE, type CliIo } from './io.js';
import { didYouMean } from './suggest.js';

/** A usage error: the command prints the message and its usage, and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError' as const;
}

type Options = NonNullable<ParseArgsConfig['options']>;
type HelpOption = { help: { type: 'boolean'; short: 'h' } };
/** What `parseCommandArgs` returns: node:util's typed values and positionals. */
export type ParsedArgs<O extends Options> = ReturnType<typeof parseArgs<{ args: string[]; options: O & HelpOption; allowPositionals: boolean; strict: true }>>;

/** The options every command that asks DNS shares: `--zones DIR` or `--resolver IP[:PORT]`. */
export const RESOLVER_OPTIONS = {
  zones: { type: 'string' },
  /** The fixture zones shipped with spoof-checker, wherever it is installed (src/cli/resolver-options.ts). */
  'demo-zones': { type: 'boolean' },
  resolver: { type: 'string' },
  timeout: { type: 'string' },
} as const satisfies Options;

/** Options that take a value (`--name VALUE`), by name. */
export function stringOptions<N extends string>(...names: N[]): { [K in N]: { type: 'string' } } {
  return Object.fromEntries(names.map((name) => [name, { type: 'string' }])) as { [K in N]: { type: 'string' } };
}

/** Switches (`--name`), by name. */
export function booleanOptions<N extends string>(...names: N[]): { [K in N]: { type: 'boolean' } } {
  return Object.fromEntries(names.map((name) => [name, { type: 'boolean' }])) as { [K in N]: { type: 'boolean' } };
}

/**
 * Strict argument parsing (node:util parseArgs): an unknown option, a missing value or a stray
 * argument is a `UsageError` that names it, never silently ignored.
 */
export function parseCommandArgs<O extends Options>(args: string[], options: O, allowPositionals: boolean): ParsedArgs<O> {
  const help: HelpOption = { help: { type: 'boolean', short: 'h' } };
  const all: Options = { ...options, ...help };
  try {
    return parseArgs({ args, options: all, allowPositionals, strict: true }) as ParsedArgs<O>;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const unknown = /^Unknown option '([^']+)'/.exec(message)?.[1];
    if (unknown !== undefined) throw new UsageError(`unknown option '${unknown}'.${didYouMean(unknown, optionSpellings(all))}`);
    throw new UsageError(message.replace(/\. To specify a positional.*$/s, '.'));
  }
}

/** Prints a usage error of `spoof-checker <command>` (the reason, and where the options are); the exit code 2. */
export function usageExit(io: Pick<CliIo, 'err'>, command: string, error: unknown): number {
  io.err(`spoof-checker ${command}: ${error instanceof Error ? error.message : String(error)}\nRun 'spoof-checker ${command} --help' for the options.\n`);
  return EXIT_USAGE;
}

/**
 * {@link parseCommandArgs} for a command's own arguments: a usage error is printed
 * ({@link usageExit}), `--help` prints `usage`; either gives the exit code instead of the arguments.
 */
export function parseCommandOrExit<O extends Options>(command: string, usage: string, io: Pick<CliIo, 'out' | 'err'>, args: string[], options: O, allowPositionals: boolean): ParsedArgs<O> | number {
  let parsed: ParsedArgs<O>;
  try {
    parsed = parseCommandArgs(args, options, allowPositionals);
  } catch (error) {
    return usageExit(io, command, error);
  }
  if ((parsed.values as { help?: boolean }).help) {
    io.out(usage);
    return EXIT_OK;
  }
  return parsed;
}

/**
 * A command's settings from `read`: a usage error prints the reason, then the whole usage (exit 2);
 * `help` prints the usage (exit 0). Either gives `{ exit }` instead of the settings.
 */
export function settingsOrExit<T>(command: string, usage: string, io: Pick<CliIo, 'out' | 'err'>, read: () => T | 'help'): { settings: T } | { exit: number } {
  let settings: T | 'help';
  try {
    settings = read();
  } catch (error) {
    io.err(`spoof-checker ${command}: ${error instanceof Error ? error.message : String(error)}\n\n${usage}`);
    return { exit: EXIT_USAGE };
  }
  if (settings === 'help') {
    io.out(usage);
    return { exit: EXIT_OK };
  }
  return { settings };
}

/** Every way of writing the options: `--name`, and `-x` for those with a short form. */
function optionSpellings(options: Options): string[] {
  return Object.entries(options).flatMap(([name, option]) => [`--${name}`, ...(option.short ? [`-${option.short}`] : [])]);
}

/** A whole number within bounds, or a `UsageError` naming the option. */
export function integerOption(value: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, not "${value}"`);
  }
  return n;
}
