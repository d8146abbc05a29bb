import { constants } from 'node:os';

/** What a command may touch of the process, injected so that tests run commands in-process. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  stdin: NodeJS.ReadableStream;
  /** True when stderr is a terminal (progress bars are drawn only then). */
  stderrIsTTY: boolean;
  /** True when stdout is a terminal (a progress line would then be torn by the results). Absent: false. */
  stdoutIsTTY?: boolean;
  env: NodeJS.ProcessEnv;
  /**
   * Resolves when the process is asked to stop (SIGINT/SIGTERM), with the signal's name; long-running
   * commands wait on it and wind down. A second signal ends the process at once.
   */
  stopSignal: Promise<string>;
}

/** A subcommand: parsed arguments in, exit code out. 0 ok, 1 a check failed, 2 usage error. */
export type Command = (args: string[], io: CliIo) => Promise<number>;

/** Every input was checked (or the command did what was asked). */
export const EXIT_OK = 0;
/** Some input could not be checked, or the output could not be written. */
export const EXIT_FAILED = 1;
/** A usage error: the message says what was wrong and where the help is. */
export const EXIT_USAGE = 2;
/** The status of a process whose reader went away (128 + SIGPIPE), as `cat big | head` reports. */
export const EXIT_BROKEN_PIPE = 128 + constants.signals.SIGPIPE;

/** The signals that ask a command to stop, as Ctrl-C does. */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
/** One of `STOP_SIGNALS`. */
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** The shell's status for a process ended by `signal`: 128 + its number (SIGINT 130, SIGTERM 143). */
export function exitCodeForSignal(signal: string): number {
  const number = (constants.signals as Record<string, number | undefined>)[signal];
  return number === undefined ? EXIT_FAILED : 128 + number;
}

/** The part of `process` that `watchStopSignals` needs, so that a test can drive it with an emitter. */
export interface SignalSource {
  on(event: StopSignal, listener: (signal: StopSignal) => void): unknown;
  removeListener(event: StopSignal, listener: (signal: StopSignal) => void): unknown;
}

/**
 * Turns the first SIGINT or SIGTERM into a promise (the command winds down: a scan stops and
 * prints how far it got, a server finishes requests in flight) and the second into `exit` at once,
 * so that a user who presses Ctrl-C twice, or a supervisor that signals twice, is never kept waiting.
 */
export function watchStopSignals(source: SignalSource, exit: (code: number) => void): Promise<StopSignal> {
  return new Promise((resolve) => {
    let stopping = false;
    const onSignal = (signal: StopSignal) => {
      if (stopping) {
        exit(exitCodeForSignal(signal));
        return;
      }
      stopping = true;
      resolve(signal);
    };
    for (const signal of STOP_SIGNALS) source.on(signal, onSignal);
  });
}

/**
 * Makes a closed pipe end the process quietly: when the reader of stdout goes away
 * (`spoof-checker scan … | head`), nothing more can be delivered, so the process exits with
 * `EXIT_BROKEN_PIPE` and no stack trace. A closed stderr is ignored (there is nowhere to say so).
 * Any other stream error is reported once on stderr and ends the process with status 1.
 */
export function exitQuietlyOnBrokenPipe(
  streams: { stdout: NodeJS.EventEmitter; stderr: NodeJS.EventEmitter },
  exit: (code: number) => void,
  report: (text: string) => void,
): void {
  streams.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return exit(EXIT_BROKEN_PIPE);
    report(`spoof-checker: cannot write the output: ${error.message}\n`);
    exit(EXIT_FAILED);
  });
  streams.stderr.on('error', () => {
    // stderr is gone: messages have nowhere to go, and the output (stdout) may still be wanted.
  });
}

/**
 * The process's own streams and signals. The signal handlers are installed only when a command first
 * reads `stopSignal`: until then SIGINT and SIGTERM keep their default (end at once), which is right
 * for `check`, whose work is all-or-nothing.
 */
export function processIo(): CliIo {
  exitQuietlyOnBrokenPipe(process, (code) => process.exit(code), (text) => void process.stderr.write(text));
  let stop: Promise<string> | undefined;
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    stdin: process.stdin,
    stderrIsTTY: Boolean(process.stderr.isTTY),
    stdoutIsTTY: Boolean(process.stdout.isTTY),
    env: process.env,
    get stopSignal() {
      stop ??= watchStopSignals(process, (code) => process.exit(code));
      return stop;
    },
  };
}
