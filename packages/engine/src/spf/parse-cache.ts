/**
 * Parsed SPF records, kept by text (`memoByText`): parsing is pure, and busy domains' records (and
 * every include of a popular provider) are read again on every check.
 */
import { memoByText } from '../text-cache.js';
import { parseSpfRecord } from './parse.js';

/** How many distinct record texts stay parsed. */
export const PARSE_CACHE_ENTRIES = 2000;
/** Longer texts are parsed every time, so one hostile record cannot pin megabytes in the cache. */
export const PARSE_CACHE_MAX_TEXT = 4096;

/** `parseSpfRecord(text)`, from the cache when the same text was parsed recently (read-only: frozen). */
export const parseSpfRecordCached = memoByText(parseSpfRecord, { entries: PARSE_CACHE_ENTRIES, maxText: PARSE_CACHE_MAX_TEXT });
