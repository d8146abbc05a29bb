#!/usr/bin/env node
// The command line entry point. The TypeScript sources are compiled to dist/ by `npm install`
// (the `prepare` script), so this stays plain JavaScript with no loader.

/** The status for a bug (EX_SOFTWARE in sysexits.h): the message is printed, never a stack trace. */
const EXIT_INTERNAL = 70;

const fail = (message) => {
  process.stderr.write(`spoof-checker: ${message}\n`);
  process.exitCode = EXIT_INTERNAL;
};

/** How long a command stopped by a signal waits for its output to reach a slow reader. */
const FLUSH_WAIT_MS = 2_000;

/** Exits once stdout and stderr have handed over what was written to them (or FLUSH_WAIT_MS has passed). */
const exitAfterFlush = (code) => {
  const timer = setTimeout(() => process.exit(code), FLUSH_WAIT_MS);
  timer.unref();
  let waiting = 2;
  const done = () => {
    if (--waiting === 0) process.exit(code);
  };
  // A write's callback runs once it and every write before it have been handed to the OS.
  process.stdout.write('', done);
  process.stderr.write('', done);
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
      // What was written is flushed first (a pipe whose reader is slow keeps part of a line queued,
      // and process.exit would cut it), but never waited on for longer than FLUSH_WAIT_MS.
      if (code > 128) exitAfterFlush(code);
    },
    (error) => fail(`internal error: ${error instanceof Error ? error.message : String(error)}`),
  );
}
