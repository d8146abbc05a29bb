/**
 * The hostile report bodies of issue 38 item 5, built deterministically: small gzips that pass the
 * unpacker's size and ratio caps (RFC 9990 §"Report Contents as an Attack") and then cost the parser
 * dearly. Random whitespace (a seeded generator) keeps the gzip just large enough to pass the 200:1
 * ratio cap, as the attacker's did.
 */
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';
import { reportMessage } from './helpers.js';

/** A small linear congruential generator: the same bytes on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state;
  };
}

const WHITESPACE = [0x20, 0x0a, 0x09, 0x0d];
const JSON_WHITESPACE_EVERY = 100;
const XML_WHITESPACE_EVERY = 75;

/** `open` repeated `count` times, one in `every` followed by a random whitespace byte, then `tail`. */
function padded(head: string, open: string, count: number, every: number, tail: (out: Buffer, at: number) => number, seed: number): Buffer {
  const next = seeded(seed);
  const out = Buffer.allocUnsafe(head.length + count * (open.length + 1) + count + 64);
  let at = out.write(head, 0, 'latin1');
  for (let n = 0; n < count; n++) {
    at += out.write(open, at, 'latin1');
    const r = next();
    if ((r >>> 8) % every === 0) out[at++] = WHITESPACE[(r >>> 20) & 3]!;
  }
  at = tail(out, at);
  return out.subarray(0, at);
}

/** JSON nested `depth` arrays deep (`[[[…]]]` with whitespace), gzipped: about 300 KB for 16 M. */
export function nestedJsonGzip(depth = 16_000_000): Buffer {
  const json = padded('{"organization-name":', '[', depth, JSON_WHITESPACE_EVERY, (out, at) => {
    out.fill(0x5d, at, at + depth);
    return at + depth;
  }, 7);
  // The closing brackets are appended separately; the body is not valid JSON past its depth anyway.
  return gzipSync(Buffer.concat([json, Buffer.from('}')]), { level: 9 });
}

/** An aggregate report root holding `count` empty elements (`<a/>` and whitespace), gzipped: about 140 KB for 5 M. */
export function emptyElementsXmlGzip(count = 5_000_000): Buffer {
  const xml = padded('<?xml version="1.0"?><feedback>', '<a/>', count, XML_WHITESPACE_EVERY, (out, at) => at + out.write('</feedback>', at, 'latin1'), 11);
  return gzipSync(xml, { level: 9 });
}

/** A report message with `parts` attachments, each the empty-elements gzip: about 3 MB for 16. */
export function manyPartsMessage(parts = 16, part: Buffer = emptyElementsXmlGzip()): Buffer {
  const first = reportMessage({ attachment: part, fileName: 'a.xml.gz', contentType: 'application/gzip' }).toString('latin1');
  const boundary = '=_report_boundary_1';
  const marker = `--${boundary}--`;
  const attachment = first.slice(first.indexOf(`--${boundary}\r\nContent-Type: application/gzip`), first.indexOf(marker));
  const extra: string[] = [];
  for (let n = 1; n < parts; n++) extra.push(attachment.replaceAll('a.xml.gz', `p${n}.xml.gz`));
  return Buffer.from(first.replace(marker, `${extra.join('')}${marker}`), 'latin1');
}

/** Asks /healthz every 50 ms (a fresh connection each time) until told to stop; answers the count and the slowest. */
const POLLER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
let running = true, answered = 0, slowest = 0;
parentPort.on('message', () => { running = false; });
const ask = () => new Promise((resolve) => {
  const started = performance.now();
  const req = http.request({ host: '127.0.0.1', port: workerData.port, path: '/healthz', agent: false }, (res) => {
    res.resume();
    res.on('end', () => { slowest = Math.max(slowest, performance.now() - started); answered++; resolve(); });
  });
  req.on('error', () => resolve());
  req.end();
});
(async () => {
  parentPort.postMessage('ready');
  while (running) { await ask(); await new Promise((r) => setTimeout(r, 50)); }
  parentPort.postMessage({ answered, slowest });
})();
`;

/**
 * Polls a listening service's /healthz from its own thread (a blocked event loop in the service
 * cannot hide its slowness from it). `stop()` answers how many were answered and the slowest (ms).
 */
export async function startHealthPoller(port: number): Promise<{ stop: () => Promise<{ answered: number; slowest: number }> }> {
  const poller = new Worker(POLLER, { eval: true, workerData: { port } });
  await new Promise((resolve) => poller.once('message', resolve));
  return {
    stop: async () => {
      const polled = await new Promise<{ answered: number; slowest: number }>((resolve) => {
        poller.once('message', resolve);
        poller.postMessage('stop');
      });
      await poller.terminate();
      return polled;
    },
  };
}

/** The process's peak resident memory so far (VmHWM), in MiB. */
export function peakRssMb(): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return match ? Number(match[1]) / 1024 : process.memoryUsage().rss / 1048576;
}
