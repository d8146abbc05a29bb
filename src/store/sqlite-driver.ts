/**
 * The SQLite driver under Kysely: better-sqlite3 on Node 20 and 22, Node's built-in `node:sqlite`
 * from Node 24 on.
 *
 * Why two: better-sqlite3 12 wraps its objects in Node's raw `ObjectWrap`, whose destructor on
 * Node 24 asserts that a Node environment is current; a statement or database collected by the
 * garbage collector outside one (at process exit, or from a native callback) aborts the process
 * (`Assertion failed: (env) != nullptr` in `RemoveEnvironmentCleanupHook`). better-sqlite3 13
 * fixes that but does not run on Node 20 (it declares Node >= 22 and crashes there). `node:sqlite`
 * is part of Node 24 and has no such destructor. Both give Kysely the same synchronous interface,
 * and the store contract suite runs against whichever driver the running Node uses.
 */
import { createRequire } from 'node:module';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/** The first Node major where better-sqlite3 12 can abort at garbage collection; node:sqlite from here on. */
export const NODE_SQLITE_FROM_MAJOR = 24;

/** Which library talks to the file. */
export type SqliteDriverName = 'better-sqlite3' | 'node:sqlite';

/** An open SQLite file: what Kysely needs, plus pragmas and a liveness test. */
export interface SqliteConnection {
  readonly driver: SqliteDriverName;
  /** Kysely's SqliteDialect `database`. */
  readonly database: SqliteDatabase;
  /** Runs statements that return nothing (pragmas). */
  exec(sql: string): void;
  isOpen(): boolean;
  close(): void;
}

/** The driver this Node uses. */
export function sqliteDriverName(nodeVersion: string = process.versions.node): SqliteDriverName {
  return Number(nodeVersion.split('.')[0]) >= NODE_SQLITE_FROM_MAJOR ? 'node:sqlite' : 'better-sqlite3';
}

// Loaded on demand: `node:sqlite` does not exist on Node 20, and better-sqlite3 is not needed on 24.
const require = createRequire(import.meta.url);

/** Opens `file` (created if missing) with the driver this Node uses. */
export function openSqliteConnection(file: string, options: { busyTimeoutMs: number }): SqliteConnection {
  return sqliteDriverName() === 'node:sqlite' ? openNodeSqlite(file, options) : openBetterSqlite(file, options);
}

function openBetterSqlite(file: string, options: { busyTimeoutMs: number }): SqliteConnection {
  const Database = require('better-sqlite3') as typeof import('better-sqlite3');
  const database = new Database(file, { timeout: options.busyTimeoutMs });
  return {
    driver: 'better-sqlite3',
    database,
    exec: (sql) => void database.exec(sql),
    isOpen: () => database.open,
    close: () => database.close(),
  };
}

/** The part of node:sqlite used here (typed locally: @types/node 20 does not describe it). */
interface NodeSqliteStatement {
  all(...parameters: unknown[]): unknown[];
  run(...parameters: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate(...parameters: unknown[]): IterableIterator<unknown>;
  columns(): unknown[];
}
interface NodeSqliteDatabase {
  readonly isOpen: boolean;
  prepare(sql: string): NodeSqliteStatement;
  exec(sql: string): void;
  close(): void;
}
type NodeSqliteModule = { DatabaseSync: new (path: string, options: { timeout: number }) => NodeSqliteDatabase };

function openNodeSqlite(file: string, options: { busyTimeoutMs: number }): SqliteConnection {
  const { DatabaseSync } = require('node:sqlite') as NodeSqliteModule;
  const native = new DatabaseSync(file, { timeout: options.busyTimeoutMs });
  // Kysely passes parameters as one array (better-sqlite3's form); node:sqlite takes them spread.
  const database: SqliteDatabase = {
    close: () => native.close(),
    prepare(sql: string): SqliteStatement {
      const statement = native.prepare(sql);
      return {
        // A statement that yields columns is a reader (SELECT, or INSERT … RETURNING).
        reader: statement.columns().length > 0,
        all: (parameters) => statement.all(...parameters),
        run: (parameters) => statement.run(...parameters),
        iterate: (parameters) => statement.iterate(...parameters),
      };
    },
  };
  return { driver: 'node:sqlite', database, exec: (sql) => native.exec(sql), isOpen: () => native.isOpen, close: () => native.close() };
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
 * better-sqlite3 puts it in `code`; node:sqlite puts `ERR_SQLITE_ERROR` there and the number in
 * `errcode`. Undefined when the error is not SQLite's.
 */
export function sqliteErrorCode(error: unknown): string | undefined {
  const { code, errcode } = (error ?? {}) as { code?: unknown; errcode?: unknown };
  if (typeof code === 'string' && code.startsWith('SQLITE_')) return code;
  if (typeof errcode === 'number') return EXTENDED_RESULT_CODES[errcode] ?? PRIMARY_RESULT_CODES[errcode & 0xff] ?? `SQLITE_${errcode}`;
  return undefined;
}
