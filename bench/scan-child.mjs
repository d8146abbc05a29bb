// One bulk scan in a process of its own, so that its peak RSS is the scan's alone. Plain JavaScript
// run by plain `node` (no tsx, whose loader thread alone adds about 40 MB), on the built CLI:
//
//   node bench/scan-child.mjs --cli DIR/cli/main.js --list FILE (--zones DIR | --resolver IP:PORT) [--concurrency N]
//
// Runs the CLI's `scan` command in-process (`main(['scan', FILE, '--zones', DIR, …], io)`, or with
// `--resolver IP:PORT` against a DNS server in another process, which holds no zones) with an io
// whose output is counted and dropped (as `> /dev/null` would). Prints one JSON line (see
// `ScanChildReport` in bench/scan.ts): the exit code, lines written, seconds to the first result
// (reading and loading the zones) and in all, the RSS when the first result came out and the peak
// RSS of the process (`process.resourceUsage().maxRSS`).
import { PassThrough } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

/** @param {string} name */
function flag(name) {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}

const cli = flag('--cli');
const list = flag('--list');
const zones = flag('--zones');
const resolver = flag('--resolver');
if (!cli || !list || (zones === undefined) === (resolver === undefined)) {
  throw new Error('usage: scan-child.mjs --cli MAIN_JS --list FILE (--zones DIR | --resolver IP:PORT) [--concurrency N]');
}
const source = zones === undefined ? ['--resolver', resolver] : ['--zones', zones];
const { main } = await import(pathToFileURL(cli).href);

const MB = 1024 * 1024;
let lines = 0;
/** @type {number | undefined} */
let firstAt;
let rssAtFirst = 0;
/** @type {string[]} */
const errors = [];
const stdin = new PassThrough();
stdin.end();
const io = {
  /** @param {string} _text */
  out: (_text) => {
    if (firstAt === undefined) {
      firstAt = performance.now();
      rssAtFirst = process.memoryUsage.rss();
    }
    lines++;
  },
  /** @param {string} text */
  err: (text) => void errors.push(text),
  stdin,
  stderrIsTTY: false,
  env: {},
  stopSignal: new Promise(() => {}),
};
const started = performance.now();
const exitCode = await main(['scan', list, ...source, '--concurrency', flag('--concurrency') ?? '32'], io);
const finished = performance.now();
process.stdout.write(
  `${JSON.stringify({
    exitCode,
    lines,
    loadSeconds: ((firstAt ?? finished) - started) / 1000,
    totalSeconds: (finished - started) / 1000,
    rssAtFirstResultMb: rssAtFirst / MB,
    peakRssMb: (process.resourceUsage().maxRSS * 1024) / MB, // maxRSS is in KiB
    stderr: errors.join(''),
  })}\n`,
);
