/**
 * How a migration declares a table: its columns in order, each in one short form, so that a
 * table's definition reads as its list of columns. The statements are exactly those written
 * column by column with Kysely's `addColumn` (the migrations' schema must not change).
 */
import type { ColumnDefinitionBuilder, CreateTableBuilder, Kysely } from 'kysely';
import type { DataTypeExpression, MigrationContext } from './migration-types.js';

/** A column type: `text` and `bytes` as the dialect spells them ({@link MigrationContext}), the rest as written. */
export type ColumnType = 'text' | 'bytes' | 'integer' | 'bigint' | 'double precision';

/**
 * One column: `key` is the text primary key; a type alone is NOT NULL; a type and `?` may be NULL;
 * the object form is NOT NULL with a constraint (UNIQUE, a reference, a default).
 */
export type ColumnSpec =
  | 'key'
  | ColumnType
  | `${ColumnType}?`
  | { type: ColumnType; unique?: true; references?: string; onDelete?: 'cascade'; defaultTo?: number };

/** `CREATE TABLE name` with `columns` in their order; constraints may be chained before `execute()`. */
export function createTable(db: Kysely<any>, context: MigrationContext, name: string, columns: Readonly<Record<string, ColumnSpec>>): CreateTableBuilder<string, string> {
  let table = db.schema.createTable(name) as CreateTableBuilder<string, string>;
  for (const [column, spec] of Object.entries(columns)) {
    const [type, build] = definition(spec, context);
    table = build ? table.addColumn(column, type, build) : table.addColumn(column, type);
  }
  return table;
}

type Build = (column: ColumnDefinitionBuilder) => ColumnDefinitionBuilder;

function definition(spec: ColumnSpec, context: MigrationContext): [DataTypeExpression, Build | undefined] {
  if (spec === 'key') return [context.text, (c) => c.primaryKey()];
  if (typeof spec === 'string') {
    const nullable = spec.endsWith('?');
    const type = dataType((nullable ? spec.slice(0, -1) : spec) as ColumnType, context);
    return [type, nullable ? undefined : (c) => c.notNull()];
  }
  return [
    dataType(spec.type, context),
    (c) => {
      let column = c.notNull();
      if (spec.unique) column = column.unique();
      if (spec.references !== undefined) column = column.references(spec.references);
      if (spec.onDelete !== undefined) column = column.onDelete(spec.onDelete);
      if (spec.defaultTo !== undefined) column = column.defaultTo(spec.defaultTo);
      return column;
    },
  ];
}

function dataType(type: ColumnType, context: MigrationContext): DataTypeExpression {
  return type === 'text' ? context.text : type === 'bytes' ? context.bytes : type;
}
