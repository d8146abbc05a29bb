/**
 * Errors a store throws. A store's normal outcomes (found, not found, created) are values; these
 * are for the database itself failing, which no caller can fix by changing its request.
 */

/**
 * The database cannot be reached: connection refused or terminated, the pool failed, the file
 * cannot be opened. Thrown by the SQL backends in place of the driver's error; the HTTP layer
 * answers 503 `STORE_UNAVAILABLE`. Service resumes by itself once the database is back.
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  /** Stable code, for logs and for mapping to the HTTP error catalogue. */
  readonly code = 'STORE_UNAVAILABLE';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * The store is configured wrongly (a `--database` that is not a postgresql:// URL): no retry will
 * help, the configuration must change. Its message is one line naming the problem.
 */
export class StoreConfigError extends Error {
  override readonly name = 'StoreConfigError';
}

/** Whether `error` is a {@link StoreUnavailableError} (also across module copies, by name and code). */
export function isStoreUnavailable(error: unknown): error is StoreUnavailableError {
  return (
    error instanceof StoreUnavailableError ||
    (error instanceof Error && error.name === 'StoreUnavailableError' && (error as { code?: unknown }).code === 'STORE_UNAVAILABLE')
  );
}
