#!/usr/bin/env node
// The command line entry point. The TypeScript sources are compiled to dist/ by `npm install`
// (the `prepare` script), so this stays plain JavaScript with no loader.
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`spoof-checker: internal error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 70;
  },
);
