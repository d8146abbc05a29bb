/**
 * What every SQL store shares: how values are written to and read from a column that both SQLite
 * and PostgreSQL hold (JSON as text, booleans as 0/1, counts that a driver may return as strings),
 * offset paging, and how a dialect differs where Kysely's query builder does not hide it.
 */
import type { SelectQueryBuilder } from 'kysely';
import type { Page, PageRequest } from './page-types.js';
import type { SqlDialectName } from './migration-types.js';

/** How a dialect differs where Kysely's query builder does not hide it. */
export interface SqlDialectTraits {
  dialect: SqlDialectName;
  /** Whether the database is unreachable (as opposed to a bad query), judged from the driver's error. */
  isUnavailable(error: unknown): boolean;
  /** Whether the error is a unique-constraint violation (a lost race on a key). */
  isUniqueViolation(error: unknown): boolean;
  /** A one-line description of the error for StoreUnavailableError. */
  describe(error: unknown): string;
  /** Releases the connection or pool. */
  destroy(): Promise<void>;
}

/** A value as the JSON text a column holds. */
export const json = (value: unknown): string => JSON.stringify(value);
/** The value a JSON text column holds. */
export const parse = <T>(text: string): T => JSON.parse(text) as T;
/** A boolean as the 0/1 integer a column holds (SQLite has no boolean type). */
export const bool = (value: boolean): number => (value ? 1 : 0);
/** Whether a 0/1 column (read back as a number, a boolean or a string, by driver) holds true. */
export const isTrue = (value: unknown): boolean => value === 1 || value === true || value === '1';
/** A COUNT or SUM as a number (PostgreSQL returns bigint as a string; an empty SUM is NULL). */
export const count = (value: unknown): number => Number(value ?? 0);

/** The number of rows before `page` (spec: Pagination rules 1–3). */
export function offsetOf(page: PageRequest): number {
  return (page.page - 1) * page.limit;
}

/** A query narrowed to the rows that match (its FROM and WHERE), before anything is selected. */
export type MatchingRows = SelectQueryBuilder<any, any, object>;

/**
 * One page of the matching rows, newest first (`created_at`, then `id`, both descending: the
 * memory stores' order, src/store/pagination.ts), each made an item by `toItem`, and how many rows
 * match. `columns` narrows what is read (default every column).
 */
export async function newestFirstPage<Row, T>(matching: MatchingRows, page: PageRequest, toItem: (row: Row) => T, columns?: readonly string[]): Promise<Page<T>> {
  const selected = columns ? matching.select(columns as never) : matching.selectAll();
  const [rows, total] = await Promise.all([
    selected.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(offsetOf(page)).execute(),
    matching.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst(),
  ]);
  return { items: (rows as Row[]).map(toItem), total: count(total?.n) };
}
