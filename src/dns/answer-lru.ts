/**
 * The store behind `CachingResolver`: a least-recently-used map from (canonical name, record type)
 * to a value, bounded by its number of (name, type) entries.
 *
 * Why not a general LRU keyed by a "TYPE name" string: every lookup would build that string and hash
 * it afresh (a warm check makes about 50 lookups, so this was a fifth of its time). Keyed by the
 * name itself, the lookup reuses the hash V8 keeps in the name string, which the per-check memo has
 * already computed, and finds the type in a small per-name table.
 */
import type { RecordType } from './types.js';

interface Slot<V> {
  name: string;
  type: RecordType;
  value: V;
  /** Towards the least recently used end. */
  older: Slot<V> | undefined;
  /** Towards the most recently used end. */
  newer: Slot<V> | undefined;
}

/** Each record type's place in a name's table. */
const TYPE_INDEX: Readonly<Record<RecordType, number>> = { A: 0, AAAA: 1, MX: 2, TXT: 3, CNAME: 4, PTR: 5, NS: 6, SOA: 7 };

/** The entries of one name, by `TYPE_INDEX`, and how many there are. */
interface NameSlots<V> {
  slots: (Slot<V> | undefined)[];
  count: number;
}

/** A bounded LRU keyed by canonical name and record type. */
export class AnswerLru<V> {
  private readonly byName = new Map<string, NameSlots<V>>();
  private oldest: Slot<V> | undefined;
  private newest: Slot<V> | undefined;
  private count = 0;

  /** `maxEntries` is a whole number ≥ 1 (the caller checks). */
  constructor(private readonly maxEntries: number) {}

  /** Entries held now. */
  get size(): number {
    return this.count;
  }

  /** The value for `name` and `type`, which becomes the most recently used; undefined when absent. */
  get(name: string, type: RecordType): V | undefined {
    const slot = this.byName.get(name)?.slots[TYPE_INDEX[type]];
    if (slot === undefined) return undefined;
    this.unlink(slot);
    this.append(slot);
    return slot.value;
  }

  /** Stores `value` as the most recently used, dropping the least recently used entry when full. */
  set(name: string, type: RecordType, value: V): void {
    let entries = this.byName.get(name);
    const existing = entries?.slots[TYPE_INDEX[type]];
    if (existing) {
      existing.value = value;
      this.unlink(existing);
      this.append(existing);
      return;
    }
    if (entries === undefined) {
      entries = { slots: [], count: 0 };
      this.byName.set(name, entries);
    }
    const slot: Slot<V> = { name, type, value, older: undefined, newer: undefined };
    entries.slots[TYPE_INDEX[type]] = slot;
    entries.count++;
    this.append(slot);
    this.count++;
    if (this.count > this.maxEntries && this.oldest) this.remove(this.oldest);
  }

  /** Forgets the entry for `name` and `type`, if any. */
  delete(name: string, type: RecordType): void {
    const slot = this.byName.get(name)?.slots[TYPE_INDEX[type]];
    if (slot) this.remove(slot);
  }

  /** Forgets everything. */
  clear(): void {
    this.byName.clear();
    this.oldest = undefined;
    this.newest = undefined;
    this.count = 0;
  }

  private remove(slot: Slot<V>): void {
    this.unlink(slot);
    this.count--;
    const entries = this.byName.get(slot.name);
    if (!entries) return;
    entries.slots[TYPE_INDEX[slot.type]] = undefined;
    // A name with no entry left goes too, so the map stays as small as the cache.
    if (--entries.count === 0) this.byName.delete(slot.name);
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
    slot.older = this.newest;
    slot.newer = undefined;
    if (this.newest) this.newest.newer = slot;
    this.newest = slot;
    this.oldest ??= slot;
  }
}
