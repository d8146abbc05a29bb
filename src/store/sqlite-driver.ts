/**
 * The SQLite driver under Kysely: Node's built-in `node:sqlite` (`DatabaseSync`), adapted to
 * Kysely's `SqliteDatabase` interface. No native module to build: the driver is part of Node.
 *
 * The floor is Node 22.16 (package.json `engines`): `node:sqlite` loads without a flag from
 * 22.13, but `StatementSync.columns()` (which tells a reader statement from a writer) and
 * `DatabaseSync.isOpen` arrived in 22.15/22.16. On Node 22 the module is still marked
 * experimental and Node prints an ExperimentalWarning when it is first loaded; that one warning
 * (and only that one) is held back here, because `serve` would otherwise print it at every start.
 */
import { createRequire } from 'node:module';
import type { DatabaseSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/** An open SQLite file: what Kysely needs, plus pragmas and a liveness test. */
export interface SqliteConnection {
  /** Kysely's SqliteDialect `database`. */
  readonly database: SqliteDatabase;
  /** Runs statements that return nothing (pragmas). */
  exec(sql: string): void;
  isOpen(): boolean;
  close(): void;
}

// Loaded on first use (not at import), so that only a process that opens a SQLite file loads it.
const require = createRequire(import.meta.url);
let nodeSqlite: typeof import('node:sqlite') | undefined;

/** `node:sqlite`, loaded once, without Node 22's "SQLite is an experimental feature" warning. */
function loadNodeSqlite(): typeof import('node:sqlite') {
  if (nodeSqlite !== undefined) return nodeSqlite;
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (/^SQLite is an experimental feature/.test(text)) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    nodeSqlite = require('node:sqlite') as typeof import('node:sqlite');
  } finally {
    process.emitWarning = emitWarning;
  }
  return nodeSqlite;
}

/**
 * Prepared statements kept per connection, by their SQL text: a statement run again (a report's
 * multi-row INSERT chunks, every indexed read) skips SQLite's parse and plan. Kysely holds its one
 * connection for one query at a time, so a cached statement is never run twice at once.
 */
export const SQLITE_STATEMENT_CACHE_ENTRIES = 256;

/** Opens `file` (created if missing; `:memory:` for a private in-memory database). */
export function openSqliteConnection(file: string, options: { busyTimeoutMs: number }): SqliteConnection {
  const { DatabaseSync: Database } = loadNodeSqlite();
  const native: DatabaseSync = new Database(file, { timeout: options.busyTimeoutMs });
  // Kysely passes parameters as one array; node:sqlite takes them spread.
  const prepared = new Map<string, SqliteStatement>();
  const database: SqliteDatabase = {
    close: () => {
      prepared.clear();
      native.close();
    },
    prepare(sql: string): SqliteStatement {
      const held = prepared.get(sql);
      if (held !== undefined) return held;
      const statement = native.prepare(sql);
      type Bound = Parameters<typeof statement.all>;
      // The oldest goes first: a bounded cache, whatever texts the queries build.
      if (prepared.size >= SQLITE_STATEMENT_CACHE_ENTRIES) prepared.delete(prepared.keys().next().value!);
      const wrapped: SqliteStatement = {
        // A statement that yields columns is a reader (SELECT, or INSERT … RETURNING).
        reader: statement.columns().length > 0,
        all: (parameters) => statement.all(...(parameters as Bound)),
        run: (parameters) => statement.run(...(parameters as Bound)),
        iterate: (parameters) => statement.iterate(...(parameters as Bound)),
      };
      prepared.set(sql, wrapped);
      return wrapped;
    },
  };
  return { database, exec: (sql) => native.exec(sql), isOpen: () => native.isOpen, close: () => native.close() };
}

/** SQLite's primary result codes by number (https://sqlite.org/rescode.html), for node:sqlite's `errcode`. */
const PRIMARY_RESULT_CODES: Readonly<Record<number, string>> = {
  3: 'SQLITE_PERM',
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  8: 'SQLITE_READONLY',
  10: 'SQLITE_IOERR',
  11: 'SQLITE_CORRUPT',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  15: 'SQLITE_PROTOCOL',
  19: 'SQLITE_CONSTRAINT',
  23: 'SQLITE_AUTH',
  26: 'SQLITE_NOTADB',
};
/** Extended codes the stores tell apart. */
const EXTENDED_RESULT_CODES: Readonly<Record<number, string>> = {
  1555: 'SQLITE_CONSTRAINT_PRIMARYKEY',
  2067: 'SQLITE_CONSTRAINT_UNIQUE',
};

/**
 * The SQLite result code of a driver error as a name (`SQLITE_BUSY`, `SQLITE_CONSTRAINT_UNIQUE`):
 * node:sqlite puts `ERR_SQLITE_ERROR` in `code` and the number in `errcode`. Undefined when the
 * error is not SQLite's.
 */
export function sqliteErrorCode(error: unknown): string | undefined {
  const { errcode } = (error ?? {}) as { errcode?: unknown };
  if (typeof errcode === 'number') return EXTENDED_RESULT_CODES[errcode] ?? PRIMARY_RESULT_CODES[errcode & 0xff] ?? `SQLITE_${errcode}`;
  return undefined;
}
