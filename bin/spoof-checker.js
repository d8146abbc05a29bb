#!/usr/bin/env node
// The command line entry point. The TypeScript sources are compiled to dist/ by `npm install`
// (the `prepare` script), so this stays plain JavaScript with no loader.

/** The status for a bug (EX_SOFTWARE in sysexits.h): the message is printed, never a stack trace. */
const EXIT_INTERNAL = 70;

const fail = (message) => {
  process.stderr.write(`spoof-checker: ${message}\n`);
  process.exitCode = EXIT_INTERNAL;
};

let cli;
try {
  cli = await import('../dist/cli/main.js');
} catch (error) {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist')) {
    fail('the compiled code (dist/) is missing: run `npm run build` (or `npm install`, which builds it).');
  } else {
    fail(`internal error: ${error instanceof Error ? error.message : String(error)}`);
  }
}

if (cli) {
  cli.main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
      // Above 128: stopped by a signal (130 SIGINT, 143 SIGTERM). The command has cancelled its work
      // and said so; DNS queries still waiting on a silent server would only hold the exit back.
      if (code > 128) process.exit(code);
    },
    (error) => fail(`internal error: ${error instanceof Error ? error.message : String(error)}`),
  );
}
