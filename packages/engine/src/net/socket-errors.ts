/**
 * Network errors of every socket the engine opens are outcomes, never exceptions (issue 38, item 1):
 * a connect call that throws before a socket exists (ERR_SOCKET_BAD_PORT, ERR_INVALID_IP_ADDRESS),
 * an `error` event (ECONNREFUSED, ENETUNREACH, ECONNRESET mid-read, a TLS alert), or a throw inside a
 * socket's listener (which Node would raise as an uncaught exception, ending the process) each end
 * the operation with its recorded failure. These are the two helpers every probe and fetch uses.
 */

/** An error's code and message, for a detail sentence (`ECONNREFUSED connect ECONNREFUSED 127.0.0.1:9`). */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code !== undefined && !error.message.includes(code) ? `${code} ${error.message}` : error.message;
  }
  return String(error);
}

/**
 * `listener` run so that a throw inside it goes to `onThrow` instead of escaping into the event loop
 * (a throw in an event listener is an uncaught exception: the process ends).
 */
export function guarded<A extends unknown[]>(listener: (...args: A) => void, onThrow: (error: unknown) => void): (...args: A) => void {
  return (...args: A) => {
    try {
      listener(...args);
    } catch (error) {
      onThrow(error);
    }
  };
}

/** An operation's one outcome (see `oneOutcome`). */
export interface Outcome<T> {
  settle(value: T): void;
  readonly settled: boolean;
}

/**
 * The one outcome of an operation over a socket: the first `settle` releases what it holds (its
 * deadline, its socket) and resolves it; later calls do nothing (a socket reports an error, then
 * its close, then the deadline fires).
 */
export function oneOutcome<T>(resolve: (value: T) => void, release: () => void): Outcome<T> {
  let settled = false;
  return {
    settle(value: T): void {
      if (settled) return;
      settled = true;
      release();
      resolve(value);
    },
    get settled(): boolean {
      return settled;
    },
  };
}
