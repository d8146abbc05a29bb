/**
 * The store behind `CachingResolver`: a least-recently-used map from (canonical name, record type)
 * to a value, bounded by its number of (name, type) entries.
 *
 * One map per record type, keyed by the name itself. A general LRU keyed by a "TYPE name" string
 * would build that string and hash it afresh on every lookup (a warm check makes about 50 lookups,
 * so this was a fifth of its time); keyed by the name, the lookup reuses the hash V8 keeps in the
 * name string, which the per-check memo has already computed. A per-name table of types would cost
 * two more reads from memory per lookup, and with tens of thousands of names those reads miss the
 * processor's caches: that was most of the store's time.
 *
 * Recency is kept lazily (as CLOCK-style caches do): a read moves an entry to the newest end only
 * when more than a quarter of the cache's size has been stored since it was last moved. Moving
 * writes to three entries spread over the heap, and a warm check reads about 50; entries read while
 * still in the newest quarter need no move. An entry read at least once in every three quarters of
 * a cache's worth of stores is never evicted; caches of fewer than four entries are exact LRU.
 */
import type { RecordType } from './types.js';

/**
 * An entry as `held` gives it: the value, and when it stops being fresh (ms; the caller's clock).
 * `view` and `viewKey` are the owner's: a value it derives from `value` and keeps in the entry itself
 * (the cache keeps the copy of an answer it last handed out), so a hit reads one object from memory
 * rather than two. `set` clears them.
 */
export interface Held<V> {
  readonly value: V;
  readonly expiresAt: number;
  view: V | undefined;
  viewKey: number;
}

interface Slot<V> extends Held<V> {
  name: string;
  type: RecordType;
  value: V;
  expiresAt: number;
  /** `stored` when the entry last went to the newest end. */
  movedAt: number;
  /** Towards the least recently used end. */
  older: Slot<V> | undefined;
  /** Towards the most recently used end. */
  newer: Slot<V> | undefined;
}

/** Each record type's map, in `byType`. A switch, not an object lookup: the keyed load of a constant object by a varying string is a megamorphic access. */
function typeIndex(type: RecordType): number {
  switch (type) {
    case 'A':
      return 0;
    case 'AAAA':
      return 1;
    case 'MX':
      return 2;
    case 'TXT':
      return 3;
    case 'CNAME':
      return 4;
    case 'PTR':
      return 5;
    case 'NS':
      return 6;
    case 'SOA':
      return 7;
  }
}

/** How many record types there are (the length of `byType`). */
const RECORD_TYPES = 8;

/** A bounded LRU keyed by canonical name and record type. */
export class AnswerLru<V> {
  private readonly byType: Map<string, Slot<V>>[] = Array.from({ length: RECORD_TYPES }, () => new Map<string, Slot<V>>());
  private oldest: Slot<V> | undefined;
  private newest: Slot<V> | undefined;
  private count = 0;
  /** Entries stored so far: the clock of the lazy recency. */
  private stored = 0;
  /** Stores after which a read entry moves to the newest end again (see the file comment). */
  private readonly moveAfter: number;

  /** `maxEntries` is a whole number ≥ 1 (the caller checks). */
  constructor(private readonly maxEntries: number) {
    this.moveAfter = Math.floor(maxEntries / 4);
  }

  /** Entries held now. */
  get size(): number {
    return this.count;
  }

  /** The value for `name` and `type`, which becomes the most recently used; undefined when absent. */
  get(name: string, type: RecordType): V | undefined {
    return this.held(name, type)?.value;
  }

  /**
   * The entry for `name` and `type` with its expiry, which becomes the most recently used. The expiry
   * lives in the entry itself, so a cache hit reads one object fewer from memory.
   */
  held(name: string, type: RecordType): Held<V> | undefined {
    const slot = this.byType[typeIndex(type)]!.get(name);
    if (slot === undefined) return undefined;
    if (this.stored - slot.movedAt >= this.moveAfter) {
      this.unlink(slot);
      this.append(slot);
    }
    return slot;
  }

  /**
   * Stores `value` as the most recently used, dropping the least recently used entry when full.
   * `expiresAt` is kept beside it for the caller (the store itself never drops an entry for age).
   */
  set(name: string, type: RecordType, value: V, expiresAt = Number.POSITIVE_INFINITY): void {
    const ofType = this.byType[typeIndex(type)]!;
    const existing = ofType.get(name);
    if (existing) {
      existing.value = value;
      existing.expiresAt = expiresAt;
      existing.view = undefined;
      existing.viewKey = 0;
      this.unlink(existing);
      this.append(existing);
      return;
    }
    this.stored++;
    const slot: Slot<V> = { name, type, value, expiresAt, view: undefined, viewKey: 0, movedAt: this.stored, older: undefined, newer: undefined };
    ofType.set(name, slot);
    this.append(slot);
    this.count++;
    if (this.count > this.maxEntries && this.oldest) this.remove(this.oldest);
  }

  /** Forgets the entry for `name` and `type`, if any. */
  delete(name: string, type: RecordType): void {
    const slot = this.byType[typeIndex(type)]!.get(name);
    if (slot) this.remove(slot);
  }

  /** Forgets everything. */
  clear(): void {
    for (const ofType of this.byType) ofType.clear();
    this.oldest = undefined;
    this.newest = undefined;
    this.count = 0;
  }

  private remove(slot: Slot<V>): void {
    this.unlink(slot);
    this.count--;
    this.byType[typeIndex(slot.type)]!.delete(slot.name);
  }

  private unlink(slot: Slot<V>): void {
    if (slot.older) slot.older.newer = slot.newer;
    else if (this.oldest === slot) this.oldest = slot.newer;
    if (slot.newer) slot.newer.older = slot.older;
    else if (this.newest === slot) this.newest = slot.older;
    slot.older = undefined;
    slot.newer = undefined;
  }

  private append(slot: Slot<V>): void {
    slot.movedAt = this.stored;
    slot.older = this.newest;
    slot.newer = undefined;
    if (this.newest) this.newest.newer = slot;
    this.newest = slot;
    this.oldest ??= slot;
  }
}
