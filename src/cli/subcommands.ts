/**
 * What every command with subcommands (`reports`, `users`, `ranges`) does the same way: `--help`
 * (or none: the usage on standard error, exit 2), a usage error (one line, exit 2), a store that
 * cannot be reached (one line, exit 1); and the stores opened for one subcommand and closed after it.
 */
import { flushReportWriter } from '../ingest/report-writer.js';
import { isStoreUnavailable } from '../store/errors.js';
import { openStores, type StorageChoice } from '../store/open.js';
import type { Stores } from '../store/types.js';
import { UsageError } from './args.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, type CliIo } from './io.js';

/** Runs the subcommand `args[0]` of `spoof-checker <command>` through `dispatch`, which throws `UsageError` for an unknown one. */
export async function runSubcommand(command: string, usage: string, args: readonly string[], io: CliIo, dispatch: (sub: string, rest: string[]) => number | Promise<number>): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    (sub === undefined ? io.err : io.out)(usage);
    return sub === undefined ? EXIT_USAGE : EXIT_OK;
  }
  try {
    return await dispatch(sub, rest);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`spoof-checker ${command}: ${error.message}\nRun 'spoof-checker ${command} --help' for the options.\n`);
      return EXIT_USAGE;
    }
    if (isStoreUnavailable(error)) {
      io.err(`spoof-checker ${command}: ${(error as Error).message}\n`);
      return EXIT_FAILED;
    }
    throw error;
  }
}

/** Opens the stores of `choice` (no automatic pruning: a command runs once), runs `run`, and closes them. */
export async function withStores<T>(choice: StorageChoice, run: (stores: Stores) => Promise<T>): Promise<T> {
  const opened = await openStores(choice, { pruneAutomatically: false });
  try {
    const result = await run(opened.stores);
    // Reports stored (an import): their blocks of days built before the command ends, not on the dashboard's first view.
    await flushReportWriter(opened.stores.reports);
    return result;
  } finally {
    // The store's close stops the background refresh of the blocks of days first.
    await opened.stores.close();
  }
}
