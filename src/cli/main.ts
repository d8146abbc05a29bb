import { EXIT_USAGE, processIo, type CliIo, type Command } from './io.js';

/** Each subcommand is loaded only when it is run, so `check` does not pay for Fastify's start-up. */
const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  check: { summary: 'check domains, URLs or addresses and print a report (or JSON lines)', load: async () => (await import('./check.js')).check },
  scan: { summary: 'check a list of names (file or stdin), streamed as JSON lines or CSV, resumable', load: async () => (await import('./scan.js')).scan },
  serve: { summary: 'run the HTTP API (spoof checker, logs, templates, domains, contacts)', load: async () => (await import('./serve.js')).serve },
  'dns-serve': { summary: 'serve a directory of zone files over DNS (UDP+TCP)', load: async () => (await import('./dns-serve.js')).dnsServe },
};

const USAGE = `spoof-checker: can someone send mail that looks like it comes from this domain?

Usage: spoof-checker <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, { summary }]) => `  ${name.padEnd(10)} ${summary}`)
  .join('\n')}

Run 'spoof-checker <command> --help' for the options of one command.
`;

/** Runs the CLI with `argv` (without node and the script) and returns the exit code. */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(USAGE);
    return name === undefined ? EXIT_USAGE : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.err(`spoof-checker: unknown command "${name}". ${USAGE}`);
    return EXIT_USAGE;
  }
  return (await command.load())(rest, io);
}
