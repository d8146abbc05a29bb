/**
 * What a schema migration is written against: the dialect and its column types. Kept apart from the
 * list of migrations (migrations.ts) so that a module defining tables can use it without a circle.
 */
import type { ColumnDataType, Expression } from 'kysely';
import type { Migration } from 'kysely/migration';

/** A column type: a name Kysely knows or raw SQL (Kysely does not export its own alias for this). */
export type DataTypeExpression = ColumnDataType | Expression<unknown>;

/** The SQL databases a store can run on. */
export type SqlDialectName = 'sqlite' | 'postgres';

/** Column types for the dialect a migration runs on. */
export interface MigrationContext {
  dialect: SqlDialectName;
  /**
   * Text that sorts by code point on both databases: PostgreSQL's default collation follows the
   * locale, which would order ids and timestamps differently from SQLite and the memory store.
   */
  text: DataTypeExpression;
  /** Binary data: `blob` on SQLite, `bytea` on PostgreSQL. */
  bytes: DataTypeExpression;
}

/** One migration, given the dialect's column types. */
export type MigrationFactory = (context: MigrationContext) => Migration;
