/**
 * A bounded memo of a pure function of a record's text (a parser): busy domains' records, and the
 * records of every popular provider, are read again on every check, and parsing them once saves
 * time without changing a result. Texts longer than `maxText` are parsed every time, so one hostile
 * record cannot pin megabytes; the least recently used text goes first.
 *
 * A result is kept only when its text comes back a second time. A scan reads most records once
 * (each domain's own), and results kept for texts never read again live long enough to reach V8's
 * old space and die there, which lets the heap grow by tens of MB over 100,000 names before a full
 * collection. The texts seen once are held in a set, cleared when it reaches `entries`.
 *
 * What the memo hands out is shared by every later call with the same text, so it is frozen (deeply)
 * before it is kept: a caller that tried to change it would fail at once rather than change what
 * the next check reads.
 */
import { LRUCache } from 'lru-cache';

/** How a memo is bounded. */
export interface TextMemoLimits {
  /** Distinct texts kept. */
  entries: number;
  /** Longer texts are not kept. */
  maxText: number;
}

/** A memo made by `memoByText`: call it like the parser; `kept()` says how many results it holds. */
export type TextMemo<T> = ((text: string) => T) & { kept(): number };

/** `parse`, remembered by text (from its second reading) within `limits`; results are deeply frozen. */
export function memoByText<T extends object>(parse: (text: string) => T, limits: TextMemoLimits): TextMemo<T> {
  const kept = new LRUCache<string, T>({ max: limits.entries });
  const seenOnce = new Set<string>();
  const memo = (text: string): T => {
    if (text.length > limits.maxText) return deepFreeze(parse(text));
    const hit = kept.get(text);
    if (hit !== undefined) return hit;
    const parsed = deepFreeze(parse(text));
    if (seenOnce.delete(text)) {
      kept.set(text, parsed);
    } else {
      if (seenOnce.size >= limits.entries) seenOnce.clear();
      seenOnce.add(text);
    }
    return parsed;
  };
  return Object.assign(memo, { kept: () => kept.size });
}

/**
 * Freezes `value` and everything reachable from it, except objects `leaveAlone` names (objects that
 * keep facts about themselves lazily, such as address sets) and what is frozen already (frozen
 * deeply before, by this). For what a memo hands to every later caller.
 */
export function deepFreeze<T>(value: T, leaveAlone?: (value: object) => boolean): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value) || leaveAlone?.(value)) return value;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key], leaveAlone);
  return value;
}
