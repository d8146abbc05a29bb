/** What a command may touch of the process, injected so that tests run commands in-process. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  stdin: NodeJS.ReadableStream;
  /** True when stderr is a terminal (progress bars are drawn only then). */
  stderrIsTTY: boolean;
  env: NodeJS.ProcessEnv;
  /** Resolves when the process is asked to stop (SIGINT/SIGTERM); long-running commands wait on it. */
  stopSignal: Promise<string>;
}

/** A subcommand: parsed arguments in, exit code out. 0 ok, 1 a check failed, 2 usage error. */
export type Command = (args: string[], io: CliIo) => Promise<number>;

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** The process's own streams and signals. */
export function processIo(): CliIo {
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    stdin: process.stdin,
    stderrIsTTY: Boolean(process.stderr.isTTY),
    env: process.env,
    stopSignal: new Promise((resolve) => {
      for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve(signal));
    }),
  };
}
