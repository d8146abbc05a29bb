/**
 * Work a store stops before it closes: a layer above the store that runs in the background against
 * it (the report writer's refresh of the blocks of days, src/ingest/block-refresher.ts) registers its
 * stop here, and the store's close awaits every stop before it releases the database. Closing a store
 * thus never leaves background work touching it, whoever closes it, and the store knows nothing of
 * what registered (src/store imports nothing above it).
 */

/** A stop registered with {@link CloseHooks.add}: resolves once the work has stopped; should not reject. */
export type StopHook = () => Promise<void>;

/** The stops a store awaits on close, in the order they were added. */
export class CloseHooks {
  readonly #hooks = new Set<StopHook>();
  #closed: Promise<void> | null = null;

  /**
   * Registers `stop`, run and awaited when the store closes, before its database is released. On a
   * store already closed (or closing) it runs at once. Answers the call that takes it back (the work
   * stopped on its own).
   */
  add(stop: StopHook): () => void {
    if (this.#closed !== null) {
      void stop().catch(() => {});
      return () => {};
    }
    this.#hooks.add(stop);
    return () => void this.#hooks.delete(stop);
  }

  /** Runs every stop once, together, and resolves when all have ended (one that rejects does not hold the others). Idempotent. */
  run(): Promise<void> {
    this.#closed ??= Promise.allSettled([...this.#hooks].map((stop) => stop())).then(() => this.#hooks.clear());
    return this.#closed;
  }
}
