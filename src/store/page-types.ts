/** The shapes every resource's store shares: timestamps and offset pagination. */

/** ISO 8601 timestamp in UTC, e.g. `2025-01-31T12:00:00.000Z`. */
export type Timestamp = string;

/** Offset pagination (spec: Pagination rules 1–3): `page` counts from 1. */
export interface PageRequest {
  page: number;
  limit: number;
}

/** One page of rows and the number of rows that match the query (spec: Pagination rule 5). */
export interface Page<T> {
  items: T[];
  total: number;
}
