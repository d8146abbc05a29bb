import { readFileSync } from 'node:fs';
import { EXIT_OK, EXIT_USAGE, processIo, type CliIo, type Command } from './io.js';
import { didYouMean } from './suggest.js';

/** Each subcommand is loaded only when it is run, so `check` does not pay for Fastify's start-up. */
const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  check: { summary: 'check domains, URLs or addresses and print a report (or JSON lines)', load: async () => (await import('./check.js')).check },
  lookalikes: { summary: 'find the registered names that look like a domain, graded by what they can do with mail', load: async () => (await import('./lookalikes.js')).lookalikes },
  scan: { summary: 'check a list of names (file or stdin), streamed as JSON lines or CSV, resumable', load: async () => (await import('./scan.js')).scan },
  serve: { summary: 'run the HTTP API (spoof checker, logs, templates, domains, contacts)', load: async () => (await import('./serve.js')).serve },
  'dns-serve': { summary: 'serve a directory of zone files over DNS (UDP+TCP)', load: async () => (await import('./dns-serve.js')).dnsServe },
  ranges: { summary: 'show or update the cloud, CI and CDN address ranges SPF is checked against', load: async () => (await import('./ranges.js')).ranges },
  monitor: { summary: 'watch domains through a running service: add, list, show, history, run, remove', load: async () => (await import('./monitor.js')).monitor },
  reports: { summary: 'import, fetch (IMAP) and show DMARC aggregate and TLS reports: senders, what p=reject would break', load: async () => (await import('./reports.js')).reports },
  users: { summary: 'people who sign in to the console: invite (a one-time link), list, remove', load: async () => (await import('./users.js')).users },
  worker: { summary: 'process queued batch checks (Redis queue, shared store); run as many as needed', load: async () => (await import('./worker.js')).worker },
};

const USAGE = `spoof-checker: can someone send mail that looks like it comes from this domain?

Usage: spoof-checker <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, { summary }]) => `  ${name.padEnd(10)} ${summary}`)
  .join('\n')}

Run 'spoof-checker <command> --help' (or 'spoof-checker help <command>') for the options of one command.
Other options: -h, --help (this text), -v, --version (the version).
`;

const HELP_WORDS = ['--help', '-h', 'help'];
const VERSION_WORDS = ['--version', '-v', 'version'];

/** The package's version, read from its package.json when asked (never a copy that could go stale). */
export function packageVersion(): string {
  // dist/cli/main.js and src/cli/main.ts both sit two folders below the package root.
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  if (typeof manifest.version !== 'string') throw new Error('package.json has no version');
  return manifest.version;
}

/** Runs the CLI with `argv` (without node and the script) and returns the exit code. */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  // `spoof-checker help scan` is `spoof-checker scan --help`.
  if (name === 'help' && rest[0] !== undefined && Object.hasOwn(COMMANDS, rest[0])) return main([rest[0], '--help'], io);
  if (name === undefined || HELP_WORDS.includes(name)) {
    // Without a command, the usage goes to stderr (it is a usage error); asked for, to stdout.
    if (name === undefined) io.err(USAGE);
    else io.out(USAGE);
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  if (VERSION_WORDS.includes(name)) {
    io.out(`${packageVersion()}\n`);
    return EXIT_OK;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    const kind = name.startsWith('-') ? 'option' : 'command';
    const candidates = name.startsWith('-') ? [...HELP_WORDS, ...VERSION_WORDS].filter((w) => w.startsWith('-')) : Object.keys(COMMANDS);
    io.err(`spoof-checker: unknown ${kind} '${name}'.${didYouMean(name, candidates)}\nRun 'spoof-checker --help' for the list of commands.\n`);
    return EXIT_USAGE;
  }
  return (await command.load())(rest, io);
}
