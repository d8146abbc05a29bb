/**
 * What every SQL store shares: how values are written to and read from a column that both SQLite
 * and PostgreSQL hold (JSON as text, booleans as 0/1, counts that a driver may return as strings),
 * a stored shape's fields mapped to and from their columns by one list, offset paging newest
 * first, a row read by id within an organisation, a row written again by id, and how a dialect
 * differs where Kysely's query builder does not hide it.
 */
import type { Insertable, Kysely, SelectQueryBuilder, SqliteDatabase } from 'kysely';
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
  /**
   * SQLite: the one connection under Kysely (its prepared statements, sqlite-driver.ts), for the
   * report store's hot statements inside a transaction Kysely holds (SqlReportStore, `addMany`).
   */
  sqlite?: SqliteDatabase;
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
 * One page of the matching rows, newest first (`created_at`, or the column `by` names, then `id`,
 * both descending: the memory stores' order, src/store/pagination.ts), each made an item by
 * `toItem`, and how many rows match. `select` narrows what is read (default every column).
 */
export async function newestFirstPage<Row, T>(
  matching: MatchingRows,
  page: PageRequest,
  toItem: (row: Row) => T,
  { select, by = 'created_at' }: { select?: readonly string[]; by?: string } = {},
): Promise<Page<T>> {
  const selected = select ? matching.select(select as never) : matching.selectAll();
  const [rows, total] = await Promise.all([
    selected.orderBy(by, 'desc').orderBy('id', 'desc').limit(page.limit).offset(offsetOf(page)).execute(),
    matching.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst(),
  ]);
  return { items: (rows as Row[]).map(toItem), total: count(total?.n) };
}

/** A field name as a column name: `organizationId` → `organization_id`. */
export type SnakeCase<S extends string> = S extends `${infer First}${infer Rest}` ? `${First extends Lowercase<First> ? First : `_${Lowercase<First>}`}${SnakeCase<Rest>}` : S;

/** A stored shape's fields under their column names, with their types. */
export type AsColumns<T> = { [K in keyof T & string as SnakeCase<K>]: T[K] };

const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/**
 * The `fields` of a stored shape that its row holds as they are, read from their columns
 * (`createdAt` from `created_at`); the fields that need reading (JSON, 0/1, numbers) are mapped
 * beside them.
 */
export function fromColumns<Row extends { [C in SnakeCase<K>]: unknown }, K extends string>(row: Row, fields: readonly K[]): { [P in K]: Row[SnakeCase<P> & keyof Row] } {
  return Object.fromEntries(fields.map((field) => [field, row[snakeCase(field) as keyof Row]])) as { [P in K]: Row[SnakeCase<P> & keyof Row] };
}

/** The `fields` of a stored shape that its row holds as they are, under their column names (`createdAt` as `created_at`). */
export function toColumns<T, K extends keyof T & string>(value: T, fields: readonly K[]): { [P in K as SnakeCase<P>]: T[P] } {
  return Object.fromEntries(fields.map((field) => [snakeCase(field), value[field]])) as { [P in K as SnakeCase<P>]: T[P] };
}

/** The number `fields` of a stored shape, read from their integer columns (which a driver may return as strings). */
export function numbersFromColumns<Row extends { [C in SnakeCase<K>]: unknown }, K extends string>(row: Row, fields: readonly K[]): { [P in K]: number } {
  return Object.fromEntries(fields.map((field) => [field, Number(row[snakeCase(field) as keyof Row])])) as { [P in K]: number };
}

/** The boolean `fields` of a stored shape, read from their 0/1 columns. */
export function flagsFromColumns<Row extends { [C in SnakeCase<K>]: unknown }, K extends string>(row: Row, fields: readonly K[]): { [P in K]: boolean } {
  return Object.fromEntries(fields.map((field) => [field, isTrue(row[snakeCase(field) as keyof Row])])) as { [P in K]: boolean };
}

/** The boolean `fields` of a stored shape as their 0/1 columns. */
export function flagsToColumns<T extends { [P in K]: boolean }, K extends string>(value: T, fields: readonly K[]): { [P in K as SnakeCase<P>]: number } {
  return Object.fromEntries(fields.map((field) => [snakeCase(field), bool(value[field])])) as { [P in K as SnakeCase<P>]: number };
}

/**
 * Writes `row` to `table`, replacing every other column of the row with the same `id` (adding a
 * resource again replaces it, as the memory stores do).
 */
export async function upsertById<DB, T extends keyof DB & string>(db: Kysely<DB>, table: T, row: Insertable<DB[T]> & { id: string }): Promise<void> {
  const { id: _id, ...update } = row as { id: string } & Record<string, unknown>;
  await (db as Kysely<any>).insertInto(table as string).values(row).onConflict((oc) => oc.column('id').doUpdateSet(update)).execute();
}

/**
 * The row `id` of `table` made an item by `toItem`; with `organizationId`, only if the row is that
 * organisation's (another organisation's id is not found).
 */
export async function findById<Row, T>(db: Kysely<any>, table: string, toItem: (row: Row) => T, id: string, organizationId?: string): Promise<T | undefined> {
  const row = await db
    .selectFrom(table)
    .selectAll()
    .where('id', '=', id)
    .$if(organizationId !== undefined, (q) => q.where('organization_id', '=', organizationId as string))
    .executeTakeFirst();
  return row === undefined ? undefined : toItem(row as Row);
}
