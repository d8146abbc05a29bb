import { PassThrough } from 'node:stream';
import type { CliIo } from '../../src/cli/io.js';

/** An in-process CliIo that records what a command prints. */
export function captureIo(stdinText = '', options: { tty?: boolean; stop?: Promise<string> } = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const stdin = new PassThrough();
  stdin.end(stdinText);
  const io: CliIo = {
    out: (text) => void out.push(text),
    err: (text) => void err.push(text),
    stdin,
    stderrIsTTY: options.tty ?? false,
    env: {},
    stopSignal: options.stop ?? new Promise(() => {}),
  };
  return { io, stdout: () => out.join(''), stderr: () => err.join('') };
}

export const ZONES = new URL('./zones/', import.meta.url).pathname;
/** The project's fixture zones (the scenarios' DNS). */
export const FIXTURE_ZONES = new URL('../../fixtures/zones/', import.meta.url).pathname;
