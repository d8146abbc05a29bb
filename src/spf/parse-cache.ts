/**
 * A bounded cache of parsed records, keyed by the record text. Parsing is pure, so the cache can
 * only save time, never change a result. Busy domains' records (and every include of a popular
 * provider) are re-read on every check; parsing them once is most of the evaluator's CPU saving.
 */
import { LRUCache } from 'lru-cache';
import { parseSpfRecord } from './parse.js';
import type { SpfParseResult } from './types.js';

/** How many distinct record texts stay parsed. */
export const PARSE_CACHE_ENTRIES = 2000;
/** Longer texts are parsed every time, so one hostile record cannot pin megabytes in the cache. */
export const PARSE_CACHE_MAX_TEXT = 4096;

// Least recently used out first: the records of popular providers stay parsed.
const cache = new LRUCache<string, SpfParseResult>({ max: PARSE_CACHE_ENTRIES });

/** `parseSpfRecord(text)`, from the cache when the same text was parsed recently. */
export function parseSpfRecordCached(text: string): SpfParseResult {
  if (text.length > PARSE_CACHE_MAX_TEXT) return parseSpfRecord(text);
  const hit = cache.get(text);
  if (hit !== undefined) return hit;
  const parsed = parseSpfRecord(text);
  cache.set(text, parsed);
  return parsed;
}
