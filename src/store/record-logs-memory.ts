import { copy } from './pagination.js';
import type { RecordLog, RecordLogStore } from './record-logs.js';

/**
 * Most record-log entries the memory store keeps: past this the oldest is dropped, so a
 * long-running in-memory service does not grow without bound (the SQL stores prune by age instead).
 */
export const MEMORY_RECORD_LOG_CAPACITY = 10_000;

/**
 * The audit trail held in memory: bounded rings, oldest entries dropped first. Records without an
 * organisation (no valid key) have a ring of their own, so a flood of unauthenticated requests
 * cannot push the organisations' records out.
 */
export class MemoryRecordLogStore implements RecordLogStore {
  // A Map iterates in insertion order, so its first key is always the oldest record.
  readonly #records = new Map<string, { organizationId: string | null; record: RecordLog }>();
  readonly #unattributed = new Map<string, { organizationId: string | null; record: RecordLog }>();
  readonly #capacity: number;

  constructor(capacity: number = MEMORY_RECORD_LOG_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`record log capacity must be a positive integer, got ${capacity}`);
    this.#capacity = capacity;
  }

  async append(organizationId: string | null, record: RecordLog): Promise<void> {
    this.#records.delete(record.uuid);
    this.#unattributed.delete(record.uuid);
    const ring = organizationId === null ? this.#unattributed : this.#records;
    ring.set(record.uuid, { organizationId, record: copy(record) });
    while (ring.size > this.#capacity) {
      const oldest = ring.keys().next().value as string;
      ring.delete(oldest);
    }
  }

  async get(organizationId: string, uuid: string): Promise<RecordLog | undefined> {
    const row = this.#records.get(uuid);
    // A record written without an organisation (no valid key) has no owner and is readable by nobody.
    if (!row || row.organizationId === null || row.organizationId !== organizationId) return undefined;
    return copy(row.record);
  }

  /** How many records are held, with and without an organisation (for tests and diagnostics). */
  get size(): number {
    return this.#records.size + this.#unattributed.size;
  }
}
