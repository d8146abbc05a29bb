/**
 * Keeps a domain's blocks of days current as its reports arrive, off the request path (issue 41):
 * after reports of an organisation and domain are committed (the ReportWriter, every ingest path),
 * the blocks the dashboard reads for its windows (REPORT_WINDOWS, up to today) are built again in
 * the background (`ReportStore.freshenBlocks`), so that the first view after an import reads them
 * built instead of building them. Per domain: once its reports stop arriving for
 * BLOCK_REFRESH_QUIET_MS (or at the latest BLOCK_REFRESH_MAX_WAIT_MS after the first of them, so a
 * steady stream is refreshed too), at most one refresh running and one waiting; at most
 * BLOCK_REFRESHES_AT_ONCE domains at once. Never on the caller's path, never throws: a refresh that
 * fails is logged and dropped, and the read builds what is stale itself (senderWindow), so every
 * figure is right whatever the refresh did; the refresh only moves the building out of the view.
 * Its store's close stops it first (`ReportStore.closing`, src/store/close-hooks.ts): the waiting
 * refreshes are dropped and the running one is awaited before the database is released, so no
 * caller has to stop it before closing the store; a refresh that fails once the stop has begun ends
 * quietly (counted as `stopped`, not logged).
 */
import type { ReportStore } from '../store/reports.js';
import { REPORT_WINDOWS, reportWindow } from '../summaries/summary.js';

/** How long a domain's reports must stop arriving before its blocks are built (an import's batches come without such a pause). */
export const BLOCK_REFRESH_QUIET_MS = 1_000;
/** The longest a domain's blocks wait after its first unrefreshed report, however steadily reports keep arriving. */
export const BLOCK_REFRESH_MAX_WAIT_MS = 60_000;
/** Domains refreshed at once (PostgreSQL: connections of the pool taken beside the writer's REPORT_WRITER_BATCHES_AT_ONCE). */
export const BLOCK_REFRESHES_AT_ONCE = 2;

/** Options of a {@link BlockRefresher}. */
export interface BlockRefreshOptions {
  /** Where a failed refresh is told (the service's log); console.warn without one. */
  log?: (message: string) => void;
  /** The clock of the windows' days (tests). */
  now?: () => Date;
  /** Overrides of the waits (tests). */
  quietMs?: number;
  maxWaitMs?: number;
}

interface Waiting {
  organizationId: string;
  domain: string;
  /** When its refresh may start (ms since the epoch). */
  due: number;
  /** Its first unrefreshed report's arrival. */
  first: number;
}

const keyOf = (organizationId: string, domain: string): string => `${organizationId}\u0000${domain}`;

/** The background refresh of one store's blocks of days. */
export class BlockRefresher {
  readonly #store: ReportStore;
  readonly #log: (message: string) => void;
  readonly #now: () => Date;
  readonly #quietMs: number;
  readonly #maxWaitMs: number;
  /** Domains waiting for a refresh, by key (at most one each). */
  readonly #waiting = new Map<string, Waiting>();
  /** Domains being refreshed, by key (at most one each). */
  readonly #running = new Map<string, Promise<void>>();
  #timer: NodeJS.Timeout | null = null;
  #closed = false;
  /** Refreshes run, blocks they built, refreshes that failed, refreshes cut short by a close (the benchmark's and the tests' view). */
  readonly counters = { refreshes: 0, built: 0, failed: 0, stopped: 0 };

  constructor(store: ReportStore, options: BlockRefreshOptions = {}) {
    this.#store = store;
    this.#log = options.log ?? ((message) => console.warn(message));
    this.#now = options.now ?? (() => new Date());
    this.#quietMs = options.quietMs ?? BLOCK_REFRESH_QUIET_MS;
    this.#maxWaitMs = options.maxWaitMs ?? BLOCK_REFRESH_MAX_WAIT_MS;
    // The store's close awaits this one's stop before it releases the database.
    store.closing.add(() => this.close());
  }

  /** Reports of `domain` were committed: its blocks are refreshed once its reports pause. Returns at once. */
  touch(organizationId: string, domain: string): void {
    if (this.#closed) return;
    const key = keyOf(organizationId, domain);
    const at = Date.now();
    const waiting = this.#waiting.get(key);
    if (waiting === undefined) this.#waiting.set(key, { organizationId, domain, due: at + this.#quietMs, first: at });
    else waiting.due = Math.min(at + this.#quietMs, waiting.first + this.#maxWaitMs);
    this.#arm();
  }

  /** Arms the timer for the earliest domain due that is not being refreshed (none when one is armed). */
  #arm(): void {
    if (this.#closed || this.#timer !== null) return;
    let earliest = Infinity;
    for (const [key, w] of this.#waiting) if (!this.#running.has(key)) earliest = Math.min(earliest, w.due);
    if (earliest === Infinity) return;
    this.#timer = setTimeout(() => this.#start(), Math.max(0, earliest - Date.now()));
    // A pending refresh never keeps the process alive (a CLI import ends when its work does).
    this.#timer.unref();
  }

  /** Starts the domains due, up to BLOCK_REFRESHES_AT_ONCE, then arms for the next. */
  #start(): void {
    this.#timer = null;
    const at = Date.now();
    for (const [key, w] of this.#waiting) {
      if (this.#closed || this.#running.size >= BLOCK_REFRESHES_AT_ONCE) break;
      if (w.due > at || this.#running.has(key)) continue;
      this.#waiting.delete(key);
      const run = this.#refresh(w).finally(() => {
        this.#running.delete(key);
        this.#arm();
      });
      this.#running.set(key, run);
    }
    this.#arm();
  }

  /** Builds the stale blocks of each window of the dashboard; never rejects. */
  async #refresh({ organizationId, domain }: Waiting): Promise<void> {
    this.counters.refreshes += 1;
    try {
      const now = this.#now();
      // The 90 days' blocks first: the shorter windows' blocks are mostly their halves, built with them.
      for (const days of [...REPORT_WINDOWS].reverse()) {
        if (this.#closed) return;
        this.counters.built += await this.#store.freshenBlocks(organizationId, domain, reportWindow(days, now).dayRange);
      }
    } catch (error) {
      // Stopping (its store is closing): the refresh was only ever ahead of a read; nothing to warn of.
      if (this.#closed) {
        this.counters.stopped += 1;
        return;
      }
      this.counters.failed += 1;
      this.#log(`warning: building the report blocks of ${domain} in the background failed (the dashboard builds them when read): ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Resolves once nothing is waiting or running (the refreshes due later included): tests and the benchmark, never a sleep. */
  async settled(): Promise<void> {
    while (this.#running.size > 0 || (this.#waiting.size > 0 && !this.#closed)) {
      if (this.#running.size > 0) await Promise.all(this.#running.values());
      else await new Promise<void>((resolve) => setTimeout(resolve, Math.max(1, Math.min(...[...this.#waiting.values()].map((w) => w.due)) - Date.now())));
    }
  }

  /** Starts every waiting refresh now, without its pause, and resolves once all are done (a CLI import before it ends). */
  async flush(): Promise<void> {
    for (const w of this.#waiting.values()) w.due = 0;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#arm();
    await this.settled();
  }

  /** Stops: the waiting refreshes are dropped, the running ones end after their current window (awaited). */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#waiting.clear();
    await Promise.all(this.#running.values());
  }
}
